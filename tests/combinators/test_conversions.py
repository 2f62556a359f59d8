"""Exact maps at d_in > 1 of the measure conversions and homogeneous compositions
(:mod:`dpcert.combinators.conversions`).

Every test builds its inner mechanism on a clamp with a *negative* lower bound, so the
sensitivity the conversion receives is ``d·max(|L|, |U|)`` with ``L = −3, U = 5``: the integer
sum moves by ``5d``; Laplace at scale 4 is ``5d/4``-DP and the Gaussian at scale 4 is
``(5d)²/32``-zCDP (integers: no lattice allowance).  The expected values are computed by hand
(``Fraction``) or from an independent 40-digit reference of the theorem (``mpmath``), at
``d = 2, 3`` and at boundaries (``k = 1``, ``d = 0``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

import dpcert as dp

mpmath.mp.dps = 40
SPACE = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
DELTA = Fraction(1, 10**6)


def _sum() -> dp.Transformation:
    return SPACE >> dp.t.then_clamp(-3, 5) >> dp.t.then_sum()  # type: ignore[return-value]


def _laplace() -> dp.Measurement:
    return _sum() >> dp.m.then_laplace(4)  # type: ignore[return-value]


def _gaussian() -> dp.Measurement:
    return _sum() >> dp.m.then_gaussian(4)  # type: ignore[return-value]


def _gaussian_approx() -> dp.Measurement:
    t = _sum()
    return t >> dp.m.make_gaussian_approx(  # type: ignore[return-value]
        t.output_domain, t.output_metric, 4, 1e-6)


def _cks_reference(rho: Fraction, delta: Fraction) -> mpmath.mpf:
    """CKS20 Cor. 13: min over α > 1 of αρ + (log(1/δ) + (α−1) log(1 − 1/α) − log α)/(α − 1),
    minimised by golden-section search on log(α − 1) (the function is unimodal there)."""
    r, ld = mpmath.mpf(rho.numerator) / rho.denominator, -mpmath.log(
        mpmath.mpf(delta.numerator) / delta.denominator)

    def f(t: mpmath.mpf) -> mpmath.mpf:
        a = 1 + mpmath.exp(t)
        return a * r + (ld + (a - 1) * mpmath.log(1 - 1 / a) - mpmath.log(a)) / (a - 1)

    return min(f(t) for t in _golden(f, mpmath.mpf(-12), mpmath.mpf(12)))


def _golden(f: object, lo: mpmath.mpf, hi: mpmath.mpf) -> list[mpmath.mpf]:
    g = (mpmath.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if f(a) < f(b):  # type: ignore[operator]
            hi = b
        else:
            lo = a
    return [lo, hi]


def _gaussian_delta(rho: Fraction, eps: Fraction) -> mpmath.mpf:
    """The exact (ε, δ) curve of a Gaussian with ρ = μ²/2 (Balle & Wang 2018, Thm. 8)."""
    mu = mpmath.sqrt(2 * mpmath.mpf(rho.numerator) / rho.denominator)
    e = mpmath.mpf(eps.numerator) / eps.denominator
    return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def test_inner_maps_are_the_hand_computed_ones() -> None:
    for d in (0, 1, 2, 3):
        assert _sum().map(d) == 5 * d
        assert _laplace().map(d) == Fraction(5 * d, 4)
        assert _gaussian().map(d) == Fraction(25 * d * d, 32)


@pytest.mark.parametrize("d", [0, 2, 3, 7])
def test_pure_to_approx_is_exact_at_every_distance(d: int) -> None:
    assert dp.c.make_pureDP_to_approxDP(_laplace()).map(d) == (Fraction(5 * d, 4), Fraction(0))


@pytest.mark.parametrize("d", [2, 3])
def test_pure_to_zcdp_squares_the_distance(d: int) -> None:
    assert dp.c.make_pureDP_to_zCDP(_laplace()).map(d) == Fraction(25 * d * d, 32)


@pytest.mark.parametrize("d", [2, 3])
def test_zcdp_to_approx_converts_rho_at_d(d: int) -> None:
    """ρ(d) = 25d²/32; ε is CKS20's conversion of that ρ: above the 40-digit reference (and by
    less than 1e-8 relative), sound against the Gaussian's exact curve, below the classic bound."""
    rho = Fraction(25 * d * d, 32)
    eps, delta = dp.c.make_zCDP_to_approxDP(_gaussian(), 1e-6).map(d)
    assert delta == DELTA
    ref = _cks_reference(rho, DELTA)
    assert ref <= eps <= ref * (1 + mpmath.mpf(10) ** -8)
    assert _gaussian_delta(rho, eps) <= DELTA
    assert eps < float(rho) + 2 * math.sqrt(float(rho) * math.log(1e6))
    # the distance is not ignored: ρ(1) gives a much smaller ε
    assert dp.c.make_zCDP_to_approxDP(_gaussian(), 1e-6).map(1)[0] < ref / 1.5
    assert dp.c.make_zCDP_to_approxDP(_gaussian(), 1e-6).map(0) == (0, DELTA)


@pytest.mark.parametrize("d", [2, 3])
def test_gaussian_approx_is_the_cks_conversion_of_its_zcdp_map(d: int) -> None:
    rho = Fraction(25 * d * d, 32)
    eps, delta = _gaussian_approx().map(d)
    assert delta == DELTA
    ref = _cks_reference(rho, DELTA)
    assert ref <= eps <= ref * (1 + mpmath.mpf(10) ** -8)
    assert _gaussian_delta(rho, eps) <= DELTA
    # the mechanism alone (absolute distance = sensitivity): ρ = s²/32 at sensitivity s = 5d
    t = _sum()
    alone = dp.m.make_gaussian_approx(t.output_domain, t.output_metric, 4, 1e-6)
    assert alone.map(5 * d) == (eps, delta)
    assert alone.map(0) == (0, 0)


@pytest.mark.parametrize("d", [2, 3])
def test_renyi_to_approx_minimises_over_the_orders(d: int) -> None:
    """A Rényi measurement whose curve is ρ(d)·α with ρ(d) = 25d²/32: ε is the improved
    conversion (Balle et al. 2020, Thm. 21) minimised over the measure's orders."""
    def curve(dd: int) -> dp.RenyiCurve:
        return dp.RenyiCurve.constant_rho(Fraction(25 * dd * dd, 32))

    measure = dp.RenyiDP()
    m = dp.Measurement(SPACE[0], SPACE[1], measure, function=len, privacy_map=curve)
    eps, delta = dp.c.make_renyiDP_to_approxDP(m, 1e-6).map(d)
    assert delta == DELTA
    r, ld = mpmath.mpf(25 * d * d) / 32, mpmath.log(10**6)
    ref = min(a * r + mpmath.log(1 - 1 / a) + (ld - mpmath.log(a)) / (a - 1)
              for a in (mpmath.mpf(o.numerator) / o.denominator for o in measure.orders)
              if a > 1)
    assert ref <= eps <= ref * (1 + mpmath.mpf(10) ** -8) + mpmath.mpf(10) ** -11
    # never tighter than CKS20 on the continuum of orders
    assert eps >= _cks_reference(Fraction(25 * d * d, 32), DELTA) * (1 - mpmath.mpf(10) ** -12)


@pytest.mark.parametrize("d,k", [(2, 10), (3, 10), (2, 1)])
def test_advanced_composition_map_by_hand(d: int, k: int) -> None:
    """k-fold (ε, δ) with ε = 5d/4 from the Laplace map and δ = 10⁻⁶ from a Gaussian-approx
    inner: ε' = √(2k ln(1/δ')) ε + kε(e^ε − 1), δ_total = kδ + δ' exactly."""
    inner = _gaussian_approx()
    ie, idl = inner.map(d)
    assert idl == DELTA
    m = dp.c.make_advanced_composition(inner, k, 1e-7)
    eps, delta = m.map(d)
    assert delta == k * DELTA + Fraction(1, 10**7)
    e = mpmath.mpf(ie.numerator) / ie.denominator
    ref = mpmath.sqrt(2 * k * mpmath.log(10**7)) * e + k * e * mpmath.expm1(e)
    assert ref <= eps <= ref * (1 + mpmath.mpf(10) ** -9)
    pe, pd = dp.c.make_advanced_composition(_laplace(), k, 1e-7).map(d)
    assert pd == Fraction(1, 10**7)
    e = mpmath.mpf(5 * d) / 4
    ref = mpmath.sqrt(2 * k * mpmath.log(10**7)) * e + k * e * mpmath.expm1(e)
    assert ref <= pe <= ref * (1 + mpmath.mpf(10) ** -9)


def _kov_delta(e: mpmath.mpf, k: int, ep: mpmath.mpf) -> mpmath.mpf:
    """δ'(ε') = Σ_l C(k,l) (e^{(k−l)ε} − e^{ε'} e^{lε})_+ / (1 + e^ε)^k (KOV15 / MV16)."""
    tot = mpmath.mpf(0)
    for ll in range(k + 1):
        tot += mpmath.binomial(k, ll) * max(mpmath.mpf(0),
                                            mpmath.exp((k - ll) * e) - mpmath.exp(ep + ll * e))
    return tot / (1 + mpmath.exp(e)) ** k


@pytest.mark.parametrize("d,k", [(2, 10), (3, 6)])
def test_optimal_composition_map_by_hand(d: int, k: int) -> None:
    """Pure inner (ε = 5d/4): δ_total = 1 − (1 − 0)^k (1 − δ') = δ' exactly, and ε' is (up to
    the bisection's 2^-60 relative step) the smallest ε' whose KOV δ' is at most δ'."""
    dp_ = Fraction(1, 10**3)
    eps, delta = dp.c.make_optimal_composition(_laplace(), k, dp_).map(d)
    assert delta == dp_
    e = mpmath.mpf(5 * d) / 4
    assert _kov_delta(e, k, mpmath.mpf(eps.numerator) / eps.denominator) <= mpmath.mpf(1) / 10**3
    below = mpmath.mpf(eps.numerator) / eps.denominator * (1 - mpmath.mpf(10) ** -9)
    assert _kov_delta(e, k, below) > mpmath.mpf(1) / 10**3
    assert eps < k * Fraction(5 * d, 4)  # strictly better than basic composition here


def test_optimal_composition_with_approx_inner_has_exact_total_delta() -> None:
    inner = _gaussian_approx()
    _, delta = dp.c.make_optimal_composition(inner, 5, Fraction(1, 10**4)).map(2)
    assert delta == 1 - (1 - DELTA) ** 5 * (1 - Fraction(1, 10**4))
