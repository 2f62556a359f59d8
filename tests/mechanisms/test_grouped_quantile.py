"""make_grouped_quantile: the map, the exact permute-and-flip distribution, bad input."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpcert.backends.base import GroupedStats, StatSpec
from dpcert.core.frames import GroupDistance, GroupedDomain
from dpcert.errors import DomainMismatch, InvalidParameter
from dpcert.mechanisms.grouped_quantile import make_grouped_quantile

SPEC = StatSpec("h", "at_most", "x", Fraction(0), Fraction(10), candidates=(4, 10))


def test_map() -> None:
    dom = GroupedDomain(("g",), ("h",), None)
    m = make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 4), scale=6)
    assert m.map((1, 2, 3)) == Fraction(2 * 2 * 3 * 3, 6)  # l0·2·l∞·max(a, b−a)/s


def test_two_candidate_distribution_is_permute_and_flip() -> None:
    """cum = [5, 10], n = 10, median: utilities 0 and −10 (gap 10), s = 10: the worse
    candidate wins w.p. e^{-1}/2 = 0.184 exactly; 40 000 groups, 6 s.d. (a plain exponential
    mechanism, e^{-1}/(1+e^{-1}) = 0.269, fails)."""
    k = 40_000
    dom = GroupedDomain(("g",), ("h",), None)
    m = make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 2), scale=10)
    grouped = GroupedStats([(i,) for i in range(k)], {"h": np.tile([5, 10], (k, 1))})
    rate = float(np.mean(m(grouped) == 1))
    p = math.exp(-1) / 2
    assert abs(rate - p) < 6 * math.sqrt(p * (1 - p) / k)


def test_bad_input() -> None:
    dom = GroupedDomain(("g",), ("h",), None)
    with pytest.raises(InvalidParameter, match="at_most"):
        make_grouped_quantile(dom, GroupDistance(), StatSpec("h", "count"), Fraction(1, 2), 1)
    with pytest.raises(DomainMismatch):
        make_grouped_quantile(GroupedDomain(("g",), ("z",), None), GroupDistance(), SPEC,
                              Fraction(1, 2), 1)
    with pytest.raises(InvalidParameter, match="level"):
        make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(3, 2), 1)
