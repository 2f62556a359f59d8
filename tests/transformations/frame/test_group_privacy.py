"""Group privacy of the frame chain: with the ``l1`` component (rows changed in all groups) the
maps grow linearly in the number of units ``d``, exactly, and still hold on neighbours ``d``
units apart (``docs/proofs/frame_bound.md``, ``docs/proofs/frame_stats.md``)."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from dpcert.backends.base import StatSpec
from dpcert.core.frames import FrameDomain, GroupDistance, GroupedDomain, UnitDistance
from dpcert.transformations.frame import (
    then_bound_contributions,
    then_group_by,
    then_select_stat,
)
from dpcert.transformations.frame.stats import per_group_change, sqrt_up, stat_sensitivity

SCHEMA = (("pid", "int"), ("g", "str"), ("x", "float"))
KEYS = [("a",), ("b",), ("c",), ("d",)]
SPECS = [StatSpec("n", "count"), StatSpec("units", "unit_count", "pid"),
         StatSpec("s", "fixed_sum", "x", Fraction(-2), Fraction(5), exponent=-3),
         StatSpec("q", "fixed_sum_sq", "x", Fraction(-2), Fraction(5), exponent=-2)]


def _square_map(spec: StatSpec, d: tuple[int, ...], norm: str) -> Fraction:
    """The map without ``l1`` (the wrong variant): ``l0·c`` and ``√l0·c``."""
    c = per_group_change(spec, d)
    return Fraction(d[1] * c) if norm == "L1" else sqrt_up(d[1]) * c


def _chain(ops: Any, spec: StatSpec, norm: str, G: int, R: int, key: bytes) -> Any:
    return ((FrameDomain(SCHEMA, ops.schema), UnitDistance("pid"))
            >> then_bound_contributions(("g",), G, R, backend=ops, key=key,
                                        value_columns=("x",))
            >> then_group_by(("g",), KEYS, SPECS, backend=ops)
            >> then_select_stat(spec, norm))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.kind)
@pytest.mark.parametrize("norm", ["L1", "L2"])
def test_maps_grow_linearly_in_units(memory_ops: Any, spec: StatSpec, norm: str) -> None:
    """``map(d) = d·map(1)`` exactly for d = 2..5 (G = 4 and R = 3, so the L2 roots are exact);
    the map without ``l1`` gives ``d²·map(1)`` (``d^{3/2}`` in L2) and fails."""
    chain = _chain(memory_ops, spec, norm, 4, 3, bytes(16))
    one = chain.map(1)
    assert one > 0
    for d in range(2, 6):
        assert chain.map(d) == d * one
        wrong = _square_map(spec, (d, 4 * d, 3 * d, 12 * d), norm)  # the bound map at d
        assert wrong > d * one  # the wrong variant fails the exact check


def test_sensitivity_at_a_tuple_is_the_smaller_bound() -> None:
    n = StatSpec("n", "count")
    assert stat_sensitivity(n, (3, 6, 6, 9), "L1") == 9           # l1 < l0·l∞ = 36
    assert stat_sensitivity(n, (3, 2, 3, 100), "L1") == 6         # l0·l∞ < l1
    assert stat_sensitivity(n, (3, 6, 6, 9), "L2") == sqrt_up(54)  # √(l∞·l1)
    s = SPECS[2]  # M = 40: a row moves the sum by at most 40
    assert stat_sensitivity(s, (2, 4, 2, 3), "L1") == 3 * 40
    dom = GroupedDomain(("g",), ("n",), tuple(KEYS))
    assert GroupDistance().validate_d_in((2, 4, 2)) == (2, 4, 2, 8)
    with pytest.raises(Exception, match="rows per group"):
        GroupDistance().validate_d_in((1, 2))
    assert dom.stats == ("n",)


@pytest.mark.parametrize("G,R", [(1, 1), (2, 3), (4, 2)])
def test_maps_hold_two_units_apart(memory_ops: Any, G: int, R: int) -> None:
    """Add two units with many rows in every group: each statistic moves by at most
    ``map(2)``; a map whose ``l1`` forgets ``R`` (``d·G`` rows) is exceeded (for R > 1)."""
    rng = random.Random(G * 10 + R)
    exceeded = False
    for trial in range(8):
        base = [(u, rng.choice("abcd"), rng.choice([-3.0, 0.0, 1.25, 7.5]))
                for u in range(10) for _ in range(rng.randint(1, 5))]
        extra = [(p, g, rng.choice([-3.0, 7.5])) for p in (98, 99) for g in "abcd"
                 for _ in range(5)]
        rows = [base, base + extra]
        frames = [{"pid": [r[0] for r in f], "g": [r[1] for r in f], "x": [r[2] for r in f]}
                  for f in rows]
        for spec in SPECS:
            chain = _chain(memory_ops, spec, "L1", G, R, bytes([trial]) * 16)
            a, b = chain(frames[0]), chain(frames[1])
            moved = int(np.abs(a.astype(np.int64) - b.astype(np.int64)).sum())
            assert moved <= chain.map(2)
            if spec.kind == "count":
                wrong = min(2 * G * R, 2 * G)  # l1 = d·G: rows per group forgotten
                exceeded |= moved > wrong
    assert exceeded == (R > 1)


ODD = StatSpec("s", "fixed_sum", "x", Fraction(-2), Fraction(5), exponent=0)  # rows in [-2, 5]


def test_centred_sum_map_is_half_the_range_and_linear() -> None:
    """Centred at C = 1, a row moves ``sum − C·count`` by at most max(5 − 1, 1 + 2) = 4 (not
    max|v| = 5); the map is linear in d and charges 4 per row."""
    dom = GroupedDomain(("g",), ("n", "s"), tuple(KEYS))
    t = then_select_stat(ODD, "L1", "count")
    with pytest.raises(Exception, match="centre_with"):
        t(dom, GroupDistance())
    dom = GroupedDomain(("g",), ("count", "s"), tuple(KEYS))
    sel = t(dom, GroupDistance())
    raw = then_select_stat(ODD, "L1")(dom, GroupDistance())
    for d in (1, 2, 3):
        assert sel.map((d, 2 * d, 3 * d, 6 * d)) == 4 * 6 * d
        assert raw.map((d, 2 * d, 3 * d, 6 * d)) == 5 * 6 * d
    values = {"count": np.array([2, 0, 1, 3]), "s": np.array([10, 0, -2, 3])}
    from dpcert.backends.base import GroupedStats

    assert sel(GroupedStats(KEYS, values)).tolist() == [8, 0, -3, 0]


def test_centred_sum_holds_two_units_apart(memory_ops: Any) -> None:
    """Two added units with all rows at the top bound move the centred sum by 4 per row, what
    the map charges; a map charging the floor of half the range (3) is exceeded."""
    specs = [StatSpec("count", "count"), ODD]
    chain = ((FrameDomain(SCHEMA, memory_ops.schema), UnitDistance("pid"))
             >> then_bound_contributions(("g",), 2, 3, backend=memory_ops, key=bytes(16),
                                         value_columns=("x",))
             >> then_group_by(("g",), KEYS, specs, backend=memory_ops)
             >> then_select_stat(ODD, "L1", "count"))
    base = [(u, "abcd"[u % 4], float(u % 7 - 2)) for u in range(12)]
    extra = [(p, g, 5.0) for p in (98, 99) for g in "ab" for _ in range(3)]
    frames = [{"pid": [r[0] for r in f], "g": [r[1] for r in f], "x": [r[2] for r in f]}
              for f in (base, base + extra)]
    a, b = chain(frames[0]), chain(frames[1])
    moved = int(np.abs(a.astype(np.int64) - b.astype(np.int64)).sum())
    assert moved == chain.map(2) == 2 * 2 * 3 * 4
    assert moved > 2 * 2 * 3 * 3  # the wrong variant: ⌊(5 − (−2))/2⌋ = 3 per row


@pytest.mark.parametrize("d", [1, 2, 3])
def test_shifted_sum_of_squares_map_is_linear_and_uses_the_shifted_range(d: int) -> None:
    """The variance's sum of ``(x − 50)²`` over bounds [0, 100] (issue 39, L3): rows lie in
    [0, 2500], centred per-row change 1250; at bounding's ``(d, 2d, 2d, 4d)`` (G = R = 2) the L1
    map is ``min(l0·l∞·k, k·l1) = 1250·4d`` — a map reading the squares of x ([0, 10⁴]) would
    give four times that."""
    q = StatSpec("q", "fixed_sum_sq", "x", Fraction(0), Fraction(100), shift=Fraction(50))
    dist = (d, 2 * d, 2 * d, 4 * d)
    assert stat_sensitivity(q, dist, "L1", centred=True) == 1250 * 4 * d
    assert stat_sensitivity(q, dist, "L1") == 2500 * 4 * d
    assert stat_sensitivity(q, dist, "L2", centred=True) == sqrt_up(2 * d * 1250 * 1250 * 4 * d)
