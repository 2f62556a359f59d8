"""The Polars backend: `FrameOps` on Polars frames.

Keyed bounding rule (the same on every backend, see `dpcert.backends._hash`), with
``h(...) = xxhash64(k1, k2, ...)`` keyed by the release key:

1. a unit ``u`` keeps the ``max_groups`` of its groups ``g`` with the smallest
   ``h(u, g)`` (a signed long; ties broken by the group values, nulls last);
2. inside a kept group, it keeps the ``max_rows_per_group`` rows with the smallest
   ``h(u, g, v)`` over the value columns ``v`` (ties broken by the values; rows that tie on
   both are interchangeable, they contribute the same to every statistic).

Units and groups are compared exactly: float keys are canonical (``-0.0 → 0.0``, one NaN), null
is one value.  The hash only orders.  The implementation is one NumPy sort of packed 64-bit keys
(unit bits | pair-hash bits | row index).  The unit bits only cluster a unit's rows (the rule
never compares two units): for a null-free integer unit column whose span fits they are the
unit's offset from the smallest unit (exact: no unit comparison is needed), otherwise the top
bits of the unit hash.  Groups of a unit are told apart by the pair bits, and their values are
compared only where two neighbouring rows tie on all the bits.  Blocks where the truncated bits
cannot decide (two units sharing the unit bits, two groups of a unit sharing the pair bits) are
re-sorted exactly by ``(unit, h(u, g), g)``.  Row hashes are only computed for the rows of
groups over the row limit.

Statistics are exact integers: fixed-point values (the value rule of `dpcert.backends.base`)
summed in two int64 halves that cannot overflow and recombined as Python integers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from dpcert._types import Array, BoolArray, IntArray
from dpcert.backends import _hash
from dpcert.backends._hash import U64Array
from dpcert.backends._polars_admit import admit_frame, admitted_type, rename_columns
from dpcert.backends._polars_stats import grouped_stats, public_keys_frame
from dpcert.backends._polars_types import DType, _canonical, _logical
from dpcert.backends.admission import AdmittedColumn, AdmittedType, Role
from dpcert.backends.base import BoundSpec, GroupedStats, Key, StatSpec
from dpcert.errors import InvalidParameter

__all__ = ["PolarsBackend", "keep_mask", "to_lazy"]

_SPLIT = 24  # low-bit width of the two-part integer sums
#: Rows sorted in one packed-key sort; larger frames are bounded in unit-disjoint parts.
_PART_ROWS = 1 << 24
#: Bits of the packed key taken from the pair hash (the rest of the free bits: the unit hash).
_PAIR_BITS = 14
_CHUNK = 1 << 20  # rows per chunk of hashing and gathering (bounded temporaries)
#: Tests shrink this to force unit-hash collisions in the packed key (exercising the exact path).
_UNIT_BITS: int | None = None
#: Integer units whose span fits in the key are clustered by value, not by hash (tests switch
#: this off); the pair hash then gets up to ``_EXACT_PAIR_BITS`` of the free bits, and at least
#: ``_MIN_PAIR_BITS`` must be free for the exact clustering to be used.
_EXACT_UNITS = True
_EXACT_PAIR_BITS = 32
_MIN_PAIR_BITS = 8


def to_lazy(data: object) -> pl.LazyFrame:
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


def _ne(a: pl.Series | Array, b: pl.Series | Array) -> BoolArray:
    """Elementwise: do the values differ (exact; null equals null, NaN equals NaN)?"""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.dtype.kind == "f":
            return np.asarray((a != b) & ~(np.isnan(a) & np.isnan(b)))
        return np.asarray(a != b)
    if not (isinstance(a, pl.Series) and isinstance(b, pl.Series)):
        # One gather had nulls (kept as a Series), the other none (NumPy of the physical type):
        # compare both as Series of the physical type.
        a, b = (x.to_physical() if isinstance(x, pl.Series) else pl.Series(x) for x in (a, b))
    eq = (a == b).fill_null(False) | (a.is_null() & b.is_null())
    if a.dtype.is_float():
        eq = eq | (a.is_nan() & b.is_nan()).fill_null(False)
    return np.asarray(~eq.to_numpy())


def _exact_numpy(s: pl.Series) -> bool:
    return bool((s.dtype.is_numeric() or s.dtype in (pl.Date, pl.Boolean))
                and not s.null_count())


def _column(df: pl.DataFrame, c: str) -> pl.Series | Array:
    """A key column as NumPy when that is exact and free (one chunk of null-free numbers)."""
    s = df[c]
    if _exact_numpy(s) and s.n_chunks() == 1:
        arr: Array = s.to_physical().to_numpy()
        return arr
    return s


def _take(col: pl.Series | Array, idx: Array
          ) -> pl.Series | Array:
    if isinstance(col, np.ndarray):
        out: Array = col[idx]
        return out
    g = col.gather(idx)
    return g.to_physical().to_numpy() if _exact_numpy(g) else g


def _run_starts(df: pl.DataFrame, cols: Sequence[str], perm: Array) -> BoolArray:
    """For the rows in ``perm`` order: does each start a new run of equal ``cols`` tuples?
    (Gathered chunk by chunk: no sorted copy of the columns is held.)"""
    n = perm.size
    out = np.zeros(n, dtype=bool)
    if not n:
        return out
    out[0] = True
    for c in cols:
        col = _column(df, c)
        for a in range(0, n, _CHUNK):
            lo, hi = max(a - 1, 0), min(n, a + _CHUNK)
            vals = _take(col, perm[lo:hi])
            out[lo + 1:hi] |= _ne(vals[1:], vals[:-1])
    return out


def _starts_at(df: pl.DataFrame, cols: Sequence[str], perm: Array,
               pos: Array) -> BoolArray:
    """`_run_starts` at the positions ``pos`` only."""
    out: BoolArray = np.asarray(pos == 0)
    prev = perm[np.maximum(pos - 1, 0)]
    for c in cols:
        col = _column(df, c)
        out |= _ne(_take(col, perm[pos]), _take(col, prev))
    return out


def _starts(cols: Sequence[pl.Series | Array], n: int) -> BoolArray:
    """True where a row starts a new run of equal tuples (the first row always does)."""
    out = np.zeros(n, dtype=bool)
    if n:
        out[0] = True
        for s in cols:
            out[1:] |= _ne(s[1:], s[:-1])
    return out


def _run_first(starts: BoolArray) -> Array:
    """Position of the first element of each element's run (runs begin where ``starts``)."""
    dtype = np.int32 if starts.size < 2**31 else np.int64
    first = np.where(starts, np.arange(starts.size, dtype=dtype), dtype(0))
    np.maximum.accumulate(first, out=first)
    return first


def _run_rank(starts: BoolArray) -> Array:
    """0-based position of each element inside its run (runs begin where ``starts`` is True)."""
    first = _run_first(starts)
    out: Array = np.arange(starts.size, dtype=first.dtype) - first
    return out


def _pair_hash(df: pl.DataFrame, spec: BoundSpec, seed: int,
               rows: Array) -> U64Array:
    """``h(u, g)`` of the given rows (recomputed: cheaper than holding it for every row)."""
    assert spec.unit is not None
    hu = _hash.hash_series(df[spec.unit].gather(rows), seed)
    return _hash.hash_chain([df[c].gather(rows) for c in spec.by], hu) if spec.by else hu


def _packed_keys(df: pl.DataFrame, spec: BoundSpec, seed: int, bits: tuple[int, int, int],
                 unit_off: U64Array | None) -> U64Array:
    """``unit bits | signed pair-hash bits | row index`` per row, chunk by chunk.  The unit bits
    are the unit's offset from the smallest unit when ``unit_off`` is given, else the top bits
    of the unit hash."""
    assert spec.unit is not None
    unit_bits, pair_bits, idx_bits = bits
    n = df.height
    key = np.empty(n, dtype=np.uint64)
    for a in range(0, n, _CHUNK):
        part = df.slice(a, _CHUNK)
        hu: U64Array | None = None
        if unit_off is not None:
            k = unit_off[a:a + part.height] << np.uint64(64 - unit_bits)
        else:
            hu = _hash.hash_series(part[spec.unit], seed)
            k = hu >> np.uint64(64 - unit_bits)
            k <<= np.uint64(64 - unit_bits)
        if spec.by:
            if hu is None:
                hu = _hash.hash_series(part[spec.unit], seed)
            hp = _hash.hash_chain([part[c] for c in spec.by], hu)
            hp = _hash.signed_order(hp)
            hp >>= np.uint64(64 - pair_bits)
            hp <<= np.uint64(idx_bits)
            k |= hp
        k |= np.arange(a, a + part.height, dtype=np.uint64)
        key[a:a + part.height] = k
    return key


def _unit_offsets(s: pl.Series, room: int) -> U64Array | None:
    """``u - min(u)`` as ``uint64`` when the unit column is an integer column without nulls
    whose span fits in ``room`` bits (the units are then clustered exactly, without their
    hash), else None."""
    if not _EXACT_UNITS or not s.dtype.is_integer() or s.null_count() or s.dtype == pl.UInt64:
        return None
    lo, hi = s.min(), s.max()
    if not isinstance(lo, int) or not isinstance(hi, int) or (hi - lo).bit_length() > room:
        return None
    out: U64Array = (s.cast(pl.Int64) - lo).to_numpy().view(np.uint64)
    return out


def _bound_part(df: pl.DataFrame, spec: BoundSpec, seed: int) -> BoolArray:
    """Keep-mask of the keyed bounding rule on ``df`` (all rows of each unit are in ``df``)."""
    assert spec.unit is not None
    n = df.height
    by = list(spec.by)
    idx_bits = max(1, (n - 1).bit_length())
    pair_bits = min(_PAIR_BITS, (64 - idx_bits) // 3) if by else 0
    unit_bits = 64 - idx_bits - pair_bits
    if _UNIT_BITS is not None:
        unit_bits = min(unit_bits, _UNIT_BITS)
    unit_off = (_unit_offsets(df[spec.unit], 64 - idx_bits - (_MIN_PAIR_BITS if by else 0))
                if _UNIT_BITS is None else None)
    exact = unit_off is not None
    if unit_off is not None:  # exact unit bits: the rest of the key is the pair hash's
        unit_bits = max(1, int(unit_off.max(initial=0)).bit_length())
        pair_bits = min(_EXACT_PAIR_BITS, 64 - idx_bits - unit_bits) if by else 0
    key = _packed_keys(df, spec, seed, (unit_bits, pair_bits, idx_bits), unit_off)
    del unit_off
    key.sort()
    perm = np.empty(n, dtype=np.int32 if n < 2**31 else np.int64)
    mask = np.uint64((1 << idx_bits) - 1)
    for a in range(0, n, _CHUNK):
        perm[a:a + _CHUNK] = key[a:a + _CHUNK] & mask
    key >>= np.uint64(idx_bits)  # the (unit bits | pair bits) prefix of each sorted row
    same = np.zeros(n, dtype=bool)  # the prefix ties with the previous row's
    np.equal(key[1:], key[:-1], out=same[1:])
    key >>= np.uint64(pair_bits)
    block_new = np.ones(n, dtype=bool)
    np.not_equal(key[1:], key[:-1], out=block_new[1:])
    del key
    # exact unit bits decide the units; hashed ones need the units compared
    unit_new = block_new.copy() if exact else _run_starts(df, [spec.unit], perm)
    pair_new = unit_new
    if by:  # a new prefix in the same unit is a new group; a tied one needs the groups compared
        pair_new = unit_new | ~same
        pos = np.flatnonzero(same & ~unit_new)
        if pos.size:
            pair_new[pos] = _starts_at(df, by, perm, pos)
        del pos
    bad = same & pair_new  # a new unit or group whose truncated bits tie with the previous
    del same
    bad |= unit_new & ~block_new  # two units share the unit bits
    if bad.any():  # truncated bits cannot decide: re-sort those blocks exactly
        _repair(df, spec, seed, perm, bad, block_new, unit_new, pair_new)
    del bad, block_new
    keep = _group_ranks(unit_new, pair_new, spec.max_groups) if by else np.ones(n, dtype=bool)
    del unit_new
    heads = _row_limit_heads(pair_new, keep, spec.max_rows_per_group)
    if heads.size:  # groups over the row limit: every row from the group's start to its end
        starts = np.flatnonzero(pair_new)
        ends = np.append(starts, n)[np.searchsorted(starts, heads, side="right")]
        del starts
        edge = np.zeros(n + 1, dtype=np.int32)
        np.add.at(edge, heads - spec.max_rows_per_group, 1)
        np.add.at(edge, ends, -1)
        over = np.cumsum(edge[:n], dtype=np.int32) > 0
        del edge
        keep &= ~over
        keep |= _keep_rows(df, spec, seed, perm, pair_new, over)
    out = np.zeros(n, dtype=bool)
    out[perm] = keep
    return out


def keep_mask(df: pl.DataFrame, spec: BoundSpec) -> BoolArray:
    """Keep-mask of the keyed bounding rule on ``df``: its unit, group and value columns already
    canonical (`_canonical`), and *every* row of each of its units in ``df`` (the rule is a
    function of one unit's rows and the key, so any split of the units gives the same rows).

    Shared by `PolarsBackend.keyed_bound` and the Spark backend's Arrow bounding, which runs
    it on each partition of a shuffle by the unit: the two backends keep the same rows by
    construction.
    """
    assert spec.unit is not None
    seed = _hash.key_seed(spec.key)
    keys = [c for c in (spec.unit, *spec.by) if df[c].n_chunks() > 1]
    if keys:  # one chunk each: the sorted-order gathers then run on NumPy views
        df = df.with_columns([df[c].rechunk() for c in keys])
    if df.height <= _PART_ROWS:
        return _bound_part(df, spec, seed)
    hu = _hash.hash_series(df[spec.unit], seed)
    n_parts = -(-df.height // _PART_ROWS) * 2
    part = ((hu >> np.uint64(32)) % np.uint64(n_parts)).astype(np.uint16)  # a unit's rows
    del hu                                                               # share one part
    order = np.argsort(part, kind="stable")  # a radix sort: the parts' rows, in order
    ends = np.cumsum(np.bincount(part, minlength=n_parts))
    del part
    keep = np.zeros(df.height, dtype=bool)
    for i in range(n_parts):
        rows = order[ends[i - 1] if i else 0:ends[i]]
        keep[rows] = _bound_part(df[rows], spec, seed)
    return keep


def _repair(df: pl.DataFrame, spec: BoundSpec, seed: int, perm: Array,
            bad: BoolArray, block_new: BoolArray,
            unit_new: BoolArray, pair_new: BoolArray) -> None:
    """Re-sort the blocks holding a ``bad`` row exactly by ``(unit, h(u, g), g)``; update
    ``perm``, ``unit_new`` and ``pair_new`` in place."""
    assert spec.unit is not None
    by = list(spec.by)
    starts = np.flatnonzero(block_new)
    blocks = np.unique(np.searchsorted(starts, np.flatnonzero(bad), side="right") - 1)
    lo, hi = starts[blocks], np.append(starts, perm.size)[blocks + 1]
    del starts
    sizes = hi - lo
    block_of = np.repeat(np.arange(blocks.size), sizes)
    pos = np.arange(block_of.size) - np.repeat(np.cumsum(sizes) - sizes, sizes) + lo[block_of]
    rows = perm[pos]
    sub = pl.DataFrame({"_b": block_of, "_i": rows,
                        "_h": _hash.as_signed(_pair_hash(df, spec, seed, rows))}).hstack(
        df.select(spec.unit, *by)[rows])
    sub = sub.sort(["_b", spec.unit, "_h", *by], nulls_last=True)
    perm[pos] = sub["_i"].to_numpy()
    unit_new[pos] = _starts_at(df, [spec.unit], perm, pos)
    if by:
        pair_new[pos] = unit_new[pos] | _starts_at(df, by, perm, pos)


def _group_ranks(unit_new: BoolArray, pair_new: BoolArray,
                 max_groups: int) -> BoolArray:
    """Keep-mask: the row's group is among the first ``max_groups`` groups of its unit
    (running pair count minus the count at the unit's start; chunked, with carries)."""
    n = unit_new.size
    keep = np.empty(n, dtype=bool)
    count = first = 0
    for a in range(0, n, _CHUNK):
        c = np.cumsum(pair_new[a:a + _CHUNK], dtype=np.int64) + count
        f = np.where(unit_new[a:a + _CHUNK], c, 0)
        f[0] = max(int(f[0]), first)
        np.maximum.accumulate(f, out=f)
        keep[a:a + _CHUNK] = (c - f) < max_groups
        count, first = int(c[-1]), int(f[-1])
    return keep


def _row_limit_heads(pair_new: BoolArray, keep: BoolArray,
                     max_rows: int) -> IntArray:
    """Positions of the ``(max_rows + 1)``-th row of each kept group (chunked)."""
    n = pair_new.size
    out = []
    first = 0
    for a in range(0, n, _CHUNK):
        idx = np.arange(a, min(n, a + _CHUNK), dtype=np.int64)
        f = np.where(pair_new[a:a + _CHUNK], idx, 0)
        f[0] = max(int(f[0]), first)
        np.maximum.accumulate(f, out=f)
        out.append(idx[(idx - f == max_rows) & keep[a:a + _CHUNK]])
        first = int(f[-1])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _keep_rows(df: pl.DataFrame, spec: BoundSpec, seed: int, perm: Array,
               pair_new: BoolArray, over: BoolArray) -> BoolArray:
    """Among sorted rows ``over`` (whole groups above the row limit), the
    ``max_rows_per_group`` rows of each group with the smallest ``(h(u, g, v), v)``; returns a
    mask over sorted rows."""
    pos = np.nonzero(over)[0]
    rows = perm[pos]
    vals = list(spec.value_columns)
    sub = pl.DataFrame({"_p": np.cumsum(pair_new[pos]), "_s": pos})
    if vals:
        vdf = df.select(vals)[rows]
        hr = _hash.hash_chain([vdf[c] for c in vals], _pair_hash(df, spec, seed, rows))
        sub = sub.with_columns(pl.Series("_h", _hash.as_signed(hr))).hstack(vdf)
        sub = sub.sort(["_p", "_h", *vals], nulls_last=True)
    starts = _starts([sub["_p"].to_numpy()], sub.height)
    kept = sub["_s"].to_numpy()[_run_rank(starts) < spec.max_rows_per_group]
    mask = np.zeros(over.size, dtype=bool)
    mask[kept] = True
    return mask


def _dtype(column: str, dtype: object) -> DType:
    """``dtype`` as a Polars data type (the engine type of ``column``)."""
    if isinstance(dtype, pl.DataType) or (isinstance(dtype, type)
                                          and issubclass(dtype, pl.DataType)):
        return dtype
    raise InvalidParameter(f"column {column!r}: dtype={dtype!r} is not a Polars data type")


def _checked(p: object) -> pl.Expr:
    """A predicate returned by `PolarsBackend.check_predicates` (a ``pl.Expr``)."""
    if not isinstance(p, pl.Expr):
        raise InvalidParameter(f"filter: a predicate of type {type(p).__name__} was not "
                               "checked by check_predicates")
    return p


class PolarsBackend:
    """`FrameOps` for Polars LazyFrames, DataFrames and paths.

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

    def schema(self, data: object) -> Mapping[str, str]:
        """Column name → logical type (reads no rows)."""
        return {k: _logical(v) for k, v in to_lazy(data).collect_schema().items()}

    def native_schema(self, data: object) -> Mapping[str, pl.DataType]:
        """Column name → Polars dtype (reads no rows)."""
        return dict(to_lazy(data).collect_schema())

    def admitted_type(self, column: str, dtype: object, role: Role) -> AdmittedType:
        """The internal type of a column in a role (`dpcert.backends._polars_admit`)."""
        return admitted_type(column, _dtype(column, dtype), role)

    def admit(self, data: object, columns: Sequence[AdmittedColumn]) -> pl.LazyFrame:
        """The admitted frame: exactly ``columns``, renamed and cast (total)."""
        return admit_frame(to_lazy(data), tuple(columns))

    def admit_keys(self, by: Sequence[str], keys: Sequence[Key],
                   native: Mapping[str, object], columns: Sequence[AdmittedColumn]
                   ) -> tuple[Key, ...]:
        """Public keys cast strictly to the key columns' dtypes (refused if they do not fit or
        repeat), then mapped as the columns are admitted."""
        # the keys frame is built under the internal names: a user name such as ``^c.*$``
        # would be read as a pattern by the expressions that cast and canonicalise it
        cols = tuple(replace(c, user=c.internal) for c in columns)
        kdf = public_keys_frame(keys, [c.internal for c in columns],
                                {c.internal: _dtype(u, native[u])
                                  for c, u in zip(columns, by, strict=True)})
        out = admit_frame(kdf.lazy(), cols).collect()
        return tuple(tuple(r) for r in out.iter_rows())

    def predicate_columns(self, predicates: Sequence[object]) -> tuple[str, ...]:
        """The columns the (checked) predicates read."""
        return tuple(dict.fromkeys(c for p in predicates for c in _checked(p).meta.root_names()))

    def rename_predicates(self, predicates: Sequence[object], mapping: Mapping[str, str],
                          schema: Mapping[str, str]) -> tuple[pl.Expr, ...]:
        """The predicates reading ``mapping[c]`` for each column ``c``, checked again on the
        admitted ``schema``."""
        return self.check_predicates([rename_columns(_checked(p), mapping) for p in predicates],
                                     schema)

    def probe_environment(self, data: object) -> None:
        """Nothing to check: Polars runs in this process."""

    def check_predicates(self, predicates: Sequence[object],
                         schema: Mapping[str, str]) -> tuple[pl.Expr, ...]:
        """Each predicate through the Polars allow-list (`dpcert.backends.polars_expr`)."""
        from dpcert.backends._allow import check_polars_predicate

        return tuple(check_polars_predicate(p, schema) for p in predicates)

    def filter(self, data: object, predicates: Sequence[object]) -> pl.LazyFrame:
        """Rows on which every predicate is true (null counts as false)."""
        lf = to_lazy(data)
        for p in predicates:
            lf = lf.filter(pl.sql_expr(p) if isinstance(p, str) else _checked(p))
        return lf

    def keyed_bound(self, data: object, spec: BoundSpec) -> pl.DataFrame:
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
        # the in-memory engine returns one chunk per column (the streaming one, many)
        df = lf.select([_canonical(c, schema[c]) if c in keys else pl.col(c)
                        for c in cols]).collect(engine="in-memory")
        if spec.unit is None or df.height == 0:
            return df
        return df.filter(pl.Series(keep_mask(df, spec)))

    def group_stats(self, data: object, by: Sequence[str], keys: Sequence[Key] | None,
                    specs: Sequence[StatSpec]) -> GroupedStats:
        """Exact integer statistics per group; see `dpcert.backends.base`."""
        return grouped_stats(to_lazy(data), list(by), keys, list(specs))

    def unit_profile(self, data: object, unit: str, by: Sequence[str], what: str
                     ) -> Array:
        """One integer per privacy unit: its groups, or its most rows in one group
        (`dpcert.backends._polars_bins`; for choosing contribution bounds)."""
        from dpcert.backends._polars_profile import unit_profile

        return unit_profile(to_lazy(data), unit, by, what)

    def unit_extremes(self, data: object, unit: str | None, column: str, which: str
                      ) -> Array:
        """One float per privacy unit: its largest or smallest value of ``column`` (for
        choosing value bounds; `dpcert.backends._polars_profile`)."""
        from dpcert.backends._polars_profile import unit_extremes

        return unit_extremes(to_lazy(data), unit, column, which)
