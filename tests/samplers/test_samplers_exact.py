"""The exact rare paths: rigorous exp bounds, lazy comparisons, ambiguous prefixes, tails."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from dpcert._directed import exp_neg_bounds
from dpcert.samplers import InsecureSeededSource
from dpcert.samplers._cells import cell_sampler
from dpcert.samplers._exact import LazyUniform, lazy_less


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(7, 2),
                               Fraction(355, 113), Fraction(10**6 + 1, 10**4), Fraction(1, 10**30),
                               Fraction(200)])
@pytest.mark.parametrize("prec", [20, 64, 200, 1000])
def test_exp_bounds_bracket_the_truth(x, prec):
    lo, hi = exp_neg_bounds(x, prec)
    with mpmath.workprec(prec + 200):
        truth = mpmath.exp(-mpmath.mpf(x.numerator) / x.denominator) * mpmath.mpf(2) ** prec
        assert lo <= truth <= hi
    assert lo <= truth <= hi
    assert hi - lo <= 64


def test_lazy_less_against_exact_rationals():
    src = InsecureSeededSource(0)
    c = Fraction(1, 3)

    def bounds(p: int) -> tuple[int, int]:
        return (c.numerator << p) // c.denominator, -((-(c.numerator << p)) // c.denominator)

    # prefix 0x55555555 (32 bits) straddles 1/3 = 0.0101...: about half go each way
    wins = sum(lazy_less(LazyUniform(0x55555555, 32, src), bounds) for _ in range(2000))
    frac = float(c * 2**32 - 0x55555555)  # P(U < 1/3 | prefix) = 1/3
    assert abs(wins / 2000 - frac) < 0.05
    assert lazy_less(LazyUniform(0, 2, src), bounds)  # U < 1/4 < 1/3
    assert not lazy_less(LazyUniform(2, 2, src), bounds)  # U >= 1/2


def test_ambiguous_prefixes_resolve_with_the_right_conditional_law():
    samp = cell_sampler("laplace", Fraction(3), False)
    table = samp.table
    src = InsecureSeededSource(1)
    j = samp.nt // 2  # a central threshold
    h = int(table.a[j])
    lo, _ = table.threshold_bounds(j, 200)
    c_scaled = Fraction(lo, 2**200) * 2**32  # c_j * 2^32, to ~2^-168
    # given prefix h = A_j, U >= c_j with probability (h + 1) - c_j 2^32
    p_more = float(h + 1 - c_scaled)
    got = [table._resolve(h, src) for _ in range(3000)]
    assert set(got) <= {j, j + 1}
    assert abs(np.mean(np.array(got) == j + 1) - p_more) < 0.04
    # the vectorised path flags exactly these prefixes and agrees with resolve's support
    out = table.sample(np.array([h, h + 1, h + 2, h - 1], dtype=np.int64), src)
    assert out[2] == j + 1 and out[3] == j


def test_forced_scalar_acceptance_is_exact():
    samp = cell_sampler("gaussian", Fraction(2**40), False)
    src = InsecureSeededSource(2)
    v = np.array([5], dtype=np.int64)
    r = np.array([samp.t - 1], dtype=np.int64)
    m = samp.m_of(5)
    z = samp.f(m + samp.t - 1) - samp.f(m)
    p = float(mpmath.exp(-mpmath.mpf(z.numerator) / z.denominator))
    u = int(p * 65536)  # prefix straddling p: the float filter must defer to the exact path
    idx = np.array([5 - samp.vmin + 1], dtype=np.int64)
    acc = [bool(samp._accept(v, idx, r, np.array([u], dtype=np.int64), src)[0])
           for _ in range(2000)]
    assert abs(np.mean(acc) - (p * 65536 - u)) < 0.05


@pytest.mark.parametrize(("kind", "scale"), [("laplace", Fraction(3)), ("gaussian", Fraction(2)),
                                             ("laplace", Fraction(2**40)),
                                             ("gaussian", Fraction(2**40))])
def test_tail_sampler_draws_beyond_the_table(kind, scale):
    samp = cell_sampler(kind, scale, False)
    src = InsecureSeededSource(3)
    right = [samp._tail(True, src) for _ in range(300)]
    left = [samp._tail(False, src) for _ in range(300)]
    assert min(right) >= samp.jr and max(left) <= samp.vmin - 1
    if kind == "laplace":  # memoryless: V - jr is geometric with ratio exp(-t / s)
        q = float(mpmath.exp(-samp.t / mpmath.mpf(scale.numerator) * scale.denominator))
        assert abs(np.mean(np.array(right) - samp.jr) - q / (1 - q)) < 5 * q / (1 - q) / 300**0.5
