"""``dpcert.accounting._pld_pairs`` (Poisson subsampling, both directions) against a brute-force
hockey-stick divergence computed from the two output PMFs of a k-fold composition.

The (ε₀, δ₀)-DP dominating pair (Kairouz, Oh & Viswanath 2015) on four outcomes (⊤, a, b, ⊥):
``P = (δ₀, (1−δ₀)e^ε₀/(1+e^ε₀), (1−δ₀)/(1+e^ε₀), 0)``, ``Q`` the mirror image.  Poisson
subsampling with rate q gives the mixture ``M = qP + (1−q)Q``; neighbours in the "remove"
direction see (M ‖ Q), in the "add" direction (Q ‖ M) (Zhu, Dong & Wang 2022, Prop. 30).  The
k-fold composition is the product law on 4^k outcomes, and δ(ε) = Σ max(0, A − e^ε B) is summed
over them directly -- no privacy loss distribution, no grid, no FFT.  The PLD accountant's δ(ε)
must cover the larger direction, and (being tight up to its grid step) come close to it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcert.accounting import PLDAccountant
from dpcert.core.events import ApproxEvent, PoissonSampledEvent

Array = np.ndarray


def _pair(eps0: float, delta0: float) -> tuple[Array, Array]:
    a = (1 - delta0) * math.exp(eps0) / (1 + math.exp(eps0))
    b = (1 - delta0) / (1 + math.exp(eps0))
    return np.array([delta0, a, b, 0.0]), np.array([0.0, b, a, delta0])


def _power(v: Array, k: int) -> Array:
    out = np.ones(1)
    for _ in range(k):
        out = np.outer(out, v).ravel()
    return out


def _hockey(a: Array, b: Array, eps: float) -> float:
    return float(np.maximum(a - math.exp(eps) * b, 0.0).sum())


def brute_deltas(eps0: float, delta0: float, q: float, k: int, eps: float) -> tuple[float, float]:
    """(remove, add) δ(ε) of the k-fold Poisson-subsampled (ε₀, δ₀) pair, by enumeration."""
    p, qq = _pair(eps0, delta0)
    m = q * p + (1 - q) * qq
    mk, qk = _power(m, k), _power(qq, k)
    return _hockey(mk, qk, eps), _hockey(qk, mk, eps)


def brute_epsilon(eps0: float, delta0: float, q: float, k: int, delta: float) -> float:
    """The smallest ε with max(remove, add) δ(ε) ≤ ``delta`` (bisection; δ(ε) is decreasing)."""
    lo, hi = 0.0, k * eps0 + 1.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if max(brute_deltas(eps0, delta0, q, k, mid)) > delta:
            lo = mid
        else:
            hi = mid
    return hi


CASES = [  # (ε₀, δ₀, q, k): "add" dominates at small ε in the first two, "remove" elsewhere
    (2.0, 0.0, 0.5, 3),
    (2.0, 1e-3, 0.5, 3),
    (1.0, 1e-2, 0.3, 2),
    (3.0, 0.05, 0.5, 2),
]


@pytest.mark.parametrize(("eps0", "delta0", "q", "k"), CASES)
def test_subsampled_delta_covers_the_brute_force_hockey_stick_of_both_directions(
        eps0: float, delta0: float, q: float, k: int) -> None:
    acc = PLDAccountant().compose(PoissonSampledEvent(ApproxEvent(eps0, delta0), q), k)
    for eps in (0.0, 0.3, 0.7, 1.5, 3.0):
        remove, add = brute_deltas(eps0, delta0, q, k, eps)
        got = acc.delta(eps)
        assert got >= max(remove, add) * (1 - 1e-9) - 1e-12, (eps, remove, add, got)
        assert got <= max(remove, add) + 2e-3


def test_the_brute_force_reference_has_both_directions_dominating_somewhere() -> None:
    """The cases above do test both directions and the mass at +∞ (else they prove little)."""
    remove, add = brute_deltas(2.0, 1e-3, 0.5, 3, 0.3)
    assert add > remove + 0.05  # "add" dominates: a remove-only accountant is unsound here
    remove, add = brute_deltas(1.0, 1e-2, 0.3, 2, 3.0)
    assert add == 0.0 and remove >= 1 - (1 - 0.3 * 1e-2) ** 2 - 1e-15  # only the ∞-mass is left


@pytest.mark.parametrize(("eps0", "delta0", "q", "k"), CASES)
@pytest.mark.parametrize("delta", [0.1, 0.3])
def test_subsampled_epsilon_covers_the_brute_force_epsilon(
        eps0: float, delta0: float, q: float, k: int, delta: float) -> None:
    ref = brute_epsilon(eps0, delta0, q, k, delta)
    got = PLDAccountant().compose(PoissonSampledEvent(ApproxEvent(eps0, delta0), q), k).epsilon(
        delta)
    assert got >= ref * (1 - 1e-9) - 1e-9, (ref, got)
    assert got <= ref + 0.02
