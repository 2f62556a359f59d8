"""The wide screen: cheap statistics of one pair searched again on a batch 10–30× larger.

The search batch is sized by the cost of the fitted statistics (logistic, additive scores,
histograms), so on a time budget it holds 10⁴–10⁵ draws per input.  Some statistics need no
costly fit: the sum of the coordinates (`RowSum`), the count of
coordinates above their medians (`AboveCount`) and the sentinel
summary (`SentinelSummary`: how many coordinates hold each
sentinel, and the sum of the others) with its quadrant events.  On 10⁵ draws their best events
cannot be told from noise when the ratio is small (LaplaceParallel: log-ratio 0.054 at
probability 2 %, 1.7 standard errors on 10⁵ draws) or the event rare (SVT Alg. 3: ``e^{0.2}`` at
probability 0.5 %).  The wide screen draws a fresh batch of the search's best pair, keeps only
these statistics' values (a few numbers per row, so memory stays small), selects each
statistic's best events on the first two thirds and re-scores them on the last third, exactly
as `search_pair` does.  It is part of the search: nothing
it draws enters the final bound, and its events are fixed before the estimation batch is drawn.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)  # insecure-ok: test data for the doctest, not privacy noise
>>> def mech(x, n):
...     return x + rng.laplace(0.0, 50.0, (n, 20))
>>> got, rows = wide_screen(mech, 0.0, 1.0, 0, rows=200_000, chunk=50_000, deadline=None,
...                   n_estimate=4_000_000, z=2.2, delta=0.0)
>>> max(got, key=lambda c: c.predicted).event.statistic.describe()
'count of the 20 coordinates at or above their search medians'
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

import numpy as np

from dpcert._types import Array
from dpcert.audit.kernel.outputs import OutputEncoder, Sampler
from dpcert.audit.search.candidates import HOLDOUT, Candidate, _ladder
from dpcert.audit.search.intervals import guard_z, predicted_one, search_intervals
from dpcert.audit.search.quadrants import Quadrant, search_quadrants
from dpcert.audit.stats.events import Event, RowSum, Statistic, fit_above_count
from dpcert.audit.stats.features import fit_feature_map, fit_summary, is_float_valued

__all__ = ["WIDE_MAX_ROWS", "More", "Values", "draw_values", "wide_screen"]

#: Most rows per input of a wide screen (its statistics take ≤ 8 numbers per row).
WIDE_MAX_ROWS = 1_500_000


def _statistics(ya: Array, yb: Array) -> list[Statistic]:
    """The cheap statistics that apply to outputs like ``ya``, ``yb`` (fitted on them)."""
    if ya.ndim != 2 or ya.shape[1] < 2 or not is_float_valued(ya[:1000]):
        return []
    stats: list[Statistic] = [RowSum(), fit_above_count(ya, yb)]
    both = np.concatenate([ya, yb])
    summary = fit_summary(fit_feature_map(both), both)
    if summary is not None:
        stats.append(summary)
    return stats


def _values(stats: list[Statistic], y: Array) -> list[Array]:
    return [s(y) for s in stats]


#: One process's values of the cheap statistics: (on x's draws, on x''s draws, rows each).
Values = tuple[list[Array], list[Array], int]
#: Draws the rest of a screen's values: ``more(stats, rows, deadline, pace)`` gives every
#: process's :data:`Values` (this one's first), ``rows`` in all at most (``pace``: seconds
#: one chunk took, so none starts that would end after the deadline).
More = Callable[[list[Statistic], int, "float | None", float], list[Values]]


def _sample(sampler: Sampler, v: object, m: int, enc: OutputEncoder | None) -> Array:
    out = sampler(v, m)
    return np.asarray(out if enc is None else enc.encode(out, m), dtype=np.float64)


def draw_values(sampler: Sampler, x: object, xp: object, stats: list[Statistic], *, rows: int,
                chunk: int, deadline: float | None, enc: OutputEncoder | None = None,
                pace: float = 0.0) -> Values:
    """The values of ``stats`` on up to ``rows`` fresh draws of each input, in chunks of
    ``chunk``, stopping before a chunk that would end after ``deadline`` (a chunk takes as
    long as the last one, ``pace`` seconds before the first)."""
    parts_a: list[list[Array]] = []
    parts_b: list[list[Array]] = []
    n, last = 0, pace
    while n < rows:
        now = time.perf_counter()
        if deadline is not None and now + last > deadline:
            break
        m = min(chunk, rows - n)
        parts_a.append(_values(stats, _sample(sampler, x, m, enc)))
        parts_b.append(_values(stats, _sample(sampler, xp, m, enc)))
        n += m
        last = time.perf_counter() - now
    return ([np.concatenate([p[i] for p in parts_a]) if parts_a else np.zeros(0)
             for i in range(len(stats))],
            [np.concatenate([p[i] for p in parts_b]) if parts_b else np.zeros(0)
             for i in range(len(stats))], n)


def wide_screen(sampler: Sampler, x: object, xp: object, pair: int, *, rows: int, chunk: int,
                deadline: float | None, n_estimate: int, z: float, delta: float,
                enc: OutputEncoder | None = None, more: More | None = None
                ) -> tuple[list[Candidate], int]:
    """Candidate events of the cheap statistics for the pair ``(x, xp)`` (index ``pair``).

    Draws up to ``rows`` outputs of each input in chunks of ``chunk`` (both inputs the same
    number), stopping early at ``deadline`` (``time.perf_counter()`` seconds; checked between
    chunks).  The statistics are fitted on the first chunk; ``more`` (several processes, see
    `dpcert.audit.search.standard._wide`) draws the rest, else this process does.  Returns the
    candidates and the rows drawn per input; no candidates when no cheap statistic applies
    (1-D, discrete or integer outputs), after one chunk."""
    m = max(1, min(chunk, rows))
    t0 = time.perf_counter()
    ya, yb = _sample(sampler, x, m, enc), _sample(sampler, xp, m, enc)
    stats = _statistics(ya, yb)
    if not stats:
        return [], m
    first: Values = (_values(stats, ya), _values(stats, yb), m)
    pace = time.perf_counter() - t0
    rest = ([draw_values(sampler, x, xp, stats, rows=rows - m, chunk=chunk,
                         deadline=deadline, enc=enc, pace=pace)]
            if more is None else more(stats, rows - m, deadline, pace))
    parts = [first, *rest]
    n = sum(p[2] for p in parts)
    parts_a, parts_b = [p[0] for p in parts if p[2]], [p[1] for p in parts if p[2]]
    va = [np.concatenate([p[i] for p in parts_a]) for i in range(len(stats))]
    vb = [np.concatenate([p[i] for p in parts_b]) for i in range(len(stats))]
    cut = n - int(HOLDOUT * n)
    # (the quadrant on the values' features or None for a ray, event, forward, predicted)
    found: list[tuple[Quadrant | None, Event, bool, float]] = []
    for stat, sa, sb in zip(stats, va, vb, strict=True):
        if sa.ndim == 1:
            for c in search_intervals(sa[:cut], sb[:cut], n_estimate=n_estimate, z=z,
                                      delta=delta, rays_only=True):
                found.append((None, Event(stat, c.low, c.high), c.forward, c.predicted))
        else:
            for ev, fwd, pred in search_quadrants(None, sa[:cut], sb[:cut],
                                                  n_estimate=n_estimate, z=z, delta=delta):
                q = cast(Quadrant, ev.statistic)   # search_quadrants' events are on quadrants
                final = Quadrant(stat, q.j, q.k, q.a, q.j_upper, q.b, q.k_upper)
                found.append((q, Event(final, 1.0, 1.0), fwd, pred))
    # re-score on the held-out third (see search.rescore), with the same extreme-value guard
    # as the selection: the best of many quadrants on a small screen is the luckiest
    z_guard = guard_z(len(found))
    out: list[Candidate] = []
    held = {id(s): (a[cut:], b[cut:]) for s, a, b in zip(stats, va, vb, strict=True)}
    for inner, ev, fwd, _ in found:
        if inner is None:
            ha, hb = held[id(ev.statistic)]
            ka = np.count_nonzero((ha >= ev.low) & (ha <= ev.high))
            kb = np.count_nonzero((hb >= ev.low) & (hb <= ev.high))
        else:
            ha, hb = held[id(cast(Quadrant, ev.statistic).features)]
            ka = np.count_nonzero(inner(ha))
            kb = np.count_nonzero(inner(hb))
        (k1, n1), (k2, n2) = ((ka, n - cut), (kb, n - cut)) if fwd else \
            ((kb, n - cut), (ka, n - cut))
        pred = predicted_one(float(k1), float(k2), n1, n2, n_estimate, z, delta, z_guard)
        # the hits are recorded, so a prediction resting on few hits is confirmed
        # (dpcert.audit.search.confirm) before it can be chosen
        out.append(Candidate(pair, ev, fwd, pred, support=float(k1), held=n1,
                             against=float(k2)))
    # the ladder of each statistic's best ray (the choice takes the chosen events' own)
    for i, stat in enumerate(stats):
        rays = [c for c in out if c.predicted > 0 and c.event.statistic is stat]
        if not rays:
            continue
        best = max(rays, key=lambda c: c.predicted)
        # the ladder reads the statistic's held-out values through an identity view
        out += [Candidate(c.pair, Event(stat, c.event.low, c.event.high), c.forward,
                          c.predicted, True, c.support, c.held, c.against)
                for c in _ladder(Candidate(pair, Event(_Stored(), best.event.low,
                                                       best.event.high),
                                           best.forward, best.predicted),
                                 va[i][cut:], vb[i][cut:], n_estimate=n_estimate, z=z,
                                 delta=delta)]
    return out, n


class _Stored:
    """The identity on already computed statistic values (for `_ladder`)."""

    def __call__(self, v: Array) -> Array:
        return v

    def describe(self) -> str:
        return "stored statistic"
