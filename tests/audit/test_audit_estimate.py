"""The estimation phase: tallies, Poisson sample sizes and the ratio bound's coverage."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

import numpy as np
import pytest

from dpcert.audit.kernel import estimate
from dpcert.audit.kernel.estimate import Tally, poisson_counts, ratio_lower
from dpcert.audit.kernel.outputs import OutputEncoder
from dpcert.audit.stats.events import Event, Identity


def _tally() -> Tally:
    t = Tally(1)
    for bits in (np.array([1, 0, 1, 1], bool), np.array([0, 1, 1], bool)):
        t.chunks[0][0].append(np.packbits(bits))
        t.chunks[0][1].append(np.packbits(~bits))
        t.sizes.append(bits.size)
    return t


def test_tally_counts_prefixes() -> None:
    t = _tally()
    assert [t.count(0, 0, k) for k in range(8)] == [0, 1, 1, 2, 3, 3, 4, 5]
    assert t.count(0, 1, 7) == 2


def test_poisson_sizes_stay_within_the_draws() -> None:
    t = Tally(1)
    t.chunks[0][0].append(np.packbits(np.ones(10_000, bool)))
    t.chunks[0][1].append(np.packbits(np.zeros(10_000, bool)))
    t.sizes.append(10_000)
    got = poisson_counts(t, 10_000, np.random.default_rng(0))
    assert got is not None
    big, big_p, counts = got
    assert 9_000 < big <= 10_000 and 9_000 < big_p <= 10_000
    assert counts == [(big, 0)]
    assert poisson_counts(t, 50, np.random.default_rng(0)) is None


def test_ratio_lower_edges() -> None:
    assert ratio_lower(0, 0, 0.05) == -math.inf
    assert ratio_lower(0, 7, 0.05) == -math.inf
    assert 0 < ratio_lower(30, 0, 0.05) < math.inf
    assert ratio_lower(600, 400, 0.05) < math.log(600 / 400)


@pytest.mark.parametrize(("p", "q"), [(0.02, 0.018), (0.3, 0.25), (0.001, 0.001)])
def test_poissonized_ratio_bound_covers(p: float, q: float) -> None:
    # 2 000 trials at α = 0.05: the bound exceeds ln(p/q) in at most 5 % of them (plus 5.5
    # standard errors: a correct bound fails this with probability < 1e-7).  The same check
    # with the point estimate ln(k/k') in place of the bound fails (about half the trials).
    rng = np.random.default_rng(5)
    lam, alpha, trials = 200_000.0, 0.05, 2_000
    k1, k2 = rng.poisson(lam * p, trials), rng.poisson(lam * q, trials)
    over = sum(ratio_lower(int(a), int(b), alpha) > math.log(p / q)
               for a, b in zip(k1, k2, strict=True))
    sd = math.sqrt(alpha * (1 - alpha) / trials)
    assert over / trials <= alpha + 5.5 * sd


def test_run_estimation_stops_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(estimate.time, "perf_counter", lambda: clock[0])

    def sampler(x: float, n: int) -> np.ndarray:
        clock[0] += 1.0
        return np.full(n, x)

    ev = Event(Identity(), 0.5, 2.0)
    tally, n = estimate.run_estimation(sampler, [(0.0, 1.0)], [(0, ev)], 10**6, 1_000, 10.0,
                                       OutputEncoder(), None)
    assert n == 5_000 and clock[0] == 10.0      # five chunks of two calls
    assert tally.count(0, 0, n) == 0 and tally.count(0, 1, n) == n


def _counting_sampler(calls: list[int], threads: set[int]) -> Callable[[float, int], np.ndarray]:
    """Each call returns ``n`` copies of its call number (and notes the calling thread)."""

    def sampler(x: float, n: int) -> np.ndarray:
        threads.add(threading.get_ident())
        calls.append(len(calls))
        return np.full(n, float(calls[-1]))

    return sampler


def test_run_estimation_records_chunks_in_draw_order() -> None:
    # chunks are counted on a worker thread while the next one is drawn; their bits must be
    # recorded in draw order (prefix counts depend on it), and the mechanism is only ever
    # called on the caller's thread
    calls: list[int] = []
    threads: set[int] = set()
    ev = Event(Identity(), 1.5, 4.5)    # calls 2 and 4 (x), 3 (x')
    tally, n = estimate.run_estimation(_counting_sampler(calls, threads), [(0.0, 1.0)],
                                       [(0, ev)], 10 * 100, 100, None, OutputEncoder(), None)
    assert n == 1_000 and len(calls) == 20 and tally.sizes == [100] * 10
    assert [tally.count(0, 0, k) for k in (100, 150, 200, 300, 1_000)] == [0, 50, 100, 200, 200]
    assert [tally.count(0, 1, k) for k in (100, 150, 200, 300)] == [0, 50, 100, 100]
    assert threads == {threading.get_ident()}


class _Failing(OutputEncoder):
    def __init__(self, after: int) -> None:
        super().__init__()
        self.left = after

    def encode(self, outputs: object, n: int | None = None) -> np.ndarray:
        self.left -= 1
        if self.left < 0:
            raise RuntimeError("encoder failed")
        return super().encode(outputs, n)


def test_run_estimation_raises_a_worker_error_and_leaves_no_thread() -> None:
    before = threading.active_count()
    ev = Event(Identity(), 0.5, 2.0)
    with pytest.raises(RuntimeError, match="encoder failed"):
        estimate.run_estimation(_counting_sampler([], set()), [(0.0, 1.0)], [(0, ev)],
                                10**5, 100, None, _Failing(after=5), None)
    assert threading.active_count() == before


def test_run_estimation_raises_a_mechanism_error_and_leaves_no_thread() -> None:
    before = threading.active_count()
    calls: list[int] = []
    inner = _counting_sampler(calls, set())

    def sampler(x: float, n: int) -> np.ndarray:
        if len(calls) == 7:
            raise ValueError("mechanism failed")
        return inner(x, n)

    ev = Event(Identity(), 0.5, 2.0)
    with pytest.raises(ValueError, match="mechanism failed"):
        estimate.run_estimation(sampler, [(0.0, 1.0)], [(0, ev)], 10**5, 100, None,
                                OutputEncoder(), None)
    assert threading.active_count() == before


def test_tally_counts_whole_chunks_by_popcount_as_unpacking_does() -> None:
    # whole chunks are counted from their packed bytes (padding bits are zeros); the table
    # route (NumPy < 2) and the bitwise_count route agree with unpacking
    rng = np.random.default_rng(8)
    t = Tally(1)
    for m in (1, 7, 8, 9, 1_000, 4_093):
        bits = rng.random(m) < 0.4
        t.chunks[0][0].append(np.packbits(bits))
        t.chunks[0][1].append(np.packbits(~bits))
        t.sizes.append(m)
    total = sum(t.sizes)
    for side in (0, 1):
        want = [int(np.unpackbits(b, count=m).sum())
                for b, m in zip(t.chunks[0][side], t.sizes, strict=True)]
        assert t.count(0, side, total) == sum(want)
        assert [estimate._ones(b) for b in t.chunks[0][side]] == want
        assert [int(estimate._POPCOUNT[b].sum()) for b in t.chunks[0][side]] == want
    assert t.count(0, 0, total) + t.count(0, 1, total) == total
    # set padding bits (packbits leaves them 0; a tally must not count them if they are not)
    t.chunks[0][0][1] = t.chunks[0][0][1] | np.uint8(0x01)   # the chunk of 7: one pad bit
    assert t.count(0, 0, total) == sum(int(np.unpackbits(b, count=m).sum())
                                       for b, m in zip(t.chunks[0][0], t.sizes, strict=True))
