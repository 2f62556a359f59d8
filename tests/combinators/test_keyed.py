"""Keyed release: private keys selected by the released noisy count itself."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpcert.backends.base import GroupedStats, StatSpec
from dpcert.combinators.keyed import make_keyed_release
from dpcert.core.domains import AtomDomain, VectorDomain
from dpcert.core.frames import GroupDistance, GroupedDomain
from dpcert.core.metrics import L1Distance
from dpcert.errors import DomainMismatch, InvalidParameter, MeasureMismatch
from dpcert.mechanisms.gaussian import make_gaussian
from dpcert.mechanisms.laplace import make_laplace
from dpcert.mechanisms.threshold import keyed_threshold, laplace_tail
from dpcert.transformations.frame import make_select_stat

COUNT = StatSpec("n", "count")
SUM = StatSpec("s", "fixed_sum", "x", Fraction(0), Fraction(10), exponent=0)
DOM = GroupedDomain(("g",), ("n", "s"), None)


def grouped(counts: list[int], sums: list[int]) -> GroupedStats:
    keys = [(chr(97 + i),) for i in range(len(counts))]
    return GroupedStats(keys, {"n": np.array(counts), "s": np.array(sums)})


def sum_part(scale: int) -> object:
    return make_select_stat(DOM, GroupDistance(), SUM, "L1") >> make_laplace(
        VectorDomain(AtomDomain(int)), L1Distance(), scale)


def test_threshold_is_the_smallest_meeting_delta() -> None:
    for scale, c, l0 in [(2, 1, 1), (Fraction(7, 3), 2, 3), (10, 5, 1)]:
        d = Fraction(1, 10**6)
        tau = keyed_threshold(scale, c, l0, d)
        assert l0 * laplace_tail(scale, tau - c) <= d < l0 * laplace_tail(scale, tau - 1 - c)
    # the exact tail q^m/(1+q)
    q = math.exp(-1 / 2)
    assert abs(float(laplace_tail(2, 5)) - q**5 / (1 + q)) < 1e-12


def test_map_is_composed_epsilon_and_tail_delta() -> None:
    tau = keyed_threshold(2, 3, 2, Fraction(1, 10**6))
    m = make_keyed_release(DOM, GroupDistance(), COUNT, 2, tau, {"s": sum_part(40)})
    eps, delta = m.map((1, 2, 3))
    assert eps == Fraction(2 * 3, 2) + Fraction(2 * 3 * 10, 40)
    assert delta == 2 * laplace_tail(2, tau - 3) and delta <= Fraction(1, 10**6)
    assert m.map((0, 0, 0)) == (0, 0)


def test_only_keys_over_the_threshold_are_released() -> None:
    m = make_keyed_release(DOM, GroupDistance(), COUNT, 1, 20, {"s": sum_part(5)})
    out = m(grouped([1000, 1, 500], [7, 8, 9]))
    assert out["keys"] == [("a",), ("c",)]
    assert len(out["n"]) == len(out["s"]) == 2
    assert abs(int(out["n"][0]) - 1000) < 60


def test_release_probability_of_a_lone_key_matches_the_tail() -> None:
    """A key with count 1 is released w.p. exactly P(Z ≥ τ − 1); the empirical rate over
    200 000 draws lies within 6 standard deviations (fails w.p. < 1e-8 when correct; a
    threshold one lower, rate ≈ 0.23 instead of 0.14, fails)."""
    m = make_keyed_release(DOM, GroupDistance(), COUNT, 2, 4)
    p = float(laplace_tail(2, 3))
    n = 200_000
    draws = m.sample(grouped([1], [0]), n)
    rate = sum(len(d["keys"]) for d in draws) / n
    assert abs(rate - p) < 6 * math.sqrt(p * (1 - p) / n)


def test_bad_input() -> None:
    with pytest.raises(DomainMismatch, match="private keys"):
        make_keyed_release(GroupedDomain(("g",), ("n",), (("a",),)), GroupDistance(), COUNT, 1, 5)
    with pytest.raises(InvalidParameter, match="selection statistic"):
        make_keyed_release(DOM, GroupDistance(), SUM, 1, 5)
    gauss = make_select_stat(DOM, GroupDistance(), SUM, "L2") >> make_gaussian(
        VectorDomain(AtomDomain(int)), __import__("dpcert").L2Distance(), 5)
    with pytest.raises(MeasureMismatch, match="PureDP"):
        make_keyed_release(DOM, GroupDistance(), COUNT, 1, 5, {"s": gauss})
    with pytest.raises(InvalidParameter, match="threshold"):
        make_keyed_release(DOM, GroupDistance(), COUNT, 1, 0)
