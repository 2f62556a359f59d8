"""make_resize: d_out = d_in under the coupling of the proof (docs/proofs/resize.md), checked on
neighbours at d_in = 1, 2, 3 where both outputs keep every record (n ≤ size): padding is
deterministic there, so the outputs differ in exactly the changed records."""

from __future__ import annotations

from collections import Counter

import pytest

import dpcert as dp

DOM = dp.VectorDomain(dp.AtomDomain(int, bounds=(0, 9)))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_resize_map_covers_d_added_records(d: int) -> None:
    t = dp.t.make_resize(DOM, dp.SymmetricDistance(), 8, constant=0)
    x = [5, 6]
    y = x + [9] * d  # d records added; both below the size, so nothing is dropped
    a, b = Counter(t(x).tolist()), Counter(t(y).tolist())
    changed = sum((a - b).values())  # records to change to turn one output into the other
    assert changed == d
    assert t.map(d) == d
    assert changed <= t.map(d)
