"""Event families: the sets S of outputs on which the auditor compares ``M(x)`` and ``M(x')``.

Every event is ``S = {y : low <= s(y) <= high}`` for a *statistic* ``s`` mapping outputs to
reals.  The statistics are

* `Identity` for 1-D numeric outputs: intervals then give per-value events for discrete
  outputs (``low == high``), threshold events (one end infinite) and interval events;
* `HistogramScore` for discrete outputs of any shape: the empirical log-ratio
  ``ln((c_x(y) + ½) / (c_x'(y) + ½))`` of how often each distinct output was seen from the two
  inputs on a training batch; thresholding it gives unions of output values ordered by their
  likelihood ratio (the Neyman–Pearson tests for the empirical distributions);
* `LogisticScore` for multi-dimensional outputs (DP-Sniper).

`dpcert.audit.search.intervals.search_intervals` scores every interval of a grid on a
*search* batch and keeps the best; the statistic and the interval are then fixed, and the
auditor estimates the event's probabilities on a fresh batch (see `dpcert.audit.auditor`).

Examples
--------
>>> import numpy as np
>>> e = Event(Identity(), 1.0, np.inf)
>>> e.contains(np.array([0.5, 1.0, 3.0])).tolist(), e.describe()
([False, True, True], 'output ≥ 1')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dpcert._types import Array

__all__ = [
    "AllOf",
    "Coordinate",
    "Event",
    "HistogramScore",
    "Identity",
    "AboveCount",
    "RowSum",
    "Statistic",
    "fit_above_count",
    "fit_histogram",
    "row_hash",
]

#: Grid atoms and quantiles of continuous statistics come from at most this many values.
GRID_SAMPLE = 50_000

class Statistic(Protocol):
    """A fixed map from encoded outputs to one real number each (or, as the features a score
    is fitted over, to a row of them)."""

    def __call__(self, y: Array, /) -> Array: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class Identity:
    """The output itself (1-D outputs)."""

    def __call__(self, y: Array) -> Array:
        return np.asarray(y, dtype=np.float64)

    def describe(self) -> str:
        return "output"


@dataclass(frozen=True)
class Coordinate:
    """One coordinate ``y[:, index]`` of multi-dimensional outputs."""

    index: int

    def __call__(self, y: Array) -> Array:
        out: Array = np.asarray(y, dtype=np.float64)[:, self.index]
        return out

    def describe(self) -> str:
        return f"output[{self.index}]"


@dataclass(frozen=True)
class RowSum:
    """The sum of the coordinates of each output row (NaN where one is not finite).

    Nothing is fitted, so it uses the whole search batch and cannot be misled by noise.  When
    the coordinates are independent and each shifts a little between ``x`` and ``x'`` (parallel
    composition of Laplace mechanisms, as in DP-Sniper's ``LaplaceParallel``), the likelihood
    ratio depends on the row mostly through this sum, while a fitted direction (logistic,
    additive) on a search batch of 10⁴–10⁵ rows is mostly noise: each coordinate's weight is
    estimated with a standard error larger than its size (Bichsel et al., DP-Sniper, S&P 2021,
    §6 report the same mechanism as the hardest for their classifier).

    Examples
    --------
    >>> RowSum()(np.array([[1.0, 2.0], [3.0, np.inf]])).tolist()
    [3.0, nan]
    """

    def __call__(self, y: Array) -> Array:
        v = np.asarray(y, dtype=np.float64)
        if v.ndim == 1:
            return v.copy()
        with np.errstate(invalid="ignore", over="ignore"):
            total: Array = v.sum(axis=1)
        total[~np.isfinite(total)] = np.nan
        return total

    def describe(self) -> str:
        return "sum of the coordinates"


@dataclass(frozen=True, eq=False)
class AboveCount:
    """How many finite coordinates of each output row are at least their ``cuts``.

    The cuts are fitted on the search batch (the pooled per-coordinate medians, see
    `fit_above_count`) and then fixed.  When every coordinate moves a little between
    ``x`` and ``x'`` under noise much wider than the move (parallel composition of Laplace
    mechanisms: 20 runs of ``Laplace(x, 200)`` on ``x ∈ {0, 1}``), the exact log likelihood
    ratio is ``Σ_j (|y_j − x'| − |y_j − x|)/b``, a sum of *clipped* coordinates, which is
    ``Σ_j sign(y_j − ½)/b`` up to draws inside the unit interval: a count of coordinates above
    the middle.  Its ray ``count ≥ 15`` has log-ratio 0.054 at probability 2 %, where the
    raw sum's best ray of the same probability has about 0.03 (the sum is dominated by the
    largest noise draws, which carry no information).  A Neyman–Pearson argument
    (Neyman & Pearson 1933); DP-Sniper (Bichsel et al., S&P 2021) reaches 0.035 on this
    mechanism with a linear classifier.

    Examples
    --------
    >>> c = AboveCount(np.array([0.0, 10.0]))
    >>> c(np.array([[1.0, 10.0], [-1.0, 3.0], [np.nan, 11.0]])).tolist()
    [2.0, 0.0, 1.0]
    """

    cuts: Array

    def __call__(self, y: Array) -> Array:
        v = np.asarray(y, dtype=np.float64)
        if v.ndim == 1:
            v = v[:, None]
        out: Array = np.count_nonzero((v >= self.cuts[None, :]) & np.isfinite(v),
                                      axis=1).astype(np.float64)
        return out

    def describe(self) -> str:
        return f"count of the {self.cuts.size} coordinates at or above their search medians"


def fit_above_count(a: Array, b: Array) -> AboveCount:
    """The `AboveCount` at the per-coordinate medians of search outputs ``a`` and ``b``
    pooled (NaN-aware; a column with no finite value gets a cut of +inf: never counted)."""
    pooled = np.concatenate([np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)])
    if pooled.ndim == 1:
        pooled = pooled[:, None]
    pooled = pooled[:: max(1, pooled.shape[0] // GRID_SAMPLE)]
    finite = np.where(np.isfinite(pooled), pooled, np.nan)
    ok = np.isfinite(finite).any(axis=0)
    cuts = np.full(pooled.shape[1], np.inf)
    if ok.any():
        cuts[ok] = np.nanmedian(finite[:, ok], axis=0)
    return AboveCount(cuts)


_MIX = np.uint64(0x9E3779B97F4A7C15)


def row_hash(y: Array) -> Array:
    """A 64-bit key per output row (equal rows, equal keys; −0.0 and 0.0, all NaNs agree)."""
    y = np.asarray(y, dtype=np.float64)
    y = np.where(np.isnan(y), np.nan, y + 0.0)  # canonical NaN, -0.0 -> 0.0
    bits = np.ascontiguousarray(y).view(np.uint64)
    if bits.ndim == 1:
        return bits.copy()
    h = np.zeros(bits.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(bits.shape[1]):  # loop over columns only, vectorised over rows
            h = (h ^ bits[:, j]) * _MIX
            h ^= h >> np.uint64(29)
    return h


@dataclass(frozen=True, eq=False)
class HistogramScore:
    """Empirical log likelihood ratio of each distinct output seen in training (0 if unseen)."""

    keys: Array
    scores: Array

    def __call__(self, y: Array) -> Array:
        h = row_hash(y)
        idx = np.minimum(np.searchsorted(self.keys, h), self.keys.size - 1)
        hit = self.keys[idx] == h
        out: Array = np.where(hit, self.scores[idx], 0.0)
        return out

    def describe(self) -> str:
        return f"empirical log-ratio score over {self.keys.size} output values"


def fit_histogram(a: Array, b: Array, max_values: int) -> HistogramScore | None:
    """The `HistogramScore` of training outputs ``a`` (from x) and ``b`` (from x').

    Returns None when more than ``max_values`` distinct outputs were seen (continuous outputs).
    """
    head = min(a.shape[0], 2 * max_values + 2)
    if head > max_values and np.unique(row_hash(a[:head])).size > max_values:
        return None   # continuous: decided on a prefix, without hashing every row
    ha, hb = row_hash(a), row_hash(b)
    keys, inverse = np.unique(np.concatenate([ha, hb]), return_inverse=True)
    if keys.size > max_values:
        return None
    inverse = inverse.ravel()
    ca = np.bincount(inverse[: ha.size], minlength=keys.size).astype(np.float64)
    cb = np.bincount(inverse[ha.size:], minlength=keys.size).astype(np.float64)
    scores = np.log((ca + 0.5) / max(ha.size, 1)) - np.log((cb + 0.5) / max(hb.size, 1))
    return HistogramScore(keys, scores)


@dataclass(frozen=True, eq=False)
class Event:
    """``S = {y : low <= statistic(y) <= high}`` (closed; NaN statistics are never in S)."""

    statistic: Statistic
    low: float
    high: float

    def contains(self, y: Array) -> Array:
        """Whether each output lies in the event."""
        s = self.statistic(y)
        out: Array = (s >= self.low) & (s <= self.high)
        return out

    def describe(self) -> str:
        """A human description, e.g. ``output ≥ 1.5`` or ``output == 3``."""
        name = self.statistic.describe()
        lo, hi = float(self.low), float(self.high)
        if isinstance(self.statistic, AllOf) and lo == 1.0 and math.isinf(hi):
            return str(name)
        if lo == hi:
            return f"{name} == {lo:g}"
        if math.isinf(lo) and lo < 0:
            return f"{name} ≤ {hi:g}"
        if math.isinf(hi) and hi > 0:
            return f"{name} ≥ {lo:g}"
        return f"{lo:g} ≤ {name} ≤ {hi:g}"


@dataclass(frozen=True, eq=False)
class AllOf:
    """1 where every one of ``events`` holds, else 0: with ``Event(AllOf(...), 1, inf)`` the
    intersection of fixed events.  On outputs that concatenate independent blocks (mechanisms
    run in parallel) an event on each block intersects into one whose likelihood ratio is the
    product of theirs.

    Examples
    --------
    >>> e = Event(AllOf((Event(Coordinate(0), 1.0, np.inf), Event(Coordinate(1), -np.inf, 0.0))),
    ...           1.0, np.inf)
    >>> e.contains(np.array([[1.0, 0.0], [1.0, 2.0], [0.0, 0.0]])).tolist()
    [True, False, False]
    >>> e.describe()
    '(output[0] ≥ 1) and (output[1] ≤ 0)'
    """

    events: tuple[Event, ...]

    def __call__(self, y: Array) -> Array:
        hit = self.events[0].contains(y)
        for e in self.events[1:]:
            hit &= e.contains(y)
        out: Array = hit.astype(np.float64)
        return out

    def describe(self) -> str:
        return " and ".join(f"({e.describe()})" for e in self.events)
