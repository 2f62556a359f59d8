"""Frequency estimators for the local randomizers: unbiasedness and interval coverage."""

from __future__ import annotations

import numpy as np
import pytest

import dpcert as dp
from dpcert.errors import InvalidParameter, OutOfDomain


def test_estimator_inputs() -> None:
    rr = dp.m.make_randomized_response_bool(1.0)
    with pytest.raises(InvalidParameter, match="bools"):
        dp.m.estimate_frequencies([1, 0], rr)
    k = dp.m.make_randomized_response(["a", "b"], 1.0)
    with pytest.raises(OutOfDomain, match="'z'"):
        dp.m.estimate_frequencies(["a", "z"], k)
    with pytest.raises(InvalidParameter, match="mechanism"):
        dp.m.estimate_frequencies([True], dp.m.make_laplace(dp.AtomDomain(int),
                                                            dp.AbsoluteDistance(), 1))
    r = dp.m.make_rappor(3, 1.0)
    with pytest.raises(InvalidParameter, match="RAPPOR"):
        dp.m.estimate_frequencies(np.ones((4, 2)), r)
    est = dp.m.estimate_frequencies(np.array([[1, 0, 0], [0, 1, 0]]), r, confidence=0.9)
    assert est.categories == (0, 1, 2) and est.counts.shape == (3,)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bool", "krr", "rappor"])
def test_estimates_are_unbiased_within_their_intervals(kind: str) -> None:
    n = 400_000
    truth = np.array([0.5, 0.3, 0.2]) if kind != "bool" else np.array([0.35, 0.65])
    k = truth.size
    values = np.repeat(np.arange(k), (truth * n).astype(int))
    if kind == "bool":
        m = dp.m.make_randomized_response_bool(
            1.0, input_domain=dp.VectorDomain(dp.AtomDomain(bool)))
        reports = m(values.astype(bool))
    elif kind == "krr":
        m = dp.m.make_randomized_response(
            [0, 1, 2], 1.0, input_domain=dp.VectorDomain(dp.AtomDomain(int)))
        reports = m(values)
    else:
        m = dp.m.make_rappor(3, 2.0,
                             input_domain=dp.VectorDomain(dp.AtomDomain(int, bounds=(0, 2))))
        reports = m(values)
    est = dp.m.estimate_frequencies(reports, m, confidence=1 - 4e-8)  # z ≈ 5.5
    assert np.all(est.ci_low <= truth) and np.all(truth <= est.ci_high), est
    assert np.all(np.sqrt(est.variances) < 0.01)
