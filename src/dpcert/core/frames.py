"""Spaces of the data engine: frames, grouped statistics, and distances counted in privacy units.

Core never imports a dataframe library: a `FrameDomain` is told how to read a frame's
schema (``schema_of``, given by the backend), and `UnitDistance.distance` reads concrete
frames through the generic row readers below (Polars, pandas, Spark or a mapping of columns).

=====================  =========================================================================
space                  meaning
=====================  =========================================================================
``FrameDomain``        frames (lazy or not) with a given schema (column → logical type)
``UnitDistance``       privacy units added or removed (``unit=None``: each row is a unit)
``GroupedDomain``      per-group exact integer statistics (``GroupedStats``) with public or
                       private keys
``GroupDistance``      ``(u, l0, l∞, l1)``: units changed, groups changed, most rows changed in
                       one group, rows changed in all groups together -- what a distinct-unit
                       count and a row count need to tell apart
=====================  =========================================================================

Examples
--------
>>> d = UnitDistance("person")
>>> a = {"person": [1, 1, 2], "x": [5, 6, 7]}
>>> b = {"person": [1, 1], "x": [5, 6]}
>>> d.distance(a, b)
1
>>> UnitDistance(None).distance(a, b)
1
>>> g = GroupDistance()
>>> g.compare((1, 2, 3, 6), (1, 2, 4, 6)), g.compare((1, 2, 3, 6), (1, 1, 9, 9))
(True, False)
>>> GroupDistance().validate_d_in((2, 3, 4))  # a triple bounds l1 by l0·l∞
(2, 3, 4, 12)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from dpcert._types import DistanceLike
from dpcert._validate import check_int
from dpcert.core.domains import Domain
from dpcert.core.metrics import Metric
from dpcert.errors import InvalidParameter

__all__ = ["FrameDomain", "GroupDistance", "GroupedDomain", "UnitDistance", "frame_rows"]

#: A ``GroupDistance`` value: (units, groups, rows in one group, rows in all groups).
GroupBound = tuple[int, int, int, int]
#: A row as a sorted tuple of (column, canonical value): equal rows have equal keys.
RowKey = tuple[tuple[str, object], ...]


def _canonical(v: object) -> object:
    """One representative per value as a privacy unit or row entry: every NaN is one value,
    ``-0.0`` is ``0.0``, ``None`` is itself."""
    if isinstance(v, float):
        if math.isnan(v):
            return ("nan",)
        if v == 0.0:
            return 0.0
    return v


def frame_rows(frame: object) -> list[dict[str, object]]:
    """The rows of a small concrete frame as dicts (for adjacency checks and auditing).

    Accepts a Polars (Lazy)DataFrame, a pandas DataFrame, a Spark DataFrame or a mapping of
    equal-length columns.  Meant for the small frames of tests and audits: it materialises rows
    in Python.

    Examples
    --------
    >>> frame_rows({"a": [1, 2], "b": ["x", "y"]})
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    if isinstance(frame, Mapping):
        cols = {k: list(v.tolist() if hasattr(v, "tolist") else v) for k, v in frame.items()}
        n = {len(v) for v in cols.values()}
        if len(n) > 1:
            raise InvalidParameter(f"frame columns have different lengths: {sorted(n)}")
        size = n.pop() if n else 0
        return [{k: v[i] for k, v in cols.items()} for i in range(size)]
    if hasattr(frame, "collect") and not hasattr(frame, "to_dicts") and hasattr(
            frame, "collect_schema"):
        frame = frame.collect()  # Polars LazyFrame
    if hasattr(frame, "to_dicts"):
        return list(frame.to_dicts())  # Polars DataFrame
    if hasattr(frame, "to_dict") and hasattr(frame, "columns"):
        return list(frame.to_dict("records"))  # pandas
    if hasattr(frame, "collect"):
        return [r.asDict() for r in frame.collect()]  # Spark
    raise InvalidParameter(f"frame={type(frame).__name__}: cannot read its rows")


def _row_key(row: Mapping[str, object]) -> RowKey:
    return tuple(sorted((k, _canonical(v)) for k, v in row.items()))


@dataclass(frozen=True)
class UnitDistance(Metric):
    """Privacy units added or removed.

    Two frames are ``d`` apart when ``d`` is the size of the symmetric difference of their
    multisets of *units*, a unit being the multiset of its rows (so changing one unit's rows
    counts 2: remove and add).  ``unit=None`` makes every row its own unit (this is then
    `SymmetricDistance` on rows).  Unit values are compared exactly
    after canonicalisation: every NaN is one unit, ``-0.0`` is ``0.0``, null is one unit.
    """

    unit: str | None = None
    dataset_metric = True

    def __post_init__(self) -> None:
        if self.unit is not None and (not isinstance(self.unit, str) or not self.unit):
            raise InvalidParameter(f"unit={self.unit!r} must be a column name or None")

    def distance(self, a: object, b: object) -> int:
        ra, rb = frame_rows(a), frame_rows(b)
        if self.unit is None:
            ca, cb = Counter(map(_row_key, ra)), Counter(map(_row_key, rb))
            return sum(((ca - cb) + (cb - ca)).values())
        ua, ub = self._units(ra), self._units(rb)
        only = len(ua.keys() ^ ub.keys())
        changed = sum(1 for u in ua.keys() & ub.keys() if ua[u] != ub[u])
        return only + 2 * changed

    def _units(self, rows: Sequence[Mapping[str, object]]) -> dict[object, Counter[RowKey]]:
        out: dict[object, Counter[RowKey]] = {}
        unit = str(self.unit)
        for r in rows:
            if unit not in r:
                raise InvalidParameter(f"unit={unit!r} is not a column of the frame")
            out.setdefault(_canonical(r[unit]), Counter())[_row_key(r)] += 1
        return out


@dataclass(frozen=True)
class GroupDistance(Metric):
    """``(u, l0, l∞, l1)``: at most ``u`` units changed, in at most ``l0`` (unit, group) pairs (so
    at most ``l0`` groups change), changing at most ``l∞`` rows in any one group and at most
    ``l1`` rows in all groups together.
    Distances are compared componentwise.  A triple ``(u, l0, l∞)`` is read with the bound
    ``l1 = l0·l∞`` that it implies.

    ``l1`` is what makes group privacy linear: ``d`` units of at most ``G`` groups and ``R`` rows
    per group change at most ``d·G·R`` rows in total, whereas ``l0·l∞ = d²·G·R``.

    It is the output metric of contribution bounding (`dpcert.transformations.frame`); a
    statistic selected from the groups turns it into an L1 or L2 vector distance.
    """

    def validate_d_in(self, d: DistanceLike, name: str = "d_in") -> GroupBound:
        if not (isinstance(d, (tuple, list)) and len(d) in (3, 4)):
            raise InvalidParameter(f"{name}={d!r} must be (units, groups, rows per group, "
                                   "rows) or a triple (units, groups, rows per group)")
        u, l0, li, *rest = (check_int(x, f"{name}[{i}]", minimum=0) for i, x in enumerate(d))
        l1 = rest[0] if rest else l0 * li
        return (u, l0, li, l1)

    def compare(self, a: DistanceLike, b: DistanceLike) -> bool:
        x, y = self.validate_d_in(a, "a"), self.validate_d_in(b, "b")
        return all(p <= q for p, q in zip(x, y, strict=True))

    def distance(self, a: object, b: object) -> NoReturn:
        raise InvalidParameter(
            "GroupDistance is a bound derived from UnitDistance by make_bound_contributions; "
            "it cannot be measured on two grouped results (measure the frames with "
            "UnitDistance instead)"
        )


@dataclass(frozen=True)
class FrameDomain(Domain):
    """Frames whose schema is ``schema`` (column → logical type); rows are not inspected.

    ``bounds`` (``(by, max_groups, max_rows_per_group)``) records that contribution bounding
    was applied; ``schema_of`` reads a frame's schema (the backend's ``schema``).
    ``neighbours`` (optional, for auditing) maps ``d_in`` to pairs of concrete member frames at
    most ``d_in`` units apart (see `neighbour_pairs`).
    """

    schema: tuple[tuple[str, str], ...]
    schema_of: Callable[[Any], Mapping[str, str]] = field(compare=False, repr=False)
    bounds: tuple[tuple[str, ...], int, int] | None = None
    neighbours: Callable[[int], list[tuple[Any, Any]]] | None = field(
        default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema", tuple((str(k), str(v)) for k, v in self.schema))

    @property
    def columns(self) -> dict[str, str]:
        """The schema as a dict."""
        return dict(self.schema)

    def why_not(self, x: object) -> str | None:
        try:
            got = dict(self.schema_of(x))
        except Exception as e:  # any failure to read a schema is non-membership
            return f"cannot read its schema ({type(e).__name__})"
        if got != dict(self.schema):
            return f"schema {got} != {dict(self.schema)}"
        return None

    def neighbour_pairs(self, metric: Metric, d_in: int = 1) -> list[tuple[Any, Any]]:
        """Pairs of member frames at most ``d_in`` apart under ``metric`` (the auditor's hook);
        empty when this domain was built without example frames."""
        if self.neighbours is None:
            return []
        return [(a, b) for a, b in self.neighbours(d_in)
                if 0 < metric.distance(a, b) <= d_in]

    def __repr__(self) -> str:
        b = "" if self.bounds is None else f", bounded by {self.bounds}"
        return f"FrameDomain({dict(self.schema)}{b})"


@dataclass(frozen=True)
class GroupedDomain(Domain):
    """Exact integer statistics per group: objects with ``keys`` (one tuple per group) and
    ``values`` (stat name → integer array with one row per group), as
    `dpcert.backends.base.GroupedStats`.

    ``keys`` is the public key list (fixed order) or ``None`` for private keys (the groups
    present in the data).
    """

    by: tuple[str, ...]
    stats: tuple[str, ...]
    keys: tuple[tuple[object, ...], ...] | None = None

    def why_not(self, x: object) -> str | None:
        keys, values = getattr(x, "keys", None), getattr(x, "values", None)
        if keys is None or not isinstance(values, Mapping):
            return "not a grouped result (keys, values)"
        if self.keys is not None and list(map(tuple, keys)) != list(self.keys):
            return "keys differ from the public keys"
        if set(values) != set(self.stats):
            return f"statistics {sorted(values)} != {sorted(self.stats)}"
        for name, v in values.items():
            if len(v) != len(keys):
                return f"statistic {name!r} has {len(v)} rows for {len(keys)} groups"
        return None

    def __repr__(self) -> str:
        k = "private keys" if self.keys is None else f"{len(self.keys)} public keys"
        return f"GroupedDomain(by={list(self.by)}, stats={list(self.stats)}, {k})"
