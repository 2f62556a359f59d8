"""make_sum: exact sums and exact stability maps for every metric, at d_in > 1 and L ≠ 0."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcert as dp
from dpcert import errors

FLOATS = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())


@pytest.mark.parametrize(("lo", "hi", "metric", "per_unit"), [
    (0, 12, dp.SymmetricDistance(), 12),
    (-7, 2, dp.SymmetricDistance(), 7),
    (-3, 5, dp.InsertDeleteDistance(), 5),
    (-3, 5, dp.ChangeOneDistance(), 8),
    (2, 10, dp.ChangeOneDistance(), 8),
    (2, 10, dp.HammingDistance(), 8),
    (-10, -4, dp.SymmetricDistance(), 10),
])
@pytest.mark.parametrize("typ", [int, float])
def test_sum_maps_exact_at_several_distances(lo: int, hi: int, metric: dp.Metric,
                                             per_unit: int, typ: type) -> None:
    size = 4 if isinstance(metric, (dp.ChangeOneDistance, dp.HammingDistance)) else None
    space = (dp.VectorDomain(dp.AtomDomain(typ), size=size), metric)
    t = space >> dp.t.then_clamp(typ(lo), typ(hi)) >> dp.t.then_sum()
    for d in (0, 1, 2, 3, 10):
        assert t.map(d) == d * per_unit
    assert t.map(3) == 3 * per_unit  # e.g. integer sum on [0, 12]: map(3) = 36, not 12


def test_sum_needs_bounds_and_clamp_checks_types() -> None:
    with pytest.raises(errors.InvalidParameter, match="clamp first"):
        dp.t.make_sum(*FLOATS)
    with pytest.raises(errors.InvalidParameter, match="bounds reversed"):
        dp.t.make_clamp(*FLOATS, 12.0, 0.0)
    ints = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    with pytest.raises(errors.InvalidParameter, match=r"lower=0\.5"):
        dp.t.make_clamp(*ints, 0.5, 2)


def test_sum_is_exact_for_adversarial_floats() -> None:
    # naive left-to-right float summation returns 0.0 here; the exact sum is 2.0
    data = np.array([1e16, 1.0, 1.0, -1e16] * 1000 + [1.0, 1.0])
    t = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance()) >> \
        dp.t.then_clamp(-1e16, 1e16) >> dp.t.then_sum()
    assert t(data) == 2002.0
    ints = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    big = ints >> dp.t.then_clamp(-(2**62), 2**62) >> dp.t.then_sum()
    assert big(np.array([2**62] * 8, dtype=np.int64)) == 2**65


from _strategies import neighbours  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(neighbours(), st.floats(-100, 0), st.floats(0, 100))
def test_sum_stability_matches_metric(case: tuple[list[float], list[float], int],
                                      lo: float, hi: float) -> None:
    u, v, _ = case
    space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
    t = space >> dp.t.then_clamp(lo, hi) >> dp.t.then_sum()
    d_in = dp.SymmetricDistance().distance(u, v)
    exact_u = sum((Fraction(min(max(x, lo), hi)) for x in u), Fraction(0))
    exact_v = sum((Fraction(min(max(x, lo), hi)) for x in v), Fraction(0))
    assert abs(exact_u - exact_v) <= t.map(d_in)
    # the released float is the correctly rounded exact sum
    assert t(u) == float(exact_u)
    c = space >> dp.t.then_count()
    assert dp.AbsoluteDistance().distance(c(u), c(v)) <= c.map(d_in)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=15), st.data())
def test_change_one_sum_stability(u: list[int], data: st.DataObject) -> None:
    v = list(u)
    i = data.draw(st.integers(0, len(u) - 1))
    v[i] = data.draw(st.integers(-50, 50))
    d_in = dp.ChangeOneDistance().distance(u, v)
    assert d_in <= dp.HammingDistance().distance(u, v) <= 1
    space = (dp.VectorDomain(dp.AtomDomain(int), size=len(u)), dp.ChangeOneDistance())
    t = space >> dp.t.then_clamp(-10, 10) >> dp.t.then_sum()
    assert abs(t(u) - t(v)) <= t.map(d_in)
    assert Counter(u) != Counter(v) or d_in == 0


@pytest.mark.parametrize(("lo", "hi"), [(0, 12), (-7, 2), (-10, -4), (3, 9)])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_sum_worst_case_neighbours_reach_the_map(lo: int, hi: int, d: int) -> None:
    """Adding d records at the bound of largest magnitude moves the sum by d·max(|L|, |U|):
    the map at d is at least that (and, on add/remove, exactly that)."""
    t = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance()) \
        >> dp.t.then_clamp(lo, hi) >> dp.t.then_sum()
    far = lo if abs(lo) > abs(hi) else hi
    x = [lo, hi, (lo + hi) // 2]
    moved = abs(int(t(x + [far] * d)) - int(t(x)))
    assert moved == d * max(abs(lo), abs(hi))
    assert moved <= t.map(d) == moved
