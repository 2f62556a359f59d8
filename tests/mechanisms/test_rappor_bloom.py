"""RAPPOR with Bloom filters: parameters, maps, hashing, exact distributions, privacy on
worst-case neighbours (seeded), and decoding."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

import dpcert as dp
from dpcert.errors import DomainMismatch, InvalidParameter, OutOfDomain
from dpcert.samplers import InsecureSeededSource
from dpcert.testing import check_measurement_contract

Z = 5.5  # two-sided normal tail ≈ 4e-8 per comparison
N = 10**6
VS = dp.VectorDomain(dp.AtomDomain(str))


def small(**kw: object) -> dp.m.RapporBloomParams:
    base: dict[str, object] = {"num_bits": 4, "num_hashes": 2, "num_cohorts": 1,
                               "f": 0.5, "p": 0.5, "q": 0.75}
    base.update(kw)
    return dp.m.RapporBloomParams(**base)  # type: ignore[arg-type]


# "v0" and "v5" set disjoint pairs of bits in the 4-bit filter of cohort 0: worst-case neighbours.
A, B = "v0", "v5"


def test_worst_case_pair_is_disjoint() -> None:
    p = small()
    assert p.bloom_indices(A, 0) == (0, 2) and p.bloom_indices(B, 0) == (1, 3)


def test_hash_is_pinned_and_keyed() -> None:
    """Keyed BLAKE2b, not Python's per-process salted hash(): indices are fixed forever."""
    p = dp.m.RapporBloomParams(num_bits=8, num_hashes=2, num_cohorts=1)
    assert [p.bloom_indices(f"v{i}", 0) for i in range(4)] == [(0, 2), (7, 2), (2, 5), (7, 0)]
    other_key = dp.m.RapporBloomParams(num_bits=1024, num_hashes=2, key=b"other")
    assert (dp.m.RapporBloomParams(num_bits=1024).bloom_indices("x", 0)
            != other_key.bloom_indices("x", 0))
    bits = p.bloom_filters(["v0", "v1", "v0"], [0, 0, 0])
    assert bits.tolist()[0] == [1, 0, 1, 0, 0, 0, 0, 0] and bits[0].tolist() == bits[2].tolist()
    assert bits.sum(axis=1).tolist() == [2, 2, 2]
    odd = ["a\x00", "a", "\ud800"]  # trailing NUL and a lone surrogate stay distinct strings
    big = dp.m.RapporBloomParams(num_bits=4096, num_hashes=2, num_cohorts=1)
    rows = big.bloom_filters(odd, [0, 0, 0])
    for row, v in zip(rows, odd, strict=True):
        assert set(np.flatnonzero(row).tolist()) == set(big.bloom_indices(v, 0))


@pytest.mark.parametrize(("kw", "match"), [
    ({"num_bits": 1}, "num_bits"), ({"num_bits": 2**17}, "num_bits"),
    ({"num_hashes": 0}, "num_hashes"), ({"num_hashes": 9, "num_bits": 64}, "num_hashes"),
    ({"num_cohorts": 0}, "num_cohorts"), ({"f": 0}, "f=0"), ({"f": 1.5}, "f=1.5"),
    ({"p": 0.8, "q": 0.75}, "p=0.8 must be < q=0.75"), ({"q": -1}, "q=-1"),
    ({"key": "text"}, "key"), ({"num_bits": 2.0}, "num_bits"),
])
def test_bad_parameters(kw: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidParameter, match=match):
        dp.m.RapporBloomParams(**kw)  # type: ignore[arg-type]


def test_bad_inputs() -> None:
    p = small()
    with pytest.raises(OutOfDomain):
        dp.m.make_rappor_bloom(p)(3)
    with pytest.raises(OutOfDomain, match="cohort=1"):
        p.bloom_indices("a", 1)
    with pytest.raises(InvalidParameter, match="params"):
        dp.m.make_rappor_bloom({"num_bits": 4})  # type: ignore[arg-type]
    with pytest.raises(DomainMismatch):
        dp.m.make_rappor_bloom(p, input_domain=dp.AtomDomain(int))
    with pytest.raises(InvalidParameter, match="candidates"):
        dp.m.decode_rappor_bloom(dp.m.make_rappor_bloom(p, input_domain=VS)(["a", "b"]), p, "ab")
    with pytest.raises(InvalidParameter, match="num_bits"):
        dp.m.estimate_bit_counts(dp.m.make_rappor_bloom(p)("a"), small(num_bits=8))


def test_maps_match_the_paper_and_round_up() -> None:
    p = dp.m.RapporBloomParams()  # the paper's k=128, h=2, m=64, f=1/2, p=1/2, q=3/4
    e_inf, e_one = p.epsilon_permanent(), p.epsilon_one_report()
    mpmath.mp.prec = 200
    true_inf = Fraction(str(4 * mpmath.log(3)))  # 60 digits: far below the 2^-64 grid
    assert 0 <= e_inf - true_inf < Fraction(1, 2**62)
    assert p.q_star == Fraction(11, 16) and p.p_star == Fraction(9, 16)
    true_one = Fraction(str(2 * mpmath.log(mpmath.mpf(77) / 45)))
    assert 0 <= e_one - true_one < Fraction(1, 2**62)
    assert round(float(e_inf), 2) == 4.39 and round(float(e_one), 2) == 1.07  # the paper's Table
    assert dp.m.RapporBloomParams(f=1).epsilon_permanent() == 0
    m = dp.m.make_rappor_bloom(p)
    assert m.map(1) == e_one and m.map(3) == 3 * e_one
    assert dp.m.make_rappor_bloom_permanent(p).map(1) == e_inf
    assert e_one < e_inf


@pytest.mark.parametrize("make", [dp.m.make_rappor_bloom, dp.m.make_rappor_bloom_permanent])
def test_contract_and_shapes(make: object) -> None:
    p = small(num_cohorts=3)
    m = make(p)  # type: ignore[operator]
    check_measurement_contract(m, [0, 1, 2, 5])
    rep = m("x")
    assert rep.bits.shape == (1, 4) and rep.bits.dtype == np.uint8 and 0 <= rep.cohorts[0] < 3
    v = make(p, input_domain=VS)(["x", "y", "z"])  # type: ignore[operator]
    assert len(v) == 3 and isinstance(v.bits, np.ndarray) and not v.bits.flags.writeable
    assert isinstance(make(p, input_domain=VS).input_metric, dp.HammingDistance)  # type: ignore
    assert m.sample("x", 7).shape == (7, 5)


def test_memoized_prr_then_irr() -> None:
    p = small(num_bits=16)
    prr = dp.m.make_rappor_bloom_permanent(p, source=InsecureSeededSource(3))("x")
    reps = dp.m.RapporReports.concatenate(
        [dp.m.instantaneous_report(prr, p) for _ in range(4)])
    assert len(reps) == 4 and set(reps.cohorts.tolist()) == {int(prr.cohorts[0])}
    with pytest.raises(InvalidParameter, match="num_bits"):
        dp.m.instantaneous_report(prr, small(num_bits=8))


# ------------------------------------------------------------------ statistics (seeded)

def pattern_counts(m: dp.Measurement, value: str) -> np.ndarray:
    out = m.sample(value, N)[:, 1:]
    return np.bincount(out @ (1 << np.arange(out.shape[1])), minlength=1 << out.shape[1])


def pattern_probs(on: tuple[int, ...], k: int, if_one: float, if_zero: float) -> np.ndarray:
    probs = np.ones(1 << k)
    for code in range(1 << k):
        for i in range(k):
            pr = if_one if i in on else if_zero
            probs[code] *= pr if (code >> i) & 1 else 1 - pr
    return probs


def assert_chisquare(counts: np.ndarray, probs: np.ndarray) -> None:
    expected = probs * counts.sum()
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 <= stats.chi2.isf(1e-7, len(probs) - 1), f"chi-square {chi2}"


def assert_private(c1: np.ndarray, c2: np.ndarray, eps: float, tight: bool = True) -> None:
    """No output pattern's ratio provably exceeds e^ε; with ``tight``, one provably reaches it."""
    keep = (c1 >= 1000) & (c2 >= 1000)
    best_hi = 0.0
    for a, b in ((c1[keep] / N, c2[keep] / N), (c2[keep] / N, c1[keep] / N)):
        sa, sb = np.sqrt(a * (1 - a) / N), np.sqrt(b * (1 - b) / N)
        lo, hi = (a - Z * sa) / (b + Z * sb), (a + Z * sa) / (b - Z * sb)
        assert lo.max() <= math.exp(eps), f"ratio ≥ {lo.max()} > e^ε = {math.exp(eps)}"
        best_hi = max(best_hi, float(hi.max()))
    if tight:
        assert best_hi >= math.exp(eps), f"no pattern reaches e^ε: best {best_hi}"


@pytest.mark.slow
def test_one_report_exact_law_and_privacy_on_worst_case_neighbours() -> None:
    p = small()
    m = dp.m.make_rappor_bloom(p, source=InsecureSeededSource(2024))
    ca, cb = pattern_counts(m, A), pattern_counts(m, B)
    qs, ps = float(p.q_star), float(p.p_star)
    assert_chisquare(ca, pattern_probs((0, 2), 4, qs, ps))
    assert_chisquare(cb, pattern_probs((1, 3), 4, qs, ps))
    eps = float(m.map(1))
    assert_private(ca, cb, eps)
    # deliberately wrong claim (h instead of the paper's h for ε₁ is right; here: ε₁ scaled
    # down by 0.8, as a map forgetting part of the Bloom filter would): the check must fail.
    with pytest.raises(AssertionError, match="e\\^ε"):
        assert_private(ca, cb, 0.8 * eps, tight=False)


@pytest.mark.slow
def test_permanent_rr_exact_law_and_privacy_on_worst_case_neighbours() -> None:
    p = small()
    m = dp.m.make_rappor_bloom_permanent(p, source=InsecureSeededSource(99))
    ca, cb = pattern_counts(m, A), pattern_counts(m, B)
    assert_chisquare(ca, pattern_probs((0, 2), 4, 0.75, 0.25))
    assert_chisquare(cb, pattern_probs((1, 3), 4, 0.75, 0.25))
    eps = float(m.map(1))
    assert_private(ca, cb, eps)
    # a map with h instead of 2h (counting only one side of the symmetric difference) is wrong
    with pytest.raises(AssertionError, match="e\\^ε"):
        assert_private(ca, cb, eps / 2, tight=False)


def test_bit_count_estimates_are_unbiased() -> None:
    p = small(num_bits=16, num_cohorts=4)
    m = dp.m.make_rappor_bloom(p, input_domain=VS, source=InsecureSeededSource(5))
    rep = m(["x"] * 40_000)
    est = dp.m.estimate_bit_counts(rep, p)
    truth = p.bloom_filters(["x"] * 4, range(4)) * est.reports[:, None]
    zscores = (est.counts - truth) / np.sqrt(est.variances)
    assert np.abs(zscores).max() < Z
    assert est.reports.sum() == 40_000


def test_decoding_finds_the_strings_with_honest_errors() -> None:
    p = dp.m.RapporBloomParams(num_bits=64, num_hashes=2, num_cohorts=16,
                               f=0.25, p=0.25, q=0.75)
    truth = {"alpha": 20_000, "beta": 10_000, "gamma": 5_000, "delta": 2_000}
    values = [s for s, c in truth.items() for _ in range(c)]
    cands = [*truth, "eps", "zeta", "eta", "theta"]
    m = dp.m.make_rappor_bloom(p, input_domain=VS, source=InsecureSeededSource(11))
    dec = dp.m.decode_rappor_bloom(m(values), p, cands)
    assert dec.significant.tolist() == [True] * 4 + [False] * 4
    for i, c in enumerate(truth.values()):
        assert abs(dec.counts[i] - c) < Z * dec.std_errors[i]
        assert dec.ci_low[i] <= c <= dec.ci_high[i] or abs(dec.counts[i] - c) < 3 * \
            dec.std_errors[i]
    assert (dec.counts >= 0).all() and set(dec.as_dict()) == set(truth)
    assert dec.frequencies[0] == pytest.approx(dec.counts[0] / len(values))


def test_nnls_matches_a_brute_force_on_small_problems() -> None:
    from itertools import combinations

    from dpcert.mechanisms.rappor_decode import nnls

    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.normal(size=(8, 4))
        b = rng.normal(size=8)
        best = (np.inf, None)
        for r in range(5):
            for s in combinations(range(4), r):
                x = np.zeros(4)
                if s:
                    sol = np.linalg.lstsq(a[:, s], b, rcond=None)[0]
                    if (sol < 0).any():
                        continue
                    x[list(s)] = sol
                res = float(np.sum((a @ x - b) ** 2))
                best = min(best, (res, x), key=lambda t: t[0])
        got = nnls(a, b)
        assert (got >= 0).all()
        assert float(np.sum((a @ got - b) ** 2)) == pytest.approx(best[0], rel=1e-9, abs=1e-12)
