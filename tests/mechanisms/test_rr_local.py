"""Local randomizers: contracts, bad input, and statistical privacy/distribution tests."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import dpcert as dp
from dpcert.errors import DomainMismatch, InvalidParameter, OutOfDomain
from dpcert.testing import check_measurement_contract

Z = 5.5  # two-sided normal tail ≈ 4e-8 per comparison


def ratio_bounds(c1: np.ndarray, c2: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower/upper confidence bounds on P1(o)/P2(o) per outcome (normal approximation)."""
    p1, p2 = c1 / n, c2 / n
    s1, s2 = np.sqrt(p1 * (1 - p1) / n), np.sqrt(p2 * (1 - p2) / n)
    lo = (p1 - Z * s1) / (p2 + Z * s2)
    with np.errstate(divide="ignore"):
        hi = (p1 + Z * s1) / np.maximum(p2 - Z * s2, 0)
    return lo, hi


def assert_private_and_tight(c1: np.ndarray, c2: np.ndarray, n: int, eps: float,
                             tight: bool = True) -> None:
    """Both directions: no outcome's ratio provably exceeds e^ε; some outcome reaches it."""
    keep = (c1 >= 1000) & (c2 >= 1000)
    best_hi = 0.0
    for a, b in ((c1[keep], c2[keep]), (c2[keep], c1[keep])):
        lo, hi = ratio_bounds(a, b, n)
        assert lo.max() <= math.exp(eps), f"ratio lower bound {lo.max()} > e^ε = {math.exp(eps)}"
        best_hi = max(best_hi, float(hi.max()))
    if tight:
        assert best_hi >= math.exp(eps), f"no outcome reaches e^ε: best {best_hi}"


def assert_chisquare(counts: np.ndarray, probs: np.ndarray) -> None:
    n = counts.sum()
    exp = probs * n
    keep = exp >= 5
    chi2 = float((((counts - exp) ** 2)[keep] / exp[keep]).sum())
    dof = int(keep.sum()) - 1
    assert chi2 <= stats.chi2.isf(1e-7, dof), f"chi-square {chi2} too large for {dof} dof"


# ------------------------------------------------------------------ contracts and bad input

@pytest.mark.parametrize("m", [
    dp.m.make_randomized_response_bool(1.0),
    dp.m.make_randomized_response(["a", "b", "c"], 0.5),
    dp.m.make_rappor(5, 2.0),
    dp.m.make_randomized_response_bool(1.0, input_domain=dp.VectorDomain(dp.AtomDomain(bool))),
])
def test_contract(m: dp.Measurement) -> None:
    check_measurement_contract(m, [0, 1, 2, 5])


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), "1", True])
def test_bad_epsilon(eps: object) -> None:
    with pytest.raises(InvalidParameter, match="epsilon"):
        dp.m.make_randomized_response_bool(eps)
    with pytest.raises(InvalidParameter, match="epsilon"):
        dp.m.make_randomized_response([1, 2], eps)
    with pytest.raises(InvalidParameter, match="epsilon"):
        dp.m.make_rappor(3, eps)


def test_bad_categories_and_values() -> None:
    with pytest.raises(InvalidParameter, match="categories"):
        dp.m.make_randomized_response([], 1.0)
    with pytest.raises(InvalidParameter, match="duplicates"):
        dp.m.make_randomized_response(["a", "a"], 1.0)
    with pytest.raises(InvalidParameter, match="one type"):
        dp.m.make_randomized_response(["a", 1], 1.0)
    m = dp.m.make_randomized_response(["a", "b"], 1.0)
    with pytest.raises(OutOfDomain, match="'z'"):
        m("z")
    v = dp.m.make_randomized_response(["a", "b"], 1.0,
                                      input_domain=dp.VectorDomain(dp.AtomDomain(str)))
    with pytest.raises(OutOfDomain, match="'z'"):
        v(["a", "z"])
    with pytest.raises(OutOfDomain):
        dp.m.make_randomized_response_bool(1.0)(1)
    with pytest.raises(OutOfDomain):
        dp.m.make_rappor(3, 1.0)(3)
    with pytest.raises(InvalidParameter, match="domain_size"):
        dp.m.make_rappor(1, 1.0)
    with pytest.raises(DomainMismatch):
        dp.m.make_randomized_response_bool(1.0, input_domain=dp.AtomDomain(int))


def test_maps_and_probabilities_are_exact_and_safe() -> None:
    for eps in (Fraction(1, 10), Fraction(1), Fraction(5)):
        p = dp.m.make_randomized_response_bool(eps).params["p_truth"]
        assert p.denominator <= 2**48 and p > 0.5
        assert p / (1 - p) <= Fraction(math.exp(float(eps)) * (1 + 1e-15))
        assert abs(float(p) - math.exp(eps) / (1 + math.exp(eps))) < 2**-46
        m = dp.m.make_randomized_response(list(range(6)), eps)
        q, pt = m.params["p_other"], m.params["p_truth"]
        assert pt + 5 * q == 1 and pt / q <= Fraction(math.exp(float(eps)) * (1 + 1e-15))
        r = dp.m.make_rappor(4, eps).params["p_flip"]
        assert ((1 - r) / r) ** 2 <= Fraction(math.exp(float(eps)) * (1 + 1e-15))
    assert dp.m.make_randomized_response_bool(math.log(3)).params["p_truth"] == Fraction(3, 4)
    assert dp.m.make_rappor(4, 2.0).map(3) == 6


def test_vector_forms_and_hamming_map() -> None:
    vd = dp.VectorDomain(dp.AtomDomain(bool))
    m = dp.m.make_randomized_response_bool(1.0, input_domain=vd)
    assert isinstance(m.input_metric, dp.HammingDistance)
    assert m(np.ones(10, dtype=bool)).dtype == np.bool_
    k = dp.m.make_randomized_response([1, 2, 3], 1.0,
                                      input_domain=dp.VectorDomain(dp.AtomDomain(int)))
    assert set(k([1, 2, 3, 3]).tolist()) <= {1, 2, 3}
    r = dp.m.make_rappor(3, 1.0, input_domain=dp.VectorDomain(dp.AtomDomain(int, bounds=(0, 2))))
    assert r([0, 2]).shape == (2, 3)


# ------------------------------------------------------------------ statistical (10^6 runs)

N = 10**6


@pytest.mark.slow
def test_rr_bool_statistics() -> None:
    vd = dp.VectorDomain(dp.AtomDomain(bool))
    eps = 1.0
    m = dp.m.make_randomized_response_bool(eps, input_domain=vd)
    p = float(m.params["p_truth"])
    t = int(m(np.ones(N, dtype=bool)).sum())
    f = int(m(np.zeros(N, dtype=bool)).sum())
    c1, c2 = np.array([t, N - t]), np.array([f, N - f])
    assert_chisquare(c1, np.array([p, 1 - p]))
    assert_chisquare(c2, np.array([1 - p, p]))
    assert_private_and_tight(c1, c2, N, eps)


@pytest.mark.slow
def test_krr_statistics() -> None:
    cats = ["a", "b", "c", "d"]
    eps = 1.0
    m = dp.m.make_randomized_response(cats, eps, input_domain=dp.VectorDomain(dp.AtomDomain(str)))
    q, p = float(m.params["p_other"]), float(m.params["p_truth"])

    def counts(v: str) -> np.ndarray:
        out = m(np.array([v] * N, dtype=object))
        return np.array([(out == c).sum() for c in cats])

    ca, cb = counts("a"), counts("b")
    assert_chisquare(ca, np.array([p, q, q, q]))
    assert_chisquare(cb, np.array([q, p, q, q]))
    assert_private_and_tight(ca, cb, N, eps)


@pytest.mark.slow
def test_rappor_statistics() -> None:
    k, eps = 3, 2.0
    m = dp.m.make_rappor(k, eps, input_domain=dp.VectorDomain(dp.AtomDomain(int, bounds=(0, 2))))
    r = float(m.params["p_flip"])
    weights = 1 << np.arange(k)

    def counts(v: int) -> np.ndarray:
        bits = m(np.full(N, v, dtype=np.int64))
        return np.bincount(bits @ weights, minlength=2**k)

    def probs(v: int) -> np.ndarray:
        out = []
        for code in range(2**k):
            pr = 1.0
            for j in range(k):
                bit = (code >> j) & 1
                pr *= (1 - r) if bit == (j == v) else r
            out.append(pr)
        return np.array(out)

    c0, c1 = counts(0), counts(1)
    assert_chisquare(c0, probs(0))
    assert_chisquare(c1, probs(1))
    assert_private_and_tight(c0, c1, N, eps)


def test_accounting_events() -> None:
    from dpcert.core.events import RandomizedResponseEvent, SelfComposedEvent

    assert isinstance(dp.m.make_randomized_response_bool(1.0).event(1), RandomizedResponseEvent)
    ev = dp.m.make_rappor(4, 1.0).event(1)
    assert isinstance(ev, SelfComposedEvent) and ev.count == 2
