"""Sparse vector, partition selection and histograms."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import dpcert as dp
from dpcert.errors import InvalidParameter, MetricMismatch
from dpcert.mechanisms.accuracy import discrete_laplace_accuracy
from dpcert.mechanisms.sparse_vector import svt_budget_split
from dpcert.mechanisms.threshold import partition_threshold
from dpcert.testing import check_measurement_contract

SPACE = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())


def dlap_pmf(t: float, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    z = np.arange(lo, hi + 1)
    q = math.exp(-1 / t)
    return z, (1 - q) / (1 + q) * q ** np.abs(z)


def svt_probs(answers: list[int], thr: int, t1: float, t2: float) -> np.ndarray:
    """Exact outcome probabilities of AboveThreshold (c = 1) on fixed answers."""
    rho, prho = dlap_pmf(t1, -400, 400)
    nu, pnu = dlap_pmf(t2, -800, 800)
    cdf = np.cumsum(pnu)

    def p_ge(m: np.ndarray) -> np.ndarray:  # P(ν ≥ m)
        idx = np.clip(m - nu[0], 0, len(nu))
        below = np.where(idx > 0, cdf[np.maximum(idx - 1, 0)], 0.0)
        return 1 - below

    out = []
    survive = np.ones_like(prho)
    for a in answers:
        pos = p_ge(thr + rho - a)
        out.append(float((prho * survive * pos).sum()))
        survive = survive * (1 - pos)
    out.append(float((prho * survive).sum()))
    return np.array(out)


def svt_counts(m: dp.Measurement, data: list[int], n: int, k: int) -> np.ndarray:
    c = np.zeros(k + 1, dtype=np.int64)
    for _ in range(n):
        out = m(data)
        c[len(out) - 1 if out[-1] else k] += 1
    return c


def test_svt_api_and_bad_input() -> None:
    qs = [lambda xs: len(xs), lambda xs: sum(xs)]
    m = dp.m.make_sparse_vector(*SPACE, qs, 2, 1.0, c=2, numeric_epsilon=0.5)
    check_measurement_contract(m, [0, 1, 2])
    assert m.map(1) == Fraction(3, 2)
    out = m([5, 5, 5])
    assert all(v is None or isinstance(v, int) for v in out)
    e1, e2 = svt_budget_split(Fraction(1), 1, False)
    assert e1 + e2 == 1 and 0.3 < float(e1) < 0.45  # 1/(1 + 2^(2/3)) ≈ 0.386
    with pytest.raises(InvalidParameter, match="queries"):
        dp.m.make_sparse_vector(*SPACE, [], 1, 1.0)
    with pytest.raises(InvalidParameter, match="threshold"):
        dp.m.make_sparse_vector(*SPACE, qs, 1.5, 1.0)
    with pytest.raises(InvalidParameter, match="epsilon"):
        dp.m.make_sparse_vector(*SPACE, qs, 1, -1.0)
    with pytest.raises(InvalidParameter, match="integer answers"):
        dp.m.make_sparse_vector(*SPACE, [lambda xs: 0.5], 1, 1.0)([1])


@pytest.mark.slow
def test_above_threshold_statistics() -> None:
    eps = 1.0
    qs = [lambda xs: len(xs), lambda xs: len(xs) - 1]
    m = dp.m.make_sparse_vector(*SPACE, qs, 3, eps, threshold_fraction=0.5)
    t1, t2 = 1 / 0.5, 2 / 0.5
    n = 8000
    c1 = svt_counts(m, [1, 1, 1], n, 2)
    c2 = svt_counts(m, [1, 1, 1, 1], n, 2)
    for c, ans in ((c1, [3, 2]), (c2, [4, 3])):
        exp = svt_probs(ans, 3, t1, t2) * n
        chi2 = float(((c - exp) ** 2 / exp).sum())
        assert chi2 <= stats.chi2.isf(1e-7, 2), chi2
    # privacy: every outcome's ratio lower bound stays below e^ε
    for a, b in ((c1, c2), (c2, c1)):
        p1, p2 = a / n, b / n
        lo = (p1 - 5.5 * np.sqrt(p1 * (1 - p1) / n)) / (p2 + 5.5 * np.sqrt(p2 * (1 - p2) / n))
        assert lo.max() <= math.exp(eps)


def test_partition_selection() -> None:
    sp = (dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
    m = dp.m.make_partition_selection(*sp, 1.0, 1e-6)
    check_measurement_contract(m, [0, 1, 2, 3])
    eps, delta = m.map(2)
    assert eps == 2 and delta >= 2 * Fraction(1, 10**6) * Fraction(2718, 1000)
    assert m([]) == {}
    with pytest.raises(MetricMismatch):
        dp.m.make_partition_selection(dp.VectorDomain(dp.AtomDomain(str)),
                                      dp.ChangeOneDistance(), 1.0, 1e-6)
    for bad in (0, 1, -0.1, float("nan")):
        with pytest.raises(InvalidParameter, match="delta"):
            dp.m.make_partition_selection(*sp, 1.0, bad)
    # τ is the smallest integer with P(Z ≥ τ − 1) = q^{τ−1}/(1+q) ≤ δ
    for e, d in ((1.0, 1e-6), (0.1, 1e-9), (3.0, 0.01)):
        tau = partition_threshold(e, d)
        q = math.exp(-e)
        assert q ** (tau - 1) / (1 + q) <= d < q ** (tau - 2) / (1 + q) or tau == 2


@pytest.mark.slow
def test_partition_selection_delta_statistics() -> None:
    sp = (dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
    m = dp.m.make_partition_selection(*sp, 1.0, 0.01)
    tau = m.params["threshold"]
    q = math.exp(-1.0)
    p = q ** (tau - 1) / (1 + q)
    n = 8000
    hits = sum(1 for _ in range(n) if m(["rare"]))
    assert stats.binomtest(hits, n, p).pvalue > 1e-7
    assert p <= 0.01


def test_histogram() -> None:
    sp = (dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
    h = dp.m.make_histogram(*sp, ["a", "b"], scale=2)
    check_measurement_contract(h, [0, 1, 2])
    assert h.accuracy(0.05) == discrete_laplace_accuracy(2, 0.05)
    g = dp.m.make_histogram(dp.VectorDomain(dp.AtomDomain(str)), dp.ChangeOneDistance(),
                            ["a", "b"], scale=2, noise="gaussian")
    assert isinstance(g.output_measure, dp.ZCDP) and g.map(1) == Fraction(1, 4)
    with pytest.raises(InvalidParameter, match="categories"):
        dp.m.make_histogram(*sp, [], scale=1)
    with pytest.raises(InvalidParameter, match="scale"):
        dp.m.make_histogram(*sp, ["a"], scale=0)
    counts = np.array([h(["a"] * 50 + ["b"] * 10) for _ in range(200)])
    assert abs(counts[:, 0].mean() - 50) < 2 and abs(counts[:, 1].mean() - 10) < 2
