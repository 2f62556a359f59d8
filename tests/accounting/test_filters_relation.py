"""One neighbouring relation per privacy filter (``docs/proofs/filters.md``): a history mixing
releases stated for add/remove and for replace-one neighbours is refused, before anything is
charged.  The proof audit's figure: Poisson(ε = 1, q = 0.1) (add/remove) then
without-replacement (ε = 1, 10 of 100) (replace-one) was charged 0.317 where the replace-one
truth is 0.382."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import dpcert as dp
from dpcert.accounting.filters import PrivacyFilter, check_relation, history_relation
from dpcert.accounting.pure import epsilon_of
from dpcert.core.events import (
    ComposedEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureEvent,
    SampledWithoutReplacementEvent,
)
from dpcert.errors import InvalidParameter, MetricMismatch

POISSON = PoissonSampledEvent(PureEvent(1), Fraction(1, 10))  # add/remove
SWOR = SampledWithoutReplacementEvent(PureEvent(1), 10, 100)  # replace-one


def test_the_audit_figures() -> None:
    """What the mixed history was charged (the sum of the two statements) and the replace-one
    truth (Poisson's replace-one guarantee log((1-q+qe^ε)/(1-q+qe^-ε)) plus the SWOR one)."""
    charged = float(epsilon_of(ComposedEvent([POISSON])) + epsilon_of(ComposedEvent([SWOR])))
    q, e = 0.1, 1.0
    truth = math.log((1 - q + q * math.exp(e)) / (1 - q + q * math.exp(-e))) + float(
        epsilon_of(ComposedEvent([SWOR])))
    assert round(charged, 3) == 0.317 and round(truth, 3) == 0.382


@pytest.mark.parametrize("first, second", [(POISSON, SWOR), (SWOR, POISSON)])
def test_a_mixed_history_is_refused_and_nothing_is_charged(first: object,
                                                           second: object) -> None:
    f = PrivacyFilter(dp.PureDP(1))
    f.charge(first)  # type: ignore[arg-type]
    spent = f.spent
    with pytest.raises(MetricMismatch, match="nothing was charged"):
        f.quote(second)  # type: ignore[arg-type]
    with pytest.raises(MetricMismatch, match="nothing was charged"):
        f.charge(second)  # type: ignore[arg-type]
    assert f.spent == spent and len(f.releases) == 1


def test_a_declared_relation_refuses_the_other_from_the_first_release() -> None:
    f = PrivacyFilter(dp.ZCDP(1), relation="replace_one")
    assert f.relation == "replace_one"
    with pytest.raises(MetricMismatch):
        f.charge(LaplaceEvent(10, neighbours="add_remove"))
    assert f.releases == () and f.spent == 0
    with pytest.raises(InvalidParameter):
        PrivacyFilter(dp.ZCDP(1), relation="replace")


def test_unstated_releases_take_the_filters_relation() -> None:
    f = PrivacyFilter(dp.PureDP(2))
    f.charge(PureEvent(Fraction(1, 4)))  # unstated: does not fix the relation
    assert f.relation is None
    f.charge(SWOR)
    assert f.relation == "replace_one"
    f.charge(PureEvent(Fraction(1, 4)))  # still admitted: the caller's statement for it
    assert len(f.releases) == 3
    assert history_relation([PureEvent(1)], "add_remove") == "add_remove"
    check_relation(None, SWOR, "x")  # nothing fixed yet: admitted
