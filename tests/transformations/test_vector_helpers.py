"""cast, impute_constant, resize, count_distinct, mean, variance, count_by_categories."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcert as dp
from dpcert.errors import DomainMismatch, InvalidParameter
from dpcert.testing import check_transformation_contract

FLOATS = dp.VectorDomain(dp.AtomDomain(float))
SYM, CH1 = dp.SymmetricDistance(), dp.ChangeOneDistance()


def test_cast_and_impute() -> None:
    t = dp.t.make_cast(dp.VectorDomain(dp.AtomDomain(str)), SYM, float)
    out = t(["1", "2.5", "x", "inf"])
    assert out[:2].tolist() == [1.0, 2.5] and np.isnan(out[2:]).all()
    chain = t >> dp.t.then_impute_constant(0.0) >> dp.t.then_clamp(0.0, 2.0)
    assert chain(["3", "x"]).tolist() == [2.0, 0.0]
    check_transformation_contract(chain, [0, 1, 4])
    ti = dp.t.make_cast(FLOATS, SYM, int, default=-1)
    assert ti([1.9, -2.5, 1e300]).tolist() == [1, -2, -1]
    assert dp.t.make_cast(dp.VectorDomain(dp.AtomDomain(int)), SYM, str)([1, 2]).tolist() == \
        ["1", "2"]
    with pytest.raises(InvalidParameter, match="default"):
        dp.t.make_cast(FLOATS, SYM, int)
    with pytest.raises(InvalidParameter, match="to="):
        dp.t.make_cast(FLOATS, SYM, complex)
    with pytest.raises(InvalidParameter, match="constant"):
        dp.t.make_impute_constant(dp.VectorDomain(dp.AtomDomain(float, nan=True)), SYM,
                                  float("nan"))
    with pytest.raises(DomainMismatch):
        dp.t.make_impute_constant(dp.VectorDomain(dp.AtomDomain(int)), SYM, 0)


def test_resize() -> None:
    dom = dp.VectorDomain(dp.AtomDomain(int, bounds=(0, 9)))
    t = dp.t.make_resize(dom, SYM, 4, constant=0)
    check_transformation_contract(t, [0, 1, 3])
    assert sorted(t([5]).tolist()) == [0, 0, 0, 5]
    big = t(list(range(10)))
    assert big.size == 4 and len(set(big.tolist())) == 4
    assert t.output_domain.size == 4 and isinstance(t.output_metric, dp.ChangeOneDistance)
    with pytest.raises(InvalidParameter, match="constant"):
        dp.t.make_resize(dom, SYM, 4, constant=10)
    # every element is kept with probability size/n (no "first rows" bias)
    hits = np.zeros(10)
    for _ in range(2000):
        hits[t(list(range(10)))] += 1
    assert np.all(np.abs(hits / 2000 - 0.4) < 0.06)
    m = (dom, SYM) >> dp.t.then_resize(4, 0) >> dp.t.then_mean() >> dp.m.then_laplace(1.0)
    assert float(m.map(1)) == pytest.approx(9 / 4, rel=1e-6)  # plus the lattice allowance


def test_count_distinct() -> None:
    t = dp.t.make_count_distinct(dp.VectorDomain(dp.AtomDomain(float, nan=True)), SYM)
    assert t([1.0, 1.0, float("nan"), float("nan"), 2.0]) == 3
    check_transformation_contract(t, [0, 1, 2])
    assert dp.t.make_count_distinct(dp.VectorDomain(dp.AtomDomain(str)), CH1).map(3) == 3


def test_mean_variance_need_size_and_bounds() -> None:
    with pytest.raises(InvalidParameter, match="bounded"):
        dp.t.make_mean(dp.VectorDomain(dp.AtomDomain(float), size=3), CH1)
    with pytest.raises(InvalidParameter, match="size"):
        dp.t.make_mean(dp.VectorDomain(dp.AtomDomain(float, bounds=(0.0, 1.0))), CH1)
    dom = dp.VectorDomain(dp.AtomDomain(float, bounds=(0.0, 1.0)), size=1)
    with pytest.raises(InvalidParameter, match="ddof"):
        dp.t.make_variance(dom, CH1)
    sized = dp.VectorDomain(dp.AtomDomain(int, bounds=(0, 10)), size=5)
    assert dp.t.make_mean(sized, SYM).map(2) == 2 and dp.t.make_mean(sized, SYM).map(3) == 2
    v = dp.t.make_variance(sized, CH1, ddof=0)
    assert v.map(1) == Fraction(100 * 4, 25)
    assert v([0, 0, 10, 10, 5]) == pytest.approx(np.var([0, 0, 10, 10, 5]))


def test_exact_float_mean_and_variance() -> None:
    dom = dp.VectorDomain(dp.AtomDomain(float, bounds=(-1e20, 1e20)), size=3)
    assert dp.t.make_mean(dom, CH1)([1e20, 1.0, -1e20]) == 1 / 3
    v = dp.t.make_variance(dom, CH1)([1e8 + 1, 1e8 + 2, 1e8 + 3])
    assert v == 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=3, max_size=12),
       st.floats(0, 10, allow_nan=False), st.integers(0, 11))
def test_sensitivities_hold_on_neighbours(xs: list[float], new: float, pos: int) -> None:
    n = len(xs)
    dom = dp.VectorDomain(dp.AtomDomain(float, bounds=(0.0, 10.0)), size=n)
    ys = list(xs)
    ys[pos % n] = new
    for make in (dp.t.make_mean, dp.t.make_variance):
        t = make(dom, CH1)
        gap = abs(Fraction(t(xs)) - Fraction(t(ys)))
        # the output is rounded once to float: allow one ulp on each side
        assert gap <= t.map(1) + Fraction(2 * np.spacing(max(abs(t(xs)), abs(t(ys)), 1.0)))


def test_count_by_categories() -> None:
    dom = dp.VectorDomain(dp.AtomDomain(str))
    t = dp.t.make_count_by_categories(dom, SYM, ["a", "b", "c"])
    assert t(["a", "c", "c", "z"]).tolist() == [1, 0, 2]
    check_transformation_contract(t, [0, 1, 2])
    assert dp.t.make_count_by_categories(dom, CH1, ["a", "b"]).map(1) == 2
    l2 = dp.t.make_count_by_categories(dom, CH1, ["a", "b"], output_metric=dp.L2Distance())
    assert 2**0.5 <= l2.map(1) < 2**0.5 + 1e-8
    g = l2 >> dp.m.then_gaussian(2)
    assert isinstance(g.output_measure, dp.ZCDP)
    rng = random.Random(7)
    for _ in range(200):
        xs = [rng.choice("abcz") for _ in range(8)]
        ys = list(xs)
        ys[rng.randrange(8)] = rng.choice("abcz")
        assert np.abs(t(xs) - t(ys)).sum() <= dp.t.make_count_by_categories(
            dom, CH1, ["a", "b", "c"]).map(1)
    with pytest.raises(InvalidParameter, match="duplicates"):
        dp.t.make_count_by_categories(dom, SYM, ["a", "a"])
