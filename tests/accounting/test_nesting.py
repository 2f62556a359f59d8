"""Issue 19.2: events carry their neighbouring relation; only nestings with a proof are built."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import dpcert as dp
from dpcert.accounting import (
    ApproxAccountant,
    PLDAccountant,
    PureAccountant,
    RDPAccountant,
    ZCDPAccountant,
)
from dpcert.core.events import (
    ApproxEvent,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureEvent,
    SampledWithoutReplacementEvent,
    relation_of,
)
from dpcert.errors import InvalidParameter, UnsupportedEvent


def test_wor_around_poisson_uses_the_replace_one_guarantee() -> None:
    # Was charged log(1 + 0.01 (e − 1)) = 0.01704 (the add/remove ε of the inner Poisson event
    # amplified again); the replace-one guarantee of the Poisson event is
    # log((0.9 + 0.1e)/(0.9 + 0.1/e)) = 0.22386, amplified by 10/100: 0.02478.
    e = SampledWithoutReplacementEvent(PoissonSampledEvent(PureEvent(1), 0.1), 10, 100)
    inner = math.log((0.9 + 0.1 * math.e) / (0.9 + 0.1 / math.e))
    sound = math.log1p(0.1 * math.expm1(inner))
    got = float(PureAccountant().compose(e).total)
    assert sound <= got <= sound * (1 + 1e-9)
    assert abs(got - 0.02478) < 1e-5
    assert float(ApproxAccountant().compose(e).total[0]) == got


def test_change_one_measurement_cannot_be_poisson_sampled() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(float), size=10), dp.ChangeOneDistance())
    m = space >> dp.t.then_clamp(0.0, 1.0) >> dp.t.then_sum() >> dp.m.then_laplace(2.0)
    event = m.event(1)
    assert relation_of(event) == "replace_one"
    with pytest.raises(InvalidParameter, match="replace-one"):
        PoissonSampledEvent(event, 0.1)
    # ... while sampling without replacement accepts it.
    assert relation_of(SampledWithoutReplacementEvent(event, 5, 10)) == "replace_one"


def test_symmetric_measurement_events_are_add_remove() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
    m = space >> dp.t.then_count() >> dp.m.then_laplace(2.0)
    assert relation_of(m.event(1)) == "add_remove"
    assert relation_of(m.event(2)) is None  # not a neighbour statement
    with pytest.raises(InvalidParameter, match="add/remove"):
        SampledWithoutReplacementEvent(m.event(1), 5, 10)


def test_mixed_relations_cannot_be_composed() -> None:
    with pytest.raises(InvalidParameter, match="mix"):
        ComposedEvent([LaplaceEvent(1, neighbours="add_remove"),
                       LaplaceEvent(1, neighbours="replace_one")])


def test_shared_sample_gaussians_equal_one_gaussian() -> None:
    shared = PoissonSampledEvent(ComposedEvent([GaussianEvent(4), GaussianEvent(3)]), 0.01)
    single = PoissonSampledEvent(GaussianEvent(Fraction(12, 5)), 0.01)  # 1/√(1/16 + 1/9)
    for acc in (PLDAccountant(), RDPAccountant()):
        a = acc.compose(shared, 1000).epsilon(1e-5)
        b = acc.compose(single, 1000).epsilon(1e-5)
        assert abs(a - b) <= b * 1e-6  # the same distribution, computed two ways


def test_shared_sample_pure_and_approx() -> None:
    shared = PoissonSampledEvent(ComposedEvent([LaplaceEvent(4), LaplaceEvent(4)]), 0.1)
    expect = math.log1p(0.1 * math.expm1(0.5))
    assert abs(float(PureAccountant().compose(shared).total) - expect) < 1e-9
    pld = PLDAccountant().compose(shared, 10).epsilon(1e-6)
    assert pld <= 10 * expect + 1e-9
    mixed = PoissonSampledEvent(ComposedEvent([LaplaceEvent(4), ApproxEvent(0.5, 1e-6)]), 0.1)
    e, d = ApproxAccountant().compose(mixed).total
    assert d == Fraction(1, 10**7) and abs(float(e) - math.log1p(0.1 * math.expm1(0.75))) < 1e-9
    assert PLDAccountant().compose(mixed).epsilon(1e-6) < float(e) + 1e-4  # grid step
    with pytest.raises(UnsupportedEvent):
        ZCDPAccountant().compose(shared)
