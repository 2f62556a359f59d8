"""make_mean and make_variance: exact maps with L ≠ 0, at d_in > 1, under both metric families."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

import dpcert as dp

CHANGE = dp.ChangeOneDistance()
SYM = dp.SymmetricDistance()


def _space(n: int, metric: dp.Metric, lo: float, hi: float) -> dp.Transformation:
    return (dp.VectorDomain(dp.AtomDomain(float), size=n), metric) >> dp.t.then_clamp(lo, hi)


@pytest.mark.parametrize(("lo", "hi"), [(2.0, 10.0), (-6.0, 2.0), (-9.0, -1.0), (0.0, 8.0)])
def test_mean_map_is_range_over_n(lo: float, hi: float) -> None:
    t = _space(4, CHANGE, lo, hi) >> dp.t.then_mean()
    assert [t.map(d) for d in (0, 1, 2, 3)] == [0, 2, 4, 6]  # (U − L)/n = 8/4 per change
    s = _space(4, SYM, lo, hi) >> dp.t.then_mean()
    # same-size datasets at symmetric distance d differ in ⌊d/2⌋ changes
    assert [s.map(d) for d in (0, 1, 2, 3, 4, 5)] == [0, 0, 2, 2, 4, 4]


def test_mean_and_variance_map_one_is_zero_on_fixed_size_symmetric_domains() -> None:
    # issue 19.5: no two datasets of one fixed size are at symmetric distance 1
    m = _space(5, SYM, 0.0, 1.0) >> dp.t.then_mean()
    v = _space(5, SYM, 0.0, 1.0) >> dp.t.then_variance()
    assert m.map(1) == 0 and v.map(1) == 0
    assert m.map(2) == Fraction(1, 5) and v.map(2) == Fraction(4, 5 * 4)
    cm = _space(5, CHANGE, 0.0, 1.0) >> dp.t.then_mean()
    assert cm.map(1) == Fraction(1, 5)
    assert SYM.distance([0.0, 1.0], [1.0, 1.0]) == 2


@pytest.mark.parametrize(("n", "ddof"), [(2, 1), (4, 1), (4, 0), (5, 2)])
@pytest.mark.parametrize(("lo", "hi"), [(2.0, 5.0), (-1.0, 2.0)])
def test_variance_map_exact(n: int, ddof: int, lo: float, hi: float) -> None:
    t = _space(n, CHANGE, lo, hi) >> dp.t.then_variance(ddof=ddof)
    per = Fraction(9) * (n - 1) / (n * (n - ddof))
    assert [t.map(d) for d in (1, 2, 3)] == [per, 2 * per, 3 * per]
    s = _space(n, SYM, lo, hi) >> dp.t.then_variance(ddof=ddof)
    assert [s.map(d) for d in (1, 2, 4)] == [0, per, 2 * per]


@pytest.mark.parametrize("stat", ["mean", "variance"])
def test_maps_bound_every_change_on_a_grid(stat: str) -> None:
    # exhaustive over a small grid with L ≠ 0: the change of the exact statistic never exceeds
    # map(1), and the worst case reaches it (the map is tight)
    lo, hi, n = -1.0, 3.0, 3
    t = _space(n, CHANGE, lo, hi) >> (dp.t.then_mean() if stat == "mean" else
                                      dp.t.then_variance())
    grid = [-1.0, 0.0, 1.5, 3.0]
    worst = Fraction(0)

    def exact(xs: tuple[float, ...]) -> Fraction:
        fs = [Fraction(x) for x in xs]
        mu = sum(fs, Fraction(0)) / n
        if stat == "mean":
            return mu
        return sum(((x - mu) ** 2 for x in fs), Fraction(0)) / (n - 1)

    for xs in itertools.product(grid, repeat=n):
        for y in grid:
            ys = (y, *xs[1:])
            gap = abs(exact(xs) - exact(ys))
            assert gap <= t.map(1)
            worst = max(worst, gap)
            assert t(list(xs)) == float(exact(xs))
    assert worst == t.map(1) or stat == "variance"
    assert worst >= t.map(1) / 2
