"""Pure, approx, zCDP and RDP accountants against closed forms; events and their validation."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import dpcert as dp
from dpcert.accounting import (
    ApproxAccountant,
    ApproxEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    GaussianEvent,
    LaplaceEvent,
    PLDAccountant,
    PoissonSampledEvent,
    PureAccountant,
    PureEvent,
    RandomizedResponseEvent,
    RDPAccountant,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPAccountant,
    ZCDPEvent,
    event_from_distance,
)
from dpcert.errors import InvalidParameter, UnsupportedEvent

ALL = [PureAccountant, ApproxAccountant, ZCDPAccountant, RDPAccountant, PLDAccountant]


def test_events_store_exact_fractions_and_validate() -> None:
    assert GaussianEvent(sigma=0.1).sigma == Fraction(1, 10)
    assert LaplaceEvent(scale=2, sensitivity=0.5).epsilon == Fraction(1, 4)
    with pytest.raises(InvalidParameter, match=r"sigma=-1 must be > 0"):
        GaussianEvent(sigma=-1)
    with pytest.raises(InvalidParameter, match="rate"):
        PoissonSampledEvent(GaussianEvent(1), 0)
    with pytest.raises(InvalidParameter, match="sample_size"):
        SampledWithoutReplacementEvent(PureEvent(1), 5, 4)
    with pytest.raises(InvalidParameter, match="integer"):
        DiscreteLaplaceEvent(scale=1, sensitivity=0.5)
    with pytest.raises(InvalidParameter, match="exactly one"):
        RandomizedResponseEvent()
    with pytest.raises(InvalidParameter):
        ComposedEvent([1.0])  # type: ignore[list-item]
    e = SelfComposedEvent(ComposedEvent([PureEvent(0.5), LaplaceEvent(2)]), 3)
    assert e == SelfComposedEvent(ComposedEvent([PureEvent(0.5), LaplaceEvent(2)]), 3)
    assert hash(e) == hash(SelfComposedEvent(ComposedEvent([PureEvent(0.5), LaplaceEvent(2)]), 3))


def test_event_from_distance() -> None:
    assert event_from_distance(dp.PureDP(), Fraction(1, 2)) == PureEvent(Fraction(1, 2))
    assert event_from_distance(dp.ZCDP(), Fraction(1, 8)) == ZCDPEvent(Fraction(1, 8))
    assert event_from_distance(dp.ApproxDP(), (1, Fraction(1, 10**6))) == ApproxEvent(1, 1e-6)
    with pytest.raises(UnsupportedEvent):
        event_from_distance(dp.RenyiDP(), dp.RenyiDP().zero())


def test_measurement_event_default() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
    m = space >> dp.t.then_count() >> dp.m.then_laplace(4.0)
    ev = m.event(1)
    eps = PureAccountant().compose(ev).epsilon(1e-6)
    assert eps == pytest.approx(0.25, abs=1e-3) and eps >= float(m.map(1))


def test_pure_accountant_sums_exactly() -> None:
    acc = PureAccountant().compose(LaplaceEvent(10), 5).compose(PureEvent(0.25), 2)
    assert acc.total == Fraction(1)
    assert acc.epsilon(1e-9) == 1.0
    assert acc.delta(1.0) == 0.0
    # single-mechanism bound (e^E − e^ε)/(1 + e^E) at ε = 0.5
    assert acc.delta(0.5) >= (math.e - math.exp(0.5)) / (1 + math.e)
    assert acc.delta(0.5) == pytest.approx((math.e - math.exp(0.5)) / (1 + math.e), rel=1e-9)
    base = PureAccountant()
    assert base.compose(PureEvent(1)).total == 1 and base.entries == ()  # immutable


def test_amplification_by_subsampling() -> None:
    eps = PureAccountant().compose(PoissonSampledEvent(PureEvent(1), 0.1)).total
    exact = math.log(1 + 0.1 * (math.e - 1))
    assert exact <= eps <= exact + 1e-9
    wor = ApproxAccountant().compose(SampledWithoutReplacementEvent(ApproxEvent(1, 1e-5), 10, 100))
    e, d = wor.total
    assert exact <= e <= exact + 1e-9 and d == Fraction(1, 10**6)


def test_approx_accountant() -> None:
    acc = ApproxAccountant().compose(ApproxEvent(0.5, 1e-7), 4).compose(LaplaceEvent(1))
    assert acc.total == (Fraction(3), Fraction(4, 10**7))
    assert acc.epsilon(1e-6) == 3.0 and acc.epsilon(1e-7) == math.inf
    assert acc.delta(3) == pytest.approx(4e-7) and acc.delta(2) == 1.0


def _cks(rho: float, delta: float) -> float:
    """CKS20 Cor. 13 minimised with mpmath (independent of the implementation)."""
    mpmath.mp.dps = 30
    r, ld = mpmath.mpf(rho), mpmath.log(1 / mpmath.mpf(delta))

    def f(a: mpmath.mpf) -> mpmath.mpf:
        return a * r + (ld + (a - 1) * mpmath.log(1 - 1 / a) - mpmath.log(a)) / (a - 1)

    grid = [1 + mpmath.mpf(10) ** (x / 50) for x in range(-300, 300)]
    best = min(grid, key=f)
    a = mpmath.findroot(lambda x: mpmath.diff(f, x), best)
    return float(min(f(a), f(best)))


@pytest.mark.parametrize("rho,delta", [(0.25, 1e-6), (0.02, 1e-5), (3.0, 1e-9)])
def test_zcdp_matches_cks_closed_form(rho: float, delta: float) -> None:
    acc = ZCDPAccountant().compose(ZCDPEvent(rho))
    ref = _cks(rho, delta)
    eps = acc.epsilon(delta)
    assert ref <= eps <= ref + 1e-8
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta))
    d = acc.delta(eps)
    assert delta * (1 - 1e-6) <= d <= delta * (1 + 1e-6)


def test_zcdp_rho_of_events() -> None:
    acc = (ZCDPAccountant().compose(GaussianEvent(2, 1), 2).compose(DiscreteGaussianEvent(2))
           .compose(LaplaceEvent(scale=2)).compose(RandomizedResponseEvent(epsilon=1)))
    assert acc.rho == 3 * Fraction(1, 8) + Fraction(1, 8) + Fraction(1, 2)
    with pytest.raises(UnsupportedEvent):
        acc.compose(ApproxEvent(1, 1e-6))


def test_rdp_gaussian_matches_closed_form() -> None:
    acc = RDPAccountant().compose(GaussianEvent(sigma=10), 50)
    a = np.asarray(acc.orders)
    np.testing.assert_allclose(acc.rdp, a * 50 / 200, rtol=1e-9)
    ld = math.log(1e6)
    ref = min(0.25 * x + math.log1p(-1 / x) - (math.log(1e-6) + math.log(x)) / (x - 1)
              for x in a)
    assert ref <= acc.epsilon(1e-6) <= ref + 1e-9
    assert acc.epsilon(1e-6) <= min(0.25 * x + ld / (x - 1) for x in a)


def test_rdp_laplace_matches_mpmath() -> None:
    acc = RDPAccountant(orders=(2.0, 5.0)).compose(LaplaceEvent(scale=1))

    def d_alpha(alpha: float) -> float:
        mpmath.mp.dps = 30
        al = mpmath.mpf(alpha)
        p = lambda x: mpmath.exp(-abs(x)) / 2  # noqa: E731
        q = lambda x: mpmath.exp(-abs(x - 1)) / 2  # noqa: E731
        integral = mpmath.quad(lambda x: p(x) ** al * q(x) ** (1 - al), [-mpmath.inf, 0, 1,
                                                                         mpmath.inf])
        return float(mpmath.log(integral) / (al - 1))

    for v, alpha in zip(acc.rdp, (2.0, 5.0), strict=True):
        ref = d_alpha(alpha)
        assert ref <= v <= ref + 1e-9


def test_rdp_sampled_gaussian_integer_orders() -> None:
    q, sigma, alpha = 0.1, 2.0, 3
    acc = RDPAccountant(orders=(3.0, 2.5)).compose(PoissonSampledEvent(GaussianEvent(sigma), q))
    ref = math.log(sum(math.comb(alpha, k) * (1 - q) ** (alpha - k) * q**k
                       * math.exp((k * k - k) / (2 * sigma**2)) for k in range(alpha + 1))) / 2
    assert ref <= acc.rdp[0] <= ref + 1e-9
    assert acc.rdp[0] > acc.rdp[1] > 0  # fractional orders are accounted too (issue 15.5)
    with pytest.raises(UnsupportedEvent):
        acc.compose(PoissonSampledEvent(LaplaceEvent(1), q))


def test_rdp_randomized_response_is_exact_divergence() -> None:
    eps, alpha = 1.0, 4.0
    p = math.exp(eps) / (1 + math.exp(eps))
    ref = math.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) / 3
    for ev in (RandomizedResponseEvent(epsilon=1), PureEvent(1)):
        v = RDPAccountant(orders=(alpha,)).compose(ev).rdp[0]
        assert ref <= v <= ref + 1e-9


@pytest.mark.parametrize("cls", ALL)
def test_unknown_events_raise_and_nothing_is_guessed(cls: type) -> None:
    acc = cls()
    bad = SampledWithoutReplacementEvent(GaussianEvent(1), 1, 10)
    assert not acc.supports(bad)
    with pytest.raises(UnsupportedEvent):
        acc.compose(bad)
    assert acc.supports(ComposedEvent([])) and acc.compose(ComposedEvent([])).entries == ()
    with pytest.raises(InvalidParameter, match="delta"):
        acc.epsilon(0)
    with pytest.raises(InvalidParameter, match="epsilon"):
        acc.delta(-1)


@pytest.mark.parametrize("cls", ALL)
def test_accountants_are_monotone_in_events(cls: type) -> None:
    ev = LaplaceEvent(scale=5)
    a1 = cls().compose(ev, 3)
    a2 = a1.compose(ev)
    assert a1.epsilon(1e-6) <= a2.epsilon(1e-6)
    assert a1.delta(0.5) <= a2.delta(0.5) + 1e-15
