"""Composition, filters, parallel composition, group privacy and conversions."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import numpy as np
import pytest

import dpcert as dp
from dpcert.accounting import PLDAccountant
from dpcert.errors import BudgetExceeded, InvalidParameter, MeasureMismatch, MetricMismatch
from dpcert.transformations.partition import PartitionDistance, make_partition, then_partition

SPACE = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())


def _count(scale: float) -> dp.Measurement:
    return SPACE >> dp.t.then_count() >> dp.m.then_laplace(scale)  # type: ignore[return-value]


def _zcdp(eps: Fraction) -> dp.Measurement:
    return dp.Measurement(SPACE[0], SPACE[1], dp.ZCDP(), function=len,
                          privacy_map=lambda d: eps * d, name="z")


def test_composition_sums_and_carries_events() -> None:
    a, b = _count(4.0), _count(2.0)
    m = dp.c.make_composition([a, b])
    assert m.map(1) == a.map(1) + b.map(1)
    assert m.map(2) == a.map(2) + b.map(2)
    out = m([1.0, 2.0, 3.0])
    assert len(out) == 2
    acc = PLDAccountant().compose(m.event(1))
    assert acc.epsilon(1e-6) <= float(m.map(1)) + 1e-9
    z = dp.c.make_composition([_zcdp(Fraction(1, 8)), _zcdp(Fraction(1, 4))])
    assert z.map(1) == Fraction(3, 8)


def test_composition_refuses_mixed_spaces() -> None:
    with pytest.raises(MeasureMismatch):
        dp.c.make_composition([_count(1.0), _zcdp(Fraction(1))])
    other = (dp.VectorDomain(dp.AtomDomain(float)), dp.InsertDeleteDistance())
    with pytest.raises(MetricMismatch):
        dp.c.make_composition([_count(1.0), other >> dp.t.then_count() >> dp.m.then_laplace(1.0)])
    with pytest.raises(InvalidParameter):
        dp.c.make_composition([])


def test_filter_charges_before_running_and_refuses() -> None:
    filt = dp.c.make_filter(*SPACE, budget=dp.PureDP(1.0))
    assert filt.map(1) == 1
    q = filt([1.0, 2.0])
    ran: list[object] = []
    spy = _count(2.0) >> (lambda x: ran.append(x) or x)
    q(spy)
    q(spy)
    assert len(ran) == 2
    with pytest.raises(BudgetExceeded, match="remains"):
        q(spy)
    assert len(ran) == 2  # the refused query never ran
    assert q.spent <= 1 and q.remaining == 1 - q.spent
    with pytest.raises(MeasureMismatch):
        q(_zcdp(Fraction(1, 100)))
    with pytest.raises(InvalidParameter):
        filt.map(2)


def test_approx_filter_and_odometer() -> None:
    q = dp.c.make_filter(*SPACE, budget=dp.ApproxDP(1.0, 1e-6))([1.0])
    assert q.remaining == (Fraction(1), Fraction(1, 10**6))
    odo = dp.c.make_odometer([1.0, 2.0], *SPACE, dp.PureDP())
    for _ in range(10):
        odo(_count(1.0))
    assert odo.spent >= 10


def test_partition_and_parallel_composition() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    part = space >> then_partition(by=lambda x: x % 3, keys=[0, 1, 2])
    assert [p.tolist() for p in part([1, 2, 3, 4, 5, 6, 7])] == [[3, 6], [1, 4, 7], [2, 5]]
    assert part.map(1) == (1, 1, 1) and part.map(5) == (3, 5, 5)
    inner = (part.output_domain.inner, dp.SymmetricDistance())
    ms = [inner >> dp.t.then_count() >> dp.m.then_laplace(s) for s in (1.0, 2.0, 4.0)]
    par = dp.c.make_parallel_composition(part.output_domain, part.output_metric, ms)
    m = part >> par
    assert m.map(1) == max(x.map(1) for x in ms)
    assert m.map(2) == 2 * max(x.map(2) for x in ms)
    assert len(m([1, 2, 3])) == 3
    # Brute force: one added record changes exactly one part by one.
    metric = PartitionDistance()
    data = [1, 2, 3, 4, 5]
    for extra in range(6):
        d = metric.distance(part(data), part([*data, extra]))
        assert d == (1, 1, 1)
    with pytest.raises(InvalidParameter):
        make_partition(*space, by=lambda x: x, keys=[0, 0])
    with pytest.raises(InvalidParameter):
        dp.c.make_parallel_composition(part.output_domain, part.output_metric, ms[:2])


def test_group_privacy() -> None:
    assert dp.c.group_privacy_map(dp.PureDP(), Fraction(1, 2), 4) == 2
    assert dp.c.group_privacy_map(dp.ZCDP(), Fraction(1, 2), 3) == Fraction(9, 2)
    for k, (e, d) in product((1, 2, 5), ((Fraction(1, 10), Fraction(1, 10**6)),
                                          (Fraction(1), Fraction(1, 10**9)))):
        ge, gd = dp.c.group_privacy_map(dp.ApproxDP(), (e, d), k)
        assert ge == k * e
        exact = float(d) * sum(math.exp(i * float(e)) for i in range(k))
        # float(d) may lie an ulp above d: the rigorous bound at k = 1 is d itself
        assert exact * (1 - 1e-12) <= gd <= k * math.exp((k - 1) * float(e)) * float(d) * (1 + 1e-9)
    g = dp.c.make_group_privacy(_count(2.0))
    assert g.map(3) == 3 * _count(2.0).map(1)
    with pytest.raises(MeasureMismatch):
        dp.c.group_privacy_map(dp.RenyiDP(), dp.RenyiDP().zero(), 2)


def test_conversions() -> None:
    m = _count(2.0)
    z = dp.c.make_pureDP_to_zCDP(m)
    assert z.map(1) == m.map(1) ** 2 / 2
    a = dp.c.make_zCDP_to_approxDP(_zcdp(Fraction(1, 2)), 1e-6)
    eps, delta = a.map(1)
    from dpcert.accounting import ZCDPAccountant, ZCDPEvent

    assert delta == Fraction(1, 10**6)
    assert float(eps) >= ZCDPAccountant().compose(ZCDPEvent(0.5)).epsilon(1e-6) - 1e-9
    assert float(eps) < 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
    rdp_m = dp.Measurement(SPACE[0], SPACE[1], dp.RenyiDP(), function=len,
                           privacy_map=lambda d: dp.RenyiCurve.constant_rho(Fraction(1, 2)))
    e2, _ = dp.c.make_renyiDP_to_approxDP(rdp_m, 1e-6).map(1)
    assert float(e2) >= float(eps) - 1e-9  # coarser orders can only be looser than CKS20
    with pytest.raises(MeasureMismatch):
        dp.c.make_zCDP_to_approxDP(m, 1e-6)
    with pytest.raises(InvalidParameter):
        dp.c.make_zCDP_to_approxDP(_zcdp(Fraction(1)), 0)


def _brute_delta(e: float, k: int, eps_prime: float) -> float:
    """δ of k-fold ε-randomized response at ε' by enumerating outcomes."""
    p = math.exp(e) / (1 + math.exp(e))
    total = 0.0
    for ones in range(k + 1):
        pp = math.comb(k, ones) * p**ones * (1 - p) ** (k - ones)
        qq = math.comb(k, ones) * (1 - p) ** ones * p ** (k - ones)
        total += max(0.0, pp - math.exp(eps_prime) * qq)
    return total


def test_optimal_and_advanced_composition() -> None:
    for e, k, ep in ((0.5, 5, 1.0), (0.1, 30, 0.8), (1.0, 3, 0.0)):
        truth = _brute_delta(e, k, ep)
        got = float(dp.c.optimal_composition_delta(e, 0, k, ep))
        assert truth <= got <= truth * (1 + 1e-8) + 1e-15
    eps = dp.c.optimal_composition_epsilon(0.1, 0, 100, 1e-6)
    adv, _ = dp.c.advanced_composition(0.1, 0, 100, 1e-6)
    assert eps < adv < 10  # optimal is tighter than advanced, both beat basic composition
    assert dp.c.optimal_composition_delta(0.1, 0, 100, eps) <= Fraction(1, 10**6)
    m = dp.c.make_advanced_composition(_count(10.0), 50, 1e-6)
    e1, d1 = m.map(1)
    assert d1 == Fraction(1, 10**6) and float(e1) < 50 * float(_count(10.0).map(1))
    mo = dp.c.make_optimal_composition(_count(10.0), 50, 1e-6)
    e2, d2 = mo.map(1)
    assert e2 <= e1 and d2 == Fraction(1, 10**6)
    assert len(mo(np.array([1.0]))) == 50


def test_parallel_composition_of_approx_parts_takes_the_worst_epsilon_and_delta() -> None:
    """(ε, δ) parts: one changed part costs (max ε, max δ) taken coordinate-wise -- the largest
    δ here belongs to a part that is neither first nor the one with the largest ε."""
    space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    part = space >> then_partition(by=lambda x: x % 3, keys=[0, 1, 2])
    inner = (part.output_domain.inner, dp.SymmetricDistance())
    params = [(Fraction(1), Fraction(1, 10**9)), (Fraction(1, 4), Fraction(1, 10**6)),
              (Fraction(1, 2), Fraction(1, 10**8))]
    ms = [inner >> dp.m.then_partition_selection(e, d) for e, d in params]
    par = dp.c.make_parallel_composition(part.output_domain, part.output_metric, ms)
    assert par.map((1, 1, 1)) == (Fraction(1), Fraction(1, 10**6))
    e2, d2 = par.map((2, 2, 1))  # two parts changed: basic composition of two worst parts
    assert (e2, d2) == (Fraction(2), Fraction(2, 10**6))
