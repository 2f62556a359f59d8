"""The neighbour harness: does one privacy unit move the engine's bounded statistics by no
more than the privacy map says?

For a plan and a table, `neighbours` builds neighbouring tables -- one unit removed, and
one unit added with adversarial rows (extreme values, ±inf, NaN, null, every public key and
fresh keys, more groups and rows than the bounds allow, a unit value written as NaN with another
bit pattern or as −0.0) -- and `check_neighbours` runs the *real* release's data work -- the
transformation prefix of the compiled measurement
(`dpcert.frame.compile.compile_transformation`: filter >> ``make_bound_contributions`` >>
``make_group_by`` on `PolarsBackend`) -- on the table and on each
neighbour with one FIXED bounding key.  Bounding is deterministic given its key and each unit's
kept rows depend on that unit alone, so the two runs are coupled exactly and the differences are
what the compiled stability maps must cover at ``d = (u, l0, l∞) = prefix.map(1)``
(``GroupDistance``, `dpcert.transformations.frame.bound`): per statistic, at most ``l0``
groups change, each by at most ``per_group_change(spec, d)`` (a centred sum, released as
``sum − C·count``, is checked centred), in total at most the L1 and L2
maps of ``make_select_stat`` (`dpcert.transformations.frame.stats`); per quantile, every
rank utility moves by at most ``Δ = l∞·max(a, b − a)`` in at most ``l0`` groups
(`dpcert.mechanisms.grouped_quantile`); with private keys, at most ``l0`` keys appear or
vanish.

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

from dpcert._types import Array
from dpcert.backends.base import GroupedStats, StatSpec
from dpcert.backends.polars import PolarsBackend
from dpcert.core.measures import Measure
from dpcert.core.metrics import scalar_distance, tuple_distance
from dpcert.frame.compile import CompiledPrefix, compile_transformation
from dpcert.frame.plan import QueryPlan
from dpcert.samplers import InsecureSeededSource
from dpcert.transformations.frame import make_select_stat, per_group_change
from dpcert.transformations.frame.stats import centre_of, centred_values

__all__ = ["adversarial_unit", "check_neighbours", "neighbours"]

_EXTREMES = [1e308, -1e308, math.inf, -math.inf, math.nan, None, 0.0, -0.0, 5e-324]
#: A NaN with another bit pattern than Python's ``float("nan")``.
_OTHER_NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF8_0000_0000_0ABC))[0]


def _max(s: pl.Series) -> Any:
    return s.max()


def _fresh_unit(values: pl.Series) -> list[object]:
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
    R = rows_per_group or (plan.max_rows_per_group or 1) + 3
    keys = list(plan.group_keys)
    key_rows: list[tuple[object, ...]] = (list(plan.public_keys or []) if keys else [()])
    if keys and fresh_keys:
        observed = df.select(keys).unique().rows()
        key_rows = list(dict.fromkeys([*key_rows, *observed[:fresh_keys]]))
        key_rows.append(tuple(None for _ in keys))
        for i in range(fresh_keys):
            fresh: list[object] = []
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
    data: dict[str, list[object]] = {plan.privacy_unit: [unit_vals[i % len(unit_vals)]
                                                      for i in range(n)]}
    for j, k in enumerate(keys):
        data[k] = [key_rows[i // R][j] for i in range(n)]
    for c in [c for c in df.columns if c not in data]:
        data[c] = _values(df[c].dtype, value_mode, n)
    return pl.DataFrame(data, schema=df.schema, strict=False)


def _values(dtype: pl.DataType, mode: str, n: int) -> list[object]:
    """``n`` adversarial values of ``dtype`` (nulls for non-numeric columns)."""
    pools: dict[str, list[float | None]]  # ints (integer columns) are floats to typing
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


def _key(k: tuple[object, ...]) -> tuple[object, ...]:
    """A key tuple usable in a dict (NaN → a sentinel; −0.0 is 0.0 already)."""
    return tuple(("NaN",) if isinstance(v, float) and math.isnan(v) else v for v in k)


def _diffs(a: GroupedStats, b: GroupedStats, name: str, centre: int | None = None
           ) -> dict[tuple[object, ...], int]:
    """Per key, how far statistic ``name`` moved (centred: ``name − centre·count``)."""
    def values(g: GroupedStats) -> Array:
        if centre is None:
            return g.values[name]
        return centred_values(g.values[name], g.values["count"], centre)

    va = {_key(k): int(v) for k, v in zip(a.keys, values(a), strict=True)}
    vb = {_key(k): int(v) for k, v in zip(b.keys, values(b), strict=True)}
    out = {}
    for k in set(va) | set(vb):
        d = abs(va.get(k, 0) - vb.get(k, 0))
        if d:
            out[k] = d
    return out


def _check_pair(a: GroupedStats, b: GroupedStats, plan: QueryPlan, pre: CompiledPrefix,
                what: str) -> None:
    t = pre.transformation
    d = tuple_distance(t.map(1))
    l0 = d[1]
    for spec in pre.specs.values():
        if spec.kind == "at_most":
            continue
        centred = spec.name in pre.centred
        diff = _diffs(a, b, spec.name, centre_of(spec) if centred else None)
        per_group = per_group_change(spec, d, centred)
        by = "count" if centred else None
        l1 = scalar_distance(
            make_select_stat(t.output_domain, t.output_metric, spec, "L1", by).map(d))
        l2 = scalar_distance(
            make_select_stat(t.output_domain, t.output_metric, spec, "L2", by).map(d))
        assert len(diff) <= l0, f"{what}: {spec.name} changed {len(diff)} groups > l0={l0}"
        assert max(diff.values(), default=0) <= per_group, (
            f"{what}: {spec.name} moved one group by {max(diff.values())} > {per_group}")
        assert sum(diff.values()) <= l1, (
            f"{what}: {spec.name} moved by L1 {sum(diff.values())} > {l1}")
        assert sum(v * v for v in diff.values()) <= l2 * l2, (
            f"{what}: {spec.name} moved by more than L2 {l2}")
    for s in pre.stats.values():
        if s.kind == "quantile":
            assert s.level is not None
            hist = next(h for h in pre.specs.values()
                        if h.kind == "at_most" and h.column == s.column
                        and h.lower == s.bounds[0] and h.upper == s.bounds[1]  # type: ignore[index]
                        and len(h.candidates) == s.candidates)
            a_, b_ = s.level.numerator, s.level.denominator
            _check_quantile(a, b, hist, a_, b_, d[2] * max(a_, b_ - a_), l0, what)
    if plan.public_keys is None:
        ka, kb = {_key(k) for k in a.keys}, {_key(k) for k in b.keys}
        assert len(ka ^ kb) <= l0, f"{what}: {len(ka ^ kb)} keys appear or vanish > l0={l0}"


def _check_quantile(a: GroupedStats, b: GroupedStats, hist: StatSpec, qa: int, qb: int,
                    delta: int, l0: int, what: str) -> None:
    def util(stats: GroupedStats) -> dict[tuple[object, ...], Array]:
        cum = np.asarray(stats.values[hist.name]).astype(object).reshape(
            len(stats.keys), len(hist.candidates))
        u = -abs(qb * cum - qa * cum[:, -1:])
        return {_key(k): u[i] for i, k in enumerate(stats.keys)}

    ua, ub = util(a), util(b)
    zero = np.zeros(len(hist.candidates), dtype=object)
    changed = 0
    for k in set(ua) | set(ub):
        diff = abs(ua.get(k, zero) - ub.get(k, zero))
        if diff.any():
            changed += 1
            assert max(diff) <= delta, (
                f"{what}: {hist.name} utility moved by {max(diff)} > Δ={delta}")
    assert changed <= l0, f"{what}: {hist.name} changed {changed} groups > l0={l0}"


def check_neighbours(df: pl.DataFrame, plan: QueryPlan, budget: Measure, *, seed: int = 0,
                     extra: list[tuple[str, pl.DataFrame]] | None = None) -> int:
    """Run the compiled release's transformation prefix on the Polars backend on ``df`` and on
    each neighbour (`neighbours`, plus ``extra``) with the same bounding key (from
    ``seed``), and assert that the exact grouped statistics move by no more than the compiled
    stability maps say (module docstring).  Returns the number of neighbours checked; raises
    ``AssertionError`` naming the neighbour and the statistic.  A plan with bounds chosen
    privately is checked by `dpcert.frame.autobounds_neighbours.check_auto_neighbours`
    (the choices, then the release at the ends of every choice), which
    ``dpcert.testing.check_neighbours`` dispatches to."""
    backend = PolarsBackend()
    key = InsecureSeededSource(seed).random_uint64(2).tobytes()
    pre = compile_transformation(plan, budget, schema=backend.schema(df.lazy()),
                                 backend=backend, key=key)
    base = pre.transformation(df.lazy())
    assert isinstance(base, GroupedStats)
    n = 0
    for what, nb in [*neighbours(df, plan), *(extra or [])]:
        other = pre.transformation(nb.lazy())
        assert isinstance(other, GroupedStats)
        _check_pair(base, other, plan, pre, what)
        n += 1
    return n
