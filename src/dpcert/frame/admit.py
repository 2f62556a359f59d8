"""Admission: a plan and its data turned into a closed internal form before anything is charged.

`admit_plan` reads the schema only (never a row) and returns an `Admission`:

* every column the plan reads -- the privacy unit, group keys, values and the columns filters
  read -- gets an internal positional name (``c0``, ``c1``, ...) and an internal type from the
  closed set of `dpcert.backends.admission`; a column whose type the engine cannot carry
  end to end is refused with `InadmissibleColumn` naming the column, its
  type and the nearest cast;
* filters pass the backend's allow-list and are rewritten to read the internal names;
* public keys are cast strictly to their column's type (refused if they do not fit or repeat),
  then mapped as the column is.

The compiled release (`dpcert.frame.compile.compile_plan`) then starts with
`make_admit`, a 1-stable transformation to the admitted frame, and everything after it sees
internal names and admitted types only: user names live in the plan and in the output.

Examples
--------
>>> import polars as pl
>>> from dpcert.backends.polars import PolarsBackend
>>> from dpcert.frame.plan import Count, QueryPlan, Sum
>>> df = pl.LazyFrame({"_s": [1.5], "who": [7], "g": ["a"]})
>>> plan = QueryPlan((Count(), Sum("_s", (0, 2))), ("g",), (("a",),), "who", 1, 1)
>>> adm = admit_plan(plan, PolarsBackend(), df)
>>> [(c.user, c.internal, c.type) for c in adm.columns]
[('who', 'c0', 'int'), ('g', 'c1', 'str'), ('_s', 'c2', 'float')]
>>> adm.frame(df).collect_schema().names()
['c0', 'c1', 'c2']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from dpcert.backends.admission import (
    ADMITTED_TYPES,
    ROLES,
    AdmittedColumn,
    AdmittedType,
    Role,
    internal_name,
)
from dpcert.backends.base import FrameOps
from dpcert.core.frames import FrameDomain, UnitDistance
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.frame.plan import QueryPlan

if TYPE_CHECKING:
    from dpcert.frame.aliases import EngineFrame

__all__ = ["Admission", "admission_from_json", "admit_plan", "make_admit"]


@dataclass(frozen=True)
class Admission:
    """A plan's columns and filters in the closed internal form (module docstring)."""

    columns: tuple[AdmittedColumn, ...]
    #: internal name of the privacy unit (None: rows are units)
    unit: str | None
    #: internal names of the group keys, in group order
    keys: tuple[str, ...]
    #: user value column → internal (``float``) column
    values: Mapping[str, str]
    #: filters after the allow-list, reading internal names
    predicates: tuple[Any, ...]
    #: public keys as the admitted key columns hold them (None: private keys)
    public_keys: tuple[tuple[object, ...], ...] | None
    #: the user's schema (column → logical type) and the backend that admitted it
    user_schema: Mapping[str, str]
    #: None for an admission rebuilt from a certificate (maps only, no data)
    backend: FrameOps | None

    @property
    def schema(self) -> dict[str, AdmittedType]:
        """Internal column → internal type: the admitted frame's schema."""
        return {c.internal: c.type for c in self.columns}

    def frame(self, data: EngineFrame) -> EngineFrame:
        """The admitted frame of ``data`` (lazy; total on every frame of the user's schema)."""
        if self.backend is None:
            raise InvalidParameter("this admission was rebuilt from a certificate: it has no "
                                   "backend to run on data")
        admitted = self.backend.admit(data, self.columns)
        return cast("EngineFrame", admitted)  # the backend returns its own engine's frame

    def describe(self) -> list[dict[str, str | list[str]]]:
        """JSON-friendly rendering for certificates."""
        return [{"column": c.user, "as": c.internal, "type": c.type, "from": c.source,
                 "roles": list(c.roles)} for c in self.columns]


def _roles(plan: QueryPlan, filter_columns: Sequence[str]) -> list[tuple[str, Role]]:
    out: list[tuple[str, Role]] = []
    if plan.privacy_unit is not None:
        out.append((plan.privacy_unit, "unit"))
    out += [(k, "key") for k in plan.group_keys]
    out += [(c, "value") for a in plan.aggregates for c in a.columns]
    out += [(c, "filter") for c in filter_columns]
    return out


def _columns(pairs: list[tuple[str, Role]], native: Mapping[str, object], backend: FrameOps
             ) -> tuple[AdmittedColumn, ...]:
    """One internal column per (user column, internal type), numbered in order of first use."""
    found: dict[tuple[str, AdmittedType], tuple[Role, ...]] = {}
    for user, role in pairs:
        t = backend.admitted_type(user, native[user], role)
        roles = found.get((user, t), ())
        found[(user, t)] = roles if role in roles else (*roles, role)
    return tuple(AdmittedColumn(u, internal_name(i), t, str(native[u]), roles)
                 for i, ((u, t), roles) in enumerate(found.items()))


def _internal(columns: Sequence[AdmittedColumn], user: str, role: Role) -> str:
    return next(c.internal for c in columns if c.user == user and role in c.roles)


def admit_plan(plan: QueryPlan, backend: FrameOps, data: EngineFrame) -> Admission:
    """The `Admission` of ``plan`` on ``data`` (reads the schema only; raises before
    anything is charged)."""
    native = dict(backend.native_schema(data))
    logical = dict(backend.schema(data))
    missing = sorted(c for c in plan.columns if c not in native)
    if missing:
        raise InvalidParameter(f"unknown column {missing[0]!r}; the data has {sorted(native)}")
    checked = backend.check_predicates(plan.filters, logical) if plan.filters else ()
    filter_cols = list(dict.fromkeys(backend.predicate_columns(checked)))
    columns = _columns(_roles(plan, filter_cols), native, backend)
    rename = {c: _internal(columns, c, "filter") for c in filter_cols}
    schema = {c.internal: c.type for c in columns}
    predicates = backend.rename_predicates(checked, rename, schema)
    unit = None if plan.privacy_unit is None else _internal(columns, plan.privacy_unit, "unit")
    keys = tuple(_internal(columns, k, "key") for k in plan.group_keys)
    values = {c: _internal(columns, c, "value") for a in plan.aggregates for c in a.columns}
    public = None
    if plan.public_keys is not None:
        public = backend.admit_keys(plan.group_keys, plan.public_keys, native,
                                    tuple(next(c for c in columns if c.internal == k)
                                          for k in keys))
    return Admission(columns, unit, keys, values, tuple(predicates), public, logical, backend)


def admission_from_json(record: object, plan: QueryPlan, user_schema: Mapping[str, str]
                        ) -> Admission:
    """The admission a certificate records (its ``admit`` step's ``columns``), for re-deriving
    the privacy map without data.  A malformed record is `InvalidParameter`."""
    if not isinstance(record, list):
        raise InvalidParameter("admit.columns must be a list")
    cols = []
    for i, r in enumerate(record):
        ok = (isinstance(r, dict) and set(r) == {"column", "as", "type", "from", "roles"}
              and all(isinstance(r[k], str) for k in ("column", "as", "type", "from"))
              and r["type"] in ADMITTED_TYPES and r["as"] == internal_name(i)
              and isinstance(r["roles"], list) and r["roles"]
              and all(x in ROLES for x in r["roles"]))
        if not ok:
            raise InvalidParameter(f"admit.columns[{i}] is not an admitted column record")
        cols.append(AdmittedColumn(r["column"], r["as"], r["type"], r["from"],
                                   tuple(r["roles"])))
    columns = tuple(cols)
    try:
        unit = (None if plan.privacy_unit is None
                else _internal(columns, plan.privacy_unit, "unit"))
        keys = tuple(_internal(columns, k, "key") for k in plan.group_keys)
        values = {c: _internal(columns, c, "value") for a in plan.aggregates for c in a.columns}
    except StopIteration:
        raise InvalidParameter("admit.columns does not cover the plan's columns") from None
    return Admission(columns, unit, keys, values, (), plan.public_keys, dict(user_schema), None)


def make_admit(input_domain: FrameDomain, input_metric: UnitDistance, admission: Admission
               ) -> Transformation:
    """The step into the admitted frame: select the plan's columns under their internal names
    and types.  ``d ↦ d`` (proof: ``docs/proofs/frame_admit.md``): each row is mapped on its
    own, and the unit column by an injective cast, so the rows of a unit added to the data are
    the rows of one unit added to the admitted frame."""
    out = FrameDomain(tuple(admission.schema.items()), input_domain.schema_of)
    return Transformation(
        input_domain, input_metric, out, UnitDistance(admission.unit),
        function=admission.frame,
        stability_map=lambda d: d,
        name="admit",
        params={"columns": admission.describe()},
        proof="frame_admit.md",
    )
