"""Measurement.sample (the vectorised batch path) has the distribution of repeated calls."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcert as dp

CANDS = ["a", "b", "c", "d"]
SPACE = (dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())


def votes(xs: list[str]) -> list[int]:
    return [xs.count(c) for c in CANDS]


DATA = ["a"] * 3 + ["b"] * 2 + ["c"]


def chi2_stat(counts: np.ndarray, probs: np.ndarray) -> float:
    expected = probs * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.slow
def test_exponential_batch_matches_exact_distribution() -> None:
    eps = 1.0
    m = dp.m.make_exponential(*SPACE, CANDS, votes, 1, eps)
    out = m.sample(DATA, 400_000)
    counts = np.array([int(np.sum(out == c)) for c in CANDS], dtype=float)
    w = np.array([math.exp(eps * u / 2) for u in votes(DATA)])
    # chi-square with 3 degrees of freedom: P(stat > 40) < 1e-8
    assert chi2_stat(counts, w / w.sum()) < 40
    # and the batch path agrees with single calls on the mode
    single = [m(DATA) for _ in range(2000)]
    assert abs(single.count("a") / 2000 - counts[0] / counts.sum()) < 0.06


@pytest.mark.slow
def test_permute_and_flip_and_noisy_max_batches_are_valid() -> None:
    for make, kw in ((dp.m.make_permute_and_flip, {}),
                     (dp.m.make_report_noisy_max, {"noise": "laplace"}),
                     (dp.m.make_report_noisy_max, {})):
        m = make(*SPACE, CANDS, votes, 1, 1.0, **kw)
        out = m.sample(DATA, 100_000)
        assert len(out) == 100_000 and set(out.tolist()) <= set(CANDS)
        share_a = float(np.mean(out == "a"))
        single = [m(DATA) for _ in range(3000)]
        # |difference| of two proportions; 0.05 is > 6 standard deviations here
        assert abs(single.count("a") / 3000 - share_a) < 0.05
    top2 = dp.m.make_report_noisy_max(*SPACE, CANDS, votes, 1, 1.0, k=2)
    assert top2.batch_map is None and len(top2.sample(DATA, 3)) == 3


def test_sample_checks_its_arguments() -> None:
    m = dp.m.make_exponential(*SPACE, CANDS, votes, 1, 1.0)
    with pytest.raises(dp.errors.InvalidParameter, match="n=-1"):
        m.sample(DATA, -1)
    with pytest.raises(dp.errors.OutOfDomain):
        m.sample([1, 2], 3)
    post = m >> str.upper
    assert set(post.sample(DATA, 50)) <= {"A", "B", "C", "D"}


@pytest.mark.slow
def test_sparse_vector_batch_matches_single_runs() -> None:
    ints = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    queries = [lambda xs, t=t: sum(1 for x in xs if x >= t) for t in (3, 2, 1)]
    for kw in ({}, {"c": 2}, {"numeric_epsilon": 1.0}):
        m = dp.m.make_sparse_vector(*ints, queries, threshold=2, epsilon=1.0, **kw)
        data = [1, 2, 3]
        batch = m.sample(data, 20_000)
        single = [m(data) for _ in range(4000)]
        assert all(len(r) <= 3 for r in batch)
        for pos in range(2):  # share of runs whose answer at position pos is a positive
            def hit(r: list[object], p: int = pos) -> bool:
                return len(r) > p and r[p] not in (False, None)
            b = sum(hit(r) for r in batch) / len(batch)
            s = sum(hit(r) for r in single) / len(single)
            assert abs(b - s) < 0.05, (kw, pos, b, s)  # > 5.7 standard deviations
