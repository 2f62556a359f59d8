"""Group privacy (``dpcert.combinators.group``) against mechanisms whose own map at d = k is
exact: the group bound from d = 1 can never be below it (Dwork & Roth 2014, Thm 2.2; Bun &
Steinke 2016, Prop. 1.9: ρ-zCDP gives k²ρ for groups of k)."""

from __future__ import annotations

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
