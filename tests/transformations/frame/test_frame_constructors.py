"""Frame constructors: filter, contribution bounding, group-by and statistic selection.

The maps are checked on concrete neighbouring frames (one unit added): the grouped statistics
of the bounded neighbours never move further than the maps claim.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from dpcert.backends.base import StatSpec
from dpcert.core.frames import FrameDomain, GroupDistance, GroupedDomain, UnitDistance
from dpcert.errors import (
    DomainMismatch,
    InvalidParameter,
    MetricMismatch,
    OutOfDomain,
    UnsafeExpression,
)
from dpcert.samplers import InsecureSeededSource
from dpcert.transformations.frame import (
    make_bound_contributions,
    make_frame_filter,
    make_group_by,
    make_select_stat,
    then_bound_contributions,
    then_frame_filter,
    then_group_by,
    then_select_stat,
)

SCHEMA = (("pid", "int"), ("g", "str"), ("x", "float"))
KEYS = [("a",), ("b",), ("c",), ("d",)]
SPECS = [StatSpec("n", "count"), StatSpec("units", "unit_count", "pid"),
         StatSpec("s", "fixed_sum", "x", Fraction(-2), Fraction(5), exponent=-3),
         StatSpec("q", "fixed_sum_sq", "x", Fraction(-2), Fraction(5), exponent=-2)]


def space(ops: Any, unit: str | None = "pid") -> tuple[FrameDomain, UnitDistance]:
    return FrameDomain(SCHEMA, ops.schema), UnitDistance(unit)


def frame(rows: list[tuple[int, str, float]]) -> dict[str, list[Any]]:
    return {"pid": [r[0] for r in rows], "g": [r[1] for r in rows], "x": [r[2] for r in rows]}


def random_rows(rng: random.Random, units: range, per_unit: int) -> list[tuple[int, str, float]]:
    return [(u, rng.choice("abcd"), rng.choice([-3.0, -0.5, 0.0, 1.25, 4.0, 7.5]))
            for u in units for _ in range(rng.randint(1, per_unit))]


def test_filter_keeps_matching_rows_and_is_the_identity_map(memory_ops: Any) -> None:
    t = space(memory_ops) >> then_frame_filter([("x", ">", 0.0)], backend=memory_ops)
    out = t(frame([(1, "a", 1.0), (2, "b", -1.0), (3, "a", 2.0)]))
    assert out["pid"] == [1, 3]
    assert t.map(3) == 3 and t.params["backend"] == "memory"


def test_filter_refuses_unsafe_predicates_at_construction(memory_ops: Any) -> None:
    with pytest.raises(UnsafeExpression, match="allow-list"):
        make_frame_filter(*space(memory_ops), [("x", "rank", 1)], backend=memory_ops)
    with pytest.raises(InvalidParameter, match="unknown column 'zz'"):
        make_frame_filter(*space(memory_ops), [("zz", ">", 1)], backend=memory_ops)
    with pytest.raises(MetricMismatch, match="UnitDistance"):
        make_frame_filter(FrameDomain(SCHEMA, memory_ops.schema), GroupDistance(), [],
                          backend=memory_ops)


def test_frame_domain_checks_the_schema(memory_ops: Any) -> None:
    t = space(memory_ops) >> then_frame_filter([], backend=memory_ops)
    with pytest.raises(OutOfDomain, match="schema"):
        t({"pid": [1], "g": ["a"]})


def test_bound_map_and_limits(memory_ops: Any) -> None:
    t = space(memory_ops) >> then_bound_contributions(("g",), 2, 3, backend=memory_ops,
                                                      key=bytes(range(16)))
    assert t.map(1) == (1, 2, 3, 6) and t.map(2) == (2, 4, 6, 12)
    rng = random.Random(1)
    out = t(frame(random_rows(rng, range(20), 12)))
    per: dict[tuple[int, str], int] = {}
    for p, g in zip(out["pid"], out["g"], strict=True):
        per[(p, g)] = per.get((p, g), 0) + 1
    assert max(per.values()) <= 3
    groups: dict[int, set[str]] = {}
    for p, g in per:
        groups.setdefault(p, set()).add(g)
    assert max(len(v) for v in groups.values()) <= 2
    assert not t.randomized


def test_bound_without_unit_is_the_identity(memory_ops: Any) -> None:
    t = make_bound_contributions(*space(memory_ops, None), ("g",), 5, 5, backend=memory_ops)
    assert t.map(2) == (2, 2, 2, 2)
    f = frame([(1, "a", 1.0), (1, "a", 2.0)])
    assert t(f) is f


def test_bound_fresh_key_per_call_is_randomized(memory_ops: Any) -> None:
    t = make_bound_contributions(*space(memory_ops), ("g",), 1, 1, backend=memory_ops,
                                 source=InsecureSeededSource(3))
    assert t.randomized and t.params["key"] == "per call"
    f = frame([(1, g, 0.0) for g in "abcd"] * 3)
    kept = {t(f)["g"][0] for _ in range(40)}
    assert len(kept) > 1  # different keys choose different groups
    with pytest.raises(InvalidParameter, match="16 bytes"):
        make_bound_contributions(*space(memory_ops), ("g",), 1, 1, backend=memory_ops,
                                 key=b"short")


def test_group_by_public_keys_missing_get_zero(memory_ops: Any) -> None:
    chain = (space(memory_ops) >> then_bound_contributions(("g",), 2, 2, backend=memory_ops,
                                                           key=bytes(16))
             >> then_group_by(("g",), KEYS, SPECS, backend=memory_ops))
    out = chain(frame([(1, "a", 1.0), (2, "a", 9.0), (2, "b", -7.0)]))
    assert out.keys == KEYS
    assert out.values["n"].tolist() == [2, 1, 0, 0]
    assert out.values["units"].tolist() == [2, 1, 0, 0]
    assert out.values["s"].tolist() == [48, -16, 0, 0]  # (1 + 5) * 8, -2 * 8
    assert chain.map(1) == (1, 2, 2, 4)


def test_group_by_map_is_the_identity_at_every_distance(memory_ops: Any) -> None:
    """make_group_by only aggregates: a unit's rows stay in the same groups, so the group
    distance (units u, groups l0, rows per group l∞) passes through unchanged at any d."""
    dom = FrameDomain(SCHEMA, memory_ops.schema, bounds=(("g",), 3, 2))
    t = make_group_by(dom, GroupDistance(), ("g",), KEYS, SPECS, backend=memory_ops)
    for d in [(0, 0, 0), (1, 1, 1), (2, 3, 2), (5, 15, 10), (10**6, 3 * 10**6, 2 * 10**6)]:
        assert t.map(d) == (*d, d[1] * d[2])
    assert t.check((2, 3, 2), (2, 3, 2)) and not t.check((2, 3, 2), (2, 3, 1))


def test_group_by_keys_are_cast_strictly_and_distinct(memory_ops: Any) -> None:
    dom = FrameDomain((("k", "int"),), memory_ops.schema, bounds=(("k",), 1, 1))
    with pytest.raises(InvalidParameter, match=r"keys\[1\]\[0\]=1.5 does not convert"):
        make_group_by(dom, GroupDistance(), ("k",), [(1,), (1.5,)], SPECS[:1],
                      backend=memory_ops)
    with pytest.raises(InvalidParameter, match=r"keys\[1\]=\(1.0,\) repeats keys\[0\]"):
        make_group_by(dom, GroupDistance(), ("k",), [(1,), (1.0,)], SPECS[:1],
                      backend=memory_ops)
    with pytest.raises(InvalidParameter, match="differs from the bounding"):
        make_group_by(dom, GroupDistance(), (), [()], SPECS[:1], backend=memory_ops)
    with pytest.raises(DomainMismatch, match="bounded"):
        make_group_by(FrameDomain((("k", "int"),), memory_ops.schema), GroupDistance(), ("k",),
                      None, SPECS[:1], backend=memory_ops)


def test_select_stat_maps() -> None:
    dom = GroupedDomain(("g",), tuple(s.name for s in SPECS), tuple(KEYS))
    d = (1, 4, 3)
    maps = {s.name: (make_select_stat(dom, GroupDistance(), s, "L1").map(d),
                     make_select_stat(dom, GroupDistance(), s, "L2").map(d)) for s in SPECS}
    assert maps["n"] == (12, 6)                 # l0·l∞, √l0·l∞
    assert maps["units"] == (4, 2)              # min(u, l∞) = 1
    assert maps["s"] == (4 * 3 * 40, 2 * 3 * 40)  # M = 5·8
    assert maps["q"] == (4 * 3 * 100, 2 * 3 * 100)  # M = 25·4
    l2 = make_select_stat(dom, GroupDistance(), SPECS[0], "L2").map((1, 2, 1))
    assert l2 * l2 >= 2 and l2 - Fraction(1414213562373, 10**12) < Fraction(1, 10**11)
    with pytest.raises(InvalidParameter, match="not one of"):
        make_select_stat(dom, GroupDistance(), StatSpec("zz", "count"))
    with pytest.raises(InvalidParameter, match="make_grouped_quantile"):
        make_select_stat(GroupedDomain(("g",), ("h",), None), GroupDistance(),
                         StatSpec("h", "at_most", "x", Fraction(0), Fraction(1)))


@pytest.mark.parametrize("G,R", [(1, 1), (2, 3), (4, 2)])
def test_maps_hold_on_neighbouring_frames(memory_ops: Any, G: int, R: int) -> None:
    """Add one unit with many rows in every group: each statistic's vector moves by at most
    the chain's map (this fails for a bound map that ignores G or R)."""
    rng = random.Random(G * 10 + R)
    for trial in range(15):
        base = random_rows(rng, range(12), 6)
        extra = [(99, g, rng.choice([-3.0, 7.5, 0.25])) for g in "abcd" for _ in range(5)]
        key = bytes([trial]) * 16
        for spec in SPECS:
            for norm in ("L1", "L2"):
                chain = (space(memory_ops)
                         >> then_bound_contributions(("g",), G, R, backend=memory_ops, key=key,
                                                     value_columns=("x",))
                         >> then_group_by(("g",), KEYS, SPECS, backend=memory_ops)
                         >> then_select_stat(spec, norm))
                a, b = chain(frame(base)), chain(frame(base + extra))
                diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
                moved = Fraction(int(diff.sum())) if norm == "L1" else Fraction(
                    int((diff ** 2).sum()))
                bound = chain.map(1)
                assert (moved <= bound) if norm == "L1" else (moved <= bound ** 2)


def test_distance_of_neighbours_is_one_unit() -> None:
    a = frame([(1, "a", 1.0), (2, "b", 2.0), (2, "c", 3.0)])
    b = frame([(1, "a", 1.0)])
    assert UnitDistance("pid").distance(a, b) == 1
    assert UnitDistance(None).distance(a, b) == 2
    c = frame([(1, "a", 1.5), (2, "b", 2.0), (2, "c", 3.0)])
    assert UnitDistance("pid").distance(a, c) == 2  # unit 1 changed: removed and added
    nan = {"pid": [float("nan"), float("nan")], "g": ["a", "a"], "x": [0.0, -0.0]}
    assert UnitDistance("pid").distance(nan, {"pid": [float("nan")], "g": ["a"],
                                              "x": [0.0]}) == 2
