"""Group privacy (``dpcert.combinators.group``) against mechanisms whose own map at d = k is
exact: the group bound from d = 1 can never be below it (Dwork & Roth 2014, Thm 2.2; Bun &
Steinke 2016, Prop. 1.9: ρ-zCDP gives k²ρ for groups of k)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import dpcert as dp


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_group_bound_covers_the_gaussians_own_map(k: int) -> None:
    g = dp.m.make_gaussian(dp.AtomDomain(int), dp.AbsoluteDistance(), 3)  # ρ(d) = d²/18
    assert g.map(k) == Fraction(k * k, 18)
    assert dp.c.group_privacy_map(dp.ZCDP(), g.map(1), k) >= g.map(k)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_group_bound_covers_the_laplaces_own_map(k: int) -> None:
    lap = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), 4)  # ε(d) = d/4
    assert dp.c.group_privacy_map(dp.PureDP(), lap.map(1), k) >= lap.map(k) == Fraction(k, 4)


def _leaky_chain(eps: float, delta: float, k: int) -> list[list[float]]:
    """Output PMFs of a mechanism on the datasets 0, 1, …, k (neighbours: j and j + 1) that
    is exactly (ε, δ)-DP for neighbours and attains δ·Σ_{i<k} e^{iε} at distance k.

    Outcomes z_1 … z_k and a bulk B: dataset j puts δ·e^{(i−1−j)ε} on z_i for i > j and 0 for
    i ≤ j.  Between j and j + 1 every z_i with i > j + 1 has ratio exactly e^ε and z_{j+1} loses
    δ, so δ(ε) = δ; between 0 and k all of z_1 … z_k are lost: δ(kε) = δ Σ_i e^{(i−1)ε}
    (the tightness example of group privacy, Vadhan 2017, Lemma 2.2)."""
    pmfs = []
    for j in range(k + 1):
        z = [delta * math.exp((i - 1 - j) * eps) if i > j else 0.0 for i in range(1, k + 1)]
        pmfs.append([*z, 1.0 - sum(z)])
    return pmfs


def _hockey(p: list[float], q: list[float], eps: float) -> float:
    return sum(max(0.0, a - math.exp(eps) * b) for a, b in zip(p, q, strict=True))


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize(("eps", "delta"), [(Fraction(1, 2), Fraction(1, 1000)),
                                            (Fraction(1), Fraction(1, 10**6))])
def test_approx_group_bound_covers_a_mechanism_whose_group_loss_is_attained(
        k: int, eps: Fraction, delta: Fraction) -> None:
    e, d = float(eps), float(delta)
    pmfs = _leaky_chain(e, d, k)
    for j in range(k):  # the mechanism really is (ε, δ)-DP for neighbours, both directions
        assert _hockey(pmfs[j], pmfs[j + 1], e) <= d * (1 + 1e-12)
        assert _hockey(pmfs[j + 1], pmfs[j], e) <= d * (1 + 1e-12)
    attained = max(_hockey(pmfs[0], pmfs[k], k * e), _hockey(pmfs[k], pmfs[0], k * e))
    assert attained >= d * sum(math.exp(i * e) for i in range(k)) * (1 - 1e-12)
    ge, gd = dp.c.group_privacy_map(dp.ApproxDP(), (eps, delta), k)
    assert ge == k * eps
    assert float(gd) >= attained * (1 - 1e-12)
    assert float(gd) <= attained * (1 + 1e-9)  # and the bound is tight for this mechanism
