"""Estimation draws from worker processes: order of the rounds, the shared-stream checks, and
failures of a worker (dpcert.audit.kernel.parallel)."""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from typing import Any

import numpy as np
import pytest

import dpcert as dp
from dpcert.audit import audit
from dpcert.audit.kernel import estimate, parallel
from dpcert.audit.kernel.outputs import OutputEncoder, measurement_sampler
from dpcert.audit.search import dscreen
from dpcert.audit.stats.events import Event, Identity, row_hash
from dpcert.errors import AuditFailed, InvalidParameter

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="workers need os.fork")

EVENT = Event(Identity(), 0.5, 2.0)


def _no_children() -> bool:
    return not multiprocessing.active_children()


def _shared_rng_sampler(seed: int) -> Any:
    rng = np.random.default_rng(seed)  # insecure-ok: test subject with a shared stream

    def f(x: float, n: int) -> np.ndarray:
        return x + rng.laplace(0.0, 1.0, n)

    return f, rng


def test_worker_rounds_follow_the_parent_in_process_order() -> None:
    # the parent draws 0s, the worker 1s; the worker signals after its first round is sent,
    # and the parent waits for that before its first draw, so both contribute.  The tally
    # must hold every parent draw before any worker draw, stop at exactly n_target, and give
    # both inputs the same n.
    parent = os.getpid()
    sent = multiprocessing.get_context("fork").Event()
    calls = [0]

    def sampler(x: float, n: int) -> np.ndarray:
        calls[0] += 1
        if os.getpid() != parent:
            if calls[0] == 3:          # the third call starts round 2: round 1 was sent
                sent.set()
            return np.ones(n)
        assert sent.wait(60.0)
        return np.zeros(n)

    tally, n = estimate.run_estimation(sampler, [(0.0, 1.0)], [(0, EVENT)], 4_321, 100, None,
                                       OutputEncoder(), None, workers=2)
    assert n == 4_321 and sum(tally.sizes) == n
    for side in (0, 1):
        ones = tally.count(0, side, n)
        assert 0 < ones < n                      # both processes contributed
        assert tally.count(0, side, n - ones) == 0   # every parent draw comes first
        assert ones == tally.count(0, 1 - side, n)
    assert _no_children()


def test_a_shared_stream_is_refused_after_the_estimation() -> None:
    f, _ = _shared_rng_sampler(3)
    with pytest.raises(AuditFailed, match="share one random stream"):
        estimate.run_estimation(f, [(0.0, 1.0)], [(0, EVENT)], 10**9, 1_000,
                                time.perf_counter() + 1.0, OutputEncoder(), None, workers=3)
    assert _no_children()


def test_reseeded_streams_pass_and_count_like_one_process() -> None:
    # with worker_init giving each worker its own stream, the counts of P[0.5 ≤ Laplace] over
    # n = 2·10⁵ draws are a Binomial's (|z| < 5.5 fails with probability < 4e-8)
    f, rng = _shared_rng_sampler(4)

    def init(w: int) -> None:
        rng.bit_generator.state = np.random.PCG64([4, w]).state

    tally, n = estimate.run_estimation(f, [(0.0, 1.0)], [(0, EVENT)], 200_000, 1_000, None,
                                       OutputEncoder(), None, workers=2, worker_init=init)
    assert n == 200_000
    for side, x in enumerate((0.0, 1.0)):
        p = 0.5 * (math.exp(-(0.5 - x)) - math.exp(-(2.0 - x))) if x < 0.5 else \
            1.0 - 0.5 * math.exp(-(x - 0.5)) - 0.5 * math.exp(-(2.0 - x))
        k = tally.count(0, side, n)
        assert abs(k - n * p) < 5.5 * math.sqrt(n * p * (1 - p))
    assert _no_children()


def test_check_streams_refuses_a_shared_generator_and_accepts_a_reseeded_one() -> None:
    f, rng = _shared_rng_sampler(5)
    before = rng.bit_generator.state

    def init(w: int) -> None:
        rng.bit_generator.state = np.random.PCG64([5, w]).state

    with pytest.raises(AuditFailed, match="worker 2 drew the same 1000 outputs"):
        parallel.check_streams(f, 0.0, 3, lambda w: None if w == 2 else init(w))
    parallel.check_streams(f, 0.0, 3, init)
    # only forked copies drew: the parent's stream is where it was (the search draws the
    # same with any number of workers)
    assert rng.bit_generator.state == before
    # one-valued outputs say nothing about the stream: not refused
    parallel.check_streams(lambda x, n: np.zeros(n), 0.0, 2)
    # dpcert's samplers read the OS CSPRNG: independent in every process without any hook
    m = dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), scale=1.0)
    parallel.check_streams(measurement_sampler(m), 0.0, 3)
    assert _no_children()


def _fails_in_a_child(parent: int) -> Any:
    def f(x: float, n: int) -> np.ndarray:
        if os.getpid() != parent:
            raise RuntimeError("child broke")
        return np.arange(n, dtype=float)

    return f


def test_a_failing_worker_is_reported() -> None:
    f = _fails_in_a_child(os.getpid())
    with pytest.raises(AuditFailed, match="the parent's copy failed: RuntimeError: child"):
        parallel.check_streams(f, 0.0, 2)
    with pytest.raises(AuditFailed, match="worker 1 failed: RuntimeError: child broke"):
        estimate.run_estimation(f, [(0.0, 1.0)], [(0, EVENT)], 10**9, 1_000,
                                time.perf_counter() + 0.5, OutputEncoder(), None, workers=2)
    assert _no_children()


def test_a_worker_that_never_answers_is_an_error_not_a_hang(
        monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()

    def f(x: float, n: int) -> np.ndarray:
        if os.getpid() != parent:
            time.sleep(3600)
        return np.arange(n, dtype=float)

    monkeypatch.setattr(parallel, "PROBE_WAIT", 0.5)
    with pytest.raises(AuditFailed, match="copy drew no outputs in 0 s"):
        parallel.check_streams(f, 0.0, 2)
    assert _no_children()


def test_fingerprint_ignores_one_valued_outputs() -> None:
    assert parallel.fingerprint(np.zeros(5)) is None
    assert parallel.fingerprint(np.full((4, 2), np.nan)) is None
    assert parallel.fingerprint(np.zeros((0, 3))) is None
    a = parallel.fingerprint(np.array([0.0, 1.0]))
    assert a is not None and a == parallel.fingerprint(np.array([0.0, 1.0]))
    assert a != parallel.fingerprint(np.array([1.0, 0.0]))


def test_audit_with_workers_is_sound_and_honours_samples() -> None:
    # a dpcert Laplace measurement of ε = 1: a bound above 1 at confidence 1 − 10⁻⁷ is a bug
    m = dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), scale=1.0)
    r = audit(m, samples=300_000, confidence=1 - 1e-7, workers=2, seed=1)
    assert r.estimate_draws == 300_000
    assert 0.5 < r.epsilon_lower <= 1.0
    assert _no_children()


@pytest.mark.parametrize("workers", [0, -1, 1.5, "2", True])
def test_audit_rejects_bad_workers(workers: Any) -> None:
    with pytest.raises(InvalidParameter, match="workers="):
        audit(lambda x, n: np.zeros(n), samples=1_000, workers=workers)


def test_audit_rejects_a_worker_init_that_is_not_callable() -> None:
    with pytest.raises(InvalidParameter, match="worker_init=3"):
        audit(lambda x, n: np.zeros(n), samples=1_000, workers=2, worker_init=3)


# --- the search's workers (parallel.Crew, the discrete screen's batches) ---------------------


def test_a_crew_runs_the_task_in_every_worker_with_the_search_indices() -> None:
    parent = os.getpid()
    seen: list[int] = []

    def init(w: int) -> None:
        seen.append(w)

    def task(a: int) -> tuple[int, list[int], bool]:
        return a + 1, seen, os.getpid() != parent

    with parallel.Crew(parallel.Forking(3, init), task) as crew:
        crew.send(41)
        got = crew.gather(time.perf_counter() + 60.0)
        crew.send(1)
        again = crew.gather(time.perf_counter() + 60.0)
    # the estimation's workers are w = 1, 2; the search's 3, 4 (distinct streams)
    assert got == [(42, [3], True), (42, [4], True)]
    assert [a for a, _, _ in again] == [2, 2]
    assert seen == [] and _no_children()


def _crew_fails(task: Any, wait: float, match: str) -> None:
    with (pytest.raises(AuditFailed, match=match),
          parallel.Crew(parallel.Forking(2), task) as crew):
        crew.send(1)
        crew.gather(time.perf_counter() + wait)
    assert _no_children()


def test_a_failing_or_silent_search_worker_is_an_error_not_a_hang() -> None:
    parent = os.getpid()

    def broken(a: int) -> int:
        if os.getpid() != parent:
            raise RuntimeError("child broke")
        return a

    _crew_fails(broken, 60.0, "search worker 1 failed: RuntimeError: child broke")

    def silent(a: int) -> int:
        time.sleep(3600)
        return a

    _crew_fails(silent, 0.3, "search worker 1 gave no result in time")


def test_check_streams_refuses_a_search_worker_on_an_estimation_workers_stream() -> None:
    # a worker_init seeded by min(w, 1) gives the search's worker (w = 2) the stream of the
    # estimation's (w = 1): it would replay the draws the events were chosen on
    f, rng = _shared_rng_sampler(5)

    def init(w: int) -> None:
        rng.bit_generator.state = np.random.PCG64([5, min(w, 1)]).state

    with pytest.raises(AuditFailed, match="search worker 1 drew the same 1000 outputs as "
                                          "worker 1"):
        parallel.check_streams(f, 0.0, 2, init)
    assert _no_children()


def test_the_discrete_screen_merges_the_workers_counts() -> None:
    # the parent draws 0s, its worker 1s: every batch holds both, and the parent's encoder is
    # the only one that grows (a worker's copy is frozen: a value new to it is code -1)
    parent = os.getpid()

    def sampler(x: int, n: int) -> list[str]:
        return ["a"] * n if os.getpid() == parent else ["b"] * n

    enc = OutputEncoder()
    enc.encode(["a"])
    with parallel.Crew(parallel.Forking(2, None, enc), lambda *a: dscreen._draw(
            sampler, 0, 1, rows=a[1], chunk=a[2], until=a[3], enc=enc)) as crew:
        fa, fb, ha, hb = dscreen._draw_all(crew, sampler, [(0, 1)], 0, rows=9_000,
                                           chunk=3_000, until=None, enc=enc)
    assert fa.n + ha.n == 18_000 and fb.n + hb.n == 18_000
    both = fa.merge(ha)
    # codes: "a" is 0 in the parent; the worker's "b" is unseen by its frozen copy: -1
    assert dict(zip(both.keys.tolist(), both.counts.tolist(), strict=True)) == {
        row_hash(np.array([0.0]))[0].item(): 9_000.0,
        row_hash(np.array([-1.0]))[0].item(): 9_000.0}
    assert enc.encode(["b"]).tolist() == [1.0]   # the parent's code book was untouched
    assert _no_children()


def test_an_audit_with_workers_screens_a_few_valued_mechanism_in_both_processes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 4-ary randomized response (ε = ln 3) on string categories (the encoder's code book): on a
    # clock, the discrete screen runs (the crew is made), and the bound is sound at 1 − 10⁻⁷
    made = []
    real = parallel.Crew

    def crew(*a: Any) -> Any:
        made.append(a[0])
        return real(*a)

    monkeypatch.setattr(dscreen, "Crew", crew)
    m = dp.m.make_randomized_response(["a", "b", "c", "d"], math.log(3.0))
    r = audit(m, pairs=[("a", "b"), ("a", "c"), ("c", "d")], seconds=6.0,
              confidence=1 - 1e-7, workers=2, seed=3)
    assert [f.workers for f in made] == [2]
    assert 0.0 < r.epsilon_lower <= math.log(3.0)
    assert _no_children()


def test_the_wide_screen_pools_the_workers_values(monkeypatch: pytest.MonkeyPatch) -> None:
    # on a deadline with two processes, the rows after the first chunk are shared: the
    # parent's values and its worker's (outputs offset by 1000 there) both come back
    from types import SimpleNamespace

    from dpcert.audit.search import standard as search
    from dpcert.audit.search.candidates import Candidate
    from dpcert.audit.stats.events import RowSum

    parent = os.getpid()

    def sampler(x: float, n: int) -> np.ndarray:
        return np.full((n, 3), x + (0.0 if os.getpid() == parent else 1000.0))

    seen: list[Any] = []

    def fake(*args: Any, more: Any = None, **kw: Any) -> tuple[list[Any], int]:
        seen.append(more)
        if more is not None:
            seen.append(more([RowSum()], 5_000, None, 0.0))
        return [], 0

    monkeypatch.setattr(search, "wide_screen", fake)
    found = [Candidate(0, Event(RowSum(), 0.0, math.inf), True, 0.01)]
    plan = SimpleNamespace(chunk=1_000, n_estimate=10**6, n_search=10_000)
    pairs = [(0.0, 1.0)]
    search._wide(sampler, pairs, found, plan, OutputEncoder(), 2.0, 0.0,
                 time.perf_counter() + 60.0, parallel.Forking(2))
    parts = seen[1]
    assert [p[2] for p in parts] == [2_500, 2_500]
    (va, vb, _), (wa, wb, _) = parts
    assert set(va[0].tolist()) == {0.0} and set(vb[0].tolist()) == {3.0}
    assert set(wa[0].tolist()) == {3000.0} and set(wb[0].tolist()) == {3003.0}
    assert _no_children()
    # one process without a deadline (a fixed number of samples) or without workers
    for end, fork in ((None, parallel.Forking(2)), (time.perf_counter() + 60.0, None)):
        seen.clear()
        search._wide(sampler, pairs, found, plan, OutputEncoder(), 2.0, 0.0, end, fork)
        assert seen == [None]
