"""Exact per-group integer statistics in Polars (the ``group_stats`` half of the Polars backend).

One ``group_by`` pass computes every count and fixed-point sum; sums are taken in two int64
halves (``_SPLIT`` low bits and the rest) of values shifted to be non-negative, which cannot
overflow below 2**33 rows per group, and recombined exactly as Python integers.  ``at_most``
counts come from one more pass over (group, candidate bin).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from dpcert._types import Array
from dpcert.backends._fixed import check_specs, fixed_bounds, private_key_order
from dpcert.backends._polars_types import DType, _canonical, _logical
from dpcert.backends.base import GroupedStats, Key, StatSpec
from dpcert.errors import InvalidParameter, OutOfDomain

__all__ = ["fixed_point_expr", "grouped_stats", "public_keys_frame"]

_SPLIT = 24


def _logical_schema(schema: Mapping[str, DType]) -> dict[str, str]:
    return {k: _logical(v) for k, v in schema.items()}


def fixed_point_expr(spec: StatSpec) -> pl.Expr:
    """The value rule of `dpcert.backends.base` as an Int64 Polars expression."""
    assert spec.column is not None and spec.lower is not None and spec.upper is not None
    rl, rh = fixed_bounds(spec)
    v = pl.col(spec.column).cast(pl.Float64)
    missing = v.is_null() | v.is_nan()
    w = v
    if spec.kind == "fixed_sum_sq":
        w = v.clip(float(spec.lower), float(spec.upper))
        if spec.shift:
            w = w - float(spec.shift)
        w = w * w
    r = (w / float(2.0 ** spec.exponent)).round(0, mode="half_to_even").clip(float(rl), float(rh))
    return pl.when(missing).then(pl.lit(rl, pl.Float64)).otherwise(r).cast(pl.Int64)


def public_keys_frame(keys: Sequence[Key], by: list[str], schema: Mapping[str, DType]
                      ) -> pl.DataFrame:
    """Public keys as a frame of the key columns' types: strict cast, canonical, distinct."""
    if any(len(k) != len(by) for k in keys):
        raise InvalidParameter(f"keys: every public key must have {len(by)} values for {by}")
    for i, c in enumerate(by):  # aware keys for aware columns, naive for naive: no guessing
        dtype = schema[c]
        if isinstance(dtype, pl.Datetime):
            aware = dtype.time_zone is not None
            for k in keys:
                v = k[i]
                if isinstance(v, dt.datetime) and (v.utcoffset() is not None) != aware:
                    raise OutOfDomain(f"keys: a {'naive' if aware else 'time-zone-aware'} "
                                      f"datetime does not match column {c!r} of type "
                                      f"{schema[c]}")
    try:
        kdf = pl.DataFrame([list(k) for k in keys], schema=by, orient="row")
        kdf = kdf.cast({c: schema[c] for c in by}, strict=True)
    except (pl.exceptions.PolarsError, TypeError, ValueError) as e:
        raise OutOfDomain(f"keys: public keys do not match the key column types "
                          f"{ {c: str(schema[c]) for c in by} }") from e
    kdf = kdf.select([_canonical(c, schema[c]) for c in by])
    if kdf.height and kdf.n_unique() != kdf.height:
        raise InvalidParameter(f"keys: the {kdf.height} public keys are not distinct after the "
                               "cast to the column types")
    return kdf


def _exact_sum(hi: Array, lo: Array, n: Array,
               shift: int) -> Array:
    """``hi * 2**_SPLIT + lo + n * shift`` exactly (int64 when it fits, else Python ints)."""
    if (np.abs(hi).max(initial=0) < (1 << (60 - _SPLIT))
            and abs(shift) * max(int(n.max(initial=0)), 1) < (1 << 60)):
        out: Array = hi * (1 << _SPLIT) + lo + n * shift
        return out
    return np.asarray(hi.astype(object) * (1 << _SPLIT) + lo.astype(object)
                      + n.astype(object) * shift, dtype=object)


def grouped_stats(lf: pl.LazyFrame, by: list[str], keys: Sequence[Key] | None,
                  specs: list[StatSpec]) -> GroupedStats:
    """See `dpcert.backends.polars.PolarsBackend.group_stats`."""
    schema = lf.collect_schema()
    for c in by:
        if c not in schema:
            raise InvalidParameter(f"unknown group column {c!r}; the data has {sorted(schema)}")
    check_specs(specs, _logical_schema(schema))
    if keys is not None and not by:
        raise InvalidParameter("keys: public keys need group columns (by)")
    kdf = public_keys_frame(keys, by, schema) if keys is not None else None
    lf = lf.with_columns([_canonical(c, schema[c]) for c in by]) if by else lf
    aggs: list[pl.Expr] = [pl.len().cast(pl.Int64).alias("#n")]
    for s in specs:
        if s.kind == "count" or (s.kind == "unit_count" and s.column is None):
            aggs.append(pl.len().cast(pl.Int64).alias(s.name))
        elif s.kind == "unit_count":
            assert s.column is not None
            aggs.append(_canonical(s.column, schema[s.column]).n_unique().cast(pl.Int64)
                        .alias(s.name))
        elif s.kind in ("fixed_sum", "fixed_sum_sq"):
            x = fixed_point_expr(s) - fixed_bounds(s)[0]
            aggs.append((x // (1 << _SPLIT)).sum().alias(s.name + "#hi"))
            aggs.append((x % (1 << _SPLIT)).sum().alias(s.name + "#lo"))
    g = (lf.group_by(by).agg(aggs) if by else lf.select(aggs)).collect()
    if kdf is not None:
        g = (kdf.with_row_index("#k").join(g, on=by, how="left", nulls_equal=True)
             .sort("#k").drop("#k"))
        key_list = [tuple(r) for r in kdf.iter_rows()]
    elif by:
        raw = [tuple(r) for r in g.select(by).iter_rows()]
        order = private_key_order(raw)
        g = g[order]
        key_list = [raw[i] for i in order]
    else:
        key_list = [()]
    n = g["#n"].fill_null(0).to_numpy().astype(np.int64)
    values: dict[str, Array] = {}
    for s in specs:
        if s.kind in ("count", "unit_count"):
            values[s.name] = g[s.name].fill_null(0).to_numpy().astype(np.int64)
        elif s.kind in ("fixed_sum", "fixed_sum_sq"):
            hi = g[s.name + "#hi"].fill_null(0).to_numpy().astype(np.int64)
            lo = g[s.name + "#lo"].fill_null(0).to_numpy().astype(np.int64)
            values[s.name] = _exact_sum(hi, lo, n, fixed_bounds(s)[0])
        else:
            values[s.name] = _at_most(lf, by, g.select(by) if by else None, s)
    return GroupedStats(key_list, values)


def _at_most(lf: pl.LazyFrame, by: list[str], groups: pl.DataFrame | None,
             spec: StatSpec) -> Array:
    """Per group and candidate ``c``: rows whose fixed-point value is ≤ ``c``; shape (K, C)."""
    cand = np.asarray(spec.candidates, dtype=np.int64)
    df = lf.select(*by, fixed_point_expr(spec).alias("#v")).collect()
    # bin = number of candidates below the value: the row counts for every candidate >= bin
    bins = np.searchsorted(cand, df["#v"].to_numpy(), side="left")
    counts = (pl.DataFrame({"#b": bins}).hstack(df.select(by))
              .group_by([*by, "#b"]).agg(pl.len().cast(pl.Int64).alias("#c")))
    k = groups.height if groups is not None else 1
    hist = np.zeros((k, cand.size + 1), dtype=np.int64)
    if groups is not None:
        counts = counts.join(groups.with_row_index("#g"), on=by, how="inner", nulls_equal=True)
        gi = counts["#g"].to_numpy().astype(np.int64)
    else:
        gi = np.zeros(counts.height, dtype=np.int64)
    np.add.at(hist, (gi, counts["#b"].to_numpy().astype(np.int64)),
              counts["#c"].to_numpy())
    return np.cumsum(hist, axis=1)[:, :cand.size]
