"""``dpcert.accounting.rdp`` by routes independent of its closed forms (issue 20, item 4):

* the Laplace curve against the Rényi divergence of Lap(0, b) from Lap(Δ, b) integrated
  numerically at 40 digits, ``D_α = log ∫ p^α q^{1−α} / (α − 1)`` (Mironov 2017, Def. 3);
* the accountant's (ε, δ) end to end against the Gaussian's *exact* privacy profile
  ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` (Balle & Wang 2018, Thm. 8): a conversion of a
  valid Rényi curve can never claim less than the exact δ at its ε, nor an ε below the exact
  ε at its δ.  At σ = 0.5 the optimal order is small, where the (α − 1) in the conversions
  matters most.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from dpcert.accounting import GaussianEvent, LaplaceEvent, RDPAccountant
from dpcert.accounting.rdp import rdp_of

mpmath.mp.dps = 40


def numeric_laplace_renyi(eps0: float, alpha: float) -> float:
    """D_α(Lap(0, 1/ε₀) ‖ Lap(1, 1/ε₀)) by quadrature (split at the kinks 0 and 1)."""
    b = 1 / mpmath.mpf(eps0)
    a = mpmath.mpf(alpha)

    def f(x: mpmath.mpf) -> mpmath.mpf:
        p = mpmath.exp(-abs(x) / b) / (2 * b)
        q = mpmath.exp(-abs(x - 1) / b) / (2 * b)
        return p**a * q ** (1 - a)

    total = mpmath.quad(f, [-mpmath.inf, 0, 1, mpmath.inf])
    return float(mpmath.log(total) / (a - 1))


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
def test_laplace_curve_is_the_numerically_integrated_renyi_divergence(eps0: float) -> None:
    orders = np.array([1.25, 1.5, 2.0, 3.0, 8.0, 32.0])
    got = rdp_of(LaplaceEvent(1 / eps0), orders)
    for a, g in zip(orders, got, strict=True):
        ref = min(numeric_laplace_renyi(eps0, float(a)), eps0)  # D_α ≤ D_∞ = ε₀
        assert ref <= g <= ref * (1 + 1e-8) + 1e-12, (a, ref, g)


def _phi(x: mpmath.mpf) -> mpmath.mpf:
    return mpmath.ncdf(x)


def exact_gaussian_delta(mu: float, eps: float) -> float:
    m, e = mpmath.mpf(mu), mpmath.mpf(eps)
    return float(_phi(-e / m + m / 2) - mpmath.exp(e) * _phi(-e / m - m / 2))


def exact_gaussian_epsilon(mu: float, delta: float) -> float:
    lo, hi = 0.0, 200.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if exact_gaussian_delta(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
    return lo


@pytest.mark.parametrize(("sigma", "k"), [(0.5, 1), (1.0, 1), (1.0, 4), (2.0, 1)])
def test_accountant_never_claims_less_than_the_exact_gaussian_profile(sigma: float,
                                                                     k: int) -> None:
    acc = RDPAccountant().compose(GaussianEvent(sigma), k)
    mu = k**0.5 / sigma  # k Gaussians of σ are one of σ/√k
    for delta in (1e-3, 1e-6, 1e-10):
        exact = exact_gaussian_epsilon(mu, delta)
        got = acc.epsilon(delta)
        assert exact <= got <= exact * 1.25 + 0.1, (delta, exact, got)
    for eps in (1.0, 2.0, 4.0, 8.0, 12.0):
        exact = exact_gaussian_delta(mu, eps)
        got = acc.delta(eps)
        assert got >= exact * (1 - 1e-9), (eps, exact, got)
