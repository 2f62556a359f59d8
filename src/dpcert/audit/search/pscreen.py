"""The pattern screen: the discrete screen on each block's atom pattern, then their intersection.

Outputs that mix atoms with numbers (SVT Alg. 3: ``-1000`` for ⊥, the noisy answer for ⊤,
``-2000`` after the abort) have too many distinct rows for the discrete screen
(`dpcert.audit.search.dscreen`), but their *atom pattern*
(`Pattern`: which atom, or "a number", in each coordinate)
has few values, and it is a fixed map of the output, so an event on the pattern is an event on
the output.  Outputs that concatenate
independent mechanisms (DP-Sniper's ``SVT34Parallel``: Alg. 3 beside Alg. 4's ⊤/⊥/abort codes)
get one pattern per block: together they have hundreds of values, each alone a few dozen.

The discrete screen runs on arms (pair, pattern): its successive halving spends the time on
the best arms, whichever block they are on.  With several blocks, each block's best ray
(in the same direction) on one pair is then intersected
(`AllOf`): on independent blocks the likelihood ratios
multiply, so the intersection of Alg. 4's ``e^0.29`` ray and a weaker Alg. 3 pattern ray is
stronger than either; the pair is the one where the blocks' best rays add up to the most.
Whether the
intersection is stronger is measured, not assumed: the pair is drawn again (fresh draws, no
selection on them) and the intersection is kept only when its held-out bound beats both of
its parts'.  Like every screen, this is search: its draws never enter the final bound and its
events are fixed before the estimation batch.

Examples
--------
>>> import numpy as np
>>> from dpcert.audit.stats.features import fit_patterns
>>> rng = np.random.default_rng(0)  # insecure-ok: test data for the doctest, not privacy noise
>>> def two_blocks(x, n):   # randomized response on a bit, beside an atom or a number
...     bit = np.where(rng.random(n) < 0.6, x, 1 - x)
...     num = np.where(rng.random(n) < 0.5 + 0.1 * x, -1000.0, rng.normal(size=n))
...     return np.column_stack([bit, bit, num]).astype(float)
>>> pats = fit_patterns(two_blocks(0, 5_000))
>>> [p.describe() for p in pats]
['atom pattern of coordinate 2', 'atom pattern of coordinates 0, 1']
>>> got, drawn = pattern_screen(two_blocks, [(0, 1), (1, 0)], pats, rows=100_000, chunk=50_000,
...                             deadline=None, n_estimate=10**6, z=2.0, delta=0.0)
>>> best = max(got, key=lambda c: c.predicted)   # ln 1.5 + ln 1.25 = 0.63 (each block ≤ 0.41)
>>> type(best.event.statistic).__name__, best.predicted > 0.55
('AllOf', True)
"""

from __future__ import annotations

import math
import time

import numpy as np

from dpcert._types import Array
from dpcert.audit.kernel.membership import Membership
from dpcert.audit.kernel.outputs import OutputEncoder, Sampler
from dpcert.audit.kernel.parallel import Forking
from dpcert.audit.search.candidates import Candidate
from dpcert.audit.search.dscreen import HELD_Z, MAX_VALUES, discrete_screen
from dpcert.audit.search.intervals import predicted_one
from dpcert.audit.search.schedule import SCHEDULE
from dpcert.audit.stats.countpattern import CountPattern, count_pattern
from dpcert.audit.stats.events import AllOf, Event
from dpcert.audit.stats.features import Composed, Pattern, refine_pattern

__all__ = ["pattern_screen"]

#: Outputs per input of the first pair on which refined patterns' cuts are fitted.
REFINE_ROWS = 4_096


def _block(c: Candidate) -> Pattern | CountPattern | None:
    stat = c.event.statistic
    if isinstance(stat, Composed) and isinstance(stat.inner, (Pattern, CountPattern)):
        return stat.inner
    return None


def pattern_screen(sampler: Sampler, pair_list: list[tuple[object, object]],
                   patterns: list[Pattern], *, rows: int, chunk: int, deadline: float | None,
                   n_estimate: int, z: float, delta: float, enc: OutputEncoder | None = None,
                   estimate_until: float | None = None, fork: Forking | None = None
                   ) -> tuple[list[Candidate], int]:
    """Candidates on each pattern and, with several, their intersection (see the module).

    ``rows``, ``chunk``, ``n_estimate``, ``z``, ``delta``, ``estimate_until`` and ``fork``
    are the discrete screen's (its arms' batches are drawn by ``fork.workers`` processes);
    ``deadline`` (``time.perf_counter()`` seconds) is shared: with several
    patterns, ``SCHEDULE.join`` of it goes to measuring the intersection.  Returns the
    candidates (events on the output) and the draws per input."""
    start = time.perf_counter()
    join = len(patterns) > 1
    maps, drawn = _refined(sampler, enc, pair_list, patterns, chunk)
    screens_end = (None if deadline is None
                   else start + (1.0 - (SCHEDULE.join if join else 0.0)) * (deadline - start))
    # one arm per (pair, pattern): the screen's successive halving spends its time on the best
    # arms, whichever block they are on
    k = len(maps)
    arms = [((j, x), (j, xp)) for x, xp in pair_list for j in range(k)]

    def arm_sampler(tagged: tuple[int, object], n: int) -> Array:
        j, x = tagged
        y = sampler(x, n)
        out: Array = maps[j](enc.encode(y, n) if enc is not None
                             else np.asarray(y, dtype=np.float64))
        return out

    dropped: list[Candidate] = []
    got, screened = discrete_screen(arm_sampler, arms, rows=rows, chunk=chunk,
                                    deadline=screens_end, n_estimate=n_estimate, z=z,
                                    delta=delta, estimate_until=estimate_until,
                                    eliminated=dropped, fork=fork)
    drawn += screened

    # one Composed per (pattern, arm's score): a ray and its ladder keep one statistic, which
    # is how the choice finds an event's own ladder
    wrapped: dict[tuple[int, int], Composed] = {}

    def on_output(cs: list[Candidate]) -> list[Candidate]:
        out = []
        for c in cs:
            key = (c.pair % k, id(c.event.statistic))
            if key not in wrapped:
                wrapped[key] = Composed(maps[c.pair % k], c.event.statistic)
            out.append(Candidate(c.pair // k, Event(wrapped[key], c.event.low, c.event.high),
                                 c.forward, c.predicted, c.ladder, c.support, c.held,
                                 c.against))
        return out

    found = on_output(got)
    if join:
        # the eliminated arms' rays only choose which pair's blocks to intersect: the
        # intersection is measured on fresh draws and kept only when it beats its parts
        got, m = _join(sampler, enc, pair_list, found + on_output(dropped), rows=rows,
                       chunk=chunk, deadline=deadline, n_estimate=n_estimate, z=z, delta=delta,
                       estimate_until=estimate_until)
        found += got
        drawn += m
    return found, drawn


def _refined(sampler: Sampler, enc: OutputEncoder | None, pair_list: list[tuple[object, object]],
             patterns: list[Pattern], chunk: int
             ) -> tuple[list[Pattern | CountPattern], int]:
    """``patterns``, each with its refinement (`refine_pattern`)
    and its count pattern (`count_pattern`) when that splits
    the numbers into more bins, cuts fitted on `REFINE_ROWS` fresh outputs of each input
    of the first pair; returns them and the rows drawn per input.  They are arms of one
    screen: on few draws the plain pattern's fewer cells are estimated better, on many the
    refined one's are finer.  Where the positions leave no room for bins (no refinement:
    NumericalSVT's 56 patterns) the count pattern *takes* the plain one's arm: with one arm
    less per pair the halving's rounds give each arm more counts."""
    if not pair_list or not patterns:
        return list(patterns), 0
    m = max(1, min(chunk, REFINE_ROWS))
    x, xp = pair_list[0]
    y = np.concatenate([enc.encode(sampler(v, m), m) if enc is not None
                        else np.asarray(sampler(v, m), dtype=np.float64) for v in (x, xp)])
    plain: list[Pattern | CountPattern] = []
    refined: list[Pattern | CountPattern] = []
    counted: list[Pattern | CountPattern] = []
    for p in patterns:
        r = refine_pattern(p, y, MAX_VALUES)
        c = count_pattern(p, y, MAX_VALUES)
        if r is not None:
            refined.append(r)
        if c is not None and len(c.cuts) > (len(r.cuts) if r is not None else 0):
            counted.append(c)
            if r is None:
                continue   # the counts take the arm of positions that leave no room for bins
        plain.append(p)
    return [*plain, *refined, *counted], m


def _join(sampler: Sampler, enc: OutputEncoder | None, pair_list: list[tuple[object, object]],
          found: list[Candidate], *, rows: int, chunk: int, deadline: float | None,
          n_estimate: int, z: float, delta: float, estimate_until: float | None
          ) -> tuple[list[Candidate], int]:
    """The intersection of each block's best ray, per direction, on the pair where their
    predicted bounds add up to the most (on independent blocks the log-ratios add), kept when
    fresh draws of that pair say it beats each of its parts."""
    rays = [c for c in found if not c.ladder and _block(c) is not None]

    def parts_of(pair: int, forward: bool) -> list[Candidate]:
        best: dict[tuple[int, ...], Candidate] = {}
        for c in rays:
            block = _block(c)
            assert block is not None
            key = block.columns   # a block's plain, refined and count patterns: one part
            if c.pair == pair and c.forward == forward and c.predicted > 0 and (
                    key not in best or c.predicted > best[key].predicted):
                best[key] = c
        return list(best.values())

    options = [(sum(c.predicted for c in cs), pair, forward, cs)
               for pair in sorted({c.pair for c in rays}) for forward in (True, False)
               for cs in [parts_of(pair, forward)] if len(cs) > 1]
    if not options:
        return [], 0
    _, pair, _, _ = max(options, key=lambda o: o[0])
    joins = [(forward, cs) for _, p, forward, cs in options if p == pair]
    parts = [c.event for _, cs in joins for c in cs]
    member = Membership(parts)
    counts = np.zeros((2, len(parts) + len(joins)))
    n, m, t0 = 0, min(chunk, 4_096), time.perf_counter()
    x = pair_list[pair]
    while n < rows:
        t = time.perf_counter()
        for side in (0, 1):
            y = sampler(x[side], m)
            y = enc.encode(y, m) if enc is not None else np.asarray(y, dtype=np.float64)
            hits = member(y)
            counts[side, :len(parts)] += [np.count_nonzero(h) for h in hits]
            at = 0
            for j, (_, cs) in enumerate(joins):
                both = np.logical_and.reduce(hits[at:at + len(cs)])
                counts[side, len(parts) + j] += np.count_nonzero(both)
                at += len(cs)
        n += m
        spent = time.perf_counter() - t
        if deadline is not None and time.perf_counter() + spent > deadline:
            break
        if deadline is None or time.perf_counter() + 3 * spent < deadline:
            m = min(2 * m, chunk)
        m = min(m, rows - n)
        if m <= 0:
            break
    seconds = time.perf_counter() - t0
    n_est = n_estimate
    if estimate_until is not None and deadline is not None and seconds > 0:
        n_est = max(n_estimate, int(SCHEDULE.drawing * n / seconds * max(0.0, estimate_until -
                                                                      deadline)))

    def held(k: int, forward: bool) -> float:
        k1, k2 = (counts[0, k], counts[1, k]) if forward else (counts[1, k], counts[0, k])
        return predicted_one(k1, k2, n, n, n_est, z, delta, HELD_Z)

    out = []
    at = 0
    for j, (forward, cs) in enumerate(joins):
        own = held(len(parts) + j, forward)
        if own > max(held(at + i, forward) for i in range(len(cs))):
            ev = Event(AllOf(tuple(c.event for c in cs)), 1.0, math.inf)
            k = len(parts) + j
            hits, other = (counts[0, k], counts[1, k]) if forward else (counts[1, k], counts[0, k])
            out.append(Candidate(pair, ev, forward, own, support=float(hits), held=n,
                                 against=float(other)))
        at += len(cs)
    return out, n
