"""Gaussian DP (``dpcert.accounting.gdp``): δ(ε) of μ-GDP and ε-DP ⇒ μ-GDP, checked against
high-precision references (mpmath) and against the trade-off they must dominate.

References: Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 2022 (Cor. 2.13: the
δ(ε) curve of μ-GDP; Prop. 2.x: ε-DP is 2Φ⁻¹(e^ε/(1+e^ε))-GDP); Balle & Wang, ICML 2018.
"""

from __future__ import annotations

import math

import mpmath
import pytest

from dpcert.accounting.gdp import gdp_delta, gdp_epsilon, mu_of_pure
from dpcert.errors import InvalidParameter

mpmath.mp.dps = 50


def _phi(x: mpmath.mpf) -> mpmath.mpf:
    return mpmath.ncdf(x)


def ref_delta(mu: float, eps: float) -> float:
    """δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) at 50 digits."""
    m, e = mpmath.mpf(mu), mpmath.mpf(eps)
    return float(_phi(-e / m + m / 2) - mpmath.exp(e) * _phi(-e / m - m / 2))


@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 3.0, 8.0])
def test_gdp_delta_matches_the_exact_curve_and_never_understates(mu: float, eps: float) -> None:
    ref = ref_delta(mu, eps)
    got = gdp_delta(mu, eps)
    assert got >= ref
    assert got <= ref * (1 + 1e-6) or got < 1e-60  # cancellation slack at tiny δ


def test_gdp_epsilon_inverts_delta() -> None:
    for mu, delta in [(0.5, 1e-6), (1.0, 1e-5), (3.0, 1e-9)]:
        e = gdp_epsilon(mu, delta)
        assert ref_delta(mu, e) <= delta
        assert ref_delta(mu, e * (1 - 1e-6)) > delta  # and it is the smallest such ε


def ref_mu_of_pure(eps: float) -> float:
    p = mpmath.exp(eps) / (1 + mpmath.exp(eps))
    return float(2 * mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1))


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 1.0, 2.0, 5.0])
def test_mu_of_pure_is_the_exact_conversion_rounded_up(eps: float) -> None:
    ref = ref_mu_of_pure(eps)
    got = mu_of_pure(eps)
    assert ref <= got <= ref * (1 + 1e-8) + 1e-14


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_mu_of_pure_dominates_the_pure_trade_off(eps: float) -> None:
    """Property (independent of the closed form): ε-DP's own δ(ε') = (e^ε − e^ε')/(1 + e^ε)
    for ε' < ε must never exceed the μ-GDP curve that stands in for it."""
    mu = mu_of_pure(eps)
    for k in range(0, 20):
        e2 = eps * k / 20
        pure = (math.exp(eps) - math.exp(e2)) / (1 + math.exp(eps))
        assert gdp_delta(mu, e2) >= pure * (1 - 1e-12)


def test_bad_arguments_name_themselves() -> None:
    with pytest.raises(InvalidParameter, match="mu="):
        gdp_delta(-1.0, 1.0)
    with pytest.raises(InvalidParameter, match="epsilon="):
        gdp_delta(1.0, float("nan"))
    with pytest.raises(InvalidParameter, match="delta="):
        gdp_epsilon(1.0, 0.0)
    with pytest.raises(InvalidParameter, match="epsilon="):
        mu_of_pure(0.0)
