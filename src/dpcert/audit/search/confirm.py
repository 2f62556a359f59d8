"""Confirmation: a leading candidate seen only a few times is measured again on fresh draws.

A search batch's held-out part re-scores every selected event on draws the selection did not
see (`rescore`), so its prediction is unbiased — but on a small
batch it rests on a handful of hits.  A quadrant that held 7 of 83 held-out draws of one input
and 0 of the other's predicts ``ε ≥ 0.38`` even after the extreme-value guard, and out-ranks a
pattern ray measured on millions of draws, whatever its true ratio.  The guard cannot be
raised for every event: the strongest events of some mechanisms are small and seen 10–20
times in a search batch (PrefixSum's additive-score rays, e^0.58 at 0.26 %).

So before the choice the search's candidates are re-measured where their support is thin.
The *bar* is the leader's prediction, or, when the leader itself has fewer than
`MIN_SUPPORT` held-out hits of its likelier input, the best well-supported prediction.
A weakly supported candidate can lead if its prediction, taken `OPTIMISM_Z` standard
errors optimistic, beats the bar (below the leader it needs `MIN_HOPE` hits, more for
``x`` than for ``x'``).  The best-predicted such candidate's pair is drawn again, enough rows
for `TARGET_HITS` expected hits at its held-out rate (within the time left), and every
candidate of that pair that can lead is re-scored on those draws alone, with the same
extreme-value guard as the held-out re-scoring; then the next, for at most `ROUNDS`
pairs.  A lucky leader falls (above), and a strong small event the held-out draws saw 15
times rises to where it belongs.
Like the rest of the search, none of this enters the bound: the estimation phase measures the
chosen events, fixed by then, on fresh draws.

Examples
--------
>>> import numpy as np
>>> from dpcert.audit.stats.events import Event, Identity
>>> rng = np.random.default_rng(0)  # insecure-ok: test data for the doctest, not noise
>>> def mech(x, n):     # a fair coin whatever the input: ε = 0
...     return rng.integers(0, 2, n).astype(float)
>>> lucky = Candidate(0, Event(Identity(), 1.0, 1.0), True, 0.4, support=7, held=83)
>>> got, rows = confirm([lucky], mech, [(0, 1)], chunk=10_000, deadline=None,
...                     n_estimate=10**6, z=2.0, delta=0.0)
>>> got[0].predicted < 0.05 < rows
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from dpcert.audit.kernel import bounds
from dpcert.audit.kernel.membership import Membership
from dpcert.audit.kernel.outputs import OutputEncoder, Sampler
from dpcert.audit.kernel.parallel import Crew, Forking
from dpcert.audit.search.candidates import Candidate
from dpcert.audit.search.intervals import guard_z, predicted_one

__all__ = ["CONTEST_EVENTS", "CONTEST_HITS", "CONTEST_PAIRS", "MIN_HOPE", "MIN_SUPPORT", "ROUNDS",
           "RESOLVE", "TARGET_HITS", "confirm", "contest", "optimistic", "target_hits", "thin"]

#: A leader whose prediction rests on fewer held-out hits than this is measured again.
MIN_SUPPORT = 100
#: Expected hits of the likelier input that a confirmation batch is sized for, at least...
TARGET_HITS = 400
#: ...and enough for a standard error of the prediction over this (:func:`target_hits`).
RESOLVE = 2.0
#: Standard errors of optimism by which a weakly supported candidate is judged able to lead.
OPTIMISM_Z = 1.0
#: Fewest held-out hits of a candidate below the leader for it to be confirmed.
MIN_HOPE = 10
#: Most pairs confirmed in one search.
ROUNDS = 4
#: Most draws per input of one confirmation batch.
MAX_ROWS = 2_000_000
#: Pairs measured in a contest (the leader's and the best challengers'), ...
CONTEST_PAIRS = 3
#: ...each pair's best events measured, ...
CONTEST_EVENTS = 4
#: ...on enough rows for this many expected hits of the leader's event (within the time).
CONTEST_HITS = 20_000


def confirm(found: Sequence[Candidate], sampler: Sampler, pairs: Sequence[tuple[object, object]], *,
            chunk: int, deadline: float | None, n_estimate: int, z: float, delta: float,
            enc: OutputEncoder | None = None, max_rows: int = MAX_ROWS
            ) -> tuple[list[Candidate], int]:
    """``found`` with weakly supported leaders re-scored on fresh draws of their pairs.

    ``deadline`` (``time.perf_counter()`` seconds, checked between chunks) and ``max_rows``
    (draws per input of one batch) bound the confirmation; ``chunk`` is the most draws per
    call of ``sampler``.  Returns the candidates (same order, ladders untouched) and the draws
    per input taken."""
    out = list(found)
    drawn = 0
    done: set[int] = set()

    def hopeful(c: Candidate, leads: bool) -> float:
        # a weakly supported candidate below the leader needs MIN_HOPE hits, more for x than
        # for x', before its optimism counts (3 against 3 is no evidence of anything)
        if not thin(c) or (not leads and (c.support < MIN_HOPE or c.support <= c.against)):
            return -math.inf
        return optimistic(c, n_estimate, z, delta)

    for _ in range(ROUNDS):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        ranked = sorted((j for j, c in enumerate(out) if not c.ladder),
                        key=lambda j: out[j].predicted, reverse=True)
        if not ranked:
            break
        top = out[ranked[0]]
        # the bar to beat: the leader's prediction if it is well supported, else the best
        # well-supported one's
        bar = top.predicted if not thin(top) else max(
            (out[j].predicted for j in ranked if not thin(out[j])), default=-math.inf)
        weak = [j for j in ranked
                if out[j].pair not in done and hopeful(out[j], j == ranked[0]) > bar]
        if not weak:
            break
        lead = out[weak[0]]           # the best prediction among those that could lead
        done.add(lead.pair)
        mine = [j for j in weak if out[j].pair == lead.pair]
        rate = max(lead.support, 1.0) / max(lead.held, 1)
        rows = int(min(max_rows, max(chunk, target_hits(lead) / rate)))
        counts, n = _count(sampler, pairs[lead.pair], [out[j] for j in mine], rows=rows,
                           chunk=chunk, deadline=deadline, enc=enc)
        drawn += n
        if n == 0:
            break
        z_guard = guard_z(len(mine))
        for j, (ka, kb) in zip(mine, counts, strict=True):
            out[j] = _rescored(out[j], ka, kb, n, n_estimate, z, delta, z_guard)
    return out, drawn


def thin(c: Candidate) -> bool:
    """Whether ``c``'s prediction rests on too little: fewer than `MIN_SUPPORT` hits of
    its likelier input, or a positive prediction below its log-ratio standard error
    (``√(1/hits + 1/against)``).  The second is for weak events: a few hundred hits of an
    event whose true log-ratio is near 0 can predict more than a well-measured event's true
    ratio by noise alone."""
    if c.support < MIN_SUPPORT:
        return True
    if not math.isfinite(c.support) or c.held <= 0:
        return False   # a screen's count of 10⁵–10⁸ draws (not recorded)
    return 0.0 < c.predicted < math.sqrt(1.0 / c.support + 1.0 / max(c.against, 1.0))


def target_hits(c: Candidate) -> float:
    """Expected hits of ``c``'s likelier input a confirmation batch is sized for: at least
    `TARGET_HITS`, and enough for a standard error of `RESOLVE`⁻¹ of its
    prediction (≈ √(2/hits) when both inputs' hits are alike)."""
    if c.predicted <= 0:
        return float(TARGET_HITS)
    return max(float(TARGET_HITS), 2.0 * (RESOLVE / c.predicted) ** 2)


def _rescored(c: Candidate, ka: int, kb: int, n: int, n_estimate: int, z: float, delta: float,
              z_guard: float) -> Candidate:
    """``c`` predicted from ``ka`` hits of x and ``kb`` of x' among ``n`` fresh draws each."""
    k1, k2 = (ka, kb) if c.forward else (kb, ka)
    pred = predicted_one(k1, k2, n, n, n_estimate, z, delta, z_guard)
    return replace(c, predicted=pred, support=float(k1), held=n, against=float(k2))


def optimistic(c: Candidate, n_estimate: int, z: float, delta: float) -> float:
    """The bound ``c`` would predict were its probabilities `OPTIMISM_Z` standard errors
    better than measured (x's higher, x''s lower): whether it could lead on more draws."""
    if c.held <= 0:
        return -math.inf
    p = float(bounds.wilson_upper(np.array([c.support / c.held]), c.held, OPTIMISM_Z)[0])
    q = float(bounds.wilson_lower(np.array([c.against / c.held]), c.held, OPTIMISM_Z)[0])
    return predicted_one(p * n_estimate, q * n_estimate, n_estimate, n_estimate, n_estimate, z,
                         delta, 0.0)


def _count(sampler: Sampler, pair: tuple[object, object], cands: list[Candidate], *, rows: int,
           chunk: int, deadline: float | None, enc: OutputEncoder | None
           ) -> tuple[list[tuple[int, int]], int]:
    """Hits of each candidate's event among up to ``rows`` fresh draws of both inputs."""
    member = Membership([c.event for c in cands])
    ka, kb = np.zeros(len(cands), np.int64), np.zeros(len(cands), np.int64)
    n, last = 0, 0.0
    while n < rows:
        now = time.perf_counter()
        if deadline is not None and now + last > deadline:
            break
        m = min(chunk, rows - n)
        for side, x in enumerate(pair):
            y = sampler(x, m)
            y = np.asarray(y if enc is None else enc.encode(y, m), dtype=np.float64)
            hits = member(y)
            (ka if side == 0 else kb)[:] += [int(np.count_nonzero(h)) for h in hits]
        n += m
        last = time.perf_counter() - now
    return [(int(a), int(b)) for a, b in zip(ka, kb, strict=True)], n


def contest(found: Sequence[Candidate], sampler: Sampler, pairs: Sequence[tuple[object, object]], *,
            chunk: int, deadline: float, n_estimate: int, z: float, delta: float,
            enc: OutputEncoder | None = None, fork: Forking | None = None
            ) -> tuple[list[Candidate], int]:
    """``found`` with the leading pair and its close challengers re-measured side by side.

    Each pair's candidates were ranked on that pair's own held-out draws, so which *pair*
    leads is decided by a few thousand hits on each side (two pairs whose best events have
    ratios e^0.30 and e^0.25 at 1–4 %, on 6.7·10⁴ held-out draws, are within a prediction's
    standard error of about 0.04).  A *challenger* is
    another pair whose best candidate, `OPTIMISM_Z` standard errors optimistic
    (`optimistic`), beats the leader's prediction.  When there is one, the leader's pair
    and the best `CONTEST_PAIRS` − 1 challengers are drawn again, the same number of
    rows each (enough for `CONTEST_HITS` expected hits of the leader's event, at most
    `MAX_ROWS`, in equal shares of the time until ``deadline``), and each pair's
    `CONTEST_EVENTS` best candidates are re-scored on those draws alone (drawn by
    ``fork.workers`` processes when ``fork`` is given, the counts summed; the
    extreme-value guard for their number) unless their predictions rest on more draws
    already (a screen's counts are not replaced by fewer fresh ones).  A measured pair's other
    candidates that rest on fewer draws than the contest's rank no higher than its lowest
    re-scored one, so an unmeasured lucky event cannot take the lead the measured ones
    lost.  None of this enters the bound.  Returns the candidates and the draws
    per input taken."""
    out = list(found)
    ranked = sorted((j for j, c in enumerate(out) if not c.ladder and math.isfinite(c.predicted)),
                    key=lambda j: out[j].predicted, reverse=True)
    if not ranked:
        return out, 0
    lead = out[ranked[0]]
    best: dict[int, int] = {}
    for j in ranked:
        best.setdefault(out[j].pair, j)
    rivals = [p for p, j in best.items() if p != lead.pair and out[j].support >= MIN_HOPE
              and out[j].support > out[j].against
              and optimistic(out[j], n_estimate, z, delta) > lead.predicted]
    if not rivals:
        return out, 0
    measured = [lead.pair, *rivals[:CONTEST_PAIRS - 1]]
    rate = max(lead.support, 1.0) / max(lead.held, 1)
    rows = int(min(MAX_ROWS, max(chunk, CONTEST_HITS / rate)))
    events = {pair: [j for j in ranked if out[j].pair == pair][:CONTEST_EVENTS]
              for pair in measured}
    cands = {pair: [out[j] for j in js] for pair, js in events.items()}

    def task(pair: int, until: float) -> tuple[list[tuple[int, int]], int]:
        return _count(sampler, pairs[pair], cands[pair], rows=rows, chunk=chunk,
                      deadline=until, enc=enc)

    crew = Crew(fork, task) if fork is not None and fork.workers > 1 else None
    try:
        out, drawn = _contest(out, measured, events, task, crew, deadline, n_estimate, z,
                              delta)
    finally:
        if crew is not None:
            crew.close()
    return out, drawn


def _contest(out: list[Candidate], measured: list[int], events: dict[int, list[int]],
             task: Callable[[int, float], tuple[list[tuple[int, int]], int]],
             crew: Crew[tuple[list[tuple[int, int]], int]] | None, deadline: float,
             n_estimate: int, z: float, delta: float
             ) -> tuple[list[Candidate], int]:
    drawn = 0
    for i, pair in enumerate(measured):
        t0 = time.perf_counter()
        if t0 >= deadline:
            break
        mine = events[pair]
        until = t0 + (deadline - t0) / (len(measured) - i)
        (counts, n), others = ((task(pair, until), []) if crew is None
                               else crew.alongside(task, pair, until))
        for more, m in others:
            counts = [(a + c, b + d) for (a, b), (c, d) in zip(counts, more, strict=True)]
            n += m
        drawn += n
        z_guard = guard_z(len(mine))
        updated = []
        for j, (ka, kb) in zip(mine, counts, strict=True):
            if n <= out[j].held:
                continue   # its prediction rests on more draws already (a screen's counts)
            out[j] = _rescored(out[j], ka, kb, n, n_estimate, z, delta, z_guard)
            updated.append(j)
        if not updated:
            continue
        floor = min(out[j].predicted for j in updated)
        for j, c in enumerate(out):
            if (c.pair == pair and not c.ladder and j not in mine and c.held < n
                    and c.predicted > floor):
                out[j] = replace(c, predicted=floor)
    return out, drawn
