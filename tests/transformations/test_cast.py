"""make_cast: exact stability map at d_in > 1 for every target type, sized domains, a
non-zero lower bound downstream, and the map held on real neighbours."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcert as dp

STRS = dp.VectorDomain(dp.AtomDomain(str))


@pytest.mark.parametrize(("to", "kw"), [(float, {}), (int, {"default": -1}), (str, {}),
                                        (bool, {})])
@pytest.mark.parametrize("metric", [dp.SymmetricDistance(), dp.InsertDeleteDistance()])
def test_cast_map_is_the_identity_at_every_distance(to: type, kw: dict[str, int],
                                                    metric: dp.Metric) -> None:
    t = dp.t.make_cast(dp.VectorDomain(dp.AtomDomain(int)), metric, to, **kw)
    for d in (0, 1, 2, 3, 9, 10**6):
        assert t.map(d) == d


@pytest.mark.parametrize("metric", [dp.ChangeOneDistance(), dp.HammingDistance()])
def test_cast_on_sized_data_keeps_size_and_distance(metric: dp.Metric) -> None:
    t = dp.t.make_cast(dp.VectorDomain(dp.AtomDomain(str), size=3), metric, float)
    assert t.output_domain.size == 3  # type: ignore[attr-defined]
    assert [t.map(d) for d in (1, 2, 3)] == [1, 2, 3]


def test_cast_impute_clamp_sum_with_a_non_zero_lower_bound() -> None:
    """cast(str → float) >> impute(3) >> clamp(2, 10) >> sum: map(d) = 10·d on add/remove
    (max(|L|, |U|)) and 8·d on change-one (U − L), exactly."""
    for metric, size, per in ((dp.SymmetricDistance(), None, 10), (dp.ChangeOneDistance(), 4, 8)):
        t = (dp.VectorDomain(dp.AtomDomain(str), size=size), metric) >> dp.t.then_cast(float) \
            >> dp.t.then_impute_constant(3.0) >> dp.t.then_clamp(2.0, 10.0) >> dp.t.then_sum()
        assert [t.map(d) for d in (1, 2, 3)] == [per, 2 * per, 3 * per]
    assert t(["1", "x", "12", "5"]) == pytest.approx(2.0 + 3.0 + 10.0 + 5.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["1", "2.5", "x", "-3", "inf", "7"]), max_size=10),
       st.lists(st.sampled_from(["1", "nan", "y", "4"]), max_size=4), st.integers(0, 10))
def test_cast_never_increases_the_symmetric_distance(xs: list[str], added: list[str],
                                                     drop: int) -> None:
    t = dp.t.make_cast(STRS, dp.SymmetricDistance(), int, default=0)
    ys = xs[drop:] + added
    d_in = dp.SymmetricDistance().distance(xs, ys)
    a, b = Counter(t(xs).tolist()), Counter(t(ys).tolist())
    assert sum(((a - b) + (b - a)).values()) <= t.map(d_in)
