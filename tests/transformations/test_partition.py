"""make_partition: exact (l0, l1, l∞) stability at d_in > 1, and a property test on neighbours."""

from __future__ import annotations

import numpy as np
import pytest

import dpcert as dp
from dpcert.transformations.partition import PartitionDistance, make_partition

SPACE = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())


@pytest.mark.parametrize(("d", "want"), [(0, (0, 0, 0)), (1, (1, 1, 1)), (2, (2, 2, 2)),
                                          (3, (3, 3, 3)), (7, (4, 7, 7))])
def test_partition_map_exact(d: int, want: tuple[int, int, int]) -> None:
    t = make_partition(*SPACE, by=lambda x: x % 4, keys=[0, 1, 2, 3])
    assert t.map(d) == want


def test_partition_distance_of_neighbours_within_map() -> None:
    t = make_partition(*SPACE, by=lambda x: x % 3, keys=[0, 1, 2])
    rng = np.random.default_rng(11)  # chooses test inputs only
    for _ in range(200):
        u = rng.integers(0, 9, size=int(rng.integers(0, 12))).tolist()
        v = list(u)
        for _ in range(int(rng.integers(0, 5))):
            if v and rng.random() < 0.5:
                v.pop(int(rng.integers(0, len(v))))
            else:
                v.append(int(rng.integers(0, 9)))
        d_in = dp.SymmetricDistance().distance(u, v)
        got = PartitionDistance().distance(t(u), t(v))
        bound = t.map(d_in)
        assert all(g <= b for g, b in zip(got, bound, strict=True))
    # the l∞ and l0 bounds are reached: 3 records of one key, and 3 records of three keys
    assert PartitionDistance().distance(t([0, 3, 6]), t([])) == (1, 3, 3)
    assert PartitionDistance().distance(t([0, 1, 2]), t([])) == (3, 3, 1)
