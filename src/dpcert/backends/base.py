"""The backend protocol: the data work of a release, with no privacy arithmetic in it.

A backend (Polars in `dpcert.backends.polars`, Spark in `dpcert.backends.spark`) does
four things on data it never lets out of its engine: report the schema, apply row-local filters
(already checked by the engine's expression allow-list), bound each privacy unit's contribution
with a keyed, deterministic rule, and compute exact *integer* statistics per group.  Only the
K-row grouped result reaches the caller, where core measurements add exact noise.  Every number
that is charged comes from a core privacy map, never from here.

Contract (what the proofs in ``docs/proofs/frame_*.md`` assume of every backend):

* ``keyed_bound`` is a deterministic function of (data, spec) -- the same ``key`` gives the same
  rows on every backend (bit-identical bounded statistics).  Privacy units are compared *exactly*
  (after canonicalising NaN, -0.0 and null, each to one unit); a hash only orders.
* After bounding, each unit has rows in at most ``max_groups`` groups and at most
  ``max_rows_per_group`` rows per group; the rows of one unit do not depend on any other unit.
* ``group_stats`` returns exact integers (int64 arrays, or object arrays of Python ints where
  int64 could overflow); public keys absent from the data get 0; the key order is the public key
  order, or an order that depends on the key values only (sorted) for private keys.

Value rule of the fixed-point statistics (``fixed_sum``, ``fixed_sum_sq``, ``at_most``): a value is
imputed (null or NaN → ``lower``), clamped to ``[lower, upper]``, (for ``fixed_sum_sq``: minus
``shift`` and squared),
divided by ``2**exponent`` and rounded half-to-even to an integer, then clamped to the rounded
bounds.  ``lower``/``upper`` are exact rationals; backends must compute the same integers.
Precisely (`dpcert.backends._fixed`): the rounded bounds ``[rl, rh]`` are computed exactly
(for ``fixed_sum_sq`` those of the squared interval, ``rl ≥ 0``); a null/NaN value gives ``rl``;
otherwise ``clamp(round_half_even(v / 2**exponent), rl, rh)`` in float64 (equal to clamping first,
as rounding is monotone), and for ``fixed_sum_sq`` ``v`` is first clamped to the floats nearest
``lower``/``upper``, then ``shift`` (a float64 value) is subtracted and the difference squared in
float64 (IEEE, so every backend gets the same double).  Every integer lies in ``[rl, rh]``, which
is what the privacy maps use.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from dpcert._types import Array
from dpcert.backends.admission import AdmittedColumn, AdmittedType, Role

__all__ = ["BoundSpec", "FrameOps", "GroupedStats", "Key", "KeyValue", "StatKind", "StatSpec"]

#: One value of a group key: as the admitted key types hold it (``int``, ``float``, ``str``,
#: ``bool``, ``date``, ``datetime``), ``None`` for null, or as a user gives a public key
#: (also ``Decimal``, cast strictly by `FrameOps.admit_keys`).
KeyValue: TypeAlias = "int | float | str | bool | Decimal | dt.date | dt.datetime | None"
#: A group key: one value per group column.
Key: TypeAlias = "tuple[KeyValue, ...]"

#: ``count``: rows; ``unit_count``: distinct privacy units; ``fixed_sum``/``fixed_sum_sq``:
#: exact fixed-point sums of the value / squared value; ``at_most``: per candidate, the number of
#: rows whose fixed-point value is ≤ the candidate (quantiles).
StatKind = Literal["count", "unit_count", "fixed_sum", "fixed_sum_sq", "at_most"]


@dataclass(frozen=True)
class StatSpec:
    """One exact integer statistic computed per group."""

    name: str
    kind: StatKind
    column: str | None = None
    lower: Fraction | None = None
    upper: Fraction | None = None
    exponent: int = 0
    #: ``at_most`` only: candidate thresholds in fixed-point units (integers), ascending.
    candidates: tuple[int, ...] = ()
    #: ``fixed_sum_sq`` only: rows add ``(v − shift)²`` (a float64 value, e.g. the bounds'
    #: midpoint, so the squares' range is ``((upper − lower)/2)²``, not ``max(lower², upper²)``).
    shift: Fraction = Fraction(0)


@dataclass(frozen=True)
class BoundSpec:
    """Contribution bounding: which rows each privacy unit keeps."""

    unit: str | None
    by: tuple[str, ...]
    max_groups: int
    max_rows_per_group: int
    #: Fresh CSPRNG bytes per release (16 bytes); the rule is deterministic given the key.
    key: bytes = field(repr=False)
    #: Columns whose values decide *which* of a unit's rows in a group are kept (the columns the
    #: statistics read); identical rows are interchangeable.
    value_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class GroupedStats:
    """Exact per-group statistics: ``keys`` has one tuple per group; ``values[name]`` one
    integer per group (shape ``(K,)``, or ``(K, C)`` for ``at_most``)."""

    keys: list[Key]
    values: Mapping[str, Array]

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return len(self.keys)


@runtime_checkable
class FrameOps(Protocol):
    """What an engine backend implements (see the module docstring for the contract).

    Frames, engine data types and checked predicates are opaque to the caller (``object``): the
    caller passes along what the backend returned (the Polars and Spark backends refuse
    anything else with `InvalidParameter`)."""

    name: str

    def schema(self, data: object) -> Mapping[str, str]:
        """Column name → logical type (``"int"``, ``"float"``, ``"str"``, ``"bool"``,
        ``"date"``, ``"datetime"`` (time-zone-aware instants), ``"datetime_ntz"`` (naive
        wall-clock times) or ``"other"``); reads no rows."""
        ...

    def native_schema(self, data: object) -> Mapping[str, object]:
        """Column name → the engine's own data type (reads no rows)."""
        ...

    def admitted_type(self, column: str, dtype: object, role: Role) -> AdmittedType:
        """The internal type of ``column`` (engine type ``dtype``) in ``role``, or
        `InadmissibleColumn` (`dpcert.backends.admission`)."""
        ...

    def admit(self, data: object, columns: Sequence[AdmittedColumn]) -> object:
        """The admitted frame: exactly ``columns`` under their internal names and types; total
        on every frame of the schema the columns were admitted from."""
        ...

    def admit_keys(self, by: Sequence[str], keys: Sequence[Key],
                   native: Mapping[str, object], columns: Sequence[AdmittedColumn]
                   ) -> tuple[Key, ...]:
        """Public keys of the user's key columns ``by`` as the admitted key ``columns`` hold
        them; keys that do not fit the column types or repeat are refused."""
        ...

    def predicate_columns(self, predicates: Sequence[object]) -> tuple[str, ...]:
        """The columns that checked predicates read."""
        ...

    def rename_predicates(self, predicates: Sequence[object], mapping: Mapping[str, str],
                          schema: Mapping[str, str]) -> tuple[object, ...]:
        """Checked predicates rewritten to read ``mapping[c]`` for each column ``c`` of the
        admitted ``schema``."""
        ...

    def probe_environment(self, data: object) -> None:
        """Before the charge: check that the engine can run a release on ``data`` (and choose
        how, warning about any fallback); raise `BackendUnavailable`
        naming the remedy if it cannot.  Reads no rows."""
        ...

    def check_predicates(self, predicates: Sequence[object],
                         schema: Mapping[str, str]) -> tuple[object, ...]:
        """Validate predicates against the backend's expression allow-list (row-local and
        infallible on every value of the schema's types: SQL strings are parsed and walked the
        same way) and return them normalised; raise
        `UnsafeExpression` naming the offending sub-expression.  Reads no
        rows; runs before anything is charged."""
        ...

    def filter(self, data: object, predicates: Sequence[object]) -> object:
        """Keep the rows on which every (already allow-listed) predicate is true."""
        ...

    def keyed_bound(self, data: object, spec: BoundSpec) -> object:
        """Contribution bounding, deterministic given ``spec.key``."""
        ...

    def group_stats(self, data: object, by: Sequence[str],
                    keys: Sequence[Key] | None,
                    specs: Sequence[StatSpec]) -> GroupedStats:
        """Exact integer statistics per group (public ``keys``, or the groups present)."""
        ...
