"""The rules a curator chooses (``docs/proofs/filters.md``): how many releases each admits, an
independent check of the Rényi filter's conversion, and a mis-converted variant it catches."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert.accounting import filters
from dpcert.accounting.filters import FilterState, PrivacyFilter, Release, renyi_order
from dpcert.accounting.rdp import rdp_of
from dpcert.core.events import ApproxEvent, GaussianEvent, LaplaceEvent, SelfComposedEvent
from dpcert.errors import BudgetExceeded, InvalidParameter, UnsupportedEvent

BUDGET = dp.ApproxDP(5, 1e-6)


def _fit(rule: str, event: object, budget: dp.core.measures.Measure = BUDGET,
         cap: int = 400) -> tuple[int, PrivacyFilter]:
    """How many copies of ``event``, charged one at a time, the filter admits."""
    f = PrivacyFilter(budget, rule=rule)
    for n in range(cap):
        try:
            f.charge(event)  # type: ignore[arg-type]
        except BudgetExceeded:
            return n, f
    return cap, f


def _reference_epsilon(rdp: float, alpha: float, delta: float) -> float:
    """RDP → (ε, δ) written out from the papers: Mironov 2017, Prop. 3 and Balle et al. 2020,
    Thm. 21, the smaller."""
    classic = rdp + math.log(1 / delta) / (alpha - 1)
    improved = rdp + math.log((alpha - 1) / alpha) - (math.log(delta) + math.log(alpha)) / (
        alpha - 1)
    return min(classic, improved)


def test_the_default_admits_100_interactive_laplace_releases_where_basic_admits_50() -> None:
    n, f = _fit("auto", LaplaceEvent(10))
    assert n == 100 and f.rule == "renyi" and f.state.order == 6.4
    assert float(f.spent[0]) == pytest.approx(4.984, abs=5e-4)  # type: ignore[index]
    assert _fit("basic", LaplaceEvent(10))[0] == 50
    assert _fit("renyi", LaplaceEvent(10))[0] == 100


def test_the_renyi_filter_is_sound_by_an_independent_conversion() -> None:
    n, f = _fit("renyi", LaplaceEvent(10))
    alpha = f.state.order
    assert alpha is not None
    one = float(rdp_of(LaplaceEvent(10), np.array([alpha]))[0])
    exact_one = math.log(alpha / (2 * alpha - 1) * math.exp((alpha - 1) * 0.1)
                         + (alpha - 1) / (2 * alpha - 1) * math.exp(-alpha * 0.1)) / (alpha - 1)
    assert one == pytest.approx(exact_one, rel=1e-9)  # Mironov 2017, Prop. 6
    assert _reference_epsilon(n * exact_one, alpha, 1e-6) <= 5
    assert _reference_epsilon((n + 1) * exact_one, alpha, 1e-6) > 5  # the refusal is needed


def _misconverted(rdp: float, order: float, delta: float) -> float:
    """Wrong: the improved conversion with log α not divided by α − 1."""
    return rdp + math.log((order - 1) / order) - math.log(delta) / (order - 1) - math.log(order)


def test_a_misconverted_renyi_filter_admits_too_much_and_is_caught(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filters, "renyi_epsilon", _misconverted)
    n, f = _fit("renyi", LaplaceEvent(10))
    assert n == 151  # the exact count above (100) catches it
    alpha = f.state.order
    assert alpha is not None
    one = float(rdp_of(LaplaceEvent(10), np.array([alpha]))[0])
    assert _reference_epsilon(n * one, alpha, 1e-6) > 5  # and it overspends


def test_100_adaptive_gaussians_under_gdp_are_within_3_percent_of_4_887() -> None:
    for rule in ("auto", "gdp"):
        f = PrivacyFilter(BUDGET, rule=rule)
        for _ in range(100):
            f.charge(GaussianEvent(10))
        assert f.rule == "gdp"
        assert abs(float(f.spent[0]) - 4.887) <= 0.03 * 4.887  # type: ignore[index]


def test_five_laplace_releases_at_epsilon_1_fit_under_basic_and_auto() -> None:
    assert _fit("basic", LaplaceEvent(1))[0] == 5
    n, f = _fit("auto", LaplaceEvent(1))
    assert n == 5 and f.rule == "approx"  # auto picks basic: it admits more like the first
    n, f = _fit("auto", LaplaceEvent(2))
    assert n == 10 and f.rule == "approx"
    assert _fit("renyi", LaplaceEvent(1))[0] == 4  # Rényi pays log(1/δ)/(α−1) over 5


def test_a_first_declared_batch_keeps_the_pld_under_auto() -> None:
    f = PrivacyFilter(BUDGET)
    f.charge(SelfComposedEvent(LaplaceEvent(10), 100), batch=True)
    assert f.rule == "approx" and round(float(f.spent[0]), 3) == 4.693  # type: ignore[index]


def test_renyi_refuses_an_approximate_release_and_gdp_needs_delta() -> None:
    f = PrivacyFilter(BUDGET, rule="renyi")
    with pytest.raises(UnsupportedEvent, match="rule='basic'"):
        f.charge(ApproxEvent(Fraction(1, 10), Fraction(1, 10**8)))
    assert f.state.count == 0
    # auto with an (ε, δ) first release falls back to basic composition
    g = PrivacyFilter(BUDGET)
    g.charge(ApproxEvent(Fraction(1, 10), Fraction(1, 10**8)))
    assert g.rule == "approx"
    for bad in ("renyi", "gdp"):
        with pytest.raises(InvalidParameter, match=f"rule='{bad}'"):
            PrivacyFilter(dp.PureDP(1), rule=bad)
    with pytest.raises(InvalidParameter, match="rule='fast'"):
        PrivacyFilter(BUDGET, rule="fast")


def test_the_order_is_fixed_by_the_first_release() -> None:
    total = (Fraction(5), Fraction(1, 10**6))
    f = PrivacyFilter(BUDGET, rule="renyi")
    f.charge(LaplaceEvent(10))
    f.charge(LaplaceEvent(1))  # a later, larger release does not move the order
    assert f.state.order == renyi_order(LaplaceEvent(10), total) == 6.4


def test_the_state_is_the_fold_of_the_history_and_round_trips() -> None:
    rel: list[Callable[[], Release]] = [
        lambda: Release(LaplaceEvent(10)), lambda: Release(GaussianEvent(3)),
        lambda: Release(SelfComposedEvent(LaplaceEvent(5), 3), batch=True)]
    for rule in ("auto", "basic", "renyi"):
        st = FilterState.start("ApproxDP", (Fraction(5), Fraction(1, 10**6)), rule)
        for r in rel:
            st = st.step(r())[1]
        assert FilterState.from_json(st.to_json()) == st
        assert st.tally().spent == filters.tally(
            "ApproxDP", st.total, [r() for r in rel], rule).spent
