"""Conversions of ``dpcert.accounting._convert``: RDP → (ε, δ) and zCDP → (ε, δ).

Each conversion is checked two independent ways: (1) soundness on the Gaussian mechanism, whose
exact (ε, δ) curve is known (Balle & Wang, ICML 2018) -- a converted (ε, δ) must never claim
less than the exact δ at that ε; (2) exact value against a reference evaluated at 50 digits on a
fine grid of orders (Mironov 2017, Prop. 3; Balle et al. 2020 / Canonne, Kamath & Steinke 2020,
Cor. 13 for the improved term).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpcert.accounting._convert import (
    rdp_to_delta,
    rdp_to_epsilon,
    zcdp_to_delta,
)
from dpcert.mechanisms.calibration import zcdp_to_approx_epsilon

mpmath.mp.dps = 40
ORDERS = np.array([1.25, 1.5, 1.75, 2, 2.5, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 128])
CASES = [(0.05, 1e-6), (0.5, 1e-6), (1.0, 1e-5), (2.0, 1e-9), (0.01, 1e-3)]


def exact_gaussian_delta(rho: float, eps: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism with ρ = Δ²/(2σ²) (μ = √(2ρ))."""
    mu = mpmath.sqrt(2 * mpmath.mpf(rho))
    e = mpmath.mpf(eps)
    return float(mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2))


def _ref_eps_at(a: mpmath.mpf, r: mpmath.mpf, delta: float) -> mpmath.mpf:
    ld = -mpmath.log(delta)
    classic = r + ld / (a - 1)
    improved = r + mpmath.log(1 - 1 / a) + (ld - mpmath.log(a)) / (a - 1)
    return min(classic, improved)


def ref_rdp_to_epsilon(orders: np.ndarray, rdp: np.ndarray, delta: float) -> float:
    return float(min(_ref_eps_at(mpmath.mpf(float(a)), mpmath.mpf(float(r)), delta)
                     for a, r in zip(orders, rdp, strict=True)))


def ref_rdp_to_delta(orders: np.ndarray, rdp: np.ndarray, eps: float) -> float:
    best = mpmath.mpf(1)
    for a_, r_ in zip(orders, rdp, strict=True):
        a, r = mpmath.mpf(float(a_)), mpmath.mpf(float(r_))
        classic = mpmath.exp((a - 1) * (r - eps))
        improved = mpmath.exp((a - 1) * (r - eps)) * (1 - 1 / a) ** (a - 1) / a
        best = min(best, classic, improved)
    return float(best)


def ref_cks_epsilon(rho: float, delta: float) -> float:
    """min over α > 1 of αρ + (log(1/δ) + (α−1) log(1 − 1/α) − log α)/(α − 1), on a fine grid."""
    r, ld = mpmath.mpf(rho), -mpmath.log(delta)

    def f(t: float) -> mpmath.mpf:
        a = 1 + mpmath.exp(mpmath.mpf(t))
        return a * r + (ld + (a - 1) * mpmath.log(1 - 1 / a) - mpmath.log(a)) / (a - 1)

    return float(min(_grid_min(f), r + 2 * mpmath.sqrt(r * ld)))


def _grid_min(f: object) -> mpmath.mpf:
    """The minimum of f over t ∈ [−12, 12] by a coarse grid refined twice around its best."""
    lo, hi, best = -12.0, 12.0, None
    for _ in range(3):
        ts = np.linspace(lo, hi, 801)
        vals = [f(float(t)) for t in ts]  # type: ignore[operator]
        i = int(np.argmin(vals))
        best = vals[i] if best is None else min(best, vals[i])
        step = ts[1] - ts[0]
        lo, hi = ts[i] - step, ts[i] + step
    return best


def ref_cks_delta(rho: float, eps: float) -> float:
    r, e = mpmath.mpf(rho), mpmath.mpf(eps)

    def g(t: float) -> mpmath.mpf:
        a = 1 + mpmath.exp(mpmath.mpf(t))
        return mpmath.exp((a - 1) * (a * r - e)) * (1 - 1 / a) ** (a - 1) / a

    return float(min(mpmath.mpf(1), _grid_min(g)))


@pytest.mark.parametrize(("rho", "delta"), CASES)
def test_rdp_to_epsilon_exact_and_sound_on_the_gaussian(rho: float, delta: float) -> None:
    rdp = ORDERS * rho  # the Gaussian's RDP curve: ε(α) = αρ
    got = rdp_to_epsilon(ORDERS, rdp, delta)
    ref = ref_rdp_to_epsilon(ORDERS, rdp, delta)
    assert ref <= got <= ref * (1 + 1e-8) + 1e-11
    assert exact_gaussian_delta(rho, got) <= delta


@pytest.mark.parametrize(("rho", "delta"), CASES)
def test_rdp_to_delta_exact_and_sound_on_the_gaussian(rho: float, delta: float) -> None:
    rdp = ORDERS * rho
    eps = rdp_to_epsilon(ORDERS, rdp, delta)
    got = rdp_to_delta(ORDERS, rdp, eps)
    ref = ref_rdp_to_delta(ORDERS, rdp, eps)
    assert ref * (1 - 1e-9) <= got <= ref * (1 + 1e-6) + 1e-12
    assert got >= exact_gaussian_delta(rho, eps)
    # at a smaller ε the curve must not claim less than the exact Gaussian either
    assert rdp_to_delta(ORDERS, rdp, eps / 2) >= exact_gaussian_delta(rho, eps / 2)


@pytest.mark.parametrize(("rho", "delta"), CASES)
def test_cks_epsilon_exact_and_sound_on_the_gaussian(rho: float, delta: float) -> None:
    got = float(zcdp_to_approx_epsilon(rho, delta))
    ref = ref_cks_epsilon(rho, delta)
    assert ref * (1 - 1e-9) <= got <= ref * (1 + 1e-6)
    assert exact_gaussian_delta(rho, got) <= delta
    # tighter than the classic ρ + 2√(ρ log 1/δ) (Bun & Steinke 2016, Prop. 1.3)
    assert got <= rho + 2 * math.sqrt(rho * math.log(1 / delta))


@pytest.mark.parametrize(("rho", "eps"), [(0.05, 1.0), (0.5, 3.0), (1.0, 2.0), (2.0, 9.0)])
def test_cks_delta_exact_and_sound_on_the_gaussian(rho: float, eps: float) -> None:
    got = zcdp_to_delta(rho, eps)
    ref = ref_cks_delta(rho, eps)
    assert ref * (1 - 1e-9) <= got <= ref * (1 + 1e-6)
    assert got >= exact_gaussian_delta(rho, eps)


def test_zero_privacy_loss_converts_to_zero() -> None:
    assert zcdp_to_approx_epsilon(0, 1e-6) == 0
    assert zcdp_to_delta(0, 1.0) == 0.0
