"""Polars dtype helpers shared by `dpcert.backends.polars` and its statistics module
(a leaf, so the two import it without a cycle)."""

from __future__ import annotations

from typing import TypeAlias

import polars as pl

__all__ = ["DType", "_canonical", "_logical"]


#: A Polars data type: an instance (``pl.Datetime("us", "UTC")``) or a class (``pl.Int64``).
DType: TypeAlias = "pl.DataType | type[pl.DataType]"


def _logical(dtype: DType) -> str:
    if dtype == pl.Boolean:
        return "bool"
    if dtype.is_integer():
        return "int"
    if dtype.is_float():
        return "float"
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        return "str"
    if dtype == pl.Date:
        return "date"
    if isinstance(dtype, pl.Datetime):  # an instant (aware) or a wall-clock time (naive)
        return "datetime" if dtype.time_zone is not None else "datetime_ntz"
    return "other"


def _canonical(col: str, dtype: DType) -> pl.Expr:
    """A key column with ``-0.0 → 0.0`` (floats; NaN and null are already one value each)."""
    if dtype.is_float():
        c = pl.col(col)
        return pl.when(c == 0).then(pl.lit(0.0, dtype)).otherwise(c).alias(col)
    return pl.col(col)
