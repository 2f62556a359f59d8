"""The search phase: which events to estimate, from one batch of outputs of each input.

For one pair of inputs the search fits every applicable statistic
(`dpcert.audit.stats.events`, `dpcert.audit.stats.features`,
`dpcert.audit.stats.classifier`) on one half of the search batch, scores every interval
(or threshold) event of it on the other half by the bound it *would* give on an estimation
batch of the planned size, and returns the best events in each direction.
Statistics that need no fitting (the output, each coordinate, the lowest set bit of a float) use
the whole batch.  Nothing computed here enters the final bound: the estimation phase measures
the chosen, now fixed, events on fresh draws.

Which statistics are tried:

* 1-D outputs: the output itself; for float outputs the lowest set bit and a histogram over
  (exponent, lowest bit) cells — the float-lattice holes detector; for discrete outputs the
  empirical log-ratio histogram.
* k-D outputs: each coordinate (k ≤ 32), with sentinel-aware grids; for float rows the sum of
  the coordinates (fixed, nothing fitted) and the count of coordinates above their medians
  (also searched again on a wide batch of their own, `dpcert.audit.search.screen`); the
  log-ratio histogram for discrete outputs, and for other outputs a histogram over binned
  rows (atoms apart, a few quantile bins per coordinate) when they fall in few cells; an
  additive (naive-Bayes) score over coordinates and sentinel flags, its sparse version (the
  entries indistinguishable from 0 dropped), and one over consecutive differences; a logistic
  score over coordinates and sentinel flags (DP-Sniper's classifier);
  for outputs that mix atoms with numbers, the log-ratio histogram of each block's atom
  pattern (`Pattern`; screened on large batches with the
  blocks' intersection, `dpcert.audit.search.pscreen`, when it has few values).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)  # insecure-ok: test data for the doctest, not privacy noise
>>> a, b = rng.laplace(0.0, 1.0, 20_000), rng.laplace(1.0, 1.0, 20_000)
>>> best = search_pair(a, b, 0, n_estimate=100_000, z=3.0, delta=0.0)
>>> max(c.predicted for c in best) > 0.8
True
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpcert._types import Array
from dpcert.audit.kernel.handoff import Choice
from dpcert.audit.kernel.outputs import OutputEncoder, Sampler
from dpcert.audit.kernel.parallel import Crew, Forking
from dpcert.audit.search.base import Plan, SearchOutcome, SearchTask
from dpcert.audit.search.candidates import HOLDOUT, LADDER_TAILS, Candidate, _ladder
from dpcert.audit.search.confirm import MAX_ROWS as MAX_CONFIRM_ROWS
from dpcert.audit.search.confirm import confirm, contest
from dpcert.audit.search.dscreen import MAX_VALUES, discrete_screen
from dpcert.audit.search.intervals import guard_z, predicted_one, search_intervals
from dpcert.audit.search.pscreen import pattern_screen
from dpcert.audit.search.quadrants import search_quadrants
from dpcert.audit.search.schedule import SCHEDULE
from dpcert.audit.search.screen import (
    WIDE_MAX_ROWS,
    More,
    Values,
    draw_values,
    wide_screen,
)
from dpcert.audit.stats.classifier import fit_logistic
from dpcert.audit.stats.events import (
    Coordinate,
    Event,
    HistogramScore,
    Identity,
    RowSum,
    Statistic,
    fit_above_count,
    fit_histogram,
)
from dpcert.audit.stats.features import (
    Composed,
    FloatCell,
    LowestBit,
    Pattern,
    fit_additive,
    fit_additive_pair,
    fit_binned,
    fit_feature_map,
    fit_patterns,
    fit_summary,
    is_float_valued,
)
from dpcert.errors import InvalidParameter

__all__ = ["HOLDOUT", "LADDER_TAILS", "Candidate", "StandardSearch", "choose", "draw", "rescore",
           "run_search", "search_pair"]

#: Called with one line of progress text.
Progress = Callable[[str], None]

#: Pairs searched again on a full batch after a screening of all pairs.
FINALISTS = 2
#: Most draws per input of one pair in one round of the discrete screen.
DISCRETE_MAX_ROWS = 50_000_000
#: Least share of the best candidate's prediction for another family's event to take a place
#: of its own in :func:`choose`.
FAMILY_SHARE = 0.5
#: Fewest search draws per input of each pair.
MIN_SEARCH = 500
#: Draws per input of the larger of the two small first searches that measure the search's
#: cost (time budgets).
CALIBRATION = 4_000

#: Discrete statistics are fitted when training saw at most this many distinct outputs...
MAX_DISCRETE_VALUES = 20_000
#: ...and at most one per this many training draws.
MIN_CELL_COUNT = 10
#: Multi-dimensional outputs with at most this many coordinates also get per-coordinate events.
MAX_COORDINATES = 32
#: Discrete outputs with at most this many distinct values (in training) are scored by the
#: histogram alone: it estimates the likelihood ratio of every output directly (more cells
#: are estimated too noisily; the additive and logistic scores then run as well).
MAX_EXACT_VALUES = 64
#: Most training rows per input for the additive and logistic scores.
MAX_FIT_ROWS = 50_000
def search_pair(a: Array, b: Array, pair: int, *, n_estimate: int, z: float, delta: float,
                screening: bool = False) -> list[Candidate]:
    """Candidate events for outputs ``a`` of ``M(x)`` and ``b`` of ``M(x')`` (search batch).

    The last `HOLDOUT` of each batch is held out: events are fitted and selected on the
    rest, then every selected event's predicted bound is re-scored on the held-out draws.  The
    best of thousands of intervals on one batch is mostly the luckiest (a narrow band of one
    coordinate seen 30 vs 10 times); on draws it was not selected on, it is only as good as it
    is, so strong small events compete with weak large ones on equal terms (and pairs and
    statistics are ranked by what the estimation batch can confirm).

    ``screening`` (a small first batch, to rank pairs) skips the logistic fit and restricts every
    statistic to threshold events: fewer events, so less chance of ranking a pair by a lucky
    narrow interval."""
    cut_a = a.shape[0] - int(HOLDOUT * a.shape[0])
    cut_b = b.shape[0] - int(HOLDOUT * b.shape[0])
    found = _select(a[:cut_a], b[:cut_b], pair, n_estimate=n_estimate, z=z, delta=delta,
                    screening=screening)
    found = rescore(found, a[cut_a:], b[cut_b:], n_estimate=n_estimate, z=z, delta=delta)
    # the ladder climbs a likelihood-ratio score (histogram, additive, logistic) when there is
    # one: its nested rays are the Neyman–Pearson family; else the raw output's rays.  The
    # best ray of each family predicted above 0 has one too, as :func:`choose` takes the
    # chosen events' own ladders (a chosen ray's smaller nested rays may have a higher ratio)
    rays = [c for c in found if math.isinf(c.event.low) != math.isinf(c.event.high)]
    scores = [c for c in rays if not isinstance(c.event.statistic, (Identity, Coordinate))
              and c.predicted > 0]
    if (scores or rays) and not screening:
        heads = [max(scores or rays, key=lambda c: c.predicted)]
        best_of: dict[type, Candidate] = {}
        for c in rays:
            kind = type(c.event.statistic)
            if c.predicted > 0 and (kind not in best_of
                                    or c.predicted > best_of[kind].predicted):
                best_of[kind] = c
        heads += [c for c in best_of.values() if all(c is not h for h in heads)]
        for head in heads:
            found += _ladder(head, a[cut_a:], b[cut_b:], n_estimate=n_estimate, z=z,
                             delta=delta)
    return found


def rescore(found: list[Candidate], ha: Array, hb: Array, *, n_estimate: int, z: float,
            delta: float) -> list[Candidate]:
    """``found`` with predicted bounds re-computed from held-out outputs ``ha`` (of x) and
    ``hb`` (of x'), which the selection did not see.  The guard against the best of
    ``len(found)`` events being lucky is the same extreme-value one as in the selection."""
    if not found or ha.shape[0] == 0 or hb.shape[0] == 0:
        return found
    cache: dict[int, tuple[Array, Array]] = {}
    z_guard = guard_z(len(found))
    out = []
    for c in found:
        key = id(c.event.statistic)
        if key not in cache:
            cache[key] = (c.event.statistic(ha), c.event.statistic(hb))
        sa, sb = cache[key]
        ka = float(np.count_nonzero((sa >= c.event.low) & (sa <= c.event.high)))
        kb = float(np.count_nonzero((sb >= c.event.low) & (sb <= c.event.high)))
        (k1, n1), (k2, n2) = ((ka, sa.size), (kb, sb.size))
        if not c.forward:
            (k1, n1), (k2, n2) = (k2, n2), (k1, n1)
        pred = predicted_one(k1, k2, n1, n2, n_estimate, z, delta, z_guard)
        out.append(Candidate(c.pair, c.event, c.forward, pred, support=k1, held=n1,
                             against=k2))
    return out


def _select(a: Array, b: Array, pair: int, *, n_estimate: int, z: float, delta: float,
            screening: bool) -> list[Candidate]:
    out: list[Candidate] = []

    def add(stat: Statistic, sa: Array, sb: Array, rays_only: bool = False) -> None:
        for c in search_intervals(sa, sb, n_estimate=n_estimate, z=z, delta=delta,
                                  rays_only=rays_only or screening):
            out.append(Candidate(pair, Event(stat, c.low, c.high), c.forward, c.predicted))

    half_a, half_b = a.shape[0] // 2, b.shape[0] // 2
    ta, tb, va, vb = a[:half_a], b[:half_b], a[half_a:], b[half_b:]
    # a histogram needs its cells seen often: at most one per MIN_CELL_COUNT training draws
    max_cells = min(MAX_DISCRETE_VALUES, max(2, half_a // MIN_CELL_COUNT))
    hist = fit_histogram(ta, tb, max_cells)
    if a.ndim == 1:
        ident = Identity()
        add(ident, ident(a), ident(b))
        if hist is not None and hist.keys.size > 2:
            add(hist, hist(va), hist(vb), rays_only=True)
        if hist is None and is_float_valued(a[:1000]):
            low = LowestBit()
            add(low, low(a), low(b))
            cell = FloatCell()
            cells = fit_histogram(cell(ta), cell(tb), max_cells)
            if cells is not None:
                stat = Composed(cell, cells)
                add(stat, stat(va), stat(vb), rays_only=True)
        return out
    if a.shape[1] <= MAX_COORDINATES:
        for j in range(a.shape[1]):
            coord = Coordinate(j)
            add(coord, coord(a), coord(b))
    if hist is None and is_float_valued(a[:1000]):
        # numeric rows: the fixed sum of coordinates (see RowSum), on the whole batch
        total = RowSum()
        add(total, total(a), total(b))
        # and the count of coordinates above their medians (see AboveCount): the clipped sum
        above = fit_above_count(a, b)
        add(above, above(a), above(b))
    if hist is not None and hist.keys.size > 2:
        add(hist, hist(va), hist(vb), rays_only=True)
    if hist is not None and hist.keys.size <= MAX_EXACT_VALUES:
        return out   # the histogram score is already the likelihood ratio
    if hist is None:
        # the atom pattern of each block (a few-valued function of the output): its
        # likelihood-ratio rays, as for a discrete output
        for pat in fit_patterns(ta):
            cells = fit_histogram(pat(ta), pat(tb), max_cells)
            if cells is not None and cells.keys.size > 1:
                stat = Composed(pat, cells)
                add(stat, stat(va), stat(vb), rays_only=True)
        binned = fit_binned(np.concatenate([ta[:MAX_FIT_ROWS], tb[:MAX_FIT_ROWS]]))
        cells = fit_histogram(binned(ta), binned(tb), max_cells)
        if cells is not None:
            stat = Composed(binned, cells)
            add(stat, stat(va), stat(vb), rays_only=True)
    ta, tb = ta[:MAX_FIT_ROWS], tb[:MAX_FIT_ROWS]
    fm = fit_feature_map(np.concatenate([ta, tb]))
    nb, sparse = fit_additive_pair(ta, tb, fm)
    add(nb, nb(va), nb(vb), rays_only=True)
    if sparse is not None:
        add(sparse, sparse(va), sparse(vb), rays_only=True)
    summary = fit_summary(fm, np.concatenate([ta, tb]))
    if summary is not None:
        ns = fit_additive(ta, tb, summary)
        add(ns, ns(va), ns(vb), rays_only=True)
        for ev, forward, pred in search_quadrants(summary, summary(a), summary(b),
                                                  n_estimate=n_estimate, z=z, delta=delta):
            out.append(Candidate(pair, ev, forward, pred))
    if not screening:
        # the costliest fit (Newton steps on every feature); screening ranks pairs without it
        model = fit_logistic(ta, tb, transform=fm)
        add(model, model(va), model(vb), rays_only=True)
    if is_float_valued(ta[:1000]):
        fd = fit_feature_map(np.concatenate([ta, tb]), differences=True)
        nd = fit_additive(ta, tb, fd)
        add(nd, nd(va), nd(vb), rays_only=True)
    return out


def _short(x: object) -> str:
    text = repr(x.tolist() if isinstance(x, np.ndarray) else x)
    return text if len(text) <= 60 else text[:57] + "..."


def draw(sampler: Sampler, x: object, n: int, enc: OutputEncoder, chunk: int) -> Array:
    parts = []
    left = n
    while left > 0:
        m = min(left, chunk)
        parts.append(enc.encode(sampler(x, m), m))
        left -= m
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _search_one(sampler: Sampler, pair_list: list[tuple[object, object]], i: int, n: int,
                plan: Plan, enc: OutputEncoder, z: float, delta: float,
                screening: bool = False) -> list[Candidate]:
    x, xp = pair_list[i]
    a = draw(sampler, x, n, enc, plan.chunk)
    b = draw(sampler, xp, n, enc, plan.chunk)
    if a.shape[1:] != b.shape[1:]:
        raise InvalidParameter(
            f"outputs on x={_short(x)} and x'={_short(xp)} have different shapes "
            f"{a.shape[1:]} and {b.shape[1:]}"
        )
    return search_pair(a, b, i, n_estimate=plan.n_estimate, z=z, delta=delta,
                       screening=screening)


def run_search(sampler: Sampler, pair_list: list[tuple[object, object]], plan: Plan,
                  enc: OutputEncoder, z: float, delta: float, progress: Progress | None,
                  t_start: float, fork: Forking | None = None
                  ) -> tuple[list[Candidate], int, int]:
    """Candidates from search batches; returns (candidates, draws, pairs searched).

    With ``fork`` (``workers > 1``), the discrete and pattern screens' batches are drawn by
    that many processes (`Crew`); the rest runs here.

    With more than `FINALISTS` pairs the search has two stages: every pair is screened
    on a quarter-size batch, and the ``FINALISTS`` pairs with the best predicted bounds are
    searched again on a full batch of fresh draws."""
    found: list[Candidate] = []
    drawn = 0
    searched = 0
    # the search may use its share of the budget (and a little more), never the whole of it
    end = (None if plan.deadline is None
           else t_start + SCHEDULE.search * (plan.deadline - t_start))
    stop = end
    screen = len(pair_list) > FINALISTS
    finals = min(FINALISTS, len(pair_list)) if screen else 0
    n_first = max(MIN_SEARCH, plan.n_search // 4) if screen else plan.n_search
    # cost of one search of m draws per input ≈ fixed + 2·m·rate: the fits and the interval
    # grids cost about the same for any batch size, so a rate measured as time/draws on small
    # batches would starve every later search
    fixed = 0.0
    rate: float | None = None   # seconds per search draw beyond the fixed cost
    base: tuple[int, float] | None = None   # the larger calibration search (size, seconds)

    def size(n: int, searches_left: int, units_left: float) -> int:
        """Draws per input for the next search: ``units_left`` batches of its size remain
        (finalists count as the full-to-screening size ratio) over ``searches_left`` searches."""
        if stop is None or rate is None:
            return n
        left = stop - time.perf_counter() - searches_left * fixed
        fit = left / (units_left * 2 * rate)
        return int(max(MIN_SEARCH, min(n, fit)))

    def measured(seconds: float, m: int) -> None:
        nonlocal rate, fixed, base
        if base is not None and m > 2 * base[0]:
            # the first search well above the calibration: the line through it and the
            # larger calibration search (a wide baseline) gives the fixed cost and the rate
            m0, t0 = base
            base = None
            rate = max(plan.per_draw, (seconds - t0) / (2 * (m - m0)))
            fixed = max(0.0, t0 - 2 * m0 * rate)
            return
        rate = max((seconds - fixed) / (2 * m), plan.per_draw)

    if stop is not None:
        # calibrate: two small searches of the first pair (sizes m/4 and m; the first one
        # also warms up what a first call costs) time a search
        times = []
        m = min(CALIBRATION, n_first)
        for size_m in (max(MIN_SEARCH // 2, m // 4), m):
            t0 = time.perf_counter()
            found += _search_one(sampler, pair_list, 0, size_m, plan, enc, z, delta, True)
            times.append((size_m, time.perf_counter() - t0))
            drawn += 2 * size_m
        # the two small searches' times differ by less than their noise, so their slope is
        # no rate: until a larger search is measured, the rate is the larger one's time per
        # draw, fixed cost included — an over-estimate, so a first search ends early and
        # leaves its time to the later ones, never to the estimation's loss
        m2, t2 = times[1]
        rate = max(plan.per_draw, t2 / (2 * m2))
        fixed = 0.0
        base = (m2, t2)
    # few-valued outputs, as the calibration searches saw them (no draw of its own, so other
    # mechanisms' searches are unchanged)
    few = any(isinstance(c.event.statistic, HistogramScore)
              and c.event.statistic.keys.size <= MAX_VALUES for c in found)
    if stop is not None and len(pair_list) > 1 and time.perf_counter() < stop and few:
        # few distinct outputs: the histogram's likelihood-ratio rays are the tests, and their
        # counts are cheap, so every pair is screened on far larger batches than a search's
        now = time.perf_counter()
        until = now + SCHEDULE.discrete * (stop - now)
        got, rows = discrete_screen(sampler, pair_list, rows=DISCRETE_MAX_ROWS,
                                    chunk=plan.chunk, deadline=until,
                                    n_estimate=plan.n_estimate, z=z, delta=delta, enc=enc,
                                    estimate_until=plan.deadline, fork=fork)
        found, extra = _confirm(found + got, sampler, pair_list, plan, enc, z, delta, t_start,
                                end)
        return found, drawn + 2 * (rows + extra), len(pair_list)
    patterns = _few_patterns(found)
    if stop is not None and len(pair_list) > 1 and time.perf_counter() < stop and patterns:
        # outputs with a few-valued atom pattern per block (SVT Alg. 3's ⊤/⊥/abort, a block
        # of ⊤/⊥ codes beside it): the pattern screen for ``SCHEDULE.discrete`` of the search's
        # time, then the search goes on with the rest
        now = time.perf_counter()
        until = now + SCHEDULE.discrete * (stop - now)
        got, rows = pattern_screen(sampler, pair_list, patterns, rows=DISCRETE_MAX_ROWS,
                                   chunk=plan.chunk, deadline=until,
                                   n_estimate=plan.n_estimate, z=z, delta=delta, enc=enc,
                                   estimate_until=plan.deadline, fork=fork)
        found += got
        drawn += 2 * rows
    wide = any(isinstance(c.event.statistic, RowSum) for c in found)
    wide_slot = 0.0
    if wide and stop is not None:
        # cheap statistics apply (numeric vector outputs): leave ``SCHEDULE.wide`` of the search's
        # time to the wide screen (dpcert.audit.search.screen)
        now = time.perf_counter()
        wide_slot = SCHEDULE.wide * (stop - now)
        stop = now + (1.0 - SCHEDULE.wide) * (stop - now)
    best: dict[int, float] = {}
    screened = 0   # the largest screening batch: a finalist's search must be larger
    for i in range(len(pair_list)):
        if stop is not None and searched > 0 and time.perf_counter() > stop:
            break
        m = size(n_first, len(pair_list) - i + finals,
                 len(pair_list) - i + finals * plan.n_search / n_first)
        if progress is not None:
            progress(f"search: pair {i + 1}/{len(pair_list)}, {m:,} draws per input")
        t0 = time.perf_counter()
        got = _search_one(sampler, pair_list, i, m, plan, enc, z, delta, screen)
        measured(time.perf_counter() - t0, m)
        screened = max(screened, m)
        drawn += 2 * m
        searched += 1
        found += got
        best[i] = max([c.predicted for c in got], default=-math.inf)
    if screen:
        for j, i in enumerate(sorted(best, key=lambda i: best[i], reverse=True)[:finals]):
            m = size(plan.n_search, finals - j, finals - j)
            if (stop is not None and time.perf_counter() > stop) or m <= screened:
                break
            if progress is not None:
                progress(f"search: pair {i + 1} again, {m:,} draws per input")
            found += _search_one(sampler, pair_list, i, m, plan, enc, z, delta)
            drawn += 2 * m
    if any(isinstance(c.event.statistic, RowSum) for c in found):
        # the wide screen keeps its slot when a search overran (a calibration that
        # under-estimated the cost per draw would otherwise leave it no time)
        wide_end = None if end is None else max(end, time.perf_counter() + wide_slot)
        got, rows = _wide(sampler, pair_list, found, plan, enc, z, delta, wide_end, fork)
        found += got
        drawn += 2 * rows
    found, extra = _confirm(found, sampler, pair_list, plan, enc, z, delta, t_start, end)
    if plan.deadline is not None and len(pair_list) > 1:
        # which pair leads, on fresh draws of the close ones (time budgets only: an audit
        # fixed by its sample counts keeps its draws)
        found, more = contest(found, sampler, pair_list, chunk=plan.chunk,
                              deadline=time.perf_counter()
                              + SCHEDULE.contest * (plan.deadline - t_start),
                              n_estimate=plan.n_estimate, z=z, delta=delta, enc=enc,
                              fork=fork)
        extra += more
    return found, drawn + 2 * extra, searched


def _confirm(found: list[Candidate], sampler: Sampler, pair_list: list[tuple[object, object]],
             plan: Plan, enc: OutputEncoder, z: float, delta: float, t_start: float,
             end: float | None) -> tuple[list[Candidate], int]:
    """`confirm` for ``SCHEDULE.confirm`` of the budget after
    the search's own time (or on at most 4 search batches when there is no deadline)."""
    until = None
    if plan.deadline is not None and end is not None:
        until = max(time.perf_counter(), end) + SCHEDULE.confirm * (plan.deadline - t_start)
    return confirm(found, sampler, pair_list, chunk=plan.chunk, deadline=until,
                   n_estimate=plan.n_estimate, z=z, delta=delta, enc=enc,
                   max_rows=MAX_CONFIRM_ROWS if until is not None else 4 * plan.n_search)


def _few_patterns(found: list[Candidate]) -> list[Pattern]:
    """The atom patterns (one per block, as the last search fitted them) whose histograms
    had at most `MAX_VALUES` values."""
    got: dict[tuple[tuple[int, ...], tuple[tuple[float, ...], ...]], Pattern] = {}
    for c in found:
        stat = c.event.statistic
        if (isinstance(stat, Composed) and isinstance(stat.inner, Pattern)
                and isinstance(stat.outer, HistogramScore)
                and stat.outer.keys.size <= MAX_VALUES):
            got[(stat.inner.columns, stat.inner.atoms)] = stat.inner
    return list(got.values())


def _wide(sampler: Sampler, pair_list: list[tuple[object, object]], found: list[Candidate],
          plan: Plan, enc: OutputEncoder, z: float, delta: float, end: float | None,
          fork: Forking | None = None) -> tuple[list[Candidate], int]:
    """The wide screen (`dpcert.audit.search.screen`) until ``end``.  With more than
    `FINALISTS` pairs, every pair is first screened on ``SCHEDULE.wide_first`` of the time
    (rare strong events, invisible in the search batch, decide which pair is best: SVT Alg. 3's
    ``e^{0.24}`` event of probability 0.2 % on the half-half pair; those screens only rank the
    pairs); then the `FINALISTS` best pairs (by the screen, else by the search) share
    the rest.  Every screen's ladders are kept (`choose` takes those of the chosen
    events' own statistics).  On a deadline with ``fork`` (``workers > 1``), each screen's
    rows after the first chunk are drawn by that many processes (`Crew`), the same share and
    deadline each, and their statistics' values pooled
    (weak ratios spread over many coordinates need 10⁶ rows or more to be told from lucky
    coordinates).  Returns the candidates and the draws per input."""
    ranked = sorted((c for c in found if not c.ladder), key=lambda c: c.predicted,
                    reverse=True)
    if not ranked:
        return [], 0
    if end is not None and fork is not None and fork.workers > 1:
        # (the workers run the task inherited at the fork, with the arguments sent; this
        # process runs the same task beside them)
        task = functools.partial(_wide_values, sampler, pair_list, plan.chunk, enc)
        with Crew(fork, task) as crew:
            return _wide_runs(sampler, pair_list, ranked, plan, enc, z, delta, end,
                              (crew, task))
    return _wide_runs(sampler, pair_list, ranked, plan, enc, z, delta, end, None)


def _wide_values(sampler: Sampler, pair_list: list[tuple[object, object]], chunk: int,
                 enc: OutputEncoder, i: int, stats: list[Statistic], rows: int,
                 until: float | None, pace: float) -> Values:
    """One process's share of a wide screen of pair ``i`` (`draw_values`)."""
    x, xp = pair_list[i]
    return draw_values(sampler, x, xp, stats, rows=rows, chunk=chunk, deadline=until, enc=enc,
                       pace=pace)


def _wide_runs(sampler: Sampler, pair_list: list[tuple[object, object]], ranked: list[Candidate],
               plan: Plan, enc: OutputEncoder, z: float, delta: float, end: float | None,
               forked: tuple[Crew[Values], Callable[..., Values]] | None
               ) -> tuple[list[Candidate], int]:
    out: list[Candidate] = []
    drawn = 0

    def more(i: int) -> More | None:
        if forked is None:
            return None
        crew, task = forked

        def draw(stats: list[Statistic], rows: int, until: float | None, pace: float
                 ) -> list[Values]:
            share = -(-rows // crew.workers)
            mine, others = crew.alongside(task, i, stats, share, until, pace)
            return [mine, *others]
        return draw

    def run(pairs: list[int], until: float | None, rows: int, keep: bool
            ) -> list[Candidate]:
        nonlocal drawn
        seen: list[Candidate] = []
        for j, i in enumerate(pairs):
            stop = (None if until is None else
                    time.perf_counter() + (until - time.perf_counter()) / (len(pairs) - j))
            x, xp = pair_list[i]
            got, m = wide_screen(sampler, x, xp, i, rows=rows, chunk=plan.chunk,
                                 deadline=stop, n_estimate=plan.n_estimate, z=z, delta=delta,
                                 enc=enc, more=more(i))
            drawn += m
            seen += got
            if keep:
                out.extend(got)
        return seen

    rows = WIDE_MAX_ROWS if end is not None else min(WIDE_MAX_ROWS, 2 * plan.n_search)
    order = list(dict.fromkeys(c.pair for c in ranked))
    if len(pair_list) > FINALISTS:
        first = (None if end is None
                 else time.perf_counter() + SCHEDULE.wide_first * (end - time.perf_counter()))
        # (its small screens only rank the pairs: their events are not kept, so a lucky
        # quadrant of a 4 000-row screen cannot reach estimation)
        seen = run(list(range(len(pair_list))), first, max(1, rows // (2 * len(pair_list))),
                   False)
        screened = sorted((c for c in seen if not c.ladder), key=lambda c: c.predicted,
                          reverse=True)
        order = list(dict.fromkeys([c.pair for c in screened] + order))
    run(order[:FINALISTS], end, rows, True)
    return out, drawn


def choose(found: list[Candidate], k: int, ladder: int = 0) -> list[Candidate]:
    """The ``k`` best candidates, from the best one's pair first (one estimation batch serves
    them all), at most one per family of statistic while that pair has other families'
    candidates; its other events, then other pairs' candidates fill the remaining places.
    Then up to ``ladder`` nested smaller rays (`_ladder`) of the chosen events' own
    statistics, taken in turn from each chosen event of the best pair that has them, each
    ladder's best-predicted rungs first."""
    ranked = sorted((c for c in found if not c.ladder), key=lambda c: c.predicted,
                    reverse=True)
    if not ranked:
        return []
    best = ranked[0]
    same = [c for c in ranked if c.pair == best.pair]
    order = same + [c for c in ranked if c.pair != best.pair]
    # the best event of each family (kind of statistic: coordinates, sum, log-ratio histogram,
    # additive, logistic, ...) first: a weak winner of a small search batch and its near-copies
    # (another threshold, another coordinate, another fit) must not crowd out a different
    # family's strong event; the union bound covers k events whichever they are.  Only
    # events predicted to bound ε above 0 take a family's place (a useless event of a new
    # family must not displace a strong one of a family already picked), and only events
    # predicted at least FAMILY_SHARE of the best one's: a weak event of a costly family
    # cannot give the bound, and its membership cost cuts the estimation's draws
    picked: list[Candidate] = [best]
    seen: set[type] = {type(best.event.statistic)}
    bar = max(0.0, FAMILY_SHARE * best.predicted)
    for c in same[1:]:
        if len(picked) < k and c.predicted > bar and type(c.event.statistic) not in seen:
            seen.add(type(c.event.statistic))
            picked.append(c)
    # the rest by prediction, where another family's weak event takes no place either
    picked += [c for c in order if c not in picked and (
        c.predicted > bar or type(c.event.statistic) is type(best.event.statistic))
    ][:k - len(picked)]
    return picked + _rungs(found, picked, best, bar, ladder)


def _rungs(found: list[Candidate], picked: list[Candidate], best: Candidate, bar: float,
           ladder: int) -> list[Candidate]:
    """Up to ``ladder`` rungs for `choose`: the ladders of the picked events' own
    statistics (best pair, same direction), in turn, each by its rungs' predictions.  A ladder
    of another statistic goes only where no picked event has one, and only when a rung of it
    is predicted above ``bar``: a ladder of a statistic that predicts nothing would take
    the places of the picked events' own rungs."""
    rungs = [c for c in found if c.ladder and c.pair == best.pair]
    if ladder <= 0 or not rungs:
        return []

    def own(c: Candidate) -> list[Candidate]:
        mine: dict[tuple[float, float], Candidate] = {}
        for r in rungs:
            if r.event.statistic is c.event.statistic and r.forward == c.forward:
                mine[(float(r.event.low), float(r.event.high))] = r
        return sorted(mine.values(), key=lambda r: r.predicted, reverse=True)

    ladders: list[list[Candidate]] = []
    for c in picked:
        mine = own(c) if c.pair == best.pair else []
        if mine and all(mine[0] is not m[0] for m in ladders):
            ladders.append(mine)
    if not ladders:
        last = own(rungs[-1])
        if last and last[0].predicted > bar:
            ladders.append(last)
    out: list[Candidate] = []
    for j in range(max((len(m) for m in ladders), default=0)):
        out += [m[j] for m in ladders if j < len(m)]
    return out[:ladder]


@dataclass(frozen=True)
class StandardSearch:
    """The default search plug-in: `run_search` (fitted statistics on split search
    batches, the discrete, pattern and wide screens when the outputs call for them, the
    confirmation and the contest, on the time shares of
    `SCHEDULE`), then `choose`."""

    @property
    def name(self) -> str:
        return "standard"

    def search(self, task: SearchTask) -> SearchOutcome:
        found, drawn, searched = run_search(task.sampler, list(task.pairs), task.plan,
                                            task.encoder, task.z_search, task.delta,
                                            task.progress, task.started, task.fork)
        chosen = choose(found, task.candidates, task.ladder)
        return SearchOutcome(tuple(Choice(c.pair, c.event, c.forward) for c in chosen),
                             drawn, searched)
