"""Clopper–Pearson bounds against SciPy and exact binomial tails."""

from __future__ import annotations

import math

import pytest

from dpcert.audit.kernel import bounds
from dpcert.errors import InvalidParameter

CASES = [(50, 100, 0.025), (1, 10**6, 1e-3), (3, 10, 0.05), (999_999, 10**6, 1e-3),
         (68_000, 10**6, 1e-4), (500_000, 10**7, 1e-6), (7, 20, 0.3), (1, 1, 0.05)]


@pytest.mark.parametrize(("k", "n", "alpha"), CASES)
def test_cp_matches_scipy_and_is_conservative(k: int, n: int, alpha: float) -> None:
    beta = pytest.importorskip("scipy.stats").beta
    lo, hi = bounds.cp_lower(k, n, alpha), bounds.cp_upper(k, n, alpha)
    exact_lo = beta.ppf(alpha, k, n - k + 1)
    exact_hi = 1.0 if k == n else beta.ppf(1 - alpha, k + 1, n - k)
    assert lo <= exact_lo and lo >= exact_lo * (1 - 1e-8)
    assert hi >= exact_hi and hi <= exact_hi * (1 + 1e-8) + 1e-300


def test_cp_edges_are_closed_forms() -> None:
    assert bounds.cp_lower(0, 10, 0.05) == 0.0
    assert bounds.cp_upper(10, 10, 0.05) == 1.0
    assert bounds.cp_upper(0, 100, 0.05) >= 1 - 0.05 ** (1 / 100)
    assert bounds.cp_lower(100, 100, 0.05) <= 0.05 ** (1 / 100)


def test_cp_lower_inverts_the_binomial_tail_exactly() -> None:
    # P_p[K >= k] at p = cp_lower must be <= alpha (that is what makes the bound valid).
    k, n, alpha = 4, 30, 0.05
    p = bounds.cp_lower(k, n, alpha)
    tail = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))
    assert tail <= alpha


def test_betainc_symmetry_and_known_value() -> None:
    assert bounds.betainc(2.0, 3.0, 0.4) == pytest.approx(0.5248, abs=1e-12)
    for a, b, x in [(0.5, 7.0, 0.2), (30.0, 2.5, 0.9), (1e4, 2e4, 0.33)]:
        assert bounds.betainc(a, b, x) + bounds.betainc(b, a, 1 - x) == pytest.approx(1.0)


def test_epsilon_and_delta_from_bounds() -> None:
    assert bounds.epsilon_lower(0.3, 0.1) <= math.log(3)
    assert bounds.epsilon_lower(0.3, 0.1) == pytest.approx(math.log(3))
    assert bounds.epsilon_lower(0.1, 0.2, delta=0.2) == -math.inf
    assert bounds.epsilon_lower(0.1, 0.0) == math.inf
    assert bounds.delta_lower(0.5, 0.1, math.log(2)) == pytest.approx(0.3)
    assert bounds.delta_lower(0.1, 0.5, 1.0) == 0.0


@pytest.mark.parametrize(("call", "message"), [
    (lambda: bounds.cp_lower(5, 4, 0.05), "k=5 must be <= n=4"),
    (lambda: bounds.cp_upper(1, 4, 1.5), "alpha=1.5 must be in (0, 1)"),
    (lambda: bounds.cp_lower(1, 0, 0.05), "n=0 must be >= 1"),
    (lambda: bounds.per_bound_alpha(1.0, 2), "confidence=1.0 must be in (0, 1)"),
    (lambda: bounds.betainc(-1.0, 1.0, 0.5), "a=-1.0"),
])
def test_bad_arguments_name_themselves(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidParameter, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
