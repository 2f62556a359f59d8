"""Exact maps and noise scales at d_in > 1 for histogram, quantiles, report-noisy-max and RR."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import dpcert as dp
from dpcert.core.events import RandomizedResponseEvent, SelfComposedEvent
from dpcert.mechanisms.quantile import quantile_scores

CATS = ["a", "b", "c"]


@pytest.mark.parametrize("metric", [dp.SymmetricDistance(), dp.ChangeOneDistance(),
                                    dp.HammingDistance(), dp.InsertDeleteDistance()])
def test_histogram_maps_exact(metric: dp.Metric) -> None:
    bounded = isinstance(metric, (dp.ChangeOneDistance, dp.HammingDistance))
    size = 5 if bounded else None
    space = (dp.VectorDomain(dp.AtomDomain(str), size=size), metric)
    lap = dp.m.make_histogram(*space, CATS, 4)
    gau = dp.m.make_histogram(*space, CATS, 3, noise="gaussian")
    f = 2 if bounded else 1
    for d in (1, 2, 3):
        assert lap.map(d) == Fraction(f * d, 4)
        assert gau.map(d) == Fraction(f * d * d, 18)


def test_report_noisy_max_scales_exact() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    score = lambda xs: [xs.count(0), xs.count(1)]  # noqa: E731
    m = dp.m.make_report_noisy_max(*space, [0, 1], score, 3, Fraction(1, 2), noise="laplace")
    assert m.params["noise_scale"] == 12  # 2Δ/ε
    mono = dp.m.make_report_noisy_max(*space, [0, 1], score, 3, Fraction(1, 2), noise="laplace",
                                      monotonic=True)
    assert mono.params["noise_scale"] == 6  # Δ/ε
    assert m.map(3) == Fraction(3, 2)


def test_quantiles_split_epsilon_and_match_the_single_quantile_law() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    cands = [0, 2, 4, 6, 8]
    qs = dp.m.make_quantiles(*space, cands, [0.25, 0.75], 2.0)
    assert qs.params["epsilon_each"] == 1 and qs.map(2) == 4
    data = [1, 1, 2, 3, 3, 5, 7, 7, 7, 8]
    # the first released quantile is the exponential mechanism with ε/2 = 1 on the alpha = 1/4
    # utility (sensitivity max(1/4, 3/4)·4 = 3 in units of 1/4); compare with a chi-square test
    u = quantile_scores(np.asarray(data), np.asarray(cands), Fraction(1, 4)).astype(float)
    sens = 3.0
    probs = np.exp(1.0 * (u - u.max()) / (2 * sens))
    probs /= probs.sum()
    runs = 3000
    got = [qs(data)[0] for _ in range(runs)]
    counts = np.array([got.count(c) for c in cands])
    assert stats.chisquare(counts, probs * runs).pvalue > 1e-6
    wrong = np.exp(2.0 * (u - u.max()) / (2 * sens))
    wrong /= wrong.sum()
    assert stats.chisquare(counts, wrong * runs).pvalue < 1e-6  # the test can tell ε from ε/2


@pytest.mark.parametrize("d_in", [1, 2, 5])
def test_randomized_response_events_scale_with_d_in(d_in: int) -> None:
    rr = dp.m.make_randomized_response_bool(Fraction(1, 2),
                                            input_domain=dp.VectorDomain(dp.AtomDomain(bool)))
    one = RandomizedResponseEvent(epsilon=Fraction(1, 2))
    assert rr.event(d_in) == (one if d_in == 1 else SelfComposedEvent(one, d_in))
    rap = dp.m.make_rappor(4, 1)
    half = RandomizedResponseEvent(epsilon=Fraction(1, 2))
    assert rap.event(d_in) == SelfComposedEvent(half, 2 * d_in)
    assert rr.map(d_in) == Fraction(d_in, 2)
