"""Accountants against exact reference values: k-ary randomized response given by probability,
and Poisson subsampling in the direction that dominates (add vs remove)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpcert.accounting import PLDAccountant, PureAccountant, ZCDPAccountant
from dpcert.core.events import PoissonSampledEvent, PureEvent, RandomizedResponseEvent


@pytest.mark.parametrize(("k", "p"), [(2, Fraction(3, 4)), (4, Fraction(7, 10)),
                                      (10, Fraction(1, 2))])
def test_randomized_response_by_probability(k: int, p: Fraction) -> None:
    # truth w.p. p, each other value w.p. (1 − p)/(k − 1): ε = log(p (k − 1)/(1 − p))
    eps = math.log(p * (k - 1) / (1 - p))
    ev = RandomizedResponseEvent(probability=p, categories=k)
    pure = float(PureAccountant().compose(ev).total)
    rho = float(ZCDPAccountant().compose(ev).rho)
    assert eps <= pure <= eps * (1 + 1e-12) + 1e-15
    assert eps * eps / 2 <= rho <= eps * eps / 2 * (1 + 1e-11)
    by_eps = ZCDPAccountant().compose(RandomizedResponseEvent(epsilon=Fraction(eps),
                                                              categories=k)).rho
    assert float(by_eps) == pytest.approx(rho, rel=1e-9)


def _exact_subsampled_rr_deltas(eps0: float, q: float, n: int, eps: float) -> tuple[float, float]:
    """δ(ε) of n-fold Poisson-subsampled ε0-RR, (remove, add), by enumerating the binomial."""
    a = math.exp(eps0) / (1 + math.exp(eps0))
    p1, q1 = a, 1 - a                   # P(output 1) with / without the record
    m1 = q * p1 + (1 - q) * q1          # the subsampled mixture
    j = np.arange(n + 1)
    binom = np.array([math.comb(n, int(i)) for i in j], dtype=float)
    mix = binom * m1**j * (1 - m1) ** (n - j)
    base = binom * q1**j * (1 - q1) ** (n - j)
    e = math.exp(eps)
    remove = float(np.maximum(mix - e * base, 0).sum())
    add = float(np.maximum(base - e * mix, 0).sum())
    return remove, add


@pytest.mark.parametrize(("n", "eps"), [(10, 0.5), (10, 0.1), (1, 0.5), (10, 1.0)])
def test_pld_poisson_subsampling_takes_the_worse_direction(n: int, eps: float) -> None:
    remove, add = _exact_subsampled_rr_deltas(2.0, 0.5, n, eps)
    acc = PLDAccountant().compose(PoissonSampledEvent(PureEvent(2), Fraction(1, 2)), n)
    got = acc.delta(eps)
    assert got >= max(remove, add) - 1e-12
    assert got <= max(remove, add) + 2e-3
    if (n, eps) == (10, 0.5):
        assert add > remove + 0.01  # here "add" dominates: a remove-only accountant is unsound
