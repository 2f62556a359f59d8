"""Statistical tests of the exact samplers against exact PMFs (seeded, hence deterministic).

Each test rejects when a p-value is below 1e-6, so a correct sampler fails with probability
< 1e-6 for a fresh seed; with the fixed seeds here the outcome is reproducible.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpcert.samplers import (
    InsecureSeededSource,
    bernoulli,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    geometric,
    uniform_below,
)

pytestmark = pytest.mark.slow
N = 10**6
ALPHA = 1e-6


@pytest.fixture(autouse=True)
def _high_precision():  # type: ignore[no-untyped-def]
    with mpmath.workprec(120):  # q = exp(-2^-40) needs more than 53 bits; restored afterwards
        yield


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def chi_square_pvalue(draws: np.ndarray, support: range, pmf: list[float]) -> float:
    """Chi-square over ``support`` (values outside pooled into two tail cells)."""
    lo, hi = support.start, support.stop - 1
    p = np.array(pmf, dtype=float)
    expected = [N * (1 - p.sum()) / 2]  # the two tails share the leftover mass symmetrically
    counts = [np.count_nonzero(draws < lo)]
    binc = np.bincount(draws[(draws >= lo) & (draws <= hi)] - lo, minlength=hi - lo + 1)
    counts += binc.tolist()
    expected += (N * p).tolist()
    counts.append(np.count_nonzero(draws > hi))
    expected.append(N * (1 - p.sum()) / 2)
    counts_a, exp_a = np.array(counts, float), np.array(expected, float)
    # pool cells with small expectations into their neighbours (keeps the test valid)
    keep = exp_a >= 20
    pooled_c = [counts_a[~keep].sum()] if (~keep).any() else []
    pooled_e = [exp_a[~keep].sum()] if (~keep).any() else []
    c = np.concatenate([counts_a[keep], pooled_c])
    e = np.concatenate([exp_a[keep], pooled_e])
    e = e * c.sum() / e.sum()
    return float(stats.chisquare(c, e).pvalue)


def laplace_pmf(scale: Fraction, xs: range) -> list[float]:
    q = mpmath.exp(-1 / _mp(scale))
    return [float((1 - q) / (1 + q) * q ** abs(x)) for x in xs]


def gaussian_pmf(sigma: Fraction, xs: range) -> list[float]:
    s2 = 2 * _mp(sigma) ** 2
    width = int(40 * float(sigma)) + 40
    z = mpmath.fsum(mpmath.exp(-mpmath.mpf(k * k) / s2) for k in range(-width, width + 1))
    return [float(mpmath.exp(-mpmath.mpf(x * x) / s2) / z) for x in xs]


@pytest.mark.parametrize(("scale", "seed"), [(Fraction(3), 1), (Fraction(1, 3), 2),
                                              (Fraction(200, 3), 3)])
def test_discrete_laplace_chi_square(scale, seed):
    x = discrete_laplace(scale, N, source=InsecureSeededSource(seed))
    width = int(12 * float(scale)) + 3
    xs = range(-width, width + 1)
    assert chi_square_pvalue(x, xs, laplace_pmf(scale, xs)) > ALPHA
    _two_sided_tails(x, scale)


def _two_sided_tails(x: np.ndarray, scale: Fraction) -> None:
    q = float(mpmath.exp(-1 / _mp(scale)))
    for k in [int(4 * float(scale)) + 1, int(8 * float(scale)) + 1]:
        p = q**k / (1 + q)  # P(X >= k) = P(X <= -k)
        for side in (np.count_nonzero(x >= k), np.count_nonzero(x <= -k)):
            assert stats.binomtest(side, N, p).pvalue > ALPHA


@pytest.mark.parametrize(("sigma", "seed"), [(Fraction(5, 2), 4), (Fraction(1, 10), 5),
                                              (Fraction(1, 2), 6), (Fraction(300), 7)])
def test_discrete_gaussian_chi_square(sigma, seed):
    x = discrete_gaussian(sigma, N, source=InsecureSeededSource(seed))
    width = int(6 * float(sigma)) + 2
    xs = range(-width, width + 1)
    assert chi_square_pvalue(x, xs, gaussian_pmf(sigma, xs)) > ALPHA


def test_tiny_gaussian_is_exact_at_zero():
    # sigma = 1/10: P(X != 0) = 2 e^-50 / Z ~ 4e-22
    x = discrete_gaussian(Fraction(1, 10), N, source=InsecureSeededSource(8))
    assert not x.any()


def _binned_pvalue(u: np.ndarray, edges: np.ndarray, cdf) -> float:  # type: ignore[no-untyped-def]
    probs = np.diff([0.0, *[cdf(e) for e in edges], 1.0])
    counts = np.bincount(np.searchsorted(edges, u, side="right"), minlength=len(edges) + 1)
    return float(stats.chisquare(counts, probs * counts.sum() / probs.sum()).pvalue)


def test_huge_laplace_binned_cdf_and_low_bits():
    s = Fraction(2**40) + Fraction(1, 3)
    x = discrete_laplace(s, N, source=InsecureSeededSource(9))
    q = mpmath.exp(-1 / _mp(s))

    def cdf(a: float) -> float:  # P(X <= a) for integer a (exact closed form)
        a_int = int(a)
        if a_int >= 0:
            return float(1 - q ** (a_int + 1) / (1 + q))
        return float(q ** (-a_int) / (1 + q))

    edges = np.quantile(x, np.linspace(0.01, 0.99, 99)).astype(np.int64)
    edges = np.unique(edges)
    assert _binned_pvalue(x, edges - 1, cdf) > ALPHA
    # fine structure: within a cell the offset is (nearly exactly) uniform; x mod 1024 must be too
    # (deviation from uniform is < 2^-30 in probability)
    counts = np.bincount(x % 1024, minlength=1024)
    assert stats.chisquare(counts).pvalue > ALPHA
    # and the centre: P(|X| <= 2^32) exactly
    k = 2**32
    p_centre = float((1 - q) / (1 + q) * (2 * (1 - q ** (k + 1)) / (1 - q) - 1))
    assert stats.binomtest(np.count_nonzero(np.abs(x) <= k), N, p_centre).pvalue > ALPHA


def test_huge_gaussian_binned_cdf_and_low_bits():
    sigma = 2**40
    x = discrete_gaussian(Fraction(sigma), N, source=InsecureSeededSource(10))

    # For sigma = 2^40 the discrete CDF equals Phi((a + 1/2) / sigma) to within 1e-12
    # (Euler-Maclaurin / Poisson summation), far below what 1e6 draws resolve.
    def cdf(a: float) -> float:
        return float(mpmath.ncdf((mpmath.mpf(int(a)) + 0.5) / sigma))

    edges = np.unique(np.quantile(x, np.linspace(0.01, 0.99, 99)).astype(np.int64))
    assert _binned_pvalue(x, edges - 1, cdf) > ALPHA
    assert stats.chisquare(np.bincount(x % 1024, minlength=1024)).pvalue > ALPHA
    assert stats.binomtest(np.count_nonzero(x > 4 * sigma), N,
                           float(1 - mpmath.ncdf(4 + 0.5 / sigma))).pvalue > ALPHA


def test_geometric_chi_square():
    g = Fraction(1, 7)
    x = geometric(g, N, source=InsecureSeededSource(11))
    q = mpmath.exp(-_mp(g))
    xs = range(0, 120)
    pmf = [float((1 - q) * q**k) for k in xs]
    counts = np.bincount(np.minimum(x, 120), minlength=121).astype(float)
    expected = np.array([*pmf, 1 - sum(pmf)]) * N
    assert x.min() >= 0
    assert stats.chisquare(counts, expected * counts.sum() / expected.sum()).pvalue > ALPHA


GAMMAS = [Fraction(1, 1000), Fraction(1, 10), Fraction(1, 3), Fraction(1, 2), Fraction(1),
          Fraction(3, 2), Fraction(2), Fraction(22, 7), Fraction(5), Fraction(8), Fraction(12),
          Fraction(10**6, 999_999), Fraction(7, 10**6)]


@pytest.mark.parametrize("gamma", GAMMAS)
def test_bernoulli_exp_binomial(gamma):
    n = N
    x = bernoulli_exp(gamma, n, source=InsecureSeededSource(gamma.numerator + gamma.denominator))
    p = float(mpmath.exp(-_mp(gamma)))
    assert stats.binomtest(int(x.sum()), n, p).pvalue > ALPHA


@pytest.mark.parametrize("p", [Fraction(1, 3), Fraction(1, 1000), Fraction(999, 1000),
                               Fraction(1, 2**33), Fraction(12345, 65536)])
def test_bernoulli_binomial(p):
    n = 400_000
    x = bernoulli(p, n, source=InsecureSeededSource(p.denominator % 1000))
    assert stats.binomtest(int(x.sum()), n, float(p)).pvalue > ALPHA


@pytest.mark.parametrize("n", [6, 10, 2**33 + 3])
def test_uniform_below_chi_square(n):
    x = uniform_below(n, N, source=InsecureSeededSource(n % 1000))
    # small n: every value; large n: 100 bins, equal in probability to within 1e-8
    counts = np.bincount(x, minlength=n) if n <= 10 else np.bincount((x * 100) // n, minlength=100)
    assert stats.chisquare(counts).pvalue > ALPHA


@pytest.mark.parametrize(("kind", "seed"), [("laplace", 12), ("gaussian", 13)])
def test_within_cell_offsets_follow_the_target(kind, seed):
    """For large scales the offset inside a cell is decided by the acceptance step; check it.

    With scale = 2**26 + 1 the cells have width t = 2**20 (t / scale ~ 1/64).  For X >= 0 the
    offset d = X mod t has P(d) ∝ exp(-(f(tv + d) - f(tv))); its mean is about t / 128 below
    t / 2 for Laplace, which 4e6 draws resolve at > 6 standard errors.
    """
    n = 4 * 10**6
    scale = Fraction(2**26 + 1)
    t = 2**20
    if kind == "laplace":
        x = discrete_laplace(scale, n, source=InsecureSeededSource(seed))
        q = mpmath.exp(-1 / _mp(scale))
        num = mpmath.fsum(d * q**d for d in range(0, t, 97))
        den = mpmath.fsum(q**d for d in range(0, t, 97))
        expected = float(num / den) + 48  # the 97-grid under-counts the mean by (97 - 1) / 2
        d = (x[x >= 0] & (t - 1)).astype(float)
    else:
        x = discrete_gaussian(scale, n, source=InsecureSeededSource(seed))
        sel = x[x >= 2 * int(scale)]  # far from 0 the in-cell slope is steep
        s2 = 2 * _mp(scale) ** 2
        vs = np.unique(sel >> 20)
        cnt = np.bincount(sel >> 20)
        num = den = mpmath.mpf(0)
        for v in vs.tolist():  # exact law of d, weighted by how often each cell occurs
            base = mpmath.mpf(v * t)
            grid = range(0, t, 4099)
            ws = [mpmath.exp(-((base + d) ** 2 - base**2) / s2) for d in grid]
            w_d = mpmath.fsum(ws)
            num += cnt[v] * mpmath.fsum(d * w for d, w in zip(grid, ws, strict=True)) / w_d
            den += cnt[v]
        expected = float(num / den) + 2049
        d = (sel & (t - 1)).astype(float)
    se = t / 12**0.5 / d.size**0.5
    assert abs(d.mean() - expected) < 5.3 * se
