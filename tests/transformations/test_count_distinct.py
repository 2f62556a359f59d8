"""make_count_distinct: the map at d_in = 1, 2, 3 against neighbours that add d new values
(the count moves by exactly d)."""

from __future__ import annotations

import pytest

import dpcert as dp


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("metric", [dp.SymmetricDistance(), dp.InsertDeleteDistance()])
def test_d_new_values_move_the_count_by_d(d: int, metric: dp.Metric) -> None:
    t = dp.t.make_count_distinct(dp.VectorDomain(dp.AtomDomain(int)), metric)
    x = [1, 1, 2]
    y = x + [10 + i for i in range(d)]
    assert abs(t(y) - t(x)) == d <= t.map(d)
    assert t.map(d) == d


@pytest.mark.parametrize("d", [1, 2, 3])
def test_change_one_neighbours_move_the_count_by_at_most_d(d: int) -> None:
    dom = dp.VectorDomain(dp.AtomDomain(int), size=4)
    t = dp.t.make_count_distinct(dom, dp.ChangeOneDistance())
    x = [1, 1, 1, 1]
    y = [10 + i for i in range(d)] + [1] * (4 - d)
    assert abs(t(y) - t(x)) == d <= t.map(d)
