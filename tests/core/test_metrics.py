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
