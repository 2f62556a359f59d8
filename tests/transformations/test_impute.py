"""make_impute_constant: exact stability map at d_in > 1 (alone and chained before a bounded
sum with a non-zero lower bound), on sized and unsized domains, and held on real neighbours."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcert as dp

NANF = dp.VectorDomain(dp.AtomDomain(float, nan=True))


@pytest.mark.parametrize("metric", [dp.SymmetricDistance(), dp.InsertDeleteDistance()])
def test_impute_map_is_the_identity_at_every_distance(metric: dp.Metric) -> None:
    t = dp.t.make_impute_constant(NANF, metric, -2.5)
    for d in (0, 1, 2, 3, 7, 10**6):
        assert t.map(d) == d


@pytest.mark.parametrize("metric", [dp.ChangeOneDistance(), dp.HammingDistance()])
def test_impute_on_sized_data_keeps_the_size_and_the_distance(metric: dp.Metric) -> None:
    dom = dp.VectorDomain(dp.AtomDomain(float, nan=True), size=5)
    t = dp.t.make_impute_constant(dom, metric, 1.0)
    assert t.output_domain.size == 5  # type: ignore[attr-defined]
    assert [t.map(d) for d in (1, 2, 5)] == [1, 2, 5]


def test_impute_then_sum_with_a_negative_lower_bound_charges_d_times_the_bound() -> None:
    """impute(−3) >> clamp(−7, 2) >> sum: one changed record moves the sum by at most
    max(|L|, |U|) = 7, so map(d) = 7·d exactly (not 2·d, not 7)."""
    t = (NANF, dp.SymmetricDistance()) >> dp.t.then_impute_constant(-3.0) \
        >> dp.t.then_clamp(-7.0, 2.0) >> dp.t.then_sum()
    assert [t.map(d) for d in (1, 2, 3, 5)] == [7, 14, 21, 35]
    assert t([float("nan"), 1.0, -10.0]) == pytest.approx(-3.0 + 1.0 - 7.0)


def test_impute_constant_at_the_bounds_is_accepted_and_outside_refused() -> None:
    dom = dp.VectorDomain(dp.AtomDomain(float, bounds=(-4.0, 4.0), nan=True))
    for c in (-4.0, 4.0):
        assert dp.t.make_impute_constant(dom, dp.SymmetricDistance(), c).map(2) == 2
    with pytest.raises(dp.errors.InvalidParameter, match="outside bounds"):
        dp.t.make_impute_constant(dom, dp.SymmetricDistance(), 4.5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-5, 5), st.just(float("nan"))), max_size=10),
       st.lists(st.one_of(st.floats(-5, 5), st.just(float("nan"))), max_size=4),
       st.integers(0, 10))
def test_impute_never_increases_the_symmetric_distance(xs: list[float], added: list[float],
                                                       drop: int) -> None:
    """Property: neighbours at symmetric distance d stay within d after imputation."""
    t = dp.t.make_impute_constant(NANF, dp.SymmetricDistance(), 0.5)
    ys = xs[drop:] + added
    d_in = dp.SymmetricDistance().distance(xs, ys)
    a, b = Counter(t(xs).tolist()), Counter(t(ys).tolist())
    d_out = sum(((a - b) + (b - a)).values())
    assert d_out <= t.map(d_in)
    assert not np.isnan(t(xs)).any()
