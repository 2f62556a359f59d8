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
