"""The embedded engine: compile a plan to Polars and compute exact per-group statistics.

Everything is vectorised in Polars (no Python loop per row):

* **Contribution bounding** (privacy unit ``u``, keys ``K``): deterministic given three fresh
  CSPRNG seeds per release; units are separated by exact comparison of their canonical values
  and a keyed hash only orders them (:func:`_bounded`).
* **Sums** are exact fixed point: each value is imputed (null/NaN → lower bound), clamped to the
  bounds, rounded to the component's unit ``2^k`` and clamped again to the rounded bounds, then
  summed as int64 in two halves (high and low bits) that cannot overflow, recombined as Python
  ints per group.
* **Quantiles** count values at or below each candidate of an equally spaced grid per group,
  kept sparse (only non-empty (group, bin) cells) so memory is bounded by the rows.

Internal columns get a prefix that no data column starts with (:func:`internal_prefix`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

from dpcert.errors import InvalidParameter
from dpcert.frame.calibrate import Calibration
from dpcert.frame.checks import (
    canonical,
    check_bounds_magnitude,
    check_filters,
    check_output_names,
    check_public_keys,
    check_unit_column,
    internal_prefix,
)
from dpcert.frame.io import to_lazy
from dpcert.frame.plan import CountDistinct, Mean, Quantile, QueryPlan, Sum, Variance
from dpcert.frame.stats import GroupStats, SparseHistogram
from dpcert.samplers import EntropySource, default_source

__all__ = ["check_schema", "compute_stats", "to_lazy"]

_SPLIT = 24  # low-bit width of the two-part integer sums
#: Bits of the unit, pair and row hashes used for ordering (tests shrink them to force
#: collisions: the result must not change, since units and keys are compared exactly).
_UNIT_MASK = 0xFFFFFFFFFFFFFFFF
_PAIR_MASK = 0xFFFFFFFFFFFFFFFF
_ROW_MASK = 0xFFFFFFFFFFFFFFFF
#: Rows per part when bounding large tables part by part (memory, not privacy).
_PART_ROWS = 1 << 21
_NUMERIC = (pl.Float32, pl.Float64, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16,
            pl.UInt32, pl.UInt64)


def check_schema(lf: pl.LazyFrame, plan: QueryPlan) -> dict[str, Any]:
    """Everything about ``plan`` that can be checked on the schema, before any charge: columns
    exist with usable types, the unit can be compared exactly and is not a group key, filters
    are row-local and infallible, public keys fit their columns and are distinct, output names
    do not collide, bounds are finite enough.  Reads no rows."""
    schema = dict(lf.collect_schema())
    for col in plan.columns:
        if col not in schema:
            raise InvalidParameter(
                f"unknown column {col!r}; the data has {sorted(schema)}"
            )
    for a in plan.aggregates:
        for col in a.columns:
            if schema[col] not in _NUMERIC:
                raise InvalidParameter(
                    f"{a.name}: column {col!r} has type {schema[col]}, not numeric"
                )
        if isinstance(a, (Sum, Mean, Variance, Quantile)):
            check_bounds_magnitude(a.name, a.bounds)
    check_unit_column(plan.privacy_unit, plan.group_keys, schema)
    check_output_names(plan.output_names(), plan.group_keys)
    if plan.public_keys is not None and plan.group_keys:
        check_public_keys(plan.group_keys, plan.public_keys, schema)
    check_filters(plan.filters, schema)
    return schema


def _apply_filters(lf: pl.LazyFrame, plan: QueryPlan) -> pl.LazyFrame:
    for f in plan.filters:
        lf = lf.filter(pl.sql_expr(f) if isinstance(f, str) else f)
    return lf


def _differs(s: pl.Series) -> np.ndarray[Any, Any]:
    """Does each row's value differ from the previous row's?  Exact identity: nulls equal
    nulls, every NaN equals every NaN (values are canonical, so −0.0 never occurs)."""
    if s.dtype.is_numeric() and s.null_count() == 0:
        v = s.to_numpy()
        d = v[1:] != v[:-1]
        if s.dtype.is_float():
            d &= ~(np.isnan(v[1:]) & np.isnan(v[:-1]))
        return np.asarray(d)
    a, b = s.slice(1), s.slice(0, len(s) - 1)
    eq = (a == b).fill_null(False) | (a.is_null() & b.is_null())
    if s.dtype.is_float():
        eq = eq | (a.is_nan() & b.is_nan()).fill_null(False)
    return np.asarray(~eq.to_numpy())


def _run_rank(starts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """0-based position of each element inside its run (runs begin where ``starts`` is True)."""
    dtype = np.int32 if starts.size < 2**31 else np.int64
    pos = np.arange(starts.size, dtype=dtype)
    first = np.where(starts, pos, 0)
    np.maximum.accumulate(first, out=first)
    np.subtract(pos, first, out=pos)
    return pos


class _Names:
    """Internal column names, guaranteed absent from the data (a prefix no column has)."""

    def __init__(self, columns: list[str]) -> None:
        p = internal_prefix(columns)
        self.h, self.p, self.w = p + "unit_hash", p + "pair_hash", p + "row_hash"
        self.row, self.bin, self.n, self.gid = p + "row", p + "bin", p + "n", p + "gid"
        self.one = p + "one"
        self.prefix = p


def _bounded(df: pl.DataFrame, plan: QueryPlan, seeds: list[int], nm: _Names) -> pl.DataFrame:
    """Contribution bounding: ≤ max_groups groups per unit, ≤ max_rows_per_group rows per group.

    Deterministic given the three CSPRNG seeds (keyed hashes), and each unit's kept rows depend
    only on that unit's own rows.  Rows are sorted by (keyed hash of the unit, the canonical
    unit value itself, keyed hash of the (unit, keys) pair, the key values, keyed hash of the
    row's values, the values themselves; rows equal in all of these are interchangeable).
    Units are separated by *exact*
    comparison of the canonical unit value (every NaN one unit, −0.0 = 0.0, null one unit), so
    two units whose hashes collide are never merged: the hash only orders.  A unit keeps its
    first ``max_groups`` pairs in this order (a keyed pseudo-random subset of its groups), and a
    pair its first ``max_rows_per_group`` rows (a keyed pseudo-random subset of its rows).  The
    privacy proof needs neither choice to be random, only that it depends on the unit's own rows.
    """
    unit = plan.privacy_unit
    if unit is None or df.height == 0:
        return df
    keys = list(plan.group_keys)
    G, R = plan.max_groups, plan.max_rows_per_group
    if nm.h not in df.columns:
        df = _with_hashes(df, plan, seeds, nm)
    df, unit_differs, key_differs = _sorted(df, unit, keys, nm)
    n = df.height
    new_unit = np.concatenate(([True], unit_differs))
    new_pair = np.concatenate(([True], unit_differs | key_differs))
    pair_id: np.ndarray[Any, Any] = np.cumsum(new_pair, dtype=np.int32 if n < 2**31 else np.int64)
    pair_id -= 1
    keep_pair = _run_rank(new_unit[new_pair]) < G  # rank of each pair inside its unit
    keep = keep_pair[pair_id] & (_run_rank(new_pair) < R)  # rank of each row inside its pair
    return df.filter(pl.Series(keep)).drop([nm.h, nm.p, nm.w])


def _sorted(df: pl.DataFrame, unit: str, keys: list[str], nm: _Names
            ) -> tuple[pl.DataFrame, np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Rows in bounding order, and where the unit and the keys change (exactly).

    Fast path: a sort by (unit hash, pair hash, row hash).  It is the exact order of
    :func:`_bounded` unless two different units share a unit hash, two different key tuples of
    one unit share a pair hash, or two different rows of one pair share a row hash (rows equal
    in every column read are interchangeable, so their order does not matter).  All three are
    detected exactly, and then the rows are sorted by the values themselves (slower).
    """
    values = [c for c in df.columns if c not in (unit, *keys, nm.h, nm.p, nm.w)]
    out = df.sort([nm.h, nm.p, nm.w])
    h, p, w = out[nm.h].to_numpy(), out[nm.p].to_numpy(), out[nm.w].to_numpy()
    unit_differs = _differs(out[unit])
    key_differs = np.zeros(max(out.height - 1, 0), dtype=bool)
    for col in keys:
        key_differs |= _differs(out[col])
    same_h = h[1:] == h[:-1]
    same_pair_hash = same_h & (p[1:] == p[:-1]) & ~unit_differs
    collide = (same_h & unit_differs).any() or (same_pair_hash & key_differs).any()
    same_row_hash = same_pair_hash & ~key_differs & (w[1:] == w[:-1])
    if not collide and same_row_hash.any() and values:
        value_differs = np.zeros_like(same_row_hash)
        for col in values:
            value_differs |= _differs(out[col])
        collide = bool((same_row_hash & value_differs).any())
    if collide:
        out = df.sort([nm.h, unit, nm.p, *keys, nm.w, *values], maintain_order=True)
        unit_differs = _differs(out[nm.h]) | _differs(out[unit])
        key_differs = np.zeros(max(out.height - 1, 0), dtype=bool)
        for col in keys:
            key_differs |= _differs(out[col])
    else:
        unit_differs = unit_differs | ~same_h
    return out, unit_differs, key_differs


def _with_hashes(df: pl.DataFrame, plan: QueryPlan, seeds: list[int],
                 nm: _Names) -> pl.DataFrame:
    """Add the keyed unit, pair and row hashes (masks shrink them in tests, to force
    collisions)."""
    unit = plan.privacy_unit
    assert unit is not None
    keys = list(plan.group_keys)
    values = [c for c in plan.columns if c != unit and c not in keys]
    pair = pl.struct([unit, *keys]).hash(seeds[1]) if keys else pl.lit(0, dtype=pl.UInt64)
    row = pl.struct(values).hash(seeds[2]) if values else pl.lit(0, dtype=pl.UInt64)
    return df.with_columns(
        (pl.col(unit).hash(seeds[0]) & pl.lit(_UNIT_MASK, dtype=pl.UInt64)).alias(nm.h),
        (pair & pl.lit(_PAIR_MASK, dtype=pl.UInt64)).alias(nm.p),
        (row & pl.lit(_ROW_MASK, dtype=pl.UInt64)).alias(nm.w))


def _parts(df: pl.DataFrame, plan: QueryPlan, seeds: list[int],
           nm: _Names) -> Iterator[pl.DataFrame]:
    """Split into unit-disjoint parts (by the top bits of the unit hash) to bound memory.

    Every row of a unit has the same unit hash, so a unit never straddles two parts and
    bounding part by part is the same as bounding the whole.
    """
    if plan.privacy_unit is None:
        yield df
        return
    df = _with_hashes(df, plan, seeds, nm)
    bits = max(0, math.ceil(math.log2(max(df.height, 1) / _PART_ROWS)))
    if bits == 0:
        yield df
        return
    bits = min(bits, 8)
    top = pl.col(nm.h) // (1 << (64 - bits))
    for i in range(1 << bits):  # one part in memory at a time
        yield df.filter(top == i)


def _value_expr(col: str, lo: float, hi: float) -> pl.Expr:
    v = pl.col(col).cast(pl.Float64)
    return v.fill_nan(None).fill_null(lo).clip(lo, hi)


def _fixed_point(expr: pl.Expr, unit: Fraction, lo_u: Fraction, hi_u: Fraction) -> pl.Expr:
    # unit is a power of two, so the multiplication below is exact in float64; rint is exact.
    inv = float(1 / unit)
    return (expr * inv).round(0).clip(float(lo_u), float(hi_u)).cast(pl.Int64)


def _draw_seeds(source: EntropySource) -> list[int]:
    return [int(v) >> 1 for v in source.random_uint64(3)]


def compute_stats(data: Any, plan: QueryPlan, cal: Calibration,
                  source: EntropySource | None = None) -> GroupStats:
    """Exact per-group statistics of ``plan`` on ``data`` (Polars).

    The bounding seeds are the first three words drawn from ``source``: with a seeded test
    source the bounding of two neighbouring tables is coupled exactly (``dpcert.testing``).
    """
    src = default_source() if source is None else source
    seeds = _draw_seeds(src)
    lf = to_lazy(data)
    schema = dict(lf.collect_schema())
    nm = _Names(list(schema))
    lf = _apply_filters(lf, plan)
    keys = list(plan.group_keys)
    # keep one column even when the plan reads none (a plain count), so rows are not lost
    lf = (lf.select(list(plan.columns)) if plan.columns
          else lf.with_row_index(nm.row).select(nm.row))
    canon = [canonical(c, schema[c]) for c in (*keys, *([plan.privacy_unit]
                                                         if plan.privacy_unit else []))]
    df = lf.with_columns(canon).collect() if canon else lf.collect()
    aggs: list[pl.Expr] = []
    int_cols: dict[str, str] = {}  # component name -> internal column
    sums: dict[str, tuple[str, str, str]] = {}
    for a in plan.aggregates:
        for c in cal.by_aggregate(a.name):
            tmp = f"{nm.prefix}c{len(int_cols) + len(sums)}"
            if c.kind == "count":
                aggs.append(pl.len().cast(pl.Int64).alias(tmp))
                int_cols[c.name] = tmp
            elif c.kind == "count_distinct":
                assert isinstance(a, CountDistinct)
                unit_col = plan.privacy_unit
                expr = pl.col(unit_col).n_unique() if unit_col else pl.len()
                aggs.append(expr.cast(pl.Int64).alias(tmp))
                int_cols[c.name] = tmp
            elif c.kind in ("sum", "sumsq"):
                assert isinstance(a, (Sum, Mean, Variance)) and c.bounds is not None
                lo, hi = a.bounds
                v = _value_expr(a.column, lo, hi)
                if c.kind == "sumsq":
                    v = v * v
                # shift to non-negative integers so the two halves are unambiguous
                fp = _fixed_point(v, c.unit, *c.bounds) - int(c.bounds[0])
                names = (tmp + "h", tmp + "l", tmp + "n")
                aggs.append((fp // (1 << _SPLIT)).sum().alias(names[0]))
                aggs.append((fp % (1 << _SPLIT)).sum().alias(names[1]))
                aggs.append(pl.len().cast(pl.Int64).alias(names[2]))
                sums[c.name] = names
            elif c.kind in ("quantile", "select"):
                pass  # quantiles: below; selection: after the loop
            else:  # pragma: no cover
                raise InvalidParameter(f"unknown component kind {c.kind}")
    sel = cal.selection()
    if sel is not None:
        unit_col = plan.privacy_unit
        expr = pl.col(unit_col).n_unique() if unit_col else pl.len()
        tmp = f"{nm.prefix}sel"
        aggs.append(expr.cast(pl.Int64).alias(tmp))
        int_cols[sel.name] = tmp
    grouped_parts: list[pl.DataFrame] = []
    bin_parts: list[dict[str, pl.DataFrame]] = []
    for part in _parts(df, plan, seeds, nm):
        bounded = _bounded(part, plan, seeds, nm) if plan.privacy_unit else part
        if keys:
            g = bounded.group_by(keys).agg(aggs) if aggs else bounded.select(keys).unique()
        else:
            g = bounded.select(aggs) if aggs else pl.DataFrame({nm.one: [1]})
        grouped_parts.append(g)
        bin_parts.append(_bin_counts(bounded, plan, nm))
    del df
    # partial aggregates of unit-disjoint parts add up exactly (all are integer sums)
    if len(grouped_parts) == 1:
        grouped = grouped_parts[0]
    elif keys:
        grouped = pl.concat(grouped_parts).group_by(keys).agg(pl.all().sum())
    else:
        grouped = pl.concat(grouped_parts).sum()
    grouped = _align_keys(grouped, plan, schema, nm)
    values: dict[str, np.ndarray[Any, Any]] = {}
    for name, tmp in int_cols.items():
        values[name] = grouped[tmp].fill_null(0).to_numpy().astype(np.int64)
    for c in cal.components:
        if c.name in sums:
            assert c.bounds is not None
            h, lo_, n_ = sums[c.name]
            hi_arr = grouped[h].fill_null(0).to_numpy().astype(np.int64)
            lo_arr = grouped[lo_].fill_null(0).to_numpy().astype(np.int64)
            n_arr = grouped[n_].fill_null(0).to_numpy().astype(np.int64)
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
    histograms, candidates = _quantile_histograms(bin_parts, plan, grouped, nm)
    return GroupStats(key_tuples, values, histograms, candidates)


def _join_on_keys(left: pl.DataFrame, right: pl.DataFrame, keys: list[str], how: Any,
                  nm: _Names) -> pl.DataFrame:
    """Join on key values by exact identity: nulls equal nulls, and float keys are joined on
    their text form, so every NaN matches every NaN (a float join need not match NaN)."""
    on: list[str] = []
    lx, rx = [], []
    for k in keys:
        if left.schema[k].is_float():
            j = f"{nm.prefix}join_{len(on)}"
            lx.append(pl.col(k).cast(pl.String).alias(j))
            rx.append(pl.col(k).cast(pl.String).alias(j))
            on.append(j)
        else:
            on.append(k)
    extra = [c for c in on if c not in keys]
    right = right.with_columns(rx).drop([k for k in keys if k not in on]) if extra else right
    out = left.with_columns(lx).join(right, on=on, how=how, nulls_equal=True,
                                     maintain_order="left")
    return out.drop(extra)


def _align_keys(grouped: pl.DataFrame, plan: QueryPlan, schema: dict[str, Any],
                nm: _Names) -> pl.DataFrame:
    keys = list(plan.group_keys)
    if not keys:
        return grouped
    if plan.public_keys is None:
        return grouped.sort(keys, nulls_last=True)
    key_df = check_public_keys(keys, plan.public_keys, schema)
    key_df = key_df.cast({k: grouped.schema[k] for k in keys})  # canonical floats are Float64
    return _join_on_keys(key_df, grouped, keys, "left", nm)


def _bin_counts(df: pl.DataFrame, plan: QueryPlan, nm: _Names) -> dict[str, pl.DataFrame]:
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
        out[a.name] = (df.select(*keys, idx.alias(nm.bin)).group_by([*keys, nm.bin])
                       .agg(pl.len().cast(pl.Int64).alias(nm.n)))
    return out


def _quantile_histograms(bin_parts: list[dict[str, pl.DataFrame]], plan: QueryPlan,
                         grouped: pl.DataFrame, nm: _Names
                         ) -> tuple[dict[str, Any], dict[str, Any]]:
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
            gid = grouped.select(keys).with_row_index(nm.gid)
            counts = _join_on_keys(counts, gid, keys, "inner", nm)
            g = counts[nm.gid].to_numpy().astype(np.int64)
        else:
            g = np.zeros(counts.height, dtype=np.int64)
        hist = SparseHistogram(g, counts[nm.bin].to_numpy().astype(np.int64),
                               counts[nm.n].to_numpy().astype(np.int64), n_groups, m)
        for qname in a.names():
            histograms[qname] = hist
            candidates[qname] = cand
    return histograms, candidates
