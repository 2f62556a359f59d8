"""The embedded engine: compile a plan to Polars and compute exact per-group statistics.

Everything is vectorised in Polars (no Python loop per row):

* **Contribution bounding** (privacy unit ``u``, keys ``K``): each (unit, group) pair gets a fresh
  64-bit random number from the CSPRNG; a unit keeps the ``max_groups`` pairs with the smallest
  numbers (a uniformly random subset of its groups).  Each row gets a fresh random number; a pair
  keeps its ``max_rows_per_group`` rows with the smallest numbers (a uniformly random subset of its
  rows).  Never "first rows".
* **Sums** are exact fixed point: each value is imputed (null/NaN → lower bound), clamped to the
  bounds, rounded to the component's unit ``2^k`` and clamped again to the rounded bounds, then
  summed as int64 in two halves (high and low bits) that cannot overflow, recombined as Python
  ints per group.
* **Quantiles** count values at or below each candidate of an equally spaced grid per group.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

from dpcert.errors import InvalidParameter, OutOfDomain
from dpcert.frame.calibrate import Calibration
from dpcert.frame.plan import CountDistinct, Mean, Quantile, QueryPlan, Sum, Variance
from dpcert.frame.stats import GroupStats
from dpcert.samplers import EntropySource, default_source

__all__ = ["check_schema", "compute_stats", "to_lazy"]

_SPLIT = 24  # low-bit width of the two-part integer sums
# Bits of the bounding sort key taken from the unit hash and from the pair hash (tests shrink
# them to force hash collisions and exercise the exact repair path).
_UNIT_MASK = 0xFFFFFFFF00000000
_PAIR_MASK = 0x00000000FFFFFFFF
#: Rows per part when bounding large tables part by part (memory, not privacy).
_PART_ROWS = 1 << 21
_NUMERIC = (pl.Float32, pl.Float64, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16,
            pl.UInt32, pl.UInt64)


def to_lazy(data: Any) -> pl.LazyFrame:
    """Accept a LazyFrame, DataFrame, or a CSV/Parquet path."""
    if isinstance(data, pl.LazyFrame):
        return data
    if isinstance(data, pl.DataFrame):
        return data.lazy()
    if isinstance(data, str):
        if data.endswith(".parquet"):
            return pl.scan_parquet(data)
        if data.endswith(".csv"):
            return pl.scan_csv(data)
        raise InvalidParameter(f"data={data!r}: expected a .csv or .parquet path")
    raise InvalidParameter(
        f"data of type {type(data).__name__} is not a Polars LazyFrame/DataFrame or a path"
    )


def check_schema(lf: pl.LazyFrame, plan: QueryPlan) -> dict[str, Any]:
    """Check every column the plan reads exists with a usable type (reads only the schema)."""
    schema = lf.collect_schema()
    for col in plan.columns:
        if col not in schema:
            raise InvalidParameter(
                f"unknown column {col!r}; the data has {sorted(schema.names())}"
            )
    for a in plan.aggregates:
        for col in a.columns:
            if schema[col] not in _NUMERIC:
                raise InvalidParameter(
                    f"{a.name}: column {col!r} has type {schema[col]}, not numeric"
                )
    if plan.public_keys is not None and plan.group_keys:
        _public_key_frame(plan, {k: schema[k] for k in plan.group_keys})
    if plan.filters:  # resolve the filters against the schema (no data is read)
        try:
            _apply_filters(lf, plan).collect_schema()
        except (pl.exceptions.PolarsError, ValueError, TypeError) as e:
            raise InvalidParameter(f"filter {[str(f) for f in plan.filters]} is invalid: {e}"
                                   ) from e
    return dict(schema)


def _public_key_frame(plan: QueryPlan, dtypes: dict[str, Any]) -> pl.DataFrame:
    """The public keys as a frame with the key columns' types (raises if they do not fit)."""
    assert plan.public_keys is not None
    keys = list(plan.group_keys)
    try:
        key_df = pl.DataFrame([list(k) for k in plan.public_keys], schema=keys, orient="row")
        return key_df.cast({k: dtypes[k] for k in keys}, strict=True)
    except (pl.exceptions.PolarsError, TypeError, ValueError) as e:
        raise OutOfDomain(
            f"public keys {list(plan.public_keys)[:5]} do not match the key column types "
            f"{ {k: str(dtypes[k]) for k in keys} }: {e}"
        ) from e


def _apply_filters(lf: pl.LazyFrame, plan: QueryPlan) -> pl.LazyFrame:
    for f in plan.filters:
        lf = lf.filter(pl.sql_expr(f) if isinstance(f, str) else f)
    return lf


def _differs(s: pl.Series) -> np.ndarray[Any, Any]:
    """Does each row's value differ from the previous row's (nulls equal to nulls)?"""
    if s.dtype.is_numeric() and s.null_count() == 0:
        v = s.to_numpy()
        return np.asarray(v[1:] != v[:-1])
    a, b = s.slice(1), s.slice(0, len(s) - 1)
    eq = (a == b).fill_null(False) | (a.is_null() & b.is_null())
    return np.asarray(~eq.to_numpy())


def _run_rank(starts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """0-based position of each element inside its run (runs begin where ``starts`` is True)."""
    dtype = np.int32 if starts.size < 2**31 else np.int64
    pos = np.arange(starts.size, dtype=dtype)
    first = np.where(starts, pos, 0)
    np.maximum.accumulate(first, out=first)
    np.subtract(pos, first, out=pos)
    return pos


def _bounded(df: pl.DataFrame, plan: QueryPlan, source: EntropySource) -> pl.DataFrame:
    """Contribution bounding: ≤ max_groups groups per unit, ≤ max_rows_per_group rows per group.

    Rows are grouped with one 64-bit sort key: the high 32 bits of a keyed hash of the unit, then
    the low 32 bits of a keyed hash of the (unit, keys) pair, both keyed with fresh CSPRNG bits.
    Units whose high bits collide are merged into one "unit" (that only lowers what each of them
    contributes); pairs whose keys collide are detected and those blocks re-sorted exactly.
    Groups: a (merged) unit keeps its first ``max_groups`` pairs in keyed-hash order, a
    pseudo-random subset.  Rows: a pair with more than ``max_rows_per_group`` rows keeps the rows
    with the smallest fresh CSPRNG words, a uniformly random subset.  The privacy proof needs
    neither choice to be random, only that each unit's choice depends on its own rows.
    """
    unit = plan.privacy_unit
    if unit is None or df.height == 0:
        return df
    keys = list(plan.group_keys)
    G, R = plan.max_groups, plan.max_rows_per_group
    if "_k" not in df.columns:
        df = _with_sort_key(df, plan, source)
    hi = np.uint64(_UNIT_MASK)
    df = df.sort("_k")
    n = df.height
    k = df["_k"].to_numpy()
    same_k = k[1:] == k[:-1]
    pair_differs = np.zeros(n - 1, dtype=bool)
    for col in (unit, *keys):
        pair_differs |= _differs(df[col])
    bad = same_k & pair_differs
    if bad.any():  # 32-bit pair-hash collisions inside a unit block: re-sort those blocks exactly
        block = np.cumsum(np.concatenate(([True], ~same_k))) - 1
        df = df.with_columns(pl.Series("_b", block)).sort(["_b", unit, *keys], nulls_last=True)
        df = df.drop("_b")
        pair_differs = np.zeros(n - 1, dtype=bool)
        for col in (unit, *keys):
            pair_differs |= _differs(df[col])
    new_unit = np.concatenate(([True], (k[1:] & hi) != (k[:-1] & hi)))
    new_pair = np.concatenate(([True], ~same_k | pair_differs))
    pair_id: np.ndarray[Any, Any] = np.cumsum(new_pair, dtype=np.int32 if n < 2**31 else np.int64)
    pair_id -= 1
    keep_pair = _run_rank(new_unit[new_pair]) < G  # rank of each pair inside its unit
    keep = keep_pair[pair_id]
    rows_per_pair = np.bincount(pair_id)
    big = (rows_per_pair[pair_id] > R) & keep
    if big.any():
        pos_big = np.nonzero(big)[0]
        words = source.random_uint64(pos_big.size)
        order = np.lexsort((words, pair_id[pos_big]))
        p_sorted = pair_id[pos_big][order]
        rank = _run_rank(np.concatenate(([True], p_sorted[1:] != p_sorted[:-1])))
        keep[pos_big[order[rank >= R]]] = False
    return df.filter(pl.Series(keep)).drop("_k")


def _with_sort_key(df: pl.DataFrame, plan: QueryPlan, source: EntropySource) -> pl.DataFrame:
    """Add the bounding sort key ``_k`` (unit-hash high bits | pair-hash low bits)."""
    unit = plan.privacy_unit
    assert unit is not None
    keys = list(plan.group_keys)
    seeds = [int(v) >> 1 for v in source.random_uint64(2)]
    pair_expr = pl.struct([unit, *keys]).hash(seeds[1]) if keys else pl.col(unit).hash(seeds[1])
    hi_lit = pl.lit(_UNIT_MASK, dtype=pl.UInt64)
    lo_lit = pl.lit(_PAIR_MASK, dtype=pl.UInt64)
    return df.with_columns(
        ((pl.col(unit).hash(seeds[0]) & hi_lit) | (pair_expr & lo_lit)).alias("_k"))


def _parts(df: pl.DataFrame, plan: QueryPlan, source: EntropySource) -> Iterator[pl.DataFrame]:
    """Split into unit-disjoint parts (by the top bits of ``_k``) to bound memory.

    Every row of a unit has the same unit-hash bits, so a unit never straddles two parts and
    bounding part by part is the same as bounding the whole.
    """
    if plan.privacy_unit is None:
        yield df
        return
    df = _with_sort_key(df, plan, source)
    bits = max(0, math.ceil(math.log2(max(df.height, 1) / _PART_ROWS)))
    if bits == 0 or _UNIT_MASK >> 63 == 0:
        yield df
        return
    bits = min(bits, 8)
    top = pl.col("_k") // (1 << (64 - bits))
    for i in range(1 << bits):  # one part in memory at a time
        yield df.filter(top == i)


def _bounded_windows(df: pl.DataFrame, plan: QueryPlan, source: EntropySource) -> pl.DataFrame:
    """Exact bounding with window functions (used only after a hash collision)."""
    unit = plan.privacy_unit
    assert unit is not None
    keys = list(plan.group_keys)
    G, R = plan.max_groups, plan.max_rows_per_group
    cond = []
    df = df.with_columns(pl.Series("_r", source.random_uint64(df.height)))
    if keys:
        df = df.with_columns((pl.struct([unit, *keys]).rank("dense") - 1).alias("_pair"))
        n_pairs = int(df["_pair"].max()) + 1  # type: ignore[arg-type]
        pair_rand = pl.Series("_pr", source.random_uint64(n_pairs))
        df = df.with_columns(pl.lit(pair_rand).gather(pl.col("_pair")).alias("_pr"))
        cond.append(pl.col("_pr").rank("dense").over(unit) <= G)
        cond.append(pl.col("_r").rank("ordinal").over([unit, *keys]) <= R)
    else:
        cond.append(pl.col("_r").rank("ordinal").over(unit) <= R)
    return df.filter(*cond).drop([c for c in ("_r", "_pair", "_pr") if c in df.columns])


def _value_expr(col: str, lo: float, hi: float) -> pl.Expr:
    v = pl.col(col).cast(pl.Float64)
    return v.fill_nan(None).fill_null(lo).clip(lo, hi)


def _fixed_point(expr: pl.Expr, unit: Fraction, lo_u: Fraction, hi_u: Fraction) -> pl.Expr:
    # unit is a power of two, so the multiplication below is exact in float64; rint is exact.
    inv = float(1 / unit)
    return (expr * inv).round(0).clip(float(lo_u), float(hi_u)).cast(pl.Int64)


def compute_stats(data: Any, plan: QueryPlan, cal: Calibration,
                  source: EntropySource | None = None) -> GroupStats:
    """Exact per-group statistics of ``plan`` on ``data`` (Polars)."""
    src = default_source() if source is None else source
    lf = _apply_filters(to_lazy(data), plan)
    # keep one column even when the plan reads none (a plain count), so rows are not lost
    lf = lf.select(list(plan.columns)) if plan.columns else lf.with_row_index("_row").select("_row")
    df = lf.collect()
    keys = list(plan.group_keys)
    aggs: list[pl.Expr] = []
    int_cols: list[str] = []
    for a in plan.aggregates:
        for c in cal.by_aggregate(a.name):
            if c.kind == "count":
                aggs.append(pl.len().cast(pl.Int64).alias(c.name))
                int_cols.append(c.name)
            elif c.kind == "count_distinct":
                assert isinstance(a, CountDistinct)
                unit_col = plan.privacy_unit
                expr = pl.col(unit_col).n_unique() if unit_col else pl.len()
                aggs.append(expr.cast(pl.Int64).alias(c.name))
                int_cols.append(c.name)
            elif c.kind in ("sum", "sumsq"):
                assert isinstance(a, (Sum, Mean, Variance)) and c.bounds is not None
                lo, hi = a.bounds
                v = _value_expr(a.column, lo, hi)
                if c.kind == "sumsq":
                    v = v * v
                # shift to non-negative integers so the two halves are unambiguous
                fp = _fixed_point(v, c.unit, *c.bounds) - int(c.bounds[0])
                aggs.append((fp // (1 << _SPLIT)).sum().alias(c.name + "#hi"))
                aggs.append((fp % (1 << _SPLIT)).sum().alias(c.name + "#lo"))
                aggs.append(pl.len().cast(pl.Int64).alias(c.name + "#n"))
            elif c.kind == "quantile":
                pass  # handled below
            elif c.kind == "select":
                pass
            else:  # pragma: no cover
                raise InvalidParameter(f"unknown component kind {c.kind}")
    sel = cal.selection()
    if sel is not None:
        unit_col = plan.privacy_unit
        expr = pl.col(unit_col).n_unique() if unit_col else pl.len()
        aggs.append(expr.cast(pl.Int64).alias(sel.name))
        int_cols.append(sel.name)
    grouped_parts: list[pl.DataFrame] = []
    bin_parts: list[dict[str, pl.DataFrame]] = []
    for part in _parts(df, plan, src):
        bounded = _bounded(part, plan, src) if plan.privacy_unit else part
        if keys:
            g = bounded.group_by(keys).agg(aggs) if aggs else bounded.select(keys).unique()
        else:
            g = bounded.select(aggs) if aggs else pl.DataFrame({"_one": [1]})
        grouped_parts.append(g)
        bin_parts.append(_bin_counts(bounded, plan))
    del df
    # partial aggregates of unit-disjoint parts add up exactly (all are integer sums)
    if len(grouped_parts) == 1:
        grouped = grouped_parts[0]
    elif keys:
        grouped = pl.concat(grouped_parts).group_by(keys).agg(pl.all().sum())
    else:
        grouped = pl.concat(grouped_parts).sum()
    grouped = _align_keys(grouped, plan)
    values: dict[str, np.ndarray[Any, Any]] = {}
    for name in int_cols:
        values[name] = grouped[name].fill_null(0).to_numpy().astype(np.int64)
    for c in cal.components:
        if c.kind in ("sum", "sumsq"):
            assert c.bounds is not None
            hi_arr = grouped[c.name + "#hi"].fill_null(0).to_numpy().astype(np.int64)
            lo_arr = grouped[c.name + "#lo"].fill_null(0).to_numpy().astype(np.int64)
            n_arr = grouped[c.name + "#n"].fill_null(0).to_numpy().astype(np.int64)
            shift = int(c.bounds[0])
            if (np.abs(hi_arr).max(initial=0) < (1 << (60 - _SPLIT))
                    and abs(shift) * max(int(n_arr.max(initial=0)), 1) < (1 << 60)):
                values[c.name] = hi_arr * (1 << _SPLIT) + lo_arr + n_arr * shift
            else:  # exact Python integers
                values[c.name] = (hi_arr.astype(object) * (1 << _SPLIT)
                                  + lo_arr.astype(object) + n_arr.astype(object) * shift)
    key_tuples: list[tuple[Any, ...]] = (
        [tuple(r) for r in grouped.select(keys).iter_rows()] if keys else [()]
    )
    histograms, candidates = _quantile_histograms(bin_parts, plan, grouped)
    return GroupStats(key_tuples, values, histograms, candidates)


def _align_keys(grouped: pl.DataFrame, plan: QueryPlan) -> pl.DataFrame:
    keys = list(plan.group_keys)
    if not keys:
        return grouped
    if plan.public_keys is None:
        return grouped.sort(keys, nulls_last=True)
    key_df = _public_key_frame(plan, {k: grouped.schema[k] for k in keys})
    return key_df.join(grouped, on=keys, how="left", nulls_equal=True)


def _bin_counts(df: pl.DataFrame, plan: QueryPlan) -> dict[str, pl.DataFrame]:
    """Per quantile aggregate: rows per (keys, candidate bin) of one bounded part."""
    out: dict[str, pl.DataFrame] = {}
    keys = list(plan.group_keys)
    for a in plan.aggregates:
        if not isinstance(a, Quantile):
            continue
        lo, hi = a.bounds
        m = a.candidates
        step = (hi - lo) / (m - 1) if hi > lo else 1.0
        # index of the first candidate >= value: value <= cand[j]  <=>  idx <= j
        idx = ((_value_expr(a.column, lo, hi) - lo) / step).ceil().clip(0, m - 1).cast(pl.Int64)
        out[a.name] = (df.select(*keys, idx.alias("_bin")).group_by([*keys, "_bin"])
                       .agg(pl.len().cast(pl.Int64).alias("_n")))
    return out


def _quantile_histograms(bin_parts: list[dict[str, pl.DataFrame]], plan: QueryPlan,
                         grouped: pl.DataFrame) -> tuple[dict[str, Any], dict[str, Any]]:
    histograms: dict[str, Any] = {}
    candidates: dict[str, Any] = {}
    keys = list(plan.group_keys)
    n_groups = grouped.height if keys else 1
    for a in plan.aggregates:
        if not isinstance(a, Quantile):
            continue
        lo, hi = a.bounds
        m = a.candidates
        cand = np.linspace(lo, hi, m)
        counts = pl.concat([p[a.name] for p in bin_parts])
        if keys:
            gid = grouped.select(keys).with_row_index("_gid")
            counts = counts.join(gid, on=keys, how="inner", nulls_equal=True)
            g = counts["_gid"].to_numpy().astype(np.int64)
        else:
            g = np.zeros(counts.height, dtype=np.int64)
        hist = np.zeros((n_groups, m), dtype=np.int64)
        np.add.at(hist, (g, counts["_bin"].to_numpy().astype(np.int64)),
                  counts["_n"].to_numpy().astype(np.int64))
        cum = np.cumsum(hist, axis=1)
        for qname in a.names():
            histograms[qname] = cum
            candidates[qname] = cand
    return histograms, candidates
