"""The Polars backend: :class:`~dpcert.backends.base.FrameOps` on Polars frames.

Keyed bounding rule (the same on every backend, see :mod:`dpcert.backends._hash`), with
``h(...) = xxhash64(k1, k2, ...)`` keyed by the release key:

1. a unit ``u`` keeps the ``max_groups`` of its groups ``g`` with the smallest
   ``h(u, g)`` (a signed long; ties broken by the group values, nulls last);
2. inside a kept group, it keeps the ``max_rows_per_group`` rows with the smallest
   ``h(u, g, v)`` over the value columns ``v`` (ties broken by the values; rows that tie on
   both are interchangeable, they contribute the same to every statistic).

Units and groups are compared exactly: float keys are canonical (``-0.0 → 0.0``, one NaN), null
is one value.  The hash only orders.  The implementation is one NumPy sort of packed 64-bit keys
(unit-hash bits | pair-hash bits | row index); blocks where the truncated bits cannot decide (two
units sharing the unit bits, two groups of a unit sharing the pair bits) are re-sorted exactly by
``(unit, h(u, g), g)``.  Row hashes are only computed for the rows of groups over the row limit.

Statistics are exact integers: fixed-point values (the value rule of :mod:`dpcert.backends.base`)
summed in two int64 halves that cannot overflow and recombined as Python integers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from dpcert.backends import _hash
from dpcert.backends._polars_types import _canonical, _logical
from dpcert.backends.base import BoundSpec, GroupedStats, StatSpec
from dpcert.errors import InvalidParameter

__all__ = ["PolarsBackend", "to_lazy"]

_SPLIT = 24  # low-bit width of the two-part integer sums
#: Rows sorted in one packed-key sort; larger frames are bounded in unit-disjoint parts.
_PART_ROWS = 1 << 24
#: Bits of the packed key taken from the pair hash (the rest of the free bits: the unit hash).
_PAIR_BITS = 14
#: Tests shrink this to force unit-hash collisions in the packed key (exercising the exact path).
_UNIT_BITS: int | None = None


def to_lazy(data: Any) -> pl.LazyFrame:
    """Accept a LazyFrame, DataFrame, or a ``.csv`` / ``.parquet`` path."""
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
        f"data of type {type(data).__name__} is not a Polars LazyFrame/DataFrame or a path")


def _differs(s: pl.Series | np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Does each value differ from the previous one (exact; null equals null, NaN equals NaN)?"""
    if isinstance(s, np.ndarray):
        a, b = s[1:], s[:-1]
        if s.dtype.kind == "f":
            return np.asarray((a != b) & ~(np.isnan(a) & np.isnan(b)))
        return np.asarray(a != b)
    if s.len() < 2:
        return np.zeros(0, dtype=bool)
    sa, sb = s.slice(1), s.slice(0, s.len() - 1)
    eq = (sa == sb).fill_null(False) | (sa.is_null() & sb.is_null())
    if s.dtype.is_float():
        eq = eq | (sa.is_nan() & sb.is_nan()).fill_null(False)
    return np.asarray(~eq.to_numpy())


def _starts(cols: Sequence[pl.Series | np.ndarray[Any, Any]], n: int) -> np.ndarray[Any, Any]:
    """True where a row starts a new run of equal tuples (the first row always does)."""
    out = np.zeros(n, dtype=bool)
    if n:
        out[0] = True
        for s in cols:
            out[1:] |= _differs(s)
    return out


def _run_first(starts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Position of the first element of each element's run (runs begin where ``starts``)."""
    dtype = np.int32 if starts.size < 2**31 else np.int64
    first = np.where(starts, np.arange(starts.size, dtype=dtype), dtype(0))
    np.maximum.accumulate(first, out=first)
    return first


def _run_rank(starts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """0-based position of each element inside its run (runs begin where ``starts`` is True)."""
    first = _run_first(starts)
    out: np.ndarray[Any, Any] = np.arange(starts.size, dtype=first.dtype) - first
    return out


class _Sorted:
    """Key columns gathered once in sorted order (NumPy for null-free numbers, else Polars)."""

    def __init__(self, df: pl.DataFrame, cols: Sequence[str], perm: np.ndarray[Any, Any]) -> None:
        self.df, self.cols = df, list(cols)
        self.arrays: dict[str, pl.Series | np.ndarray[Any, Any]] = {}
        slow = []
        for c in cols:
            s = df[c]
            if (s.dtype.is_numeric() or s.dtype in (pl.Date, pl.Boolean)) and not s.null_count():
                self.arrays[c] = s.to_physical().to_numpy()[perm]
            else:
                slow.append(c)
        if slow:
            sub = df.select(slow)[perm]
            for c in slow:
                self.arrays[c] = sub[c]

    def update(self, perm: np.ndarray[Any, Any], pos: np.ndarray[Any, Any]) -> None:
        """Positions ``pos`` of the sorted order now hold rows ``perm[pos]``."""
        for c, arr in self.arrays.items():
            if isinstance(arr, np.ndarray):
                arr[pos] = self.df[c].to_physical().to_numpy()[perm[pos]]
            else:
                self.arrays[c] = self.df[c][perm]

    def starts(self, cols: Sequence[str]) -> np.ndarray[Any, Any]:
        n = self.df.height
        return _starts([self.arrays[c] for c in cols], n)


def _bound_part(df: pl.DataFrame, spec: BoundSpec, seed: int) -> np.ndarray[Any, Any]:
    """Keep-mask of the keyed bounding rule on ``df`` (all rows of each unit are in ``df``)."""
    assert spec.unit is not None
    n = df.height
    by = list(spec.by)
    hu = _hash.hash_series(df[spec.unit], seed)
    hp = _hash.hash_chain([df[c] for c in by], hu) if by else hu
    idx_bits = max(1, (n - 1).bit_length())
    pair_bits = min(_PAIR_BITS, (64 - idx_bits) // 3) if by else 0
    unit_bits = 64 - idx_bits - pair_bits
    if _UNIT_BITS is not None:
        unit_bits = min(unit_bits, _UNIT_BITS)
    key = hu >> np.uint64(64 - unit_bits)
    key <<= np.uint64(64 - unit_bits)
    if by:
        ph = _hash.signed_order(hp)
        ph >>= np.uint64(64 - pair_bits)
        ph <<= np.uint64(idx_bits)
        key |= ph
        del ph
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    perm = (key & np.uint64((1 << idx_bits) - 1)).view(np.int64)
    key >>= np.uint64(idx_bits)  # the (unit bits | pair bits) prefix of each sorted row
    cols = _Sorted(df, [spec.unit, *by], perm)
    unit_new = cols.starts([spec.unit])
    pair_new = unit_new | cols.starts(by) if by else unit_new
    same_top = np.zeros(n, dtype=bool)
    np.equal(key[1:], key[:-1], out=same_top[1:])
    key >>= np.uint64(pair_bits)
    block_new = np.ones(n, dtype=bool)
    np.not_equal(key[1:], key[:-1], out=block_new[1:])
    bad = (unit_new & ~block_new) | (pair_new & same_top)
    if bad.any():  # truncated bits cannot decide: re-sort those blocks exactly
        block = np.cumsum(block_new, dtype=np.int64) - 1
        bad_block = np.zeros(int(block[-1]) + 1, dtype=bool)
        bad_block[block[bad]] = True
        pos = np.nonzero(bad_block[block])[0]
        sub = pl.DataFrame({"_b": block[pos], "_i": perm[pos],
                            "_h": _hash.as_signed(hp[perm[pos]])}).hstack(
            df.select(spec.unit, *by)[perm[pos]])
        sub = sub.sort(["_b", spec.unit, "_h", *by], nulls_last=True)
        perm[pos] = sub["_i"].to_numpy()
        cols.update(perm, pos)
        unit_new = cols.starts([spec.unit])
        pair_new = unit_new | cols.starts(by) if by else unit_new
    del key, same_top, block_new, bad
    if by:  # rank of each row's group among its unit's groups, from the running pair count
        c: np.ndarray[Any, Any] = np.cumsum(pair_new, dtype=np.int64)
        first = np.where(unit_new, c, 0)
        np.maximum.accumulate(first, out=first)
        keep = (c - first) < spec.max_groups
        del c, first
    else:
        keep = np.ones(n, dtype=bool)
    pair_first = _run_first(pair_new)
    rank = np.arange(n, dtype=pair_first.dtype) - pair_first
    # groups over the row limit: every row from the group's start to its end
    heads = np.nonzero((rank == spec.max_rows_per_group) & keep)[0]
    if heads.size:
        edge = np.zeros(n + 1, dtype=np.int32)
        np.add.at(edge, pair_first[heads], 1)
        ends = np.append(np.nonzero(pair_new)[0], n)
        np.add.at(edge, ends[np.searchsorted(ends, heads, side="right")], -1)
        over = np.cumsum(edge[:n]) > 0
        keep &= ~over
        keep |= _keep_rows(df, spec, hp, perm, pair_first, over)
    out = np.zeros(n, dtype=bool)
    out[perm] = keep
    return out


def _keep_rows(df: pl.DataFrame, spec: BoundSpec, hp: np.ndarray[Any, Any],
               perm: np.ndarray[Any, Any], pair_id: np.ndarray[Any, Any],
               over: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Among sorted rows ``over`` (groups above the row limit), the ``max_rows_per_group`` rows
    of each group with the smallest ``(h(u, g, v), v)``; returns a mask over sorted rows."""
    pos = np.nonzero(over)[0]
    rows = perm[pos]
    vals = list(spec.value_columns)
    sub = pl.DataFrame({"_p": pair_id[pos], "_s": pos})
    if vals:
        vdf = df.select(vals)[rows]
        hr = _hash.hash_chain([vdf[c] for c in vals], hp[rows])
        sub = sub.with_columns(pl.Series("_h", _hash.as_signed(hr))).hstack(vdf)
        sub = sub.sort(["_p", "_h", *vals], nulls_last=True)
    starts = _starts([sub["_p"].to_numpy()], sub.height)
    kept = sub["_s"].to_numpy()[_run_rank(starts) < spec.max_rows_per_group]
    mask = np.zeros(over.size, dtype=bool)
    mask[kept] = True
    return mask


class PolarsBackend:
    """:class:`~dpcert.backends.base.FrameOps` for Polars LazyFrames, DataFrames and paths.

    Examples
    --------
    >>> import polars as pl
    >>> from dpcert.backends.base import BoundSpec, StatSpec
    >>> be = PolarsBackend()
    >>> df = pl.DataFrame({"u": [1, 1, 1, 2], "g": ["a", "a", "b", "a"], "x": [1.0, 2, 3, 4]})
    >>> b = be.keyed_bound(df, BoundSpec("u", ("g",), 1, 1, key=bytes(16), value_columns=("x",)))
    >>> b.height
    2
    >>> st = be.group_stats(df, ["g"], [("a",), ("b",), ("c",)], [StatSpec("n", "count")])
    >>> st.keys, st.values["n"].tolist()
    ([('a',), ('b',), ('c',)], [3, 1, 0])
    """

    name = "polars"

    def schema(self, data: Any) -> Mapping[str, str]:
        """Column name → logical type (reads no rows)."""
        return {k: _logical(v) for k, v in to_lazy(data).collect_schema().items()}

    def check_predicates(self, predicates: Sequence[Any],
                         schema: Mapping[str, str]) -> tuple[Any, ...]:
        """Each predicate through the Polars allow-list (:mod:`dpcert.backends.polars_expr`)."""
        from dpcert.backends._allow import check_polars_predicate

        return tuple(check_polars_predicate(p, schema) for p in predicates)

    def filter(self, data: Any, predicates: Sequence[Any]) -> pl.LazyFrame:
        """Rows on which every predicate is true (null counts as false)."""
        lf = to_lazy(data)
        for p in predicates:
            lf = lf.filter(pl.sql_expr(p) if isinstance(p, str) else p)
        return lf

    def keyed_bound(self, data: Any, spec: BoundSpec) -> pl.DataFrame:
        """The bounded rows, with only the unit, group and value columns (canonical keys)."""
        lf = to_lazy(data)
        schema = lf.collect_schema()
        cols = list(dict.fromkeys([*([spec.unit] if spec.unit else []), *spec.by,
                                   *spec.value_columns]))
        for c in cols:
            if c not in schema:
                raise InvalidParameter(f"unknown column {c!r}; the data has {sorted(schema)}")
        for c in ([spec.unit] if spec.unit else []) + list(spec.by):
            _hash.encoding_of(schema[c], c)
        for c in spec.value_columns:
            if _logical(schema[c]) not in ("int", "float", "bool"):
                raise InvalidParameter(f"value column {c!r} has type {schema[c]}, not numeric")
        if spec.max_groups < 1 or spec.max_rows_per_group < 1:
            raise InvalidParameter(f"max_groups={spec.max_groups} and max_rows_per_group="
                                   f"{spec.max_rows_per_group} must be >= 1")
        keys = {c for c in [spec.unit, *spec.by] if c}
        df = lf.select([_canonical(c, schema[c]) if c in keys else pl.col(c)
                        for c in cols]).collect()
        if spec.unit is None or df.height == 0:
            return df
        seed = _hash.key_seed(spec.key)
        if df.height <= _PART_ROWS:
            return df.filter(pl.Series(_bound_part(df, spec, seed)))
        hu = _hash.hash_series(df[spec.unit], seed)
        n_parts = -(-df.height // _PART_ROWS) * 2
        part = (hu >> np.uint64(32)) % np.uint64(n_parts)  # a unit never straddles two parts
        keep = np.zeros(df.height, dtype=bool)
        for i in range(n_parts):
            rows = np.nonzero(part == i)[0]
            keep[rows] = _bound_part(df[rows], spec, seed)
        return df.filter(pl.Series(keep))

    def group_stats(self, data: Any, by: Sequence[str], keys: Sequence[tuple[Any, ...]] | None,
                    specs: Sequence[StatSpec]) -> GroupedStats:
        """Exact integer statistics per group; see :mod:`dpcert.backends.base`."""
        from dpcert.backends._polars_stats import grouped_stats

        return grouped_stats(to_lazy(data), list(by), keys, list(specs))
