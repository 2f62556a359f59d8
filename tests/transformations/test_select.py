"""TableDomain and make_select_column."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcert as dp
from dpcert import errors
from dpcert.testing import check_transformation_contract

TABLE = dp.TableDomain({"age": dp.AtomDomain(int), "income": dp.AtomDomain(float)})


def test_members_and_reasons() -> None:
    assert TABLE.member({"age": [1, 2], "income": [0.5, 1.5], "extra": ["x", "y"]})
    assert TABLE.member(pl.DataFrame({"age": [1], "income": [2.0]}))
    assert "missing" in (TABLE.why_not({"age": [1]}) or "")
    assert "NaN" in (TABLE.why_not({"age": [1], "income": [float("nan")]}) or "")
    assert "not a table" in (TABLE.why_not([1, 2]) or "")
    with pytest.raises(errors.InvalidParameter, match="empty"):
        dp.TableDomain({})
    with pytest.raises(errors.InvalidParameter, match="AtomDomain"):
        dp.TableDomain({"a": int})


def test_select_on_polars_and_dicts() -> None:
    t = dp.t.make_select_column(TABLE, dp.SymmetricDistance(), "income")
    df = pl.DataFrame({"age": [30, 40, 50], "income": [1.0, 2.0, 3.0]})
    assert t(df).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(errors.OutOfDomain):
        t({"age": [1, 2], "income": [1.0]})
    with pytest.raises(errors.InvalidParameter, match="unknown column 'salary'"):
        dp.t.make_select_column(TABLE, dp.SymmetricDistance(), "salary")
    with pytest.raises(errors.DomainMismatch):
        dp.t.make_select_column(dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance(),
                                "age")
    check_transformation_contract(t, [0, 1, 5])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=12),
       st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=4))
def test_projection_never_increases_symmetric_distance(
        rows: list[tuple[int, int]], added: list[tuple[int, int]]) -> None:
    table = dp.TableDomain({"a": dp.AtomDomain(int), "b": dp.AtomDomain(int)})
    t = dp.t.make_select_column(table, dp.SymmetricDistance(), "a")
    u = {"a": [r[0] for r in rows], "b": [r[1] for r in rows]}
    both = rows + added
    v = {"a": [r[0] for r in both], "b": [r[1] for r in both]}
    d_rows = dp.SymmetricDistance().distance(rows, both)
    assert dp.SymmetricDistance().distance(t(u), t(v)) <= t.map(d_rows)
    assert isinstance(t(u), np.ndarray)


@pytest.mark.parametrize("metric", [dp.SymmetricDistance(), dp.InsertDeleteDistance(),
                                    dp.ChangeOneDistance(), dp.HammingDistance()])
def test_select_map_is_the_identity_at_every_distance(metric: dp.Metric) -> None:
    t = dp.t.make_select_column(TABLE, metric, "age")
    for d in (0, 1, 2, 3, 8, 10**6):
        assert t.map(d) == d


def test_select_then_bounded_sum_with_a_non_zero_lower_bound() -> None:
    """select("income") >> clamp(−4, 1) >> sum: map(d) = 4·d exactly (max(|L|, |U|))."""
    t = (TABLE, dp.SymmetricDistance()) >> dp.t.then_select_column("income") \
        >> dp.t.then_clamp(-4.0, 1.0) >> dp.t.then_sum()
    assert [t.map(d) for d in (1, 2, 3, 6)] == [4, 8, 12, 24]
    assert t({"age": [1, 2, 3], "income": [-9.0, 0.5, 3.0]}) == pytest.approx(-4.0 + 0.5 + 1.0)
