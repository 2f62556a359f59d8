"""The discrete screen: every input pair of a few-valued mechanism, on large batches of counts.

When a mechanism has few distinct outputs (SVT's ⊤/⊥ rows, report-noisy-max indices), the
likelihood-ratio rays of the empirical output histogram are the Neyman–Pearson tests, and all
they need from a batch is *how often each output occurred*: a few counters per pair, whatever
the batch size.  The search's per-pair batches (10⁵ draws) cannot tell a strong rare event from
a weak large one (SVT1: ratio e^0.1 at probability 0.6 % on ``[1]·10`` vs ``[2]·9 + [0]``, 1.7
standard errors on 10⁵ draws, lost to a pair whose best event has ratio e^0.04 at 20 %), so the
search kept the wrong pair on some seeds.  This screen spends the search's time on counts
instead, by successive halving (Karnin, Koren & Somekh, ICML 2013): every pair gets a first
batch, the :data:`KEEP` most promising (by their held-out bound) get fresh batches several times
larger, and each batch's best ray is selected on two thirds of its chunks and re-scored on the
other third, as :func:`dpcert.audit.search.search_pair` does; a third round draws fresh counts
for the :data:`FINAL` best pairs and re-scores their (now fixed) events on all of them.  It is
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
from typing import Any

import numpy as np

from dpcert.audit.candidates import Candidate
from dpcert.audit.events import (
    Event,
    HistogramScore,
    guard_z,
    predicted_bound,
    predicted_one,
    row_hash,
)
from dpcert.audit.membership import MAX_CODES  # the same bound on a code book's size
from dpcert.audit.outputs import OutputEncoder, Sampler

__all__ = ["KEEP", "MAX_VALUES", "discrete_screen"]

Array = np.ndarray[Any, Any]

#: Outputs with at most this many distinct values are screened by their counts.
MAX_VALUES = 64
#: Pairs kept for the second, larger round.
KEEP = 3
#: Without a deadline, the second round's batches are this many times the first round's.
SECOND_ROWS = 4
#: Share of the screen's time spent on the first round (every pair).
FIRST_SHARE = 0.4
#: Rows per input of a pair's first chunk (chunks then double while the clock allows).
FIRST_CHUNK = 4_096
#: Share of the screen's drawing rate the estimation is expected to reach (it draws and looks
#: up codes; the screen draws and counts).
RATE_SHARE = 0.8
#: Standard errors by which held-out probabilities are taken pessimistic when ranking (the
#: held-out counts are independent of the selection, so only the ranking's own winner's curse
#: needs a guard; at 1, as the search uses, the rare strong events this screen is for lost to
#: weak large ones: SVT2 seed 2 kept e^0.087 at 1.8 % over e^0.098 at 0.6 %).
HELD_Z = 0.5
#: Nested rays (smaller events inside the best ray) handed over as the ladder.
RUNGS = 3
#: Pairs re-measured in the third round, and that round's share of the time after the first.
FINAL = 2
THIRD_SHARE = 0.3


def _distinct(y: Array) -> tuple[Array, Array]:
    """The distinct rows of ``y`` as :func:`row_hash` keys (sorted) and their counts.  Rows of
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
    """Occurrences of each distinct output row (by :func:`row_hash`), merged chunk by chunk."""

    def __init__(self) -> None:
        self.keys = np.zeros(0, dtype=np.uint64)
        self.counts = np.zeros(0, dtype=np.float64)
        self.n = 0

    def add(self, y: Array) -> None:
        k, c = _distinct(y)
        keys, inv = np.unique(np.concatenate([self.keys, k]), return_inverse=True)
        counts = np.zeros(keys.size)
        np.add.at(counts, inv.ravel(), np.concatenate([self.counts, c.astype(np.float64)]))
        self.keys, self.counts, self.n = keys, counts, self.n + y.shape[0]

    def at(self, keys: Array) -> Array:
        """Counts of ``keys`` (0 where never seen)."""
        if self.keys.size == 0:
            return np.zeros(keys.size)
        idx = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        out: Array = np.where(self.keys[idx] == keys, self.counts[idx], 0.0)
        return out


def _draw(sampler: Sampler, x: Any, xp: Any, *, rows: int, chunk: int, until: float | None,
          enc: OutputEncoder | None) -> tuple[_Counts, _Counts, _Counts, _Counts]:
    """Counts of ``x``'s and ``xp``'s outputs: (fit a, fit b, held-out a, held-out b).  The last
    third of every chunk is held out, so the split holds whenever the clock stops the batch;
    chunks start at :data:`FIRST_CHUNK` rows and double up to ``chunk`` while the clock allows,
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


def _rays(fa: _Counts, fb: _Counts, ha: _Counts, hb: _Counts, pair: int, *, n_estimate: int,
          z: float, delta: float) -> list[Candidate]:
    """The best likelihood-ratio ray in each direction, selected on the fit counts and
    re-scored on the held-out ones, plus up to :data:`RUNGS` nested rays of the better one."""
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
        rungs.append([held(Event(stat, float(u), math.inf) if forward else
                           Event(stat, -math.inf, float(u)), True)
                      for u in beyond[:RUNGS]])
    if out:  # the ladder of the better direction only
        out += rungs[max(range(len(out)), key=lambda i: out[i].predicted)]
    return out


def _rescore(cands: list[Candidate], a: list[_Counts], b: list[_Counts], *, n_estimate: int,
             z: float, delta: float) -> list[Candidate]:
    """``cands`` (fixed events) with predicted bounds from the pooled counts ``a`` (of x) and
    ``b`` (of x'), all drawn after the events were selected: no selection on them, so the
    plain :data:`HELD_Z` guard of the held-out ranking applies."""
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


def discrete_screen(sampler: Sampler, pair_list: list[tuple[Any, Any]], *, rows: int,
                    chunk: int, deadline: float | None, n_estimate: int, z: float,
                    delta: float, enc: OutputEncoder | None = None,
                    estimate_until: float | None = None) -> tuple[list[Candidate], int]:
    """Candidate events of every pair of a few-valued mechanism (see the module docstring).

    ``rows`` caps the draws per input of one pair in the first round (without a deadline, the
    second round draws :data:`SECOND_ROWS` times as many); with a ``deadline``
    (``time.perf_counter()`` seconds, checked between chunks) the first round shares
    :data:`FIRST_SHARE` of the time equally between the pairs and the second round the rest
    between the :data:`KEEP` best, whose candidates replace their first-round ones.  Events are
    scored by the bound they would give on ``n_estimate`` estimation draws per input, or, with
    ``estimate_until`` (when the estimation will stop), on what the screen's own drawing rate
    gives until then, if more.  Returns each pair's candidates from its last round (re-scored
    on held-out counts; the ladder rungs of its best ray are marked ``ladder``) and the draws
    per input."""
    found: list[Candidate] = []
    held: dict[int, tuple[_Counts, _Counts]] = {}
    drawn = 0
    seconds = 0.0
    start = time.perf_counter()
    first_end = None if deadline is None else start + FIRST_SHARE * (deadline - start)
    second_end = (None if deadline is None or first_end is None
                  else first_end + (1.0 - THIRD_SHARE) * (deadline - first_end))

    def n_est() -> int:
        if estimate_until is None or deadline is None or seconds <= 0.0:
            return n_estimate
        rate = drawn / seconds   # draws per input per second, counting included
        return max(n_estimate, int(RATE_SHARE * rate * max(0.0, estimate_until - deadline)))

    def run(pairs: list[int], end: float | None, first_round: bool) -> dict[int, float]:
        cap = rows if first_round or end is not None else SECOND_ROWS * rows
        nonlocal drawn, seconds
        counts: dict[int, tuple[_Counts, _Counts, _Counts, _Counts]] = {}
        for j, i in enumerate(pairs):
            t0 = time.perf_counter()
            if end is not None and t0 >= end and (counts or not first_round):
                break   # out of time: the pairs screened so far are ranked (as the search does)
            until = None if end is None else t0 + (end - t0) / (len(pairs) - j)
            x, xp = pair_list[i]
            counts[i] = _draw(sampler, x, xp, rows=cap, chunk=chunk, until=until, enc=enc)
            drawn += counts[i][0].n + counts[i][2].n
            seconds += time.perf_counter() - t0
        best: dict[int, float] = {}
        for i, c in counts.items():
            got = _rays(*c, i, n_estimate=n_est(), z=z, delta=delta)
            held[i] = (c[2], c[3])
            # a pair's later round supersedes its earlier one (the same events, measured on
            # larger batches): a second copy would only widen the union bound
            found[:] = [f for f in found if f.pair != i] + got
            best[i] = max((c.predicted for c in got if not c.ladder), default=-math.inf)
        return best

    first = run(list(range(len(pair_list))), first_end, True)
    if len(pair_list) > 1:
        keep = sorted(first, key=lambda i: first[i], reverse=True)[:KEEP]
        second = run(keep, second_end, False)
        # third round: the FINAL best pairs' events are fixed now, so fresh counts (pooled
        # with the second round's held-out ones) all go to ranking them, none to selection:
        # close pairs (SVT1's two best ones on seed 2) are told apart on about twice the draws
        final = sorted(second, key=lambda i: second[i], reverse=True)[:FINAL]
        for j, i in enumerate(final if len(final) > 1 else []):
            t0 = time.perf_counter()
            if deadline is not None and t0 >= deadline:
                break
            until = None if deadline is None else t0 + (deadline - t0) / (len(final) - j)
            x, xp = pair_list[i]
            # the second round's cap: the clock with a deadline, SECOND_ROWS × rows without
            c = _draw(sampler, x, xp, rows=rows if deadline is not None else SECOND_ROWS * rows,
                      chunk=chunk, until=until, enc=enc)
            drawn += c[0].n + c[2].n
            seconds += time.perf_counter() - t0
            mine = [f for f in found if f.pair == i]
            ha, hb = held[i]
            found[:] = [f for f in found if f.pair != i] + _rescore(
                mine, [ha, c[0], c[2]], [hb, c[1], c[3]], n_estimate=n_est(), z=z,
                delta=delta)
    return found, drawn
