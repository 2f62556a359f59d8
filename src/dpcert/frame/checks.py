"""Checks that run before anything is charged: each refuses one class of analyst input that
could make a release less private than its certificate, or crash after the charge.

Every function is standalone (plan + schema in, a typed error or a normalised value out) so the
compiled engine (``design/engine-compile.md``) can call them from its constructors.  Each error
names the offending argument and its value.

Examples
--------
>>> import polars as pl
>>> from dpcert.frame.checks import check_public_keys
>>> check_public_keys(("g",), [(1,), (2,)], {"g": pl.Int64}).height
2
>>> check_public_keys(("x",), [(0.0,), (-0.0,)], {"x": pl.Float64})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.InvalidParameter: keys: duplicate public keys ...: (-0.0,) repeats (0.0,); ...
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import polars as pl

from dpcert.errors import InvalidParameter, OutOfDomain
from dpcert.frame.plan import (
    MAX_BOUND,
    Mean,
    Quantile,
    QueryPlan,
    Sum,
    Variance,
    check_output_names,
    generated_names,
)

if TYPE_CHECKING:
    from dpcert.frame.aliases import PolarsType, Predicate

__all__ = [
    "MAX_BOUND",
    "MAX_QUANTILE_CELLS",
    "canonical",
    "check_bounds_magnitude",
    "check_filters",
    "check_output_names",
    "check_public_keys",
    "check_scale_limit",
    "check_schema",
    "check_unit_column",
    "generated_names",
    "internal_prefix",
]

#: Most (groups × candidates) cells a quantile keeps in memory at once (public keys: refused
#: above it before the charge; private keys: processed in chunks of this many cells).
MAX_QUANTILE_CELLS = 1 << 24

_FLOATS = (pl.Float32, pl.Float64)
#: Unit column types whose values dpcert compares exactly (after canonicalisation).
_UNIT_TYPES = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64,
               pl.Float32, pl.Float64, pl.Boolean, pl.String, pl.Categorical, pl.Date,
               pl.Datetime, pl.Time, pl.Duration, pl.Binary)


def _is(dtype: PolarsType, types: tuple[type[pl.DataType], ...]) -> bool:
    return isinstance(dtype, types) or dtype in types


def canonical(column: str, dtype: PolarsType) -> pl.Expr:
    """The column with exact-identity canonical values: for floats every NaN is one value and
    −0.0 is 0.0 (float32 widened exactly to float64); categoricals become their strings;
    everything else is unchanged.  Null stays null (one value)."""
    c = pl.col(column)
    if _is(dtype, _FLOATS):
        x = c.cast(pl.Float64)
        return (pl.when(x.is_nan()).then(pl.lit(float("nan")))
                .when(x == 0).then(pl.lit(0.0)).otherwise(x).alias(column))
    if _is(dtype, (pl.Categorical, pl.Enum)):
        return c.cast(pl.String).alias(column)
    return c


def check_unit_column(unit: str | None, group_keys: Sequence[str],
                      schema: Mapping[str, PolarsType]) -> None:
    """The privacy unit's type must allow exact comparison, and it may not be a group key
    (grouping by the unit releases per-person statistics and is refused)."""
    if unit is None:
        return
    dt = schema[unit]
    if not _is(dt, _UNIT_TYPES):
        raise InvalidParameter(
            f"privacy_unit={unit!r} has type {dt}: units must be compared exactly, which dpcert "
            "does for integer, float, boolean, string, categorical, date/time and binary "
            "columns only")
    if unit in group_keys:
        raise InvalidParameter(
            f"group_by({unit!r}): grouping by the privacy_unit={unit!r} column releases one "
            "group per person; group by another column")


def check_filters(filters: Sequence[Predicate], schema: Mapping[str, PolarsType]
                  ) -> tuple[pl.Expr, ...]:
    """Every filter must be row-local and infallible (``dpcert.backends.polars_expr``)."""
    from dpcert.backends.polars_expr import check_predicate

    return tuple(check_predicate(f, schema) for f in filters)


def check_public_keys(group_keys: Sequence[str], keys: Sequence[tuple[object, ...]],
                      schema: Mapping[str, PolarsType]) -> pl.DataFrame:
    """The public keys as a frame of the key columns' types (strict cast, canonical float
    values), refusing keys that do not fit and keys that repeat after the cast (``1``/``1.0``,
    ``0.0``/``−0.0``, two NaNs): each repeat would be released with fresh noise for one price."""
    names = list(group_keys)
    dtypes = {k: schema[k] for k in names}
    # the frame's columns are positional names: a key named ``*`` or ``^a.*$`` would be read
    # as a pattern by pl.col
    cols = [f"k{i}" for i in range(len(names))]
    types = {c: schema[k] for c, k in zip(cols, names, strict=True)}
    try:
        key_df = pl.DataFrame([list(k) for k in keys], schema=cols, orient="row")
        key_df = key_df.cast(types, strict=True)  # type: ignore[arg-type]
    except Exception as e:
        raise OutOfDomain(
            f"public keys {list(keys)[:5]} do not match the key column types "
            f"{ {k: str(t) for k, t in dtypes.items()} }: {str(e).splitlines()[0]}") from None
    for given, got in zip(keys, key_df.rows(), strict=True):
        for v, w in zip(given, got, strict=True):
            same = (v is None and w is None) or (v is not None and w is not None and (
                v == w or (isinstance(v, float) and isinstance(w, float)
                           and math.isnan(v) and math.isnan(w))))
            if not same:
                raise OutOfDomain(
                    f"public key {tuple(given)!r} does not fit the key column types "
                    f"{ {k: str(t) for k, t in dtypes.items()} }: {v!r} becomes {w!r}")
    key_df = key_df.with_columns(canonical(c, types[c]) for c in cols)
    dup = key_df.is_duplicated()
    if dup.any():
        rows = key_df.rows()
        first: dict[tuple[object, ...], int] = {}
        for i, r in enumerate(rows):
            norm = tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in r)
            if norm in first:
                raise InvalidParameter(
                    f"keys: duplicate public keys after the cast to the column types "
                    f"{ {k: str(t) for k, t in dtypes.items()} }: {tuple(keys[i])!r} repeats "
                    f"{tuple(keys[first[norm]])!r}; each key may appear once")
            first[norm] = i
        raise InvalidParameter("keys: duplicate public keys after the cast")  # pragma: no cover
    return key_df.rename(dict(zip(cols, names, strict=True)))


def check_bounds_magnitude(what: str, bounds: tuple[float, float]) -> None:
    """|bounds| ≤ `MAX_BOUND`, so sums, squares and intervals stay finite."""
    for b in bounds:
        if abs(b) > MAX_BOUND:
            raise InvalidParameter(
                f"{what}: bounds={bounds!r}: |bound| must be <= 2**64 so that sums and squares "
                "stay finite (rescale the column)")


def check_quantile_cells(what: str, n_groups: int, candidates: int) -> None:
    """Public keys × candidates must fit in `MAX_QUANTILE_CELLS` (memory, refused before
    the charge)."""
    if n_groups * candidates > MAX_QUANTILE_CELLS:
        raise InvalidParameter(
            f"{what}: {n_groups} public keys × candidates={candidates} = "
            f"{n_groups * candidates} cells exceeds {MAX_QUANTILE_CELLS}; use fewer candidates "
            "or keys")


def check_scale_limit(name: str, scale_units: Fraction) -> None:
    """A noise scale (in units) the exact samplers accept (≤ 2^52)."""
    from dpcert.samplers.laplace import MAX_SCALE

    if scale_units > MAX_SCALE:
        raise InvalidParameter(
            f"{name}: noise scale {float(scale_units):.4g} (in lattice units) exceeds the "
            "samplers' limit 2**52: the budget is too small or the bounds too wide for any "
            "useful release")


def internal_prefix(columns: Sequence[str]) -> str:
    """A prefix no column name starts with, for the engine's internal columns."""
    p = "__dpcert"
    while any(c.startswith(p) for c in columns):
        p += "_"
    return p + "_"



def check_schema(lf: pl.LazyFrame, plan: QueryPlan) -> dict[str, pl.DataType]:
    """Everything about ``plan`` that can be checked on the schema, before any charge (besides
    the admission of its columns' types, `dpcert.frame.admit.admit_plan`): columns
    exist, the unit can be compared exactly and is not a group key, filters
    are row-local and infallible, public keys fit their columns and are distinct, output names
    do not collide, bounds are finite enough.  Reads no rows.

    Examples
    --------
    >>> from dpcert.frame.plan import Count
    >>> check_schema(pl.LazyFrame({"u": [1]}), QueryPlan((Count(),), ("g",), None))
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: unknown column 'g'; the data has ['u']
    """
    schema = dict(lf.collect_schema())
    for col in plan.columns:
        if col not in schema:
            raise InvalidParameter(f"unknown column {col!r}; the data has {sorted(schema)}")
    for a in plan.aggregates:  # value types: the admission step (dpcert.frame.admit)
        if isinstance(a, (Sum, Mean, Variance, Quantile)) and a.bounds is not None:
            check_bounds_magnitude(a.name, a.bounds)
    check_unit_column(plan.privacy_unit, plan.group_keys, schema)
    check_output_names(plan.output_names(), plan.group_keys)
    if plan.public_keys is not None and plan.group_keys:
        check_public_keys(plan.group_keys, plan.public_keys, schema)
    check_filters(plan.filters, schema)
    return schema
