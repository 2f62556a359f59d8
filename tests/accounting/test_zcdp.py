"""``dpcert.accounting.zcdp.rho_of`` against a lower bound computed from the mechanisms' output
distributions: ρ-zCDP bounds every Rényi divergence of order α by αρ, so at α → 1 it bounds the
KL divergence, ``ρ ≥ KL(P ‖ Q)`` for the output distributions P, Q on one pair of neighbours
(Bun & Steinke 2016, Def. 1.1).  A second route to the leaf values of test_leaf_values_exact.py."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from dpcert.accounting.zcdp import rho_of
from dpcert.core.events import (
    DiscreteLaplaceEvent,
    GaussianEvent,
    LaplaceEvent,
    RandomizedResponseEvent,
)

mpmath.mp.dps = 40


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


@pytest.mark.parametrize("k", [2, 3, 4, 10])
@pytest.mark.parametrize("p", [Fraction(6, 10), Fraction(7, 10), Fraction(95, 100)])
def test_randomized_response_by_probability_covers_its_kl(k: int, p: Fraction) -> None:
    """k-ary RR reporting the truth with probability p, each other category with
    q = (1 − p)/(k − 1): inputs a and b give KL = (p − q)·log(p/q)."""
    q = (1 - p) / (k - 1)
    if p <= q:
        pytest.skip("not a privacy-preserving parametrisation")
    kl = (_mp(p) - _mp(q)) * mpmath.log(_mp(p) / _mp(q))
    assert _mp(rho_of(RandomizedResponseEvent(categories=k, probability=p))) >= kl


@pytest.mark.parametrize("scale", [Fraction(1, 2), Fraction(1), Fraction(5)])
@pytest.mark.parametrize("sens", [1, 3])
def test_laplace_covers_its_kl(scale: Fraction, sens: int) -> None:
    """Laplace(b) shifted by Δ: KL = Δ/b + e^(−Δ/b) − 1."""
    t = _mp(Fraction(sens) / scale)
    kl = t + mpmath.exp(-t) - 1
    assert _mp(rho_of(LaplaceEvent(scale, sens))) >= kl
    # the discrete Laplace on ℤ with the same scale: KL by summing the two pmfs
    r = mpmath.exp(-1 / _mp(scale))
    norm = (1 - r) / (1 + r)

    def pmf(z: int) -> mpmath.mpf:
        return norm * r ** abs(z)

    dkl = mpmath.fsum(pmf(z) * (abs(z - sens) - abs(z)) / _mp(scale)
                      for z in range(-400, 400 + sens))
    assert _mp(rho_of(DiscreteLaplaceEvent(scale, sens))) >= dkl


@pytest.mark.parametrize(("sigma", "sens"), [(Fraction(1), 1), (Fraction(3, 2), 2), (4, 1)])
def test_gaussian_is_exactly_its_kl(sigma: object, sens: int) -> None:
    """Gaussian: every Rényi divergence is αΔ²/(2σ²), so ρ = KL = Δ²/(2σ²) exactly."""
    s = Fraction(sigma)  # type: ignore[arg-type]
    assert rho_of(GaussianEvent(s, sens)) == Fraction(sens * sens) / (2 * s * s)
    assert math.isclose(float(rho_of(GaussianEvent(s, sens))), sens**2 / (2 * float(s) ** 2))
