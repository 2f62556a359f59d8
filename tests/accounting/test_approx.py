"""``dpcert.accounting.approx``: exact basic composition of (ε, δ) leaves, k-fold repeats and
subsampled events (Dwork & Roth 2014, Thm 3.16; Balle, Barthe & Gaboardi 2018, Thm 8)."""

from __future__ import annotations

from fractions import Fraction

from dpcert.accounting import ApproxEvent, PoissonSampledEvent, PureEvent
from dpcert.accounting.approx import ApproxAccountant, approx_of
from dpcert.accounting.pure import amplify_epsilon
from dpcert.core.events import ComposedEvent, SelfComposedEvent

E, D = Fraction(1, 10), Fraction(1, 10**6)


def test_k_fold_events_count_epsilon_and_delta_k_times() -> None:
    assert approx_of(SelfComposedEvent(ApproxEvent(E, D), 7)) == (7 * E, 7 * D)
    acc = ApproxAccountant().compose(ApproxEvent(E, D), 5)
    assert acc.total == (5 * E, 5 * D)
    both = ComposedEvent([ApproxEvent(E, D), SelfComposedEvent(ApproxEvent(2 * E, 3 * D), 4)])
    assert approx_of(both) == (9 * E, 13 * D)


def test_delta_is_capped_at_one() -> None:
    assert approx_of(SelfComposedEvent(ApproxEvent(E, Fraction(1, 3)), 4)) == (4 * E, 1)


def test_subsampled_event_scales_delta_by_the_rate() -> None:
    q = Fraction(1, 10)
    e, d = approx_of(PoissonSampledEvent(ApproxEvent(1, D), q))
    assert d == q * D
    assert e == amplify_epsilon(Fraction(1), q)
    assert approx_of(PoissonSampledEvent(PureEvent(1), q))[1] == 0
