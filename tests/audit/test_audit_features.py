"""Sentinel and difference features, the additive score, float-lattice statistics, the search."""

from __future__ import annotations

import numpy as np

from dpcert.audit.search.intervals import search_intervals
from dpcert.audit.search.standard import search_pair
from dpcert.audit.stats.events import Event
from dpcert.audit.stats.features import (
    FloatCell,
    LowestBit,
    fit_additive,
    fit_additive_pair,
    fit_feature_map,
    is_float_valued,
)


def test_lowest_bit_is_the_finest_lattice() -> None:
    y = np.array([1.0, 0.75, -0.75, 2.0 ** -60, 3.0 * 2.0 ** 40, 5e-324, 0.0, np.inf, np.nan])
    assert LowestBit()(y).tolist() == [0.0, -2.0, -2.0, -60.0, 40.0, -1074.0, np.inf, np.inf,
                                       np.inf]
    cells = FloatCell()(np.array([0.75, 1.5]))
    assert cells.tolist() == [[0.0, -2.0], [1.0, -1.0]]


def test_sentinels_are_found_and_flagged() -> None:
    rng = np.random.default_rng(0)
    col = rng.normal(0, 1, 2_000)
    col[::3] = -1000.0
    y = np.column_stack([col, rng.normal(0, 1, 2_000)])
    fm = fit_feature_map(y)
    assert fm.sentinels == ((0, -1000.0),)
    f = fm(y)
    assert f.shape == (2_000, 3)
    assert np.isnan(f[::3, 0]).all() and (f[::3, 2] == 1.0).all() and f[1, 2] == 0.0
    # few distinct values: discrete coordinates have no sentinels
    assert fit_feature_map(np.array([[0.0], [1.0], [-1.0]] * 50)).sentinels == ()


def test_difference_view_recovers_increments() -> None:
    y = np.cumsum(np.arange(12.0).reshape(3, 4), axis=1)
    fd = fit_feature_map(y, differences=True)
    assert fd(y).tolist() == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]


def test_additive_score_is_the_likelihood_ratio_of_independent_bits() -> None:
    # 6 informative bits (0.6 vs 0.4) among 14 noise bits: the score ranks outputs by the
    # number of informative bits set, whatever the noise bits say
    rng = np.random.default_rng(1)
    n = 40_000
    p_a = np.r_[np.full(6, 0.6), np.full(14, 0.5)]
    p_b = np.r_[np.full(6, 0.4), np.full(14, 0.5)]
    a = (rng.random((n, 20)) < p_a).astype(float)
    b = (rng.random((n, 20)) < p_b).astype(float)
    score = fit_additive(a, b, fit_feature_map(a))
    top = np.r_[np.ones(6), np.zeros(14)][None, :]
    bottom = np.r_[np.zeros(6), np.ones(14)][None, :]
    assert score(top)[0] > 6 * 0.3 and score(bottom)[0] < -6 * 0.3
    assert "additive" in score.describe()


def _bits(seed: int, n: int, p_a: np.ndarray, p_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return ((rng.random((n, p_a.size)) < p_a).astype(float),
            (rng.random((n, p_b.size)) < p_b).astype(float))


def test_the_sparse_additive_score_has_the_levels_of_the_true_likelihood_ratio() -> None:
    # RAPPOR-like: 6 bits carry e^0.05 each way, 14 carry nothing.  The plain score's noise
    # weights spread the outputs with all 6 bits favourable over many values; the sparse
    # score zeroes the noise weights, so it depends on the 6 bits only (2^6 values), and its
    # top value is taken by exactly the outputs with all 6 favourable
    p_a = np.r_[np.full(6, 0.5125), np.full(14, 0.5)]
    p_b = np.r_[np.full(6, 0.4875), np.full(14, 0.5)]
    a, b = _bits(3, 50_000, p_a, p_b)
    fm = fit_feature_map(a)
    plain, sparse = fit_additive_pair(a, b, fm)
    assert sparse is not None and sparse.sparse and "sparse additive" in sparse.describe()
    assert not plain.sparse and plain.describe().startswith("additive")
    kept = [j for j, t in enumerate(sparse.tables) if t.any()]
    assert kept == list(range(6))
    ya, _ = _bits(4, 20_000, p_a, p_b)
    s_sparse, s_plain = sparse(ya), plain(ya)
    assert np.unique(np.round(s_sparse, 9)).size <= 64 < 10_000 < np.unique(s_plain).size
    top = s_sparse == s_sparse.max()
    assert np.array_equal(top, (ya[:, :6] == 1).all(axis=1))
    # the same tables where nothing is dropped
    assert all(np.array_equal(u, v) for u, v in zip(plain.tables, fit_additive(a, b, fm).tables,
                                                    strict=True))


def test_no_sparse_score_when_it_would_change_nothing_or_leave_nothing() -> None:
    strong = np.full(4, 0.8)
    a, b = _bits(5, 20_000, strong, 1.0 - strong)
    assert fit_additive_pair(a, b, fit_feature_map(a))[1] is None      # every weight kept
    same = np.full(4, 0.5)
    a, b = _bits(6, 20_000, same, same)
    assert fit_additive_pair(a, b, fit_feature_map(a))[1] is None      # every weight dropped


def test_search_finds_sentinel_mixed_events() -> None:
    # x' moves the numeric part up by 2 when it is not the sentinel
    rng = np.random.default_rng(2)
    n = 50_000

    def out(shift: float) -> np.ndarray:
        v = rng.normal(shift, 1.0, n)
        v[rng.random(n) < 0.7] = -1000.0
        return np.column_stack([v, rng.normal(0, 1, n)])

    found = search_pair(out(0.0), out(2.0), 0, n_estimate=100_000, z=2.0, delta=0.0)
    assert max(c.predicted for c in found) > 1.0


def test_float_valued_detection() -> None:
    assert is_float_valued(np.array([0.5, 1.0]))
    assert not is_float_valued(np.array([1.0, 2.0, np.nan]))


def test_screening_uses_rays_only() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 1, 5_000), rng.normal(0, 3, 5_000)
    for c in search_pair(a, b, 0, n_estimate=5_000, z=2.0, delta=0.0, screening=True):
        assert isinstance(c.event, Event)
        assert np.isinf(c.event.low) or np.isinf(c.event.high) or c.event.low == c.event.high


def test_rays_preferred_when_an_interval_is_no_better() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.laplace(0, 1, 200_000), rng.laplace(1, 1, 200_000)
    fwd = next(c for c in search_intervals(a, b, n_estimate=10**6, z=2.0, delta=0.0)
               if c.forward)
    assert np.isinf(fwd.low)
