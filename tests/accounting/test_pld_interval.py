"""Issue 15.4: every ε from the PLD comes with an interval that contains the exact value."""

from __future__ import annotations

import math

import pytest

from dpcert.accounting import (
    GaussianEvent,
    LaplaceEvent,
    PLDAccountant,
    PoissonSampledEvent,
    RandomizedResponseEvent,
)
from dpcert.accounting.gdp import gdp_delta, gdp_epsilon


@pytest.mark.parametrize("sigma, k, delta", [(50, 1000, 1e-6), (2, 3, 1e-5), (10, 100, 1e-6)])
def test_gaussian_interval_contains_the_exact_epsilon(sigma: float, k: int, delta: float) -> None:
    lo, hi = PLDAccountant().compose(GaussianEvent(sigma), k).epsilon_interval(delta)
    exact = gdp_epsilon(math.sqrt(k) / sigma, delta)
    assert lo <= exact <= hi
    dlo, dhi = PLDAccountant().compose(GaussianEvent(sigma), k).delta_interval(1.0)
    assert dlo <= gdp_delta(math.sqrt(k) / sigma, 1.0) <= dhi


def test_randomized_response_interval_contains_the_exact_delta() -> None:
    # k-fold binary RR with ε0: δ(ε) = Σ_i C(k,i) p^(k-i) (1-p)^i (1 − e^{ε − (k−2i)ε0})_+
    k, e0, eps = 20, 0.5, 3.0
    p = math.exp(e0) / (1 + math.exp(e0))
    exact = sum(math.comb(k, i) * p ** (k - i) * (1 - p) ** i
                * max(0.0, 1 - math.exp(eps - (k - 2 * i) * e0)) for i in range(k + 1))
    lo, hi = PLDAccountant().compose(RandomizedResponseEvent(e0), k).delta_interval(eps)
    assert lo <= exact <= hi and hi - lo < 1e-3


@pytest.mark.parametrize("event, k", [(LaplaceEvent(10), 100),
                                      (PoissonSampledEvent(GaussianEvent(1), 0.01), 300)])
def test_interval_is_ordered_and_narrows_with_the_grid(event: object, k: int) -> None:
    coarse = PLDAccountant(value_discretization_interval=1e-3).compose(event, k)
    fine = PLDAccountant(value_discretization_interval=1e-4).compose(event, k)
    c_lo, c_hi = coarse.epsilon_interval(1e-6)
    f_lo, f_hi = fine.epsilon_interval(1e-6)
    assert c_lo <= f_lo <= f_hi <= c_hi + 1e-9
    assert f_hi - f_lo < c_hi - c_lo
