"""The estimation phase: the chosen events counted on fresh draws, and the bounds they give.

Draws alternate between the two inputs of each chosen pair chunk by chunk, so when the deadline
stops the phase (it is checked between chunks, on the wall clock only, never on the counts)
every input has the same number ``n`` of draws.  Each event's membership bits are kept (packed,
1 bit per draw), so counts over any prefix of the draws are available afterwards.  They are
computed by `Membership` (code tables, grid bins, slot
tables: the same bits as the events' own ``contains``, at a fraction of the cost).

Two ways to turn counts into a bound:

* **Separate bounds** (any δ): Clopper–Pearson ``p_lo ≤ P[M(x)∈S]`` and ``q_hi ≥ P[M(x')∈S]``
  from the counts over all ``n`` draws, and ``ε ≥ ln((p_lo − δ)/q_hi)``.
* **Poissonized ratio bound** (δ = 0): draw ``N, N' ~ Poisson(λ)`` independently of
  everything with ``λ = n − 7√n`` and count over the first ``N`` (``N'``) draws.  The counts
  are then independent ``Poisson(λp)`` and ``Poisson(λq)``, and given their sum ``m`` the first
  is exactly ``Binomial(m, p/(p+q))`` — one Clopper–Pearson bound ``θ_lo`` on ``p/(p+q)``
  gives ``ε ≥ ln(p/q) ≥ ln(θ_lo/(1−θ_lo))`` (the conditional test for a ratio of Poisson means,
  Lehmann & Romano, *Testing Statistical Hypotheses*, §4.5).  Its error is about
  ``√(1/(np) + 1/(nq))`` against ``1/√(np) + 1/√(nq)`` for separate bounds, and it spends the
  confidence on one bound instead of two: about half the draws for the same bound on small
  events.  ``N > n`` happens with probability below 3·10⁻¹¹ (Chernoff), which the auditor's
  confidence accounting reserves (`POISSON_FAILURE`).

Examples
--------
>>> round(ratio_lower(600, 400, 0.05), 3)     # ln(θ/(1−θ)) at the 5 % lower bound on θ
0.297
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from dpcert._types import Array
from dpcert.audit.kernel import bounds
from dpcert.audit.kernel.membership import Membership
from dpcert.audit.kernel.outputs import OutputEncoder, Outputs, Sampler
from dpcert.audit.kernel.parallel import CHECKED, Bits, Workers, fingerprint
from dpcert.audit.stats.events import Event

__all__ = ["POISSON_FAILURE", "Tally", "poisson_counts", "ratio_lower", "run_estimation"]

#: Standard deviations between λ and n: P[Poisson(λ) > n] ≤ exp(−t²/(2(λ+t))) < 3e-11 at t=7√n.
POISSON_MARGIN = 7.0
#: Failure probability reserved per Poisson draw for ``N > n`` (an upper bound of the above).
POISSON_FAILURE = 1e-10


@dataclass
class Tally:
    """Packed membership bits of each (candidate, side) over the estimation draws."""

    candidates: int
    chunks: list[list[list[Array]]] = field(default_factory=list)  # [cand][side] -> chunks
    sizes: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.chunks = [[[], []] for _ in range(self.candidates)]

    def count(self, j: int, side: int, upto: int) -> int:
        """How many of the first ``upto`` draws of side ``side`` fell in candidate ``j``'s S."""
        total, start = 0, 0
        for bits, size in zip(self.chunks[j][side], self.sizes, strict=True):
            if start + size <= upto:
                whole = size // 8   # the padding of a last partial byte is never counted
                total += _ones(bits[:whole])
                if size % 8:
                    total += int(np.unpackbits(bits[whole:], count=size % 8).sum())
            elif start < upto:
                total += int(np.unpackbits(bits, count=upto - start).sum())
            start += size
        return total


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _ones(bits: Array) -> int:
    """The set bits of a packed uint8 array: a popcount per byte, 6x faster than unpacking
    (35·10⁶ draws of 6 events: 0.29 s of counting after the estimation's deadline)."""
    if hasattr(np, "bitwise_count"):   # NumPy >= 2.0
        return int(np.bitwise_count(bits).sum(dtype=np.int64))
    return int(_POPCOUNT[bits].sum(dtype=np.int64))


def run_estimation(sampler: Sampler, pairs: Sequence[tuple[object, object]],
                   chosen: Sequence[tuple[int, Event]], n_target: int, chunk: int,
                   deadline: float | None, enc: OutputEncoder,
                   progress: Callable[[str], None] | None, workers: int = 1,
                   worker_init: Callable[[int], None] | None = None) -> tuple[Tally, int]:
    """Draw up to ``n_target`` outputs per input of each chosen pair and record membership.

    ``chosen`` lists (pair index, event).  Returns the tally and the draws ``n`` per input.

    In this process the mechanism is called on the caller's thread only, one chunk after
    another; the membership of a chunk is computed on one worker thread while the next chunk is
    drawn (NumPy releases the GIL in both), and its bits are recorded in draw order, so the
    tally is the one a sequential loop would give.  With ``workers > 1``, ``workers − 1``
    forked processes draw rounds of ``chunk`` draws of every input meanwhile
    (`dpcert.audit.kernel.parallel`); their rounds follow this process's chunks in the
    tally."""
    tally = Tally(len(chosen))
    used = sorted({p for p, _ in chosen})
    mine_of = {i: [j for j, (p, _) in enumerate(chosen) if p == i] for i in used}
    # one membership route per pair, shared by its two inputs (see dpcert.audit.kernel.membership)
    member = {i: Membership([chosen[j][1] for j in mine_of[i]]) for i in used}
    spent = [0.0]    # the worker's seconds on the last chunk

    def count(m: int, raw: list[tuple[int, int, Outputs]]) -> Bits:
        t = time.perf_counter()
        out = [(i, side, [np.packbits(h) for h in member[i](enc.encode(y, m))])
               for i, side, y in raw]
        spent[0] = time.perf_counter() - t
        return out

    def record(m: int, job: Future[Bits]) -> None:
        for i, side, bits in job.result():
            for j, b in zip(mine_of[i], bits, strict=True):
                tally.chunks[j][side].append(b)
        tally.sizes.append(m)

    def draw(m: int) -> list[tuple[int, int, Outputs]]:
        return [(i, side, sampler(x, m)) for i in used for side, x in enumerate(pairs[i])]

    def one_round(check: bool) -> tuple[Array | None, Bits]:   # a worker's (parallel.Workers)
        raw = draw(chunk)
        return (enc.encode(raw[0][2], chunk) if check else None), count(chunk, raw)

    # forked before this process starts any thread of its own (a fork copies only the caller)
    crew = Workers(workers, one_round, worker_init) if workers > 1 and n_target > chunk else None
    prints: list[bytes | None] = []   # of this process's first chunks (stream check)
    n = 0
    last = time.perf_counter()
    pending: deque[tuple[int, Future[Bits]]] = deque()
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpcert-audit") as pool:
            try:
                while n + (0 if crew is None else crew.rounds() * chunk) < n_target:
                    m = min(chunk, n_target - n)
                    t0 = time.perf_counter()
                    raw = draw(m)
                    if crew is not None and len(prints) < CHECKED:
                        prints.append(fingerprint(enc.encode(raw[0][2], m)))
                    while pending:   # at most one chunk counted while the next one is drawn
                        record(*pending.popleft())
                    pending.append((m, pool.submit(count, m, raw)))
                    n += m
                    now = time.perf_counter()
                    if progress is not None and now - last > 2.0:
                        ahead = 0 if crew is None else crew.rounds() * chunk
                        progress(f"estimate: {n + ahead:,} draws per input")
                        last = now
                    if deadline is not None and now + (now - t0) + spent[0] > deadline:
                        break
                while pending:
                    record(*pending.popleft())
            finally:
                for _, job in pending:
                    job.cancel()
    except BaseException:
        if crew is not None:
            crew.stop()
        raise
    rounds = [] if crew is None else crew.close(prints)
    for bits in rounds:   # worker by worker, in order; never past n_target
        m = min(chunk, n_target - n)
        if m <= 0:
            break
        for i, side, packed in bits:
            for j, b in zip(mine_of[i], packed, strict=True):
                tally.chunks[j][side].append(b)
        tally.sizes.append(m)
        n += m
    return tally, n


def poisson_counts(tally: Tally, n: int, rng: np.random.Generator  # insecure-ok: not noise
                   ) -> tuple[int, int, list[tuple[int, int]]] | None:
    """``(N, N', [(count in first N draws of x, in first N' of x'), ...])`` with N, N' drawn
    from Poisson(n − 7√n); None when ``n`` is too small or (rarely) ``N > n``."""
    lam = n - POISSON_MARGIN * math.sqrt(n)
    if lam < 100:
        return None
    big, big_p = int(rng.poisson(lam)), int(rng.poisson(lam))
    if big > n or big_p > n:
        return None
    return big, big_p, [(tally.count(j, 0, big), tally.count(j, 1, big_p))
                        for j in range(tally.candidates)]


def ratio_lower(k_high: int, k_low: int, alpha: float) -> float:
    """``ln(θ_lo/(1−θ_lo))`` with ``θ_lo`` the Clopper–Pearson lower bound on
    ``p/(p+q)`` from ``k_high`` of ``k_high + k_low`` (−inf when both are 0)."""
    m = k_high + k_low
    if m == 0 or k_high == 0:
        return -math.inf
    theta = bounds.cp_lower(k_high, m, alpha)
    if theta <= 0.0:
        return -math.inf
    return math.nextafter(math.log(theta) - math.log1p(-theta), -math.inf)
