"""Confirmation of weakly supported leaders (dpcert.audit.confirm)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from dpcert.audit.candidates import Candidate
from dpcert.audit.confirm import MIN_SUPPORT, confirm
from dpcert.audit.events import Event, Identity


def _coin(p_x: float, p_xp: float, seed: int = 0) -> Callable[[int, int], np.ndarray]:
    """Outputs 1 with probability p_x on input 0 and p_xp on input 1 (else 0)."""
    rng = np.random.default_rng(seed)  # insecure-ok: test subject's noise

    def mech(x: int, n: int) -> np.ndarray:
        return (rng.random(n) < (p_x if x == 0 else p_xp)).astype(float)

    return mech


ONE = Event(Identity(), 1.0, 1.0)
ZERO = Event(Identity(), 0.0, 0.0)


def test_a_lucky_leader_is_demoted_and_a_supported_one_leads() -> None:
    # 7 of 83 vs 0 of 83 predicted 0.38 on a pair whose two inputs are the same coin; the
    # supported candidate of another pair (0.1) must lead after the confirmation
    lucky = Candidate(0, ONE, True, 0.38, support=7, held=83, against=0)
    steady = Candidate(1, ONE, True, 0.10, support=5_000, held=100_000)
    got, rows = confirm([lucky, steady], _coin(0.08, 0.08), [(0, 0), (0, 1)], chunk=5_000,
                        deadline=None, n_estimate=10**6, z=2.0, delta=0.0)
    assert rows > 0
    assert got[1] is steady
    assert got[0].predicted < 0.05 and got[0].support >= MIN_SUPPORT
    assert max(got, key=lambda c: c.predicted) is steady


def test_a_strong_small_event_keeps_its_lead() -> None:
    # a real e^0.5 event of probability 1 %, seen 12 times: confirmed, not sunk
    small = Candidate(0, ONE, True, 0.45, support=12, held=1_000, against=6)
    other = Candidate(0, ZERO, False, 0.0, support=900, held=1_000, against=890)
    got, rows = confirm([small, other], _coin(0.01 * math.e ** 0.5, 0.01), [(0, 1)],
                        chunk=10_000, deadline=None, n_estimate=10**7, z=2.0, delta=0.0)
    assert rows >= 10_000
    assert got[0].predicted > 0.35 and got[0].support >= MIN_SUPPORT
    assert got[1] is other          # supported and not leading: untouched


def test_a_supported_leader_draws_nothing() -> None:
    calls: list[int] = []

    def mech(x: int, n: int) -> np.ndarray:
        calls.append(n)
        return np.zeros(n)

    lead = Candidate(0, ONE, True, 0.3, support=MIN_SUPPORT, held=10_000)
    weak = Candidate(0, ZERO, True, 0.1, support=3, held=10_000, against=3)
    got, rows = confirm([lead, weak], mech, [(0, 1)], chunk=1_000, deadline=None,
                        n_estimate=10**6, z=2.0, delta=0.0)
    assert rows == 0 and not calls and got == [lead, weak]


def test_ladders_are_not_leaders_and_the_deadline_holds() -> None:
    rung = Candidate(0, ONE, True, 0.9, ladder=True, support=1, held=100)
    got, rows = confirm([rung], _coin(0.5, 0.5), [(0, 1)], chunk=1_000, deadline=None,
                        n_estimate=10**6, z=2.0, delta=0.0)
    assert rows == 0 and got == [rung]
    lucky = Candidate(0, ONE, True, 0.4, support=7, held=83)
    got, rows = confirm([lucky], _coin(0.5, 0.5), [(0, 1)], chunk=1_000,
                        deadline=time.perf_counter() - 1.0, n_estimate=10**6, z=2.0, delta=0.0)
    assert rows == 0 and got == [lucky]


def test_each_pair_is_confirmed_once_and_rows_are_capped() -> None:
    # the same pair leads again after its confirmation (its events stay weakly supported at
    # the cap): no second batch for it
    calls: list[int] = []
    inner = _coin(0.02, 0.001)

    def mech(x: int, n: int) -> np.ndarray:
        calls.append(n)
        return inner(x, n)

    lucky = Candidate(0, ONE, True, 0.9, support=2, held=100)
    got, rows = confirm([lucky], mech, [(0, 1)], chunk=500, deadline=None, n_estimate=10**8,
                        z=2.0, delta=0.0, max_rows=2_000)
    assert rows == 2_000 and sum(calls) == 4_000
    assert got[0].held == 2_000 and got[0].predicted > 0 and got[0].support < MIN_SUPPORT


def test_a_strong_small_event_below_the_leader_is_confirmed_and_leads() -> None:
    # e^0.6 at 0.5 %, seen 15 vs 8 times on 3 000 held-out draws, predicts only 0.2 (small
    # support); a supported e^0.3 event leads with 0.28.  Its optimistic prediction beats the
    # leader, so its pair is drawn again, and it leads on the fresh draws.
    small = Candidate(0, ONE, True, 0.2, support=15, held=3_000, against=8)
    steady = Candidate(1, ONE, True, 0.28, support=30_000, held=100_000, against=22_000)
    got, rows = confirm([small, steady], _coin(0.005 * math.e ** 0.6, 0.005), [(0, 1), (0, 1)],
                        chunk=20_000, deadline=None, n_estimate=10**7, z=2.0, delta=0.0)
    assert rows >= 80_000
    assert got[1] is steady
    assert got[0].support >= MIN_SUPPORT and got[0].predicted > 0.45
    assert max(got, key=lambda c: c.predicted) is got[0]
