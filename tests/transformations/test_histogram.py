"""make_count_by_categories: the stability map checked against worst-case neighbours at
d_in = 1, 2, 3 (an independent route from the exact-value test in test_vector_helpers.py)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcert as dp

CATS = ["a", "b", "c"]


def _l1(u: np.ndarray, v: np.ndarray) -> int:
    return int(np.abs(u - v).sum())


def _l2(u: np.ndarray, v: np.ndarray) -> float:
    return math.sqrt(float(((u - v) ** 2).sum()))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_change_one_worst_case_moves_two_counts_per_change(d: int) -> None:
    """Changing d records from "a" to "b" moves the counts by (−d, +d): L1 = 2d, L2 = √2·d;
    the maps must cover them (and the L1 map is exactly that)."""
    x = ["a"] * 5 + ["c"]
    y = ["b"] * d + ["a"] * (5 - d) + ["c"]
    dom = dp.VectorDomain(dp.AtomDomain(str), size=6)
    t1 = dp.t.make_count_by_categories(dom, dp.ChangeOneDistance(), CATS)
    t2 = dp.t.make_count_by_categories(dom, dp.ChangeOneDistance(), CATS,
                                       output_metric=dp.L2Distance())
    assert dp.ChangeOneDistance().distance(x, y) == d
    assert _l1(t1(x), t1(y)) == 2 * d == t1.map(d)
    assert _l2(t2(x), t2(y)) <= t2.map(d)
    assert Fraction(_l2(t2(x), t2(y))) <= t2.map(d)  # exact: √2·d as a float sits below


@pytest.mark.parametrize("d", [1, 2, 3])
def test_add_remove_worst_case_moves_one_count_per_record(d: int) -> None:
    t = dp.t.make_count_by_categories(dp.VectorDomain(dp.AtomDomain(str)),
                                      dp.SymmetricDistance(), CATS)
    x = ["a", "b"]
    assert _l1(t(x), t(x + ["c"] * d)) == d == t.map(d)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([*CATS, "z"]), min_size=4, max_size=4),
       st.lists(st.sampled_from([*CATS, "z"]), min_size=4, max_size=4))
def test_change_one_neighbours_never_exceed_the_map(x: list[str], y: list[str]) -> None:
    dom = dp.VectorDomain(dp.AtomDomain(str), size=4)
    for metric in (dp.L1Distance(), dp.L2Distance()):
        t = dp.t.make_count_by_categories(dom, dp.ChangeOneDistance(), CATS, output_metric=metric)
        d_in = dp.ChangeOneDistance().distance(x, y)
        u, v = t(x), t(y)
        d_out = _l1(u, v) if isinstance(metric, dp.L1Distance) else _l2(u, v)
        assert d_out <= t.map(d_in)
