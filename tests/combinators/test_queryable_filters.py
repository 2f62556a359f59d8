"""Filters keep (ε, δ) budgets with the tight filter of dpcert.accounting (issue 15)."""

from __future__ import annotations

from fractions import Fraction

import pytest

import dpcert as dp
from dpcert.errors import BudgetExceeded

SPACE = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())


def _batch_of_counts(n: int) -> dp.Measurement:
    count = SPACE >> dp.t.then_count() >> dp.m.then_laplace(10.0)
    return dp.c.make_composition([count] * n)


def test_approx_filter_charges_a_declared_batch_by_its_pld() -> None:
    batch = _batch_of_counts(100)
    assert batch.map(1) == Fraction(10)  # basic composition
    budget = dp.ApproxDP(5, 1e-6)
    q = dp.c.make_filter(*SPACE, budget=budget)([1.0, 2.0])
    out = q(dp.c.make_pureDP_to_approxDP(batch))
    assert len(out) == 100
    eps, delta = q.spent
    assert 4.6 < float(eps) <= 4.8 and delta == Fraction(1, 10**6)
    with pytest.raises(BudgetExceeded, match="remains"):
        q(dp.c.make_pureDP_to_approxDP(_batch_of_counts(100)))
    assert len(q.log) == 1


def test_pure_filter_is_unchanged() -> None:
    count = SPACE >> dp.t.then_count() >> dp.m.then_laplace(4.0)
    q = dp.c.make_filter(*SPACE, budget=dp.PureDP(0.5))([1.0])
    q(count)
    q(count)
    assert q.spent == Fraction(1, 2) and q.remaining == 0
    with pytest.raises(BudgetExceeded):
        q(count)


@pytest.mark.parametrize("d_in", [2, 3])
def test_odometer_records_each_map_at_its_d_in(d_in: int) -> None:
    """An odometer at d_in charges every query its map at d_in (clamp with L = −3 < 0, U = 5:
    the integer sum moves by 5·d_in, Laplace at scale 4 is 5·d_in/4-DP; Gaussian at scale 4 is
    (5·d_in)²/32-zCDP) and sums them exactly; no budget, nothing remaining."""
    space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    t = space >> dp.t.then_clamp(-3, 5) >> dp.t.then_sum()
    lap = t >> dp.m.then_laplace(4)
    assert lap.map(d_in) == Fraction(5 * d_in, 4)
    odo = dp.c.make_odometer([1, -7, 9], *space, dp.PureDP(), d_in=d_in)
    assert odo.spent == 0
    for i in (1, 2, 3):
        odo(lap)
        assert odo.spent == i * Fraction(5 * d_in, 4)
    assert odo.remaining is None
    gauss = t >> dp.m.then_gaussian(4)
    zodo = dp.c.make_odometer([1, -7, 9], *space, dp.ZCDP(), d_in=d_in)
    zodo(gauss)
    zodo(gauss)
    assert zodo.spent == 2 * Fraction(25 * d_in * d_in, 32) == 2 * gauss.map(d_in)
