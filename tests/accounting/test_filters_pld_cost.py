"""The filters ask the PLD accountant only when its work is bounded (issue 37, item 4).

The exact discrete pairs have one atom per lattice unit of sensitivity, so their cost grows with
ε at a fixed noise scale; beyond ``_PLD_MAX_ATOMS`` atoms a filter charges the event's own
statement, which is sound because the PLD is only ever used when it is smaller
(``docs/proofs/filters.md``).  Values only: no duration is asserted.
"""

from __future__ import annotations

from fractions import Fraction

import polars as pl

import dpcert as dp
from dpcert.accounting import filters
from dpcert.core.events import (
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    PureEvent,
)


def test_atoms_count_distinct_leaves_once() -> None:
    a = DiscreteLaplaceEvent(scale=Fraction(2**20), sensitivity=Fraction(2**10))
    g = DiscreteGaussianEvent(sigma=Fraction(10), sensitivity=Fraction(3))
    assert filters._pld_atoms(a) == 2**10 + 1
    assert filters._pld_atoms(ComposedEvent([a, a, g])) == 2**10 + 1 + 301 + 3


def test_structured_only_within_the_atom_cap() -> None:
    small = DiscreteLaplaceEvent(scale=Fraction(2**20), sensitivity=Fraction(2**10))
    big = DiscreteLaplaceEvent(scale=Fraction(2**20), sensitivity=Fraction(2**22))
    assert filters._structured(ComposedEvent([small, small]))
    assert not filters._structured(ComposedEvent([big, big]))
    assert not filters._structured(ComposedEvent([PureEvent(epsilon=Fraction(1))]))


def _batch_spent(eps: float, agg: object = None, n: int = 2) -> object:
    df = pl.DataFrame({"pid": [1, 2, 3, 4], "region": ["n", "s", "n", "s"],
                       "income": [10.0, 20.0, 30.0, 40.0]})
    sess = dp.Session(df, privacy_unit="pid", budget=dp.ApproxDP(1e12, 1e-3))
    q = (sess.query().group_by("region", keys=["n", "s"])
         .agg(agg if agg is not None else dp.variance("income", bounds=(0, 100)))
         .bound_contributions(max_groups=1, max_rows_per_group=1))
    sess.release_all([(q, dp.ApproxDP(eps, 1e-6))] * n)
    return sess.spent


def test_batches_keep_the_pld_gain_where_affordable_and_the_statement_beyond() -> None:
    eps, delta = _batch_spent(0.1, dp.count(), 30)  # type: ignore[misc]
    assert eps < 3 and delta == Fraction(1, 1000)  # the PLD beat basic composition
    # a fixed-point sum's sensitivity is about 2**20 lattice units: beyond the atom cap, so the
    # batch is charged its statement (basic composition) at any ε
    assert _batch_spent(1.0) == (Fraction(2), Fraction(0))
    assert _batch_spent(1e9) == (Fraction(2 * 10**9), Fraction(0))
