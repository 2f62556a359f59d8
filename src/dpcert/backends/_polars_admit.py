"""Admission on Polars (the rule and the closed set: `dpcert.backends.admission`).

Pandas DataFrames, Arrow tables, CSV and Parquet files reach this step as Polars frames
(`dpcert.frame.io.to_lazy`), so one rule covers them all.  Every expression built here is
total: the casts are exact widenings (``Int32 → Int64``, ``Float32 → Float64``), time-zone
conversions that keep the instant, or numeric casts to ``Float64`` (which round, never fail).

Examples
--------
>>> import polars as pl
>>> admitted_type("g", pl.Categorical(), "key"), admitted_type("x", pl.Int32, "value")
('str', 'float')
>>> admitted_type("k", pl.Decimal(10, 2), "key")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.InadmissibleColumn: k: column 'k' has type Decimal(...)...(to Float64 or to String)...
>>> rename_columns(pl.col("a") > pl.col("b"), {"a": "c0", "b": "c1"}).meta.root_names()
['c0', 'c1']
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping

import polars as pl

from dpcert._types import JSON
from dpcert.backends._polars_types import DType
from dpcert.backends.admission import AdmittedColumn, AdmittedType, Role, internal_name, refuse

__all__ = ["admit_frame", "admitted_type", "rename_columns"]

_SMALL_INTS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32)
_WIDE_INTS = (pl.UInt64, pl.Int128, pl.UInt128)
#: Nearest cast, per dtype class, for a key/unit/filter column that is refused.
_KEY_CASTS = {
    "UInt64": "to Int64 if every value is below 2**63, else to String",
    "Int128": "to Int64 if every value fits, else to String",
    "UInt128": "to Int64 if every value fits, else to String",
    "Decimal": "to Float64 or to String",
    "Time": "to Int64: pl.col(...).to_physical() (nanoseconds since midnight)",
    "Duration": "to Int64: pl.col(...).dt.total_microseconds()",
    "Binary": "to String: pl.col(...).bin.encode('hex')",
    "Null": "to the type the column should have: every value is null",
    "List": "explode or join the list into a scalar column",
    "Array": "explode or join the array into a scalar column",
    "Struct": "unnest the struct into scalar columns",
    "Object": "convert the Python objects to a scalar type",
}


def _kind(dtype: DType) -> str:
    """The dtype's class name (``Int128``, ``Datetime``, ``List``, ...)."""
    return type(dtype).__name__ if not isinstance(dtype, type) else dtype.__name__


def _exact_type(dtype: DType) -> AdmittedType | None:
    """The internal type of a unit, key or filter column, or None."""
    if dtype == pl.Boolean:
        return "bool"
    if any(dtype == t for t in _SMALL_INTS):
        return "int"
    if dtype.is_float():
        return "float"
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return "str"
    if dtype == pl.Date:
        return "date"
    if isinstance(dtype, pl.Datetime):
        return "datetime" if dtype.time_zone is not None else "datetime_ntz"
    return None


def admitted_type(column: str, dtype: DType, role: Role) -> AdmittedType:
    """The internal type of ``column`` (Polars ``dtype``) in ``role``, or
    `InadmissibleColumn` naming the nearest cast."""
    kind = _kind(dtype)
    if role == "value":
        if dtype.is_numeric() or dtype == pl.Null:
            return "float"
        cast = ("to Float64 with pl.col(...).cast(pl.Float64, strict=False) (unparsable text "
                "becomes null)" if kind in ("String", "Categorical", "Enum")
                else "to Float64" if kind == "Boolean" else _KEY_CASTS.get(kind, "to Float64"))
        raise refuse(column, str(dtype), role, cast)
    t = _exact_type(dtype)
    if t is None:
        raise refuse(column, str(dtype), role,
                     _KEY_CASTS.get(kind, "to Int64, Float64, String, Boolean, Date or Datetime"))
    return t


def _expr(col: AdmittedColumn, dtype: DType, index: int) -> pl.Expr:
    """The total expression that turns the user's column (at position ``index``: read by
    position, since ``pl.col`` reads names such as ``*`` or ``^a.*$`` as patterns) into the
    admitted one."""
    c = pl.nth(index)
    if col.type == "float":
        x = c.cast(pl.Float64)
        c = (pl.when(x.is_nan()).then(pl.lit(float("nan"))).when(x == 0).then(pl.lit(0.0))
             .otherwise(x))
    elif col.type == "int":
        c = c.cast(pl.Int64)
    elif col.type == "str":
        c = c.cast(pl.String)
    elif col.type == "datetime" and isinstance(dtype, pl.Datetime) and dtype.time_zone != "UTC":
        c = c.dt.convert_time_zone("UTC")
    return c.alias(col.internal)


def admit_frame(lf: pl.LazyFrame, columns: tuple[AdmittedColumn, ...]) -> pl.LazyFrame:
    """The admitted frame: exactly ``columns``, under their internal names and types (with no
    column, one ``Int64`` column of row numbers, so rows are still counted)."""
    schema = lf.collect_schema()
    if not columns:  # a plan that reads no column still counts rows: keep one per row
        return lf.select(pl.int_range(pl.len(), dtype=pl.Int64).alias(internal_name(0)))
    position = {name: i for i, name in enumerate(schema.names())}
    return lf.select([_expr(c, schema[c.user], position[c.user]) for c in columns])


def _rename(node: JSON, mapping: Mapping[str, str]) -> JSON:
    if isinstance(node, dict):
        if set(node) == {"Column"} and isinstance(node["Column"], str):
            return {"Column": mapping[node["Column"]]}
        return {k: _rename(v, mapping) for k, v in node.items()}
    if isinstance(node, list):
        return [_rename(v, mapping) for v in node]
    return node


def rename_columns(expr: pl.Expr, mapping: Mapping[str, str]) -> pl.Expr:
    """``expr`` reading ``mapping[name]`` wherever it read ``name`` (every column it reads must
    be in ``mapping``).  Works on the serialized tree, which the allow-list walk already read."""
    tree = json.loads(expr.meta.serialize(format="json"))
    return pl.Expr.deserialize(io.StringIO(json.dumps(_rename(tree, mapping))), format="json")
