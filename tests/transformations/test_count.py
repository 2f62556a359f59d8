"""make_count: worst-case neighbours at d_in = 1, 2, 3 (adding d records moves the count by d;
on sized data the count is constant), an independent route from the exact map tests."""

from __future__ import annotations

import pytest

import dpcert as dp


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("metric", [dp.SymmetricDistance(), dp.InsertDeleteDistance()])
def test_adding_d_records_moves_the_count_by_d(d: int, metric: dp.Metric) -> None:
    t = dp.t.make_count(dp.VectorDomain(dp.AtomDomain(int)), metric)
    x = [4, 5, 6]
    assert abs(t(x + [0] * d) - t(x)) == d <= t.map(d)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("metric", [dp.ChangeOneDistance(), dp.HammingDistance()])
def test_count_of_sized_data_does_not_move(d: int, metric: dp.Metric) -> None:
    t = dp.t.make_count(dp.VectorDomain(dp.AtomDomain(int), size=4), metric)
    assert t([1, 2, 3, 4]) == t([9, 9, 9, 4]) == 4
    assert t.map(d) == 0
