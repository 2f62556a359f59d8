"""Calibration to a target (ε, δ): exact for Gaussians, by bisection for other events."""

from __future__ import annotations

import math

import pytest

from dpcert.accounting import GaussianEvent, LaplaceEvent, PLDAccountant, PoissonSampledEvent
from dpcert.accounting.calibrate import calibrate, gaussian_sigma, max_count
from dpcert.accounting.gdp import gdp_delta
from dpcert.errors import InvalidParameter


@pytest.mark.parametrize("eps, delta, count", [(1.0, 1e-5, 1000), (0.5, 1e-6, 1), (3, 1e-9, 7)])
def test_gaussian_sigma_is_the_boundary(eps: float, delta: float, count: int) -> None:
    s = gaussian_sigma(eps, delta, count=count)
    mu = math.sqrt(count) / s
    assert gdp_delta(mu, eps) <= delta
    assert gdp_delta(mu * (1 + 1e-6), eps) > delta  # a 1e-6 smaller σ fails: tight
    pld = PLDAccountant().compose(GaussianEvent(s), count).epsilon(delta)
    assert eps - 1e-3 <= pld <= eps + 1e-3  # the PLD agrees (within its grid)


def test_gaussian_sigma_scales_with_sensitivity_and_refuses_bad_input() -> None:
    assert math.isclose(gaussian_sigma(1, 1e-5, 10, sensitivity=3),
                        3 * gaussian_sigma(1, 1e-5, 10), rel_tol=1e-9)
    for bad in ({"epsilon": float("nan")}, {"delta": 0}, {"count": 0}, {"sensitivity": -1}):
        kw = {"epsilon": 1.0, "delta": 1e-5, "count": 1, "sensitivity": 1} | bad
        with pytest.raises(InvalidParameter):
            gaussian_sigma(**kw)


def test_calibrate_laplace_scale_and_max_count() -> None:
    b = calibrate(LaplaceEvent, 1.0, 1e-6, (1, 1000), count=100, rel_tol=1e-3)
    assert PLDAccountant().compose(LaplaceEvent(b), 100).epsilon(1e-6) <= 1.0
    assert PLDAccountant().compose(LaplaceEvent(b * 0.99), 100).epsilon(1e-6) > 1.0
    ev = PoissonSampledEvent(GaussianEvent(1.1), 0.01)
    n = max_count(ev, 2.0, 1e-5)
    acc = PLDAccountant()
    assert acc.compose(ev, n).epsilon(1e-5) <= 2.0 < acc.compose(ev, n + 1).epsilon(1e-5)
