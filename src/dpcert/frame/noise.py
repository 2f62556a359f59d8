"""Turn exact per-group statistics into a private release (backend-independent).

Additive components get exact discrete Laplace or Gaussian noise in their fixed-point units;
confidence intervals are ``value ± a`` where ``P(|noise| > a) ≤ α`` exactly (discrete Laplace) or
by a rigorous bound (discrete Gaussian), see :mod:`dpcert.mechanisms.accuracy`.  Derived values
(mean, variance) and their intervals are post-processing of the noisy components; quantiles are
chosen by permute-and-flip on integer rank utilities, sampled exactly.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from dpcert.frame.calibrate import Calibration, Component
from dpcert.frame.checks import MAX_QUANTILE_CELLS
from dpcert.frame.plan import Count, CountDistinct, Mean, Quantile, QueryPlan, Sum, Variance
from dpcert.frame.stats import GroupStats, SparseHistogram
from dpcert.mechanisms.accuracy import discrete_gaussian_accuracy, discrete_laplace_accuracy
from dpcert.samplers import (
    EntropySource,
    bernoulli_exp,
    default_source,
    discrete_gaussian,
    discrete_laplace,
    uniform_below,
)

__all__ = ["NoisyRelease", "add_noise", "half_width"]


def noise_is_zero_whp(noise: str, scale: Fraction, alpha: Fraction) -> bool:
    """Is ``P(noise ≠ 0) ≤ alpha`` by a closed-form bound (tiny scales, e.g. ε = 10⁶)?

    Discrete Laplace: ``P(X ≠ 0) = 2q/(1+q) ≤ 2q`` with ``q = e^{−1/t}``, which is ``≤ α`` once
    ``1/t ≥ ln(2/α)``.  Discrete Gaussian: ``P(X ≠ 0) ≤ 2Σ_{x≥1} e^{−x/(2σ²)} ≤ 4q`` with
    ``q = e^{−1/(2σ²)} ≤ 1/2``, which is ``≤ α`` once ``1/(2σ²) ≥ ln(4/α)``.  ``ln y ≤ log₂ y ≤
    bit_length(⌈y⌉)`` keeps the test exact and in bounded time for any scale.
    """
    if noise == "discrete_laplace":
        need, rate = math.ceil(2 / alpha), 1 / scale
    else:
        need, rate = math.ceil(4 / alpha), 1 / (2 * scale * scale)
    return rate >= max(2, need.bit_length())


def half_width(c: Component, alpha: Fraction) -> float:
    """Real half-width of component ``c``'s noise at level ``alpha`` (rounded up); bounded time
    for any scale (:func:`noise_is_zero_whp` for tiny ones, the sampler limit for large)."""
    return float(_half_width_units(c.noise, c.scale, Fraction(alpha)) * c.unit)


@functools.lru_cache(maxsize=256)
def _half_width_units(noise: str, scale: Fraction, alpha: Fraction) -> Fraction:
    if noise_is_zero_whp(noise, scale, alpha):
        return Fraction(0)
    if noise == "discrete_laplace":
        return Fraction(discrete_laplace_accuracy(scale, alpha))
    return Fraction(discrete_gaussian_accuracy(scale, alpha))


def _noise(c: Component, size: int, src: EntropySource) -> np.ndarray[Any, Any]:
    if c.noise == "discrete_laplace":
        return discrete_laplace(c.scale, size, source=src)
    return discrete_gaussian(c.scale, size, source=src)


def _to_real(units: np.ndarray[Any, Any], unit: Fraction) -> np.ndarray[Any, Any]:
    if units.dtype == object:
        return np.array([float(Fraction(int(v)) * unit) for v in units.tolist()])
    return units.astype(np.float64) * float(unit)  # unit = 2^k: exact scaling


class NoisyRelease:
    """Noisy values and interval half-widths per output column (plain container)."""

    def __init__(self, keys: list[tuple[Any, ...]]) -> None:
        self.keys = keys
        self.columns: dict[str, np.ndarray[Any, Any]] = {}
        self.ci_low: dict[str, np.ndarray[Any, Any]] = {}
        self.ci_high: dict[str, np.ndarray[Any, Any]] = {}


def add_noise(stats: GroupStats, plan: QueryPlan, cal: Calibration, alpha: Fraction,
              source: EntropySource | None = None) -> NoisyRelease:
    """Add noise to every component, select partitions, derive aggregates and intervals."""
    src = default_source() if source is None else source
    n = stats.n_groups
    noisy: dict[str, np.ndarray[Any, Any]] = {}
    for c in cal.components:
        if c.kind in ("count", "count_distinct", "sum", "sumsq", "select"):
            true = stats.values[c.name]
            z = _noise(c, n, src)
            noisy[c.name] = true + (z.astype(object) if true.dtype == object else z)
    keep = np.ones(n, dtype=bool)
    sel = cal.selection()
    if sel is not None:
        assert sel.threshold is not None
        keep = np.asarray(noisy[sel.name] >= sel.threshold, dtype=bool)
    rel = NoisyRelease([k for k, kp in zip(stats.keys, keep, strict=True) if kp])
    # each quantile component needs an alpha share for nothing (no interval); additive ones
    # within a derived aggregate split alpha evenly so the joint interval holds w.p. >= 1-alpha
    for a in plan.aggregates:
        comps = cal.by_aggregate(a.name)
        if isinstance(a, (Count, CountDistinct, Sum)):
            c = comps[0]
            val = _to_real(noisy[c.name], c.unit)[keep]
            hw = half_width(c, alpha)
            rel.columns[a.name] = val
            rel.ci_low[a.name] = val - hw
            rel.ci_high[a.name] = val + hw
        elif isinstance(a, Mean):
            _mean(rel, a, comps, noisy, keep, alpha)
        elif isinstance(a, Variance):
            _variance(rel, a, comps, noisy, keep, alpha)
        elif isinstance(a, Quantile):
            for c in comps:
                idx = quantile_indices(stats.histograms[c.name], c, src)
                vals = stats.candidates[c.name][idx][keep]
                rel.columns[c.name] = vals
                rel.ci_low[c.name] = np.full(vals.shape, np.nan)
                rel.ci_high[c.name] = np.full(vals.shape, np.nan)
    return rel


def _get(comps: list[Component], suffix: str) -> Component:
    return next(c for c in comps if c.name.endswith(suffix))


def _mean(rel: NoisyRelease, a: Mean, comps: list[Component],
          noisy: dict[str, Any], keep: np.ndarray[Any, Any], alpha: Fraction) -> None:
    lo, hi = a.bounds
    cs, cn = _get(comps, ".sum"), _get(comps, ".count")
    s = _to_real(noisy[cs.name], cs.unit)[keep]
    cnt = _to_real(noisy[cn.name], cn.unit)[keep]
    hs, hn = half_width(cs, alpha / 2), half_width(cn, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(cnt >= 1, s / np.maximum(cnt, 1), (lo + hi) / 2)
        mean = np.clip(mean, lo, hi)
        n_lo = np.maximum(cnt - hn, 0)
        n_hi = cnt + hn
        cand = np.stack([(s - hs) / n_lo, (s - hs) / n_hi, (s + hs) / n_lo, (s + hs) / n_hi])
        ok = n_lo >= 1
        low = np.where(ok, np.nanmin(cand, axis=0), lo)
        high = np.where(ok, np.nanmax(cand, axis=0), hi)
    rel.columns[a.name] = mean
    rel.ci_low[a.name] = np.clip(low, lo, hi)
    rel.ci_high[a.name] = np.clip(high, lo, hi)


def _variance(rel: NoisyRelease, a: Variance, comps: list[Component],
              noisy: dict[str, Any], keep: np.ndarray[Any, Any], alpha: Fraction) -> None:
    lo, hi = a.bounds
    cs, cq, cn = _get(comps, ".sum"), _get(comps, ".sumsq"), _get(comps, ".count")
    s = _to_real(noisy[cs.name], cs.unit)[keep]
    sq = _to_real(noisy[cq.name], cq.unit)[keep]
    cnt = _to_real(noisy[cn.name], cn.unit)[keep]
    vmax = ((hi - lo) / 2) ** 2
    hs, hq, hn = (half_width(cs, alpha / 3), half_width(cq, alpha / 3),
                  half_width(cn, alpha / 3))
    with np.errstate(divide="ignore", invalid="ignore"):
        nn = np.maximum(cnt, 1)
        var = np.clip(sq / nn - (s / nn) ** 2, 0, vmax)
        n_lo = np.maximum(cnt - hn, 1)
        # interval arithmetic: E[x^2] in [(sq-hq)/n_hi, (sq+hq)/n_lo], mean in the mean interval
        n_hi = cnt + hn
        ex2_lo = np.minimum((sq - hq) / n_hi, (sq - hq) / n_lo)
        ex2_hi = np.maximum((sq + hq) / n_lo, (sq + hq) / n_hi)
        m_c = np.stack([(s - hs) / n_lo, (s - hs) / n_hi, (s + hs) / n_lo, (s + hs) / n_hi])
        m_lo, m_hi = np.clip(m_c.min(axis=0), lo, hi), np.clip(m_c.max(axis=0), lo, hi)
        m2_hi = np.maximum(m_lo**2, m_hi**2)
        m2_lo = np.where((m_lo <= 0) & (m_hi >= 0), 0.0, np.minimum(m_lo**2, m_hi**2))
        low = np.where(cnt - hn >= 1, ex2_lo - m2_hi, 0.0)
        high = np.where(cnt - hn >= 1, ex2_hi - m2_lo, vmax)
    rel.columns[a.name] = var
    rel.ci_low[a.name] = np.clip(low, 0, vmax)
    rel.ci_high[a.name] = np.clip(high, 0, vmax)


def quantile_indices(hist: SparseHistogram, c: Component,
                     src: EntropySource) -> np.ndarray[Any, Any]:
    """:func:`permute_and_flip_quantile` for every group, in chunks of groups whose dense
    histograms fit in :data:`MAX_QUANTILE_CELLS` cells (bounded memory for any number of
    groups; the selections are independent per group, so chunking changes nothing)."""
    step = max(1, MAX_QUANTILE_CELLS // max(hist.n_bins, 1))
    out = [permute_and_flip_quantile(hist.cumulative(i, min(i + step, hist.n_groups)), c, src)
           for i in range(0, hist.n_groups, step)]
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def permute_and_flip_quantile(cum: np.ndarray[Any, Any], c: Component,
                              src: EntropySource) -> np.ndarray[Any, Any]:
    """Per group, the index of a candidate chosen by permute-and-flip (McKenna & Sheldon 2020).

    ``cum[g, j]`` counts values ≤ candidate j in group g; with ``q = a/b`` the integer utility is
    ``u_j = −|b·cum_j − a·n|`` whose sensitivity per unit is ``Δ = R·max(b−a, a)``
    (``c.l1 / G``).  Candidate j is accepted with probability ``exp(−ε(u* − u_j)/(2Δ))``, drawn
    exactly as a product of ``bernoulli_exp(γ0·2^i)`` over the binary digits of ``u* − u_j``;
    the output is uniform among accepted candidates, which has the same distribution as scanning
    a uniformly random permutation and stopping at the first acceptance.
    """
    assert c.epsilon is not None and c.level is not None and c.per_group is not None
    g_count = cum.shape[0]
    qa, qb = c.level.numerator, c.level.denominator
    if cum.size and int(cum.max()) * qb >= 2**62:  # exact Python integers where int64 could wrap
        cum = cum.astype(object)
    n = cum[:, -1:]
    util = -np.abs(qb * cum - qa * n)  # exact integer utilities
    gap = util.max(axis=1, keepdims=True) - util  # >= 0 integers
    per_unit = c.per_group
    gamma0 = c.epsilon / (2 * per_unit)
    accept = np.ones(gap.shape, dtype=bool)
    flat_gap = gap.ravel()
    flat_acc = accept.ravel()
    bit = 0
    remaining = flat_gap.copy()
    while True:
        has = (remaining & 1).astype(bool) & flat_acc
        idx = np.nonzero(has)[0]
        if idx.size:
            flat_acc[idx] &= bernoulli_exp(gamma0 * (1 << bit), idx.size, source=src)
        remaining >>= 1
        bit += 1
        if not remaining.any():
            break
    accept = flat_acc.reshape(gap.shape)
    out = np.empty(g_count, dtype=np.int64)
    for g in range(g_count):  # one draw per group, not per row
        choices = np.nonzero(accept[g])[0]
        out[g] = choices[int(uniform_below(choices.size, 1, source=src)[0])]
    return out
