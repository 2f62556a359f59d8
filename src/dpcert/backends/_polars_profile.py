"""Polars data work of the bound-choosing steps (`dpcert.transformations.frame.profile`):
one number per privacy unit -- its number of groups, its most rows in one group, or its
largest or smallest value of a column.  Units and group keys are canonicalised as in
contribution bounding, so a unit here is a unit there.

Examples
--------
>>> import polars as pl
>>> df = pl.DataFrame({"u": [1, 1, 1, 2], "g": ["a", "a", "b", "a"], "x": [1.0, None, 3, 4]})
>>> unit_profile(df.lazy(), "u", ("g",), "groups").tolist()
[2, 1]
>>> unit_profile(df.lazy(), "u", ("g",), "rows").tolist()
[2, 1]
>>> unit_extremes(df.lazy(), "u", "x", "max").tolist(), unit_extremes(df.lazy(), None, "x", "min")
([3.0, 4.0], array([1., 3., 4.]))
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from dpcert._types import Array
from dpcert.backends._polars_types import _canonical
from dpcert.errors import InvalidParameter

__all__ = ["unit_extremes", "unit_profile"]

#: Values are clamped to ±2^64 (the largest |bound|) before anything reads them.
_LIMIT = 2.0**64


def unit_profile(lf: pl.LazyFrame, unit: str, by: Sequence[str], what: str
                 ) -> Array:
    """Per privacy unit (sorted by unit): its number of distinct groups of ``by``
    (``what="groups"``) or its largest number of rows in one group (``"rows"``)."""
    if what not in ("groups", "rows"):
        raise InvalidParameter(f"what={what!r} must be 'groups' or 'rows'")
    schema = lf.collect_schema()
    keys = [unit, *by]
    frame = lf.select([_canonical(c, schema[c]) for c in keys])
    per = frame.group_by(keys).agg(pl.len().alias("__n"))
    agg = pl.len() if what == "groups" else pl.col("__n").max()
    out = per.group_by(unit).agg(agg.cast(pl.Int64).alias("__v")).sort(unit, nulls_last=True)
    return out.select("__v").collect().to_series().to_numpy().astype(np.int64)


def unit_extremes(lf: pl.LazyFrame, unit: str | None, column: str, which: str
                  ) -> Array:
    """Per privacy unit with a value: the largest (``which="max"``) or smallest (``"min"``)
    non-null, non-NaN value of ``column``, clamped to ±2^64 (float64); every such value when
    ``unit`` is None (rows are units)."""
    if which not in ("max", "min"):
        raise InvalidParameter(f"which={which!r} must be 'max' or 'min'")
    schema = lf.collect_schema()
    col = pl.col(column).cast(pl.Float64)
    keep = col.is_not_null() & col.is_not_nan()
    if unit is None:
        v = pl.col("__v")
        vals = lf.select(col.alias("__v")).filter(v.is_not_null() & v.is_not_nan())
    else:
        ext = col.max() if which == "max" else col.min()
        vals = (lf.select(_canonical(unit, schema[unit]), col.alias(column)).filter(keep)
                .group_by(unit).agg(ext.alias("__v")).sort(unit, nulls_last=True))
    out: Array = vals.select("__v").collect().to_series().to_numpy()
    clipped: Array = np.clip(out.astype(np.float64), -_LIMIT, _LIMIT)
    return clipped
