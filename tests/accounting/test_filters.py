"""Privacy filters (``dpcert.accounting.filters``): each rule admits exactly what fits and
refuses the one charge that would overspend (proofs: ``docs/proofs/filters.md``)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

import dpcert as dp
from dpcert.accounting.filters import PrivacyFilter
from dpcert.core.events import (
    ApproxEvent,
    GaussianEvent,
    PureEvent,
    SelfComposedEvent,
    ZCDPEvent,
)
from dpcert.errors import BudgetExceeded


def test_zcdp_filter_fills_the_budget_and_refuses_one_more() -> None:
    f = PrivacyFilter(dp.ZCDP(1))
    f.charge(ZCDPEvent(Fraction(1, 2)))
    f.charge(ZCDPEvent(Fraction(1, 2)))
    assert f.spent == 1 and f.remaining == 0
    assert f.quote(ZCDPEvent(Fraction(1, 1000)))["fits"] is False
    with pytest.raises(BudgetExceeded):
        f.charge(ZCDPEvent(Fraction(1, 1000)))
    assert f.spent == 1 and len(f.releases) == 2


def test_pure_filter_fills_the_budget_and_refuses_one_more() -> None:
    f = PrivacyFilter(dp.PureDP(1))
    for _ in range(4):
        f.charge(PureEvent(Fraction(1, 4)))
    assert f.spent == 1
    with pytest.raises(BudgetExceeded):
        f.charge(PureEvent(Fraction(1, 10**6)))
    assert len(f.releases) == 4


def test_approx_budget_with_zero_delta_uses_the_pure_rule_and_refuses_one_more() -> None:
    f = PrivacyFilter(dp.ApproxDP(1, 0))
    f.charge(PureEvent(Fraction(3, 4)))
    f.charge(PureEvent(Fraction(1, 4)))
    assert f.rule == "pure" and f.spent == (1, 0)
    with pytest.raises(BudgetExceeded):
        f.charge(PureEvent(Fraction(1, 10**6)))


def test_approx_filter_refuses_a_delta_overspend() -> None:
    f = PrivacyFilter(dp.ApproxDP(1, Fraction(1, 10**6)))
    f.charge(ApproxEvent(Fraction(1, 10), Fraction(1, 10**6)))
    assert f.rule == "approx"
    assert f.quote(ApproxEvent(Fraction(1, 10), Fraction(1, 10**9)))["fits"] is False
    with pytest.raises(BudgetExceeded):
        f.charge(ApproxEvent(Fraction(1, 10), Fraction(1, 10**9)))
    f.charge(PureEvent(Fraction(1, 2)))  # ε alone still fits
    assert f.spent == (Fraction(3, 5), Fraction(1, 10**6))


def test_approx_filter_refuses_an_epsilon_overspend() -> None:
    f = PrivacyFilter(dp.ApproxDP(1, Fraction(1, 10**6)))
    f.charge(ApproxEvent(Fraction(1, 2), Fraction(1, 10**7)))
    f.charge(ApproxEvent(Fraction(1, 2), Fraction(1, 10**7)))
    with pytest.raises(BudgetExceeded):
        f.charge(ApproxEvent(Fraction(1, 10**6), 0))


def _gdp_delta_ref(mu: float, eps: float) -> float:
    m, e = mpmath.mpf(mu), mpmath.mpf(eps)
    return float(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2))


def _gdp_admits(eps: float, delta: float, mu2_each: float) -> int:
    """How many releases of μ² each fit the μ-GDP budget: the largest n with
    δ_{√(n μ²)}(ε) ≤ δ (Smith & Thakurta 2022), by a 40-digit reference."""
    n = 0
    while _gdp_delta_ref(math.sqrt((n + 1) * mu2_each), eps) <= delta:
        n += 1
    return n


def test_gdp_filter_admits_exactly_the_gaussians_that_fit() -> None:
    eps, delta = 1.0, 1e-3
    expect = _gdp_admits(eps, delta, 0.01)  # GaussianEvent(σ = 10): μ = 1/10
    assert expect >= 3
    f = PrivacyFilter(dp.ApproxDP(eps, delta))
    for _ in range(expect):
        f.charge(GaussianEvent(10))
    assert f.rule == "gdp"
    with pytest.raises(BudgetExceeded):
        f.charge(GaussianEvent(10))
    assert len(f.releases) == expect
    st = f.status()
    assert st.mu2 == pytest.approx(expect * 0.01, rel=1e-9)


def test_gdp_filter_counts_self_composed_gaussians_k_times() -> None:
    eps, delta = 1.0, 1e-3
    f = PrivacyFilter(dp.ApproxDP(eps, delta))
    f.charge(SelfComposedEvent(GaussianEvent(20), 4))  # 4 × μ² = 4 × 1/400
    assert f.status().mu2 == pytest.approx(0.01, rel=1e-9)
    fits = _gdp_admits(eps, delta, 0.01)
    for _ in range(fits - 1):
        f.charge(SelfComposedEvent(GaussianEvent(20), 4))
    with pytest.raises(BudgetExceeded):
        f.charge(SelfComposedEvent(GaussianEvent(20), 4))
