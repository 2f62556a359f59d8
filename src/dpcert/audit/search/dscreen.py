"""The discrete screen: every input pair of a few-valued mechanism, on large batches of counts.

When a mechanism has few distinct outputs (SVT's ⊤/⊥ rows, report-noisy-max indices), the
likelihood-ratio rays of the empirical output histogram are the Neyman–Pearson tests, and all
they need from a batch is *how often each output occurred*: a few counters per pair, whatever
the batch size.  The search's per-pair batches (10⁵ draws) cannot tell a strong rare event from
a weak large one (SVT1: ratio e^0.1 at probability 0.6 % on ``[1]·10`` vs ``[2]·9 + [0]`` is
1.7 standard errors on 10⁵ draws, less than a pair whose best event has ratio e^0.04 at 20 %),
so it may keep the wrong pair.  This screen spends the search's time on counts
instead, by sequential halving (Karnin, Koren & Somekh, ICML 2013): every pair gets a first
batch, the better half (by their held-out bound) get fresh batches, pooled with their earlier
ones, and so on until `FINAL` pairs are left; each round selects a pair's best ray on two
thirds of every chunk and re-scores it on the other third, as
`dpcert.audit.search.standard.search_pair` does; a last round draws fresh counts for the
`FINAL` best pairs and re-scores their (now fixed) events on all of them.  It is
part of the search: its draws never enter the final bound, and its events are fixed before
the estimation batch.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)  # insecure-ok: test data for the doctest, not privacy noise
>>> def rr(x, n):  # randomized response on one bit, e^1 odds
...     keep = rng.random(n) < np.e / (1 + np.e)
...     return np.where(keep, x, 1 - x).astype(float)
>>> got, drawn = discrete_screen(rr, [(0, 1)], rows=200_000, chunk=50_000, deadline=None,
...                              n_estimate=1_000_000, z=2.2, delta=0.0)
>>> 0.9 < max(c.predicted for c in got) < 1.0
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from dpcert._types import Array
from dpcert.audit.kernel.membership import MAX_CODES  # the same bound on a code book's size
from dpcert.audit.kernel.outputs import OutputEncoder, Outputs
from dpcert.audit.kernel.parallel import Crew, Forking
from dpcert.audit.search.candidates import Candidate
from dpcert.audit.search.confirm import MIN_HOPE, optimistic
from dpcert.audit.search.intervals import guard_z, predicted_bound, predicted_one
from dpcert.audit.search.schedule import SCHEDULE
from dpcert.audit.stats.events import Event, HistogramScore, row_hash

__all__ = ["FINAL", "MAX_VALUES", "discrete_screen", "halving_rounds"]

#: Outputs with at most this many distinct values are screened by their counts.
MAX_VALUES = 64
#: Most draws per input of one pair in a later round, as a multiple of the first round's cap.
SECOND_ROWS = 4
#: Rows per input of a pair's first chunk (chunks then double while the clock allows).
FIRST_CHUNK = 4_096
#: Standard errors by which held-out probabilities are taken pessimistic when ranking (the
#: held-out counts are independent of the selection, so only the ranking's own winner's curse
#: needs a guard; at 1, as the search uses, the rare strong events this screen is for are
#: ranked below weak large ones).
HELD_Z = 0.5
#: Nested rays (smaller events inside the best ray) handed over as the ladder...
RUNGS = 3
#: ...and wider rays around it (one more level each).  The auditor's union bound counts its
#: ``ladder`` (4) rungs whether or not they are used, so the fourth place costs nothing: the
#: selected threshold rests on noisy fitted scores and may stop one level short of the best.
WIDER = 1
#: Pairs re-measured in the last round (fixed events, fresh counts; that round's share of the
#: screen's time is ``SCHEDULE.final_round`` when there are more than FINAL pairs).
FINAL = 2


#: An input of the screen's arms: a pair's input, or one tagged with the map it is read by.
X = TypeVar("X")


def _distinct(y: Array) -> tuple[Array, Array]:
    """The distinct rows of ``y`` as `row_hash` keys (sorted) and their counts.  Rows of
    small integers (SVT's ⊤/⊥ codes) are counted by an exact integer code (a ``bincount``) and
    each code's row is rebuilt from its digits and hashed once (values checked value for value:
    anything else is hashed row by row)."""
    if y.ndim == 2 and y.shape[0] > 0 and y.shape[1] <= 16:
        with np.errstate(invalid="ignore"):
            small = y.astype(np.int8)   # NaN, ±inf, huge: some int8, caught just below
        if np.array_equal(small, y):   # integers in int8's range (NaN never equal)
            lo = int(small.min())
            base = int(small.max()) - lo + 1
            if base ** y.shape[1] <= MAX_CODES:
                powers = base ** np.arange(y.shape[1], dtype=np.int64)
                code = (y @ powers.astype(np.float64) - lo * float(powers.sum())).astype(np.int64)
                counts = np.bincount(code, minlength=base ** y.shape[1])
                seen = np.flatnonzero(counts)
                rows = (seen[:, None] // powers[None, :]) % base + lo
                keys = row_hash(rows.astype(np.float64))
                order = np.argsort(keys)
                return keys[order], counts[seen][order]
    keys, counts = np.unique(row_hash(y), return_counts=True)
    return keys, counts


class _Counts:
    """Occurrences of each distinct output row (by `row_hash`), merged chunk by chunk."""

    def __init__(self) -> None:
        self.keys = np.zeros(0, dtype=np.uint64)
        self.counts = np.zeros(0, dtype=np.float64)
        self.n = 0

    def add(self, y: Array) -> None:
        k, c = _distinct(y)
        self._join(k, c.astype(np.float64), y.shape[0])

    def merge(self, other: _Counts) -> _Counts:
        """These counts with ``other``'s added (in place); returns ``self``."""
        self._join(other.keys, other.counts, other.n)
        return self

    def _join(self, k: Array, c: Array, n: int) -> None:
        keys, inv = np.unique(np.concatenate([self.keys, k]), return_inverse=True)
        counts = np.zeros(keys.size)
        np.add.at(counts, inv.ravel(), np.concatenate([self.counts, c]))
        self.keys, self.counts, self.n = keys, counts, self.n + n

    def at(self, keys: Array) -> Array:
        """Counts of ``keys`` (0 where never seen)."""
        if self.keys.size == 0:
            return np.zeros(keys.size)
        idx = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        out: Array = np.where(self.keys[idx] == keys, self.counts[idx], 0.0)
        return out


Batch = tuple[_Counts, _Counts, _Counts, _Counts]


def _draw(sampler: Callable[[X, int], Outputs], x: X, xp: X, *, rows: int, chunk: int,
          until: float | None, enc: OutputEncoder | None) -> Batch:
    """Counts of ``x``'s and ``xp``'s outputs: (fit a, fit b, held-out a, held-out b).  The last
    third of every chunk is held out, so the split holds whenever the clock stops the batch;
    chunks start at `FIRST_CHUNK` rows and double up to ``chunk`` while the clock allows,
    so a short time slot still gets several chunks."""
    fa, fb, ha, hb = _Counts(), _Counts(), _Counts(), _Counts()
    drawn, m, last = 0, min(chunk, FIRST_CHUNK), 0.0
    while drawn < rows:
        now = time.perf_counter()
        if until is not None and drawn > 0 and now + last > until:
            break
        m = min(m, rows - drawn)
        ya, yb = sampler(x, m), sampler(xp, m)
        if enc is not None:
            ya, yb = enc.encode(ya, m), enc.encode(yb, m)
        ya, yb = np.asarray(ya, dtype=np.float64), np.asarray(yb, dtype=np.float64)
        cut = m - m // 3
        fa.add(ya[:cut])
        fb.add(yb[:cut])
        ha.add(ya[cut:])
        hb.add(yb[cut:])
        drawn, last = drawn + m, time.perf_counter() - now
        if until is None or time.perf_counter() + 3 * last < until:
            m, last = min(2 * m, chunk), 2 * last
    return fa, fb, ha, hb


def _draw_all(crew: Crew[Batch] | None, sampler: Callable[[X, int], Outputs],
              pair_list: list[tuple[X, X]], i: int, *,
              rows: int, chunk: int, until: float | None, enc: OutputEncoder | None) -> Batch:
    """`_draw` of pair ``i`` in this process and, with a ``crew``, the same call (same
    ``rows`` cap and ``until``) in each of its workers, their counts merged into these."""
    def mine(i: int, rows: int, chunk: int, until: float | None) -> Batch:
        x, xp = pair_list[i]
        return _draw(sampler, x, xp, rows=rows, chunk=chunk, until=until, enc=enc)

    if crew is None:
        return mine(i, rows, chunk, until)
    got, others = crew.alongside(mine, i, rows, chunk, until)
    for other in others:
        got = (got[0].merge(other[0]), got[1].merge(other[1]), got[2].merge(other[2]),
               got[3].merge(other[3]))
    return got


def _rays(fa: _Counts, fb: _Counts, ha: _Counts, hb: _Counts, pair: int, *, n_estimate: int,
          z: float, delta: float) -> list[Candidate]:
    """The best likelihood-ratio ray in each direction, selected on the fit counts and
    re-scored on the held-out ones, plus up to `RUNGS` nested rays of the better one and
    `WIDER` rays around it."""
    keys = np.unique(np.concatenate([fa.keys, fb.keys]))
    if keys.size == 0 or fa.n == 0 or ha.n == 0:
        return []
    ca, cb = fa.at(keys), fb.at(keys)
    scores = np.log((ca + 0.5) / fa.n) - np.log((cb + 0.5) / fb.n)
    stat = HistogramScore(keys, scores)
    levels = np.unique(scores)
    # held-out counts by score level (outputs unseen in the fit score 0, as in estimation)
    hk = np.unique(np.concatenate([ha.keys, hb.keys]))
    hs = _score_keys(stat, hk)
    hca, hcb = ha.at(hk), hb.at(hk)
    z_sel = guard_z(int(levels.size))
    z_guard = HELD_Z
    out: list[Candidate] = []
    rungs: list[list[Candidate]] = []
    for forward in (True, False):
        # rays {score ≥ t} favour x, {score ≤ t} favour x'
        inside = (scores[None, :] >= levels[:, None]) if forward else \
            (scores[None, :] <= levels[:, None])
        k1 = inside @ (ca if forward else cb)
        k2 = inside @ (cb if forward else ca)
        n1, n2 = (fa.n, fb.n) if forward else (fb.n, fa.n)
        pred = predicted_bound(k1, k2, n1, n2, n_estimate, z, delta, z_sel)
        best = int(np.argmax(pred))
        if not math.isfinite(float(pred[best])):
            continue
        t = float(levels[best])

        def held(ev: Event, ladder: bool = False, forward: bool = forward) -> Candidate:
            m = (hs >= ev.low) & (hs <= ev.high)
            k1 = float((hca if forward else hcb)[m].sum())
            k2 = float((hcb if forward else hca)[m].sum())
            n1, n2 = (ha.n, hb.n) if forward else (hb.n, ha.n)
            pred = predicted_one(k1, k2, n1, n2, n_estimate, z, delta, z_guard)
            return Candidate(pair, ev, forward, pred, ladder, support=k1, held=n1,
                             against=k2)

        out.append(held(Event(stat, t, math.inf) if forward else Event(stat, -math.inf, t)))
        # the nested rays beyond t (smaller, stronger events) for the estimation batch to judge
        beyond = levels[levels > t] if forward else levels[levels < t][::-1]
        wider = levels[levels < t][::-1] if forward else levels[levels > t]
        rungs.append([held(Event(stat, float(u), math.inf) if forward else
                           Event(stat, -math.inf, float(u)), True)
                      for u in [*beyond[:RUNGS], *wider[:WIDER]]])
    if out:  # the ladder of the better direction only
        out += rungs[max(range(len(out)), key=lambda i: out[i].predicted)]
    return out


def _rescore(cands: list[Candidate], a: list[_Counts], b: list[_Counts], *, n_estimate: int,
             z: float, delta: float) -> list[Candidate]:
    """``cands`` (fixed events) with predicted bounds from the pooled counts ``a`` (of x) and
    ``b`` (of x'), all drawn after the events were selected: no selection on them, so the
    plain `HELD_Z` guard of the held-out ranking applies."""
    na, nb = sum(c.n for c in a), sum(c.n for c in b)
    if na == 0 or nb == 0:
        return cands
    keys = np.unique(np.concatenate([c.keys for c in (*a, *b)]))
    ca = sum((c.at(keys) for c in a), np.zeros(keys.size))
    cb = sum((c.at(keys) for c in b), np.zeros(keys.size))
    out = []
    for c in cands:
        stat = c.event.statistic
        assert isinstance(stat, HistogramScore)
        s = _score_keys(stat, keys)
        m = (s >= c.event.low) & (s <= c.event.high)
        k1, k2 = (ca, cb) if c.forward else (cb, ca)
        n1, n2 = (na, nb) if c.forward else (nb, na)
        hits, other = float(k1[m].sum()), float(k2[m].sum())
        pred = predicted_one(hits, other, n1, n2, n_estimate, z, delta, HELD_Z)
        out.append(Candidate(c.pair, c.event, c.forward, pred, c.ladder, support=hits,
                             held=n1, against=other))
    return out


def _score_keys(stat: HistogramScore, hk: Array) -> Array:
    idx = np.minimum(np.searchsorted(stat.keys, hk), max(stat.keys.size - 1, 0))
    out: Array = np.where(stat.keys[idx] == hk, stat.scores[idx], 0.0)
    return out


def discrete_screen(sampler: Callable[[X, int], Outputs],
                    pair_list: list[tuple[X, X]], *, rows: int,
                    chunk: int, deadline: float | None, n_estimate: int, z: float,
                    delta: float, enc: OutputEncoder | None = None,
                    estimate_until: float | None = None,
                    eliminated: list[Candidate] | None = None,
                    fork: Forking | None = None) -> tuple[list[Candidate], int]:
    """Candidate events of the best pairs of a few-valued mechanism (see the module
    docstring).

    Sequential halving: `halving_rounds` rounds share the time before the last
    ``SCHEDULE.final_round`` equally; each round draws fresh counts for the pairs still in (the
    round's time split equally between them), pools them with the pair's earlier counts,
    selects each pair's rays on the pooled fit counts and ranks the pairs by their rays'
    bounds on the pooled held-out counts; the better half (rounded up, at least `FINAL`)
    goes on.  Then the `FINAL` best pairs' (now fixed) events are re-scored on fresh
    counts.  ``rows`` caps the draws per input of one pair in the first round; later rounds
    may draw up to `SECOND_ROWS` times as many (without a deadline they do: round ``r``
    draws ``rows·2^r``, at most ``SECOND_ROWS·rows``).  A ``deadline``
    (``time.perf_counter()`` seconds) is checked between chunks.  Events are scored by the
    bound they would give on ``n_estimate`` estimation draws per input, or, with
    ``estimate_until`` (when the estimation will stop), on what the screen's own drawing
    rate gives until then, if more.  Returns the candidates of the pairs that reached the
    last round (re-scored on their held-out counts and that round's fresh ones; the ladder
    rungs of a pair's best ray are marked ``ladder``) and the draws per input.  The other
    pairs' candidates, from the round that eliminated them, go to ``eliminated`` when it is
    given: their predictions rest on fewer counts and were never shrunk by later rounds, so
    beside the finalists' they win by luck.

    With a ``deadline`` and ``fork`` of ``workers > 1``, every batch is drawn by this process
    and ``workers − 1`` forked ones (`Crew`) until the same
    clock time, and their counts are merged: about ``workers``× the counts per round, the
    same rounds.  (Without a deadline, batches are fixed by ``rows`` and drawn here alone.)"""
    if fork is not None and fork.workers > 1 and deadline is not None:
        def task(i: int, rows: int, chunk: int, until: float | None) -> Batch:
            x, xp = pair_list[i]
            return _draw(sampler, x, xp, rows=rows, chunk=chunk, until=until, enc=enc)

        with Crew(fork, task) as crew:
            return _screen(crew, sampler, pair_list, rows=rows, chunk=chunk,
                           deadline=deadline, n_estimate=n_estimate, z=z, delta=delta,
                           enc=enc, estimate_until=estimate_until, eliminated=eliminated)
    return _screen(None, sampler, pair_list, rows=rows, chunk=chunk, deadline=deadline,
                   n_estimate=n_estimate, z=z, delta=delta, enc=enc,
                   estimate_until=estimate_until, eliminated=eliminated)


def _screen(crew: Crew[Batch] | None, sampler: Callable[[X, int], Outputs],
            pair_list: list[tuple[X, X]], *,
            rows: int, chunk: int, deadline: float | None, n_estimate: int, z: float,
            delta: float, enc: OutputEncoder | None, estimate_until: float | None,
            eliminated: list[Candidate] | None) -> tuple[list[Candidate], int]:
    found: list[Candidate] = []
    pooled: dict[int, Batch] = {}
    drawn = 0
    seconds = 0.0
    start = time.perf_counter()
    n_rounds = halving_rounds(len(pair_list))
    halving_end = (None if deadline is None else
                   start + (1.0 - (SCHEDULE.final_round if len(pair_list) > FINAL else 0.0))
                   * (deadline - start))

    def n_est() -> int:
        if estimate_until is None or deadline is None or seconds <= 0.0:
            return n_estimate
        rate = drawn / seconds   # draws per input per second, counting included
        return max(n_estimate, int(SCHEDULE.drawing * rate * max(0.0, estimate_until - deadline)))

    def run(pairs: list[int], end: float | None, r: int) -> dict[int, float]:
        cap = rows if r == 0 else (SECOND_ROWS * rows if end is not None
                                   else min(SECOND_ROWS, 2 ** r) * rows)
        nonlocal drawn, seconds
        screened: list[int] = []
        for j, i in enumerate(pairs):
            t0 = time.perf_counter()
            if end is not None and t0 >= end and (screened or r > 0):
                break   # out of time: the pairs screened so far are ranked (as the search does)
            until = None if end is None else t0 + (end - t0) / (len(pairs) - j)
            c = _draw_all(crew, sampler, pair_list, i, rows=cap, chunk=chunk, until=until,
                          enc=enc)
            drawn += c[0].n + c[2].n
            seconds += time.perf_counter() - t0
            old = pooled.get(i)
            pooled[i] = c if old is None else (old[0].merge(c[0]), old[1].merge(c[1]),
                                               old[2].merge(c[2]), old[3].merge(c[3]))
            screened.append(i)
        best: dict[int, float] = {}
        for i in screened:
            got = _rays(*pooled[i], i, n_estimate=n_est(), z=z, delta=delta)
            # a pair's later round supersedes its earlier one (the same kind of events,
            # selected and measured on more counts): a second copy would only widen the
            # union bound
            found[:] = [f for f in found if f.pair != i] + got
            best[i] = max((_hope(c, n_est(), z, delta) for c in got), default=-math.inf)
        # a pair the clock left out of a later round keeps its rank from the one before
        return best

    alive = list(range(len(pair_list)))
    ranks: dict[int, float] = {}
    for r in range(n_rounds):
        now = time.perf_counter()
        end = None if halving_end is None else now + (halving_end - now) / (n_rounds - r)
        ranks.update(run(alive, end, r))
        alive = sorted((i for i in alive if i in ranks), key=lambda i: ranks[i], reverse=True)
        alive = alive[:max(FINAL, -(-len(alive) // 2))]
    # last round: the FINAL best pairs' events are fixed now, so fresh counts (pooled with
    # all their held-out ones) all go to ranking them, none to selection: close pairs are
    # told apart on about twice the draws
    final = alive[:FINAL] if len(pair_list) > FINAL else []
    if final:
        if eliminated is not None:
            eliminated.extend(f for f in found if f.pair not in final)
        found[:] = [f for f in found if f.pair in final]
    for j, i in enumerate(final):
        t0 = time.perf_counter()
        if deadline is not None and t0 >= deadline:
            break
        until = None if deadline is None else t0 + (deadline - t0) / (len(final) - j)
        c = _draw_all(crew, sampler, pair_list, i, rows=SECOND_ROWS * rows, chunk=chunk,
                      until=until, enc=enc)
        drawn += c[0].n + c[2].n
        seconds += time.perf_counter() - t0
        mine = [f for f in found if f.pair == i]
        _, _, ha, hb = pooled[i]
        found[:] = [f for f in found if f.pair != i] + _rescore(
            mine, [ha, c[0], c[2]], [hb, c[1], c[3]], n_estimate=n_est(), z=z, delta=delta)
    return found, drawn


def _hope(c: Candidate, n_estimate: int, z: float, delta: float) -> float:
    """What a pair's event could give, for ranking pairs between halving rounds: its
    prediction with the held-out probabilities `OPTIMISM_Z`
    standard errors optimistic (nested rays too), when seen at least
    `MIN_HOPE` times and more often for the likelier input.
    Ranked by their pessimistic predictions, pairs whose best event is strong and rare (more
    uncertain on a small batch) lose to pairs with weak large events in the first round;
    ranked by what they could give, such pairs stay in until the counts tell."""
    if c.support < MIN_HOPE or c.support <= c.against:
        return c.predicted if not c.ladder else -math.inf
    return max(c.predicted, optimistic(c, n_estimate, z, delta))


def halving_rounds(arms: int) -> int:
    """Rounds of sequential halving (each keeps the better half, rounded up) that bring
    ``arms`` down to `FINAL`; 1 for at most `FINAL` arms.

    >>> [halving_rounds(n) for n in (1, 2, 3, 5, 11, 22)]
    [1, 1, 1, 2, 3, 4]
    """
    r, n = 1, arms
    while -(-n // 2) > FINAL and n > FINAL:
        n, r = -(-n // 2), r + 1
    return r
