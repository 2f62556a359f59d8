"""The exponential mechanism under zCDP: ε-bounded-range ⇒ ε²/8 (issue 19, item 3)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert.accounting import PureAccountant, ZCDPAccountant
from dpcert.core.events import BoundedRangeEvent, PureEvent, SelfComposedEvent

CANDS = [0, 1, 2]
SPACE = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())


def votes(xs: list[int]) -> list[int]:
    return [xs.count(c) for c in CANDS]


def _em(eps: object = 1, monotonic: bool = False) -> dp.Measurement:
    return dp.m.make_exponential(*SPACE, CANDS, votes, 1, eps, monotonic=monotonic)


@pytest.mark.parametrize("d_in", [1, 2, 3])
@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_converts_to_eps_squared_over_8(d_in: int, monotonic: bool) -> None:
    m = _em(Fraction(1, 2), monotonic)
    ev = m.event(d_in)
    assert type(ev) is BoundedRangeEvent and ev.epsilon == Fraction(d_in, 2)
    z = dp.c.make_pureDP_to_zCDP(m)
    assert z.map(d_in) == Fraction(d_in, 2) ** 2 / 8
    assert ZCDPAccountant().compose(m.event(d_in)).rho == Fraction(d_in * d_in, 32)
    # every other accountant still sees an ε·d_in-DP event
    assert PureAccountant().compose(m.event(d_in)).total == Fraction(d_in, 2)
    assert z.map(0) == 0


def test_bounded_range_survives_chaining_and_postprocessing() -> None:
    pre = SPACE >> dp.t.then_clamp(0, 2)
    m = pre >> dp.m.then_exponential(CANDS, votes, 1, 2.0)
    assert dp.c.make_pureDP_to_zCDP(m).map(1) == Fraction(1, 2)  # 2²/8, not 2²/2
    post = m >> (lambda c: c * 10)
    assert dp.c.make_pureDP_to_zCDP(post).map(2) == 2
    assert isinstance(post.event(2), BoundedRangeEvent)


def test_report_noisy_max_exponential_is_bounded_range_laplace_is_not() -> None:
    rnm = dp.m.make_report_noisy_max(*SPACE, CANDS, votes, 1, 1.0)
    assert dp.c.make_pureDP_to_zCDP(rnm).map(1) == Fraction(1, 8)
    top3 = dp.m.make_report_noisy_max(*SPACE, CANDS, votes, 1, 1.0, k=3)
    ev = top3.event(2)
    assert isinstance(ev, SelfComposedEvent) and ev.count == 3
    assert type(ev.event) is BoundedRangeEvent and ev.event.epsilon == 2
    assert dp.c.make_pureDP_to_zCDP(top3).map(2) == 3 * Fraction(4, 8)
    assert ZCDPAccountant().compose(top3.event(2)).rho == Fraction(3, 2)
    assert top3.map(2) == 6
    lap = dp.m.make_report_noisy_max(*SPACE, CANDS, votes, 1, 1.0, noise="laplace")
    assert type(lap.event(1)) is PureEvent and lap.event(1).epsilon == 1
    assert dp.c.make_pureDP_to_zCDP(lap).map(1) == Fraction(1, 2)


def test_bounded_range_events_round_trip_through_the_ledger_codec() -> None:
    from dpcert.accounting.codec import event_from_json, event_to_json

    ev = _em(Fraction(1, 3)).event(2)
    back = event_from_json(event_to_json(ev))
    assert back == ev and type(back) is BoundedRangeEvent
    assert ZCDPAccountant().compose(back).rho == Fraction(4, 9) / 8


def test_permute_and_flip_keeps_the_generic_conversion() -> None:
    pf = dp.m.make_permute_and_flip(*SPACE, CANDS, votes, 1, 1.0)
    assert not isinstance(pf.event(1), BoundedRangeEvent)
    assert dp.c.make_pureDP_to_zCDP(pf).map(3) == Fraction(9, 2)
    assert ZCDPAccountant().compose(pf.event(1)).rho == Fraction(1, 2)


def _em_probs(u: np.ndarray, factor: float) -> np.ndarray:
    w = np.exp(factor * (u - u.max()))
    return w / w.sum()


def _renyi(p: np.ndarray, q: np.ndarray, alpha: float) -> float:
    return math.log(float(np.sum(p**alpha * q ** (1 - alpha)))) / (alpha - 1)


@pytest.mark.parametrize("monotonic", [False, True])
def test_exact_distributions_are_bounded_range_and_meet_the_zcdp_bound(monotonic: bool) -> None:
    # Exact EM distributions for every pair of neighbouring score vectors on a grid (scores move
    # by at most Δ = 1; all in one direction when monotonic): the log-ratio range is ≤ ε and every
    # Rényi divergence is ≤ α·ε²/8.  Charging ε²/16 would fail here: the two-candidate pair
    # u = (0, 1) → (1, 0) has D_α close to α·ε²/8 for small ε.
    eps = 0.5
    factor = eps / (1 if monotonic else 2)
    worst = 0.0
    steps = [-1.0, -0.5, 0.0, 0.5, 1.0]
    for u in itertools.product([0.0, 1.0, 3.0], repeat=3):
        for du in itertools.product(steps, repeat=3):
            if monotonic and min(du) < 0 < max(du):
                continue
            a, b = np.array(u), np.array(u) + np.array(du)
            p, q = _em_probs(a, factor), _em_probs(b, factor)
            lr = np.log(p) - np.log(q)
            assert lr.max() - lr.min() <= eps + 1e-12
            for alpha in (1.5, 2.0, 8.0, 64.0):
                ratio = _renyi(p, q, alpha) / (alpha * eps**2 / 8)
                assert ratio <= 1 + 1e-9
                worst = max(worst, ratio)
    assert worst > 0.5  # the ε²/8 bound is not loose by more than 2× on this grid


def test_other_pure_mechanisms_keep_eps_squared_over_2() -> None:
    # only a BoundedRangeEvent earns ε²/8: Laplace (a DiscreteLaplaceEvent with an ε), randomized
    # response and plain ε-DP measurements keep Bun & Steinke's ε²/2
    lap = SPACE >> dp.t.then_count() >> dp.m.then_laplace(2)
    assert dp.c.make_pureDP_to_zCDP(lap).map(1) == Fraction(1, 8)
    assert dp.c.make_pureDP_to_zCDP(lap).map(3) == Fraction(9, 8)
    rr = dp.m.make_randomized_response_bool(Fraction(1, 2))
    assert dp.c.make_pureDP_to_zCDP(rr).map(1) == Fraction(1, 8)
