"""Dataset metrics (``dpcert.core.metrics``), a property test independent of the examples in
test_domains_metrics.py: changing k records of a sized dataset is at change-one and Hamming
distance k, and at symmetric distance 2k."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import dpcert as dp


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=12), st.data())
def test_changing_k_records_is_distance_k(xs: list[int], data: st.DataObject) -> None:
    k = data.draw(st.integers(0, len(xs)))
    idx = data.draw(st.lists(st.integers(0, len(xs) - 1), min_size=k, max_size=k, unique=True))
    ys = list(xs)
    for i in idx:
        ys[i] = 100 + i  # a value xs never holds: each change really changes the multiset
    assert dp.HammingDistance().distance(xs, ys) == k
    assert dp.ChangeOneDistance().distance(xs, ys) == k
    assert dp.SymmetricDistance().distance(xs, ys) == 2 * k


def test_exact_distances_narrow_to_a_number_or_a_tuple() -> None:
    import pytest

    from dpcert.core.metrics import scalar_distance, tuple_distance
    from dpcert.errors import InvalidParameter

    assert scalar_distance(dp.SymmetricDistance().validate_d_in(2)) == 2
    assert tuple_distance((1, 2, 3)) == (1, 2, 3)
    with pytest.raises(InvalidParameter):
        scalar_distance((1, 2))
    with pytest.raises(InvalidParameter):
        tuple_distance(1)
    with pytest.raises(InvalidParameter, match="single numbers"):
        dp.SymmetricDistance().compare((1, 2), 3)
    assert dp.SymmetricDistance().compare(1, 2) and not dp.AbsoluteDistance().compare(2, 1)


def test_binary_search_returns_the_type_it_searched() -> None:
    n = dp.binary_search(lambda k: k * k >= 50, T=int)
    assert isinstance(n, int) and n == 8
    x = dp.binary_search(lambda s: s >= 2.5, (0.0, 10.0))
    assert isinstance(x, float) and 2.5 <= x <= 2.5000001


def test_table_columns_are_read_from_mappings_and_refused_otherwise() -> None:
    import numpy as np
    import pytest

    t = dp.TableDomain({"age": dp.AtomDomain(int)})
    assert t.get({"age": [30, 41]}, "age").tolist() == [30, 41]
    assert dp.VectorDomain(dp.AtomDomain(str)).to_array(("a", "b")).tolist() == ["a", "b"]
    assert isinstance(dp.VectorDomain(dp.AtomDomain(int)).to_array([1, 2]), np.ndarray)
    with pytest.raises(TypeError, match="not subscriptable"):
        t.get(3, "age")
    with pytest.raises(TypeError, match="no len"):
        dp.VectorDomain(dp.AtomDomain(str)).to_array(3)
