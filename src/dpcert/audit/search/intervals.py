"""Interval events scored on a search batch: which interval of a statistic's values to estimate.

For a statistic ``s`` (`dpcert.audit.stats.events`), `search_intervals` counts the
search outputs of ``x`` and ``x'`` in every interval of a grid of ``s``'s values and predicts the
bound each interval would give on an estimation batch of the planned size
(`predicted_bound`); the best interval in each direction is returned.  Nothing computed
here enters the final bound.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)  # insecure-ok: test data for the doctest, not privacy noise
>>> a, b = rng.laplace(0.0, 1.0, 20_000), rng.laplace(1.0, 1.0, 20_000)
>>> best = search_intervals(a, b, n_estimate=100_000, z=3.0, delta=0.0, rays_only=True)
>>> [c.forward for c in best], max(c.predicted for c in best) > 0.5
([True, False], True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcert._types import Array
from dpcert.audit.kernel.bounds import wilson_lower, wilson_upper
from dpcert.audit.stats.events import GRID_SAMPLE

__all__ = ["IntervalChoice", "guard_z", "predicted_bound", "predicted_one", "search_intervals"]

#: Discrete statistics with at most this many distinct values use every value as a grid point.
MAX_GRID = 256
#: Search-batch probabilities are taken ``SEARCH_Z · √(2 ln(2·#events))`` standard errors
#: pessimistic (at least one) before the bound an event would give is predicted: a guard,
#: growing with the number of events compared, against picking the luckiest of many (the
#: estimation batch, not this, keeps the bound valid).  Half the extreme-value scale keeps
#: rare lucky cells out without hiding strong events of a few per cent.
SEARCH_Z = 0.5
#: Predicted-bound loss accepted to prefer a ray over an interval (see search_intervals).
RAY_TOLERANCE = 0.003


@dataclass(frozen=True)
class IntervalChoice:
    """The best interval found for one statistic and one direction, with its predicted bound.

    ``forward`` True means S is likelier under ``M(x)`` than ``M(x')``.
    """

    low: float
    high: float
    forward: bool
    predicted: float


def _grid(values: Array) -> Array:
    """Every value when few; else the atoms (values holding ≥ 1/MAX_GRID of the mass, such as
    sentinels mixed into numeric outputs) and quantiles of the rest, so that a coordinate that
    is mostly ``-1000`` still gets a fine grid over its numeric part.  Atoms and quantiles are
    taken from a subsample of at most `GRID_SAMPLE` values."""
    finite = values[~np.isnan(values)]
    sub = finite[:: max(1, finite.size // GRID_SAMPLE)]
    u, counts = np.unique(sub, return_counts=True)
    if u.size <= MAX_GRID:
        u = np.unique(finite)   # discrete: every value, rare ones included
    if u.size > MAX_GRID:
        u, counts = np.unique(sub, return_counts=True)
        atoms = u[counts * MAX_GRID >= sub.size]
        rest = sub[~np.isin(sub, atoms)] if atoms.size else sub
        q = np.quantile(rest, np.linspace(0.0, 1.0, MAX_GRID - atoms.size)) if rest.size else rest
        u = np.concatenate([atoms, q])
    return np.unique(np.concatenate([[-np.inf], u, [np.inf]]))


def _cells(size: int, rays_only: bool) -> tuple[Array, Array]:
    """The (low, high) grid indices of the scored intervals, in row-major order: every
    ``i <= j``, or only the rays (``i = 0`` or ``j = size − 1``)."""
    if not rays_only:
        low, high = np.triu_indices(size)
        return low, high
    low = np.concatenate([np.zeros(size, dtype=np.intp), np.arange(1, size, dtype=np.intp)])
    high = np.concatenate([np.arange(size, dtype=np.intp),
                           np.full(size - 1, size - 1, dtype=np.intp)])
    return low, high


def _interval_counts(s: Array, grid: Array, low: Array, high: Array) -> Array:
    """``counts[c] = #{s in [grid[low[c]], grid[high[c]]]}`` for each cell ``c``."""
    ss = np.sort(s[~np.isnan(s)])
    le = np.searchsorted(ss, grid, side="right")
    lt = np.searchsorted(ss, grid, side="left")
    out: Array = np.maximum(le[high] - lt[low], 0).astype(np.float64)
    return out


def predicted_bound(ka: Array, kb: Array, na: int, nb: int, n_estimate: int, z: float,
               delta: float, z_search: float) -> Array:
    # Pessimistic point estimates from the search batch (Wilson at z_search, which grows with
    # the number of events compared, against the winner's curse), then the bound the
    # estimation batch would give at those probabilities.
    pa = wilson_lower(ka / na, na, z_search)
    pb = wilson_upper(kb / nb, nb, z_search)
    num = wilson_lower(pa, n_estimate, z) - delta
    den = wilson_upper(pb, n_estimate, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: Array = np.where(num > 0, np.log(np.maximum(num, 1e-300)) - np.log(den), -np.inf)
    return out


def predicted_one(k1: float, k2: float, n1: int, n2: int, n_estimate: int, z: float,
                  delta: float, z_search: float) -> float:
    """`predicted_bound` of one event: ``k1`` of ``n1`` draws of the likelier input and
    ``k2`` of ``n2`` of the other."""
    return float(predicted_bound(np.array([float(k1)]), np.array([float(k2)]), n1, n2,
                                 n_estimate, z, delta, z_search)[0])


def guard_z(events: int) -> float:
    """The extreme-value guard for the best of ``events`` compared events (see
    `SEARCH_Z`): ``max(1, SEARCH_Z · √(2 ln(2·events)))``."""
    return max(1.0, SEARCH_Z * math.sqrt(2.0 * math.log(max(2, 2 * events))))


def search_intervals(sa: Array, sb: Array, *, n_estimate: int, z: float, delta: float,
                     rays_only: bool = False) -> list[IntervalChoice]:
    """The best interval of statistic values in each direction, scored on a search batch.

    Parameters
    ----------
    sa, sb
        The statistic on search outputs from ``x`` and from ``x'``.
    n_estimate
        The size of the estimation batch the chosen event will be measured on.
    z
        The normal quantile matching the per-bound error level of the final bounds.
    delta
        The δ at which ε is bounded (0 for pure DP).
    rays_only
        Only threshold events ``s >= t`` and ``s <= t`` (for learned scores, where narrow
        bands mostly fit noise).
    """
    grid = _grid(np.concatenate([sa, sb]))
    if grid.size == 0:
        return []
    # only these cells are scored (the rays are 2·|grid| of |grid|² cells): scoring the whole
    # matrix was most of a small search's fixed cost
    low, high = _cells(grid.size, rays_only)
    ca, cb = _interval_counts(sa, grid, low, high), _interval_counts(sb, grid, low, high)
    last = grid.size - 1
    # position of cell (0, j) is j in both layouts; of (i, last):
    if rays_only:
        def at_high(i: int) -> int:
            return last if i == 0 else grid.size + i - 1
    else:
        def at_high(i: int) -> int:
            return i * grid.size - i * (i - 1) // 2 + (last - i)
    out = []
    z_search = guard_z(low.size)
    for forward, (k1, n1, k2, n2) in ((True, (ca, sa.size, cb, sb.size)),
                                      (False, (cb, sb.size, ca, sa.size))):
        score = predicted_bound(k1, k2, n1, n2, n_estimate, z, delta, z_search)
        c = int(np.argmax(score))
        i, j = int(low[c]), int(high[c])
        best = float(score[c])
        # an interval barely better than the ray through its inner end is search noise: take
        # the larger event (the same ratio in a tail of a monotone likelihood ratio)
        for ii, jj, cc in ((0, j, j), (i, last, at_high(i))):
            if score[cc] >= best - RAY_TOLERANCE:
                i, j = ii, jj
                break
        if math.isfinite(best) or best == math.inf:
            out.append(IntervalChoice(float(grid[i]), float(grid[j]), forward, best))
    return out
