"""``dpcert.accounting.pure``: replace-one ε of a Poisson-subsampled ε-DP event and k-fold
composition, against 40-digit references (Balle, Barthe & Gaboardi 2018, Thm 9 / Table 1;
docs/proofs/amplification.md)."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpcert.accounting import PoissonSampledEvent, PureEvent
from dpcert.accounting.pure import epsilon_of, poisson_replace_one_epsilon
from dpcert.core.events import ComposedEvent, SelfComposedEvent

mpmath.mp.dps = 40


def ref_replace_one(eps: float, q: float) -> float:
    e, r = mpmath.mpf(eps), mpmath.mpf(q)
    return float(mpmath.log((1 - r + r * mpmath.exp(e)) / (1 - r + r * mpmath.exp(-e))))


@pytest.mark.parametrize("eps", [Fraction(1, 10), Fraction(1), Fraction(3)])
def test_unsampled_replace_one_is_twice_epsilon(eps: Fraction) -> None:
    """At rate 1 a replacement is a removal then an addition: exactly 2ε (group of 2)."""
    assert poisson_replace_one_epsilon(PoissonSampledEvent(PureEvent(eps), 1)) == 2 * eps


@pytest.mark.parametrize(("eps", "q"), [(1.0, 0.1), (0.5, 0.01), (3.0, 0.5), (1.0, 0.999999)])
def test_replace_one_matches_the_closed_form_rounded_up(eps: float, q: float) -> None:
    got = float(poisson_replace_one_epsilon(PoissonSampledEvent(PureEvent(eps), q)))
    ref = ref_replace_one(eps, q)
    assert ref <= got <= ref * (1 + 1e-9) + 1e-15
    assert got <= 2 * eps  # never worse than the unsampled group bound


def test_k_fold_pure_events_add_up() -> None:
    assert epsilon_of(SelfComposedEvent(PureEvent(Fraction(1, 3)), 6)) == 2
    assert epsilon_of(ComposedEvent([PureEvent(Fraction(1, 4)),
                                     SelfComposedEvent(PureEvent(Fraction(1, 8)), 4)])) == \
        Fraction(3, 4)
