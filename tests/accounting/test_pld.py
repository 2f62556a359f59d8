"""The PLD accountant: upper bounds that converge, checked against analytic and mpmath values."""

from __future__ import annotations

import math

import mpmath
import pytest

from dpcert.accounting import (
    ApproxEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    GaussianEvent,
    LaplaceEvent,
    PLDAccountant,
    PoissonSampledEvent,
    PureEvent,
    RandomizedResponseEvent,
    RDPAccountant,
    ZCDPEvent,
)
from dpcert.combinators import optimal_composition_delta
from dpcert.errors import UnsupportedEvent

mpmath.mp.dps = 40


def gauss_delta(mu: float, eps: float) -> mpmath.mpf:
    """Balle & Wang (2018): δ(ε) of the Gaussian mechanism with μ = Δ/σ."""
    m, e = mpmath.mpf(mu), mpmath.mpf(eps)
    return mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)


def gauss_eps(mu: float, delta: float) -> float:
    return float(mpmath.findroot(lambda e: gauss_delta(mu, e) - delta, mu * mu / 2 + 3 * mu))


def test_acceptance_gaussian_1000() -> None:
    eps = PLDAccountant().compose(GaussianEvent(sigma=50), 1000).epsilon(1e-6)
    truth = gauss_eps(math.sqrt(1000) / 50, 1e-6)  # k Gaussians = one with σ/√k
    assert abs(truth - 2.92160059) < 1e-8
    assert truth <= eps <= truth * 1.005
    assert eps <= 2.9216006 + 1e-3  # dp-accounting's PLD figure + 1e-3


@pytest.mark.parametrize("k,sigma", [(1, 1.0), (10, 5.0), (100, 20.0)])
def test_k_gaussians_equal_one_gaussian_to_1e6(k: int, sigma: float) -> None:
    acc = PLDAccountant().compose(GaussianEvent(sigma=sigma), k)
    mu = math.sqrt(k) / sigma
    for delta in (1e-5, 1e-6):
        truth = gauss_eps(mu, delta)
        assert truth <= acc.epsilon(delta) <= truth + 1e-6
    for eps in (0.5, 1.0):
        truth_d = float(gauss_delta(mu, eps))
        assert truth_d <= acc.delta(eps) <= truth_d * (1 + 1e-5)


def test_refinement_converges_from_above() -> None:
    truth = gauss_eps(math.sqrt(1000) / 50, 1e-6)
    values = [PLDAccountant(h).compose(GaussianEvent(sigma=50), 1000).epsilon(1e-6)
              for h in (1e-2, 1e-3, 1e-4)]
    assert all(v >= truth for v in values)
    assert values[0] > values[1] > values[2]
    assert values[2] - truth < 1e-4


def _laplace_delta1(eps0: mpmath.mpf, t: mpmath.mpf) -> mpmath.mpf:
    """δ(t) of one Laplace mechanism with ε0: 1 − e^{(t−ε0)/2} on [−ε0, ε0]."""
    if t >= eps0:
        return mpmath.mpf(0)
    if t >= -eps0:
        return 1 - mpmath.exp((t - eps0) / 2)
    return 1 - mpmath.exp(t)


def _laplace_delta_k(eps0: float, k: int, eps: float) -> float:
    """δ(ε) of k Laplace mechanisms by nested quadrature over the loss law of one of them."""
    e0 = mpmath.mpf(eps0)

    def dk(j: int, t: mpmath.mpf) -> mpmath.mpf:
        if j == 1:
            return _laplace_delta1(e0, t)
        # Loss of one mechanism under P: atom 1/2 at ε0, atom e^{−ε0}/2 at −ε0, density
        # e^{(l−ε0)/2}/4 on (−ε0, ε0).
        cont = mpmath.quad(lambda x: dk(j - 1, t - x) * mpmath.exp((x - e0) / 2) / 4,
                           sorted({-e0, e0, *(x for x in (t - e0, t + e0) if -e0 < x < e0)}))
        return dk(j - 1, t - e0) / 2 + mpmath.exp(-e0) / 2 * dk(j - 1, t + e0) + cont

    return float(dk(k, mpmath.mpf(eps)))


@pytest.mark.parametrize("k", [1, 2])
def test_laplace_pld_vs_mpmath_quadrature(k: int) -> None:
    mpmath.mp.dps = 20
    acc = PLDAccountant().compose(LaplaceEvent(scale=2.0), k)
    for eps in (0.0, 0.3, 0.7):
        truth = _laplace_delta_k(0.5, k, eps)
        got = acc.delta(eps)
        assert truth - 1e-12 <= got <= truth + 1e-6, (k, eps, truth, got)
    mpmath.mp.dps = 40


def test_laplace_100_matches_peer_figure() -> None:
    eps = PLDAccountant().compose(LaplaceEvent(scale=10), 100).epsilon(1e-6)
    assert 4.6926 < eps < 4.6927 + 1e-3


def test_randomized_response_is_exact_up_to_discretisation() -> None:
    # k-fold ε-RR is the worst case of k-fold ε-DP: Kairouz–Oh–Viswanath's optimal composition.
    k, e = 20, 0.3
    acc = PLDAccountant().compose(RandomizedResponseEvent(epsilon=e), k)
    same = PLDAccountant().compose(PureEvent(e), k)
    for eps in (0.5, 1.0, 2.0):
        truth = float(optimal_composition_delta(e, 0, k, eps))
        assert truth * (1 - 1e-9) <= acc.delta(eps) <= truth + 1e-5
        assert same.delta(eps) == pytest.approx(acc.delta(eps), rel=1e-9)


def test_approx_event_adds_delta() -> None:
    acc = PLDAccountant().compose(ApproxEvent(0.5, 1e-6), 3)
    assert acc.delta(10) >= 1 - (1 - 1e-6) ** 3
    assert acc.epsilon(3e-6 + 1e-7) <= 1.5 + 1e-3


def test_discrete_mechanisms() -> None:
    dl = PLDAccountant().compose(DiscreteLaplaceEvent(scale=4), 10)
    assert dl.epsilon(1e-6) <= 2.5 + 1e-9  # never worse than pure composition
    dg = PLDAccountant().compose(DiscreteGaussianEvent(sigma=5), 10)
    g = PLDAccountant().compose(GaussianEvent(sigma=5), 10)
    assert abs(dg.epsilon(1e-6) - g.epsilon(1e-6)) < 0.01


def test_poisson_subsampled_gaussian_single_step_is_tight() -> None:
    q, mu = 0.01, 1.0
    acc = PLDAccountant().compose(PoissonSampledEvent(GaussianEvent(sigma=1), q))

    def remove(eps: float) -> float:  # q·δ_G(log((e^ε − 1 + q)/q))
        return q * float(gauss_delta(mu, math.log((math.expm1(eps) + q) / q)))

    for eps in (0.01, 0.1, 1.0):
        truth = remove(eps)
        got = acc.delta(eps)
        assert truth <= got <= truth * (1 + 1e-6) + 1e-12


def test_poisson_subsampled_gaussian_below_rdp() -> None:
    ev = PoissonSampledEvent(GaussianEvent(sigma=1), 0.01)
    pld = PLDAccountant(1e-3).compose(ev, 300).epsilon(1e-5)
    rdp = RDPAccountant().compose(ev, 300).epsilon(1e-5)
    assert 0 < pld < rdp


def test_mixed_composition_and_unsupported() -> None:
    acc = PLDAccountant().compose(ComposedEvent([GaussianEvent(3), LaplaceEvent(2)]), 5)
    assert 0 < acc.epsilon(1e-6) < math.inf
    assert not acc.supports(ZCDPEvent(0.1))
    with pytest.raises(UnsupportedEvent):
        acc.compose(ZCDPEvent(0.1))
    assert PLDAccountant().epsilon(1e-6) == 0.0


@pytest.mark.parametrize(("eps0", "delta0", "q"), [(1.0, 1e-3, 0.1), (0.5, 1e-4, 0.5)])
def test_subsampled_approx_event_keeps_q_delta_at_infinite_loss(eps0: float, delta0: float,
                                                               q: float) -> None:
    """Poisson subsampling of an (ε₀, δ₀) pair (remove direction): with probability q·δ₀ the
    loss is +∞, so δ(ε) ≥ q·δ₀ at every ε, and at the amplified ε' = log(1 + q(e^ε₀ − 1)) the
    tight δ is exactly q·δ₀ (Balle, Barthe & Gaboardi 2018, Thm 8; Zhu, Dong & Wang 2022)."""
    acc = PLDAccountant().compose(PoissonSampledEvent(ApproxEvent(eps0, delta0), q))
    for eps in (0.0, 0.5, 2.0, 10.0, 50.0):
        assert acc.delta(eps) >= q * delta0 * (1 - 1e-9)
    amplified = math.log1p(q * math.expm1(eps0))
    got = acc.delta(amplified * 1.001)  # just past the discretisation of the atom at ε'
    assert q * delta0 * (1 - 1e-9) <= got <= q * delta0 * 1.01
