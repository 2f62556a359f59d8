"""The neighbour harness: does one privacy unit move the engine's bounded statistics by no
more than the privacy map says?

For a plan and a table, :func:`neighbours` builds neighbouring tables -- one unit removed, and
one unit added with adversarial rows (extreme values, ±inf, NaN, null, every public key and
fresh keys, more groups and rows than the bounds allow, a unit value written as NaN with another
bit pattern or as −0.0) -- and :func:`check_neighbours` runs the *real* backend
(:func:`dpcert.frame.polars_backend.compute_stats`) on the table and on each neighbour with the
same seeds.  Bounding is deterministic given its seeds and each unit's kept rows depend on that
unit alone, so the two runs are coupled exactly and the differences are what the privacy map
must cover: per noisy component, at most ``G`` groups change, each by at most the per-group
sensitivity, in total at most the L1 (and L2) sensitivity the calibration charged for; per
quantile, every rank utility moves by at most its ``Δ`` in at most ``G`` groups; with private
keys, at most ``G`` keys appear or vanish, each with a selection count of 1.

Examples
--------
>>> import polars as pl, dpcert as dp
>>> from dpcert.testing import check_neighbours
>>> df = pl.DataFrame({"u": [1, 1, 2, 3], "g": ["a", "b", "a", "b"], "x": [1.0, 2.0, 3.0, 4.0]})
>>> q = (dp.Session(df, "u", budget=dp.PureDP(1.0)).query().group_by("g", keys=["a", "b"])
...      .agg(dp.count(), dp.sum("x", (0, 10))).bound_contributions(1, 2))
>>> check_neighbours(df, q.plan(), dp.PureDP(1.0)) >= 4
True
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np
import polars as pl

from dpcert.core.measures import Measure
from dpcert.frame.calibrate import Calibration, calibrate
from dpcert.frame.plan import QueryPlan
from dpcert.frame.polars_backend import compute_stats
from dpcert.frame.stats import GroupStats
from dpcert.samplers import InsecureSeededSource

__all__ = ["adversarial_unit", "check_neighbours", "neighbours"]

_EXTREMES = [1e308, -1e308, math.inf, -math.inf, math.nan, None, 0.0, -0.0, 5e-324]
#: A NaN with another bit pattern than Python's ``float("nan")``.
_OTHER_NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF8_0000_0000_0ABC))[0]


def _max(s: pl.Series) -> Any:
    return s.max()


def _fresh_unit(values: pl.Series) -> list[Any]:
    """Unit values for a new unit: a value absent from ``values`` (for floats, NaN written two
    ways when no NaN unit exists yet, or 0.0 and −0.0 when no zero unit exists)."""
    dt = values.dtype
    present = values.drop_nulls()
    if dt.is_float():
        if not present.is_nan().any():
            return [math.nan, _OTHER_NAN]
        if not (present == 0).any():
            return [0.0, -0.0]
        taken = set(present.fill_nan(0).to_list())
        return [next(v for v in (0.125 * k + 0.0625 for k in range(len(taken) + 1))
                     if v not in taken)]
    if values.null_count() == 0:
        return [None]
    if dt.is_integer():
        return [int(_max(present) or 0) + 1]
    if dt == pl.String:
        return ["\u0000adversary" + "x" * int(_max(present.str.len_chars()) or 0)]
    raise ValueError(f"no fresh unit value for dtype {dt}")


def adversarial_unit(df: pl.DataFrame, plan: QueryPlan, *, rows_per_group: int | None = None,
                     fresh_keys: int = 3, value_mode: str = "extreme") -> pl.DataFrame:
    """Rows of one new unit: every public key (and, unless ``fresh_keys`` is 0, observed keys,
    ``fresh_keys`` new key values and a null key), ``rows_per_group`` rows in each (default
    R + 3), with values from ``value_mode``: ``"extreme"`` (±1e308, ±inf, NaN, null, ±0.0,
    subnormal), ``"high"`` or ``"low"``."""
    assert plan.privacy_unit is not None
    unit_vals = _fresh_unit(df[plan.privacy_unit])
    R = rows_per_group or plan.max_rows_per_group + 3
    keys = list(plan.group_keys)
    key_rows: list[tuple[Any, ...]] = (list(plan.public_keys or []) if keys else [()])
    if keys and fresh_keys:
        observed = df.select(keys).unique().rows()
        key_rows = list(dict.fromkeys([*key_rows, *observed[:fresh_keys]]))
        key_rows.append(tuple(None for _ in keys))
        for i in range(fresh_keys):
            fresh: list[Any] = []
            for k in keys:
                s = df[k]
                if s.dtype.is_integer():
                    fresh.append(int(_max(s) or 0) + 1 + i)
                elif s.dtype.is_float():
                    fresh.append(float(_max(s.drop_nans()) or 0) + 1 + i)
                else:
                    fresh.append(f"adversary-key-{i}")
            key_rows.append(tuple(fresh))
    n = len(key_rows) * R
    data: dict[str, list[Any]] = {plan.privacy_unit: [unit_vals[i % len(unit_vals)]
                                                      for i in range(n)]}
    for j, k in enumerate(keys):
        data[k] = [key_rows[i // R][j] for i in range(n)]
    for c in [c for c in df.columns if c not in data]:
        data[c] = _values(df[c].dtype, value_mode, n)
    return pl.DataFrame(data, schema=df.schema, strict=False)


def _values(dtype: Any, mode: str, n: int) -> list[Any]:
    """``n`` adversarial values of ``dtype`` (nulls for non-numeric columns)."""
    pools: dict[str, list[Any]]
    if dtype.is_float():
        pools = {"extreme": _EXTREMES, "high": [1e308], "low": [-1e308]}
        pool = pools[mode]
    elif dtype.is_integer():
        info = np.iinfo(str(dtype).lower())
        pools = {"extreme": [int(info.max), int(info.min), 0, None], "high": [int(info.max)],
                 "low": [int(info.min)]}
        pool = pools[mode]
    else:
        pool = [None]
    return [pool[i % len(pool)] for i in range(n)]


def neighbours(df: pl.DataFrame, plan: QueryPlan) -> Iterator[tuple[str, pl.DataFrame]]:
    """``(description, table)`` for each neighbour of ``df`` under ``plan``'s unit: each
    adversarial addition (extreme, high and low values) and the removal of the heaviest unit
    and of the first unit.  Without a unit column, rows are units: one row added or removed."""
    unit = plan.privacy_unit
    if unit is None:
        yield "remove the first row", df.slice(1)
        if df.height:
            yield "add a copy of the first row", pl.concat([df, df.head(1)])
        return
    for mode in ("extreme", "high", "low"):
        add = adversarial_unit(df, plan, value_mode=mode)
        yield f"add one unit ({add.height} rows, {mode} values)", pl.concat([df, add])
        yield f"add one unit ({add.height} rows, {mode} values) first", pl.concat([add, df])
        if plan.group_keys and plan.public_keys is not None:
            add = adversarial_unit(df, plan, value_mode=mode, fresh_keys=0)
            yield (f"add one unit on the public keys only ({add.height} rows, {mode} values)",
                   pl.concat([df, add]))
    if df.height:
        counts = df.group_by(unit).len().sort("len", descending=True)
        for who in {counts[unit][0], df[unit][0]} if df[unit][0] is not None else {
                counts[unit][0]}:
            keep = df.filter(pl.col(unit).ne_missing(who)) if not (
                isinstance(who, float) and math.isnan(who)) else df.filter(
                ~pl.col(unit).is_nan().fill_null(False))
            yield f"remove unit {who!r}", keep


def _key(k: tuple[Any, ...]) -> tuple[Any, ...]:
    """A key tuple usable in a dict (NaN → a sentinel; −0.0 is 0.0 already)."""
    return tuple(("NaN",) if isinstance(v, float) and math.isnan(v) else v for v in k)


def _diffs(a: GroupStats, b: GroupStats, name: str) -> dict[tuple[Any, ...], int]:
    va = {_key(k): int(v) for k, v in zip(a.keys, a.values[name], strict=True)}
    vb = {_key(k): int(v) for k, v in zip(b.keys, b.values[name], strict=True)}
    out = {}
    for k in set(va) | set(vb):
        d = abs(va.get(k, 0) - vb.get(k, 0))
        if d:
            out[k] = d
    return out


def _check_pair(a: GroupStats, b: GroupStats, plan: QueryPlan, cal: Calibration,
                what: str) -> None:
    G = plan.max_groups
    for c in cal.components:
        if c.kind in ("count", "count_distinct", "sum", "sumsq", "select"):
            d = _diffs(a, b, c.name)
            per_group = c.l1 / G
            l1 = sum(d.values())
            assert len(d) <= G, f"{what}: {c.name} changed {len(d)} groups > G={G}"
            assert max(d.values(), default=0) <= per_group, (
                f"{what}: {c.name} moved one group by {max(d.values())} > {per_group}")
            assert l1 <= c.l1, f"{what}: {c.name} moved by L1 {l1} > {c.l1}"
            assert sum(v * v for v in d.values()) <= c.l2 * c.l2, (
                f"{what}: {c.name} moved by more than L2 {c.l2}")
        elif c.kind == "quantile":
            _check_quantile(a, b, c, G, what)
    if plan.public_keys is None:
        ka, kb = {_key(k) for k in a.keys}, {_key(k) for k in b.keys}
        assert len(ka ^ kb) <= G, f"{what}: {len(ka ^ kb)} keys appear or vanish > G={G}"


def _check_quantile(a: GroupStats, b: GroupStats, c: Any, G: int, what: str) -> None:
    qa, qb = c.level.numerator, c.level.denominator
    ha, hb = a.histograms[c.name], b.histograms[c.name]
    ca, cb = ha.cumulative(0, ha.n_groups), hb.cumulative(0, hb.n_groups)

    def util(cum: Any) -> Any:
        cum = cum.astype(object)
        return qb * cum - qa * cum[:, -1:]

    ua = {_key(k): util(ca)[i] for i, k in enumerate(a.keys)}
    ub = {_key(k): util(cb)[i] for i, k in enumerate(b.keys)}
    zero = np.zeros(ca.shape[1] if ca.size else cb.shape[1], dtype=object)
    changed = 0
    for k in set(ua) | set(ub):
        d = np.abs(ua.get(k, zero) - ub.get(k, zero))
        if d.any():
            changed += 1
            assert max(d) <= c.per_group, (
                f"{what}: {c.name} utility moved by {max(d)} > Δ={c.per_group}")
    assert changed <= G, f"{what}: {c.name} changed {changed} groups > G={G}"


def check_neighbours(df: pl.DataFrame, plan: QueryPlan, budget: Measure, *, seed: int = 0,
                     extra: list[tuple[str, pl.DataFrame]] | None = None) -> int:
    """Run the real backend on ``df`` and on each neighbour (:func:`neighbours`, plus
    ``extra``) with the same seeds, and assert that the exact bounded statistics move by no
    more than the calibration's sensitivities (module docstring).  Returns the number of
    neighbours checked; raises ``AssertionError`` naming the neighbour and the statistic."""
    cal = calibrate(plan, budget)
    base = compute_stats(df, plan, cal, InsecureSeededSource(seed))
    n = 0
    for what, nb in [*neighbours(df, plan), *(extra or [])]:
        other = compute_stats(nb, plan, cal, InsecureSeededSource(seed))
        _check_pair(base, other, plan, cal, what)
        n += 1
    return n

