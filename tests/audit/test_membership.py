"""Event membership on the estimation batch: every fast route gives the bits of ``contains``."""

from __future__ import annotations

from typing import Any

import audit_subjects as subjects  # registered by tests/audit/conftest.py
import numpy as np
import pytest

import dpcert as dp
from dpcert.audit import auditor
from dpcert.audit.auditor import audit
from dpcert.audit.kernel import membership
from dpcert.audit.kernel.membership import Membership, _bins
from dpcert.audit.stats.classifier import fit_logistic
from dpcert.audit.stats.events import Coordinate, Event, Identity, RowSum, fit_histogram
from dpcert.audit.stats.features import (
    Composed,
    FloatCell,
    fit_additive,
    fit_feature_map,
    fit_summary,
)


def _check(events: list[Event], chunks: list[np.ndarray]) -> Membership:
    m = Membership(events)
    for y in chunks:
        got = m(y)
        for e, g in zip(events, got, strict=True):
            want = e.contains(y)
            assert g.dtype == bool and np.array_equal(g, want), e.describe()
    return m


def _draws(name: str, x: object, n: int, seed: int) -> np.ndarray:
    return np.asarray(subjects.BY_NAME[name].make(np.random.default_rng(seed))(x, n), float)


def test_discrete_rows_use_the_code_tables() -> None:
    x, xp = [1] * 5 + [0] * 5, [0] * 5 + [1] * 5
    a, b = _draws("SVT1", x, 6_000, 1), _draws("SVT1", xp, 6_000, 2)
    hist = fit_histogram(a[:3_000], b[:3_000], 1_000)
    assert hist is not None
    events = [Event(hist, -np.inf, -0.1), Event(hist, 0.05, np.inf),
              Event(Coordinate(5), 1.0, np.inf), Event(RowSum(), -2.0, 0.0)]
    m = _check(events, [a[3_000:4_500], b[3_000:4_500], a[4_500:], b[4_500:]])
    assert m.coded_rows == 6_000 and 0 < m.distinct_codes <= 66


def test_one_dimensional_and_bit_outputs() -> None:
    r = _draws("ReportNoisyMax1", [1, 0, 0, 0, 0], 4_000, 3)
    _check([Event(Identity(), -np.inf, 0.0), Event(Identity(), 2.0, 3.0)],
           [r[:2_000], r[2_000:]])
    bits = _draws("OneTimeRappor", [1], 4_000, 4)
    other = _draws("OneTimeRappor", [0], 4_000, 5)
    nb = fit_additive(bits[:2_000], other[:2_000], fit_feature_map(bits[:2_000]))
    lr = fit_logistic(bits[:2_000], other[:2_000])
    m = _check([Event(nb, -np.inf, -0.5), Event(lr, 0.2, np.inf)], [bits[2_000:], other[2_000:]])
    assert m.coded_rows == 4_000


def test_chunks_the_codes_cannot_hold_go_the_direct_way() -> None:
    y = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])
    events = [Event(Coordinate(0), 1.0, np.inf), Event(RowSum(), 1.0, 1.0)]
    odd = [np.array([[2.0, 0.0], [1.0, 1.0]]),        # out of range
           np.array([[0.5, 1.0], [1.0, 1.0]]),        # not an integer
           np.array([[-0.0, 1.0], [1.0, 1.0]]),       # -0.0 decodes as 0.0
           np.array([[np.nan, 1.0], [1.0, 1.0]])]     # NaN
    m = _check(events, [y, *odd, y])
    assert m.coded_rows == 3 + 2 + 3     # the range widens to [0, 2] once
    late = [np.array([[0.0, 1.0], [1.0, 1.0]]), np.array([[-1.0, 1.0], [1.0, 0.0]]),
            np.array([[-1.0, 0.0], [0.0, 0.0]])]
    m = _check(events, late)          # SVT's abort value -1 first seen in the second chunk
    assert m.coded_rows == 6
    m = _check(events, [np.array([[np.nan, 1.0]]), y, odd[1], y])   # NaN first: no range yet
    assert m.coded_rows == 6
    m = _check(events, [np.ones((2, 2)), y, y])      # a constant first chunk: no book yet
    assert m.coded_rows == 6
    m = _check(events, [np.full((2, 2), 0.5), y])    # fractions: the direct way for good
    assert m.coded_rows == 0
    _check(events, [np.array([[0.5, 1.0]]), y])       # no code book from a non-integer start


def test_additive_scores_on_continuous_outputs_are_bit_identical() -> None:
    rng = np.random.default_rng(7)
    a = rng.laplace(0.0, 10.0, (20_000, 5))
    b = rng.laplace(0.3, 10.0, (20_000, 5))
    a[::50, 2] = -1000.0                  # a sentinel (own bin), NaN and infinities
    a[::97, 1] = np.nan
    b[::89, 3] = np.inf
    b[::83, 0] = -np.inf
    fm = fit_feature_map(np.concatenate([a[:10_000], b[:10_000]]))
    nb = fit_additive(a[:10_000], b[:10_000], fm)
    summary = fit_summary(fm)
    assert summary is not None
    ns = fit_additive(a[:10_000], b[:10_000], summary)
    for stat in (nb, ns):
        for y in (a[10_000:], b[10_000:]):
            assert np.array_equal(membership._score(stat, y).view(np.uint64),
                                  stat(y).view(np.uint64))
    _check([Event(nb, 0.1, np.inf), Event(ns, -np.inf, -0.05)], [a[10_000:], b[10_000:]])


def test_grid_bins_equal_the_binary_search() -> None:
    rng = np.random.default_rng(8)
    edges = np.unique(np.concatenate([rng.standard_cauchy(40), [0.0, 1e-300, 5e-324]]))
    v = np.concatenate([rng.standard_cauchy(50_000), edges, np.nextafter(edges, np.inf),
                        np.nextafter(edges, -np.inf), [np.nan, np.inf, -np.inf, 1e308, -1e308]])
    want = np.where(np.isnan(v), edges.size + 1, np.searchsorted(edges, v, side="right"))
    assert np.array_equal(_bins(v, edges), want)


@pytest.mark.parametrize("name", ["SVT1", "NoisyHist1", "OneTimeRappor"])
def test_audit_counts_are_those_of_the_direct_route(name: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # same seed, same draws: the fast routes must give the counts (and so the bound) of
    # evaluating every statistic directly
    s = subjects.BY_NAME[name]
    counts: list[list[int]] = []
    inner = auditor.run_estimation

    def spy(*args: Any, **kw: Any) -> Any:
        tally, n = inner(*args, **kw)
        counts.append([tally.count(j, side, n) for j in range(tally.candidates)
                       for side in (0, 1)])
        return tally, n

    monkeypatch.setattr(auditor, "run_estimation", spy)

    def run() -> Any:
        return audit(s.make(np.random.default_rng(11)), s.pairs,
                     claimed=dp.PureDP(s.claimed), samples=60_000, input_size=s.input_size,
                     adjacency=s.adjacency, seed=11, search_samples=4_000)

    fast = run()
    monkeypatch.setattr(membership.Membership, "__call__",
                        lambda self, y: [e.contains(y) for e in self.events])
    slow = run()
    assert len(counts) == 2 and len(counts[0]) >= 4 and sum(counts[0]) > 0
    assert counts[0] == counts[1]
    assert fast.epsilon_lower == slow.epsilon_lower


def test_logistic_fast_path_equals_the_masked_formula() -> None:
    rng = np.random.default_rng(9)
    a = rng.laplace(0.0, 3.0, (5_000, 6))
    b = rng.laplace(0.5, 3.0, (5_000, 6))
    a[::40, 1] = np.nan    # an indicator column in the fit
    model = fit_logistic(a, b)
    y = rng.laplace(0.2, 3.0, (20_000, 6))

    def masked(v: np.ndarray) -> np.ndarray:   # the general formula, masks and all
        d = model.mean.size
        w = model.weights[:d] / model.scale
        finite = np.isfinite(v)
        out = (np.einsum("ij,j->i", np.where(finite, v, 0.0), w)
               - np.einsum("ij,j->i", finite.astype(np.float64), model.mean * w) + model.bias)
        out += np.einsum("ij,j->i", (~finite[:, model.indicator_columns]).astype(np.float64),
                         model.weights[d:])
        return out

    assert model.indicator_columns.size == 1
    assert np.array_equal(model.decision(y), masked(y))          # fast path
    y[::7, 1] = np.nan
    y[::11, 4] = np.inf
    assert np.array_equal(model.decision(y), masked(y))          # general path


def test_histogram_slot_tables_equal_the_binary_search() -> None:
    rng = np.random.default_rng(12)
    a = rng.integers(0, 40, (20_000, 2)).astype(float)
    b = rng.integers(3, 43, (20_000, 2)).astype(float)
    hist = fit_histogram(a, b, 5_000)
    assert hist is not None and hist.keys.size > 1_000
    y = np.concatenate([a[:5_000], b[:5_000], rng.integers(-5, 50, (5_000, 2)).astype(float),
                        [[np.nan, 1.0], [-0.0, 3.0]]])
    assert membership._table(hist) is not None
    assert np.array_equal(membership._score(hist, y).view(np.uint64), hist(y).view(np.uint64))
    cell = FloatCell()
    x = rng.laplace(0.0, 10.0, 20_000)
    cells = fit_histogram(cell(x[:10_000]), cell(x[10_000:] + 1.0), 2_000)
    assert cells is not None
    stat = Composed(cell, cells)
    z = np.concatenate([x, x + 1.0, [0.0, -0.0, np.inf, np.nan]])
    assert np.array_equal(membership._score(stat, z).view(np.uint64), stat(z).view(np.uint64))
