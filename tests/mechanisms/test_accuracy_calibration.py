"""Accuracy helpers and (ε, δ) Gaussian calibration, checked against mpmath at 80 digits."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from scipy.optimize import minimize_scalar

import dpcert as dp
from dpcert._directed import exp_bounds, log_bounds, normal_cdf_bounds, sqrt_bounds
from dpcert.errors import InvalidParameter
from dpcert.mechanisms import accuracy as acc
from dpcert.mechanisms import calibration as cal

mpmath.mp.dps = 80  # above the 200-bit enclosures


def mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 3), Fraction(-7, 2), Fraction(700),
                               Fraction(-700), Fraction(1, 10**9)])
def test_exp_log_enclosures(x: Fraction) -> None:
    with mpmath.workdps(100):  # other tests may change the global precision
        _check_enclosures(x)


def _check_enclosures(x: Fraction) -> None:
    lo, hi = exp_bounds(x)
    assert mp(lo) <= mpmath.exp(mp(x)) <= mp(hi)
    assert hi - lo <= abs(hi) * Fraction(1, 2**180)
    y = abs(x) + Fraction(1, 7)
    lo, hi = log_bounds(y)
    assert mp(lo) <= mpmath.log(mp(y)) <= mp(hi)
    lo, hi = sqrt_bounds(y)
    assert mp(lo) <= mpmath.sqrt(mp(y)) <= mp(hi)


@pytest.mark.parametrize("x", [0, 1, -1, 5, -5, -11.5, -12, -13, -40, 8.25])
def test_normal_cdf_enclosure(x: float) -> None:
    lo, hi = normal_cdf_bounds(Fraction(x))
    assert mp(lo) <= mpmath.ncdf(x) <= mp(hi)
    assert hi - lo <= hi / 64


@pytest.mark.parametrize("scale", [Fraction(1, 10), Fraction(1), Fraction(7, 2), Fraction(10**4)])
@pytest.mark.parametrize("alpha", [Fraction(1, 2), Fraction(1, 20), Fraction(1, 10**9)])
def test_discrete_accuracies_are_exact_and_minimal(scale: Fraction, alpha: Fraction) -> None:
    a = int(acc.discrete_laplace_accuracy(scale, alpha))
    q = mpmath.exp(-1 / mp(scale))

    def tail(n: int) -> mpmath.mpf:
        return 2 * q ** (n + 1) / (1 + q)

    assert tail(a) <= mp(alpha) and (a == 0 or tail(a - 1) > mp(alpha))
    g = int(acc.discrete_gaussian_accuracy(scale, alpha))

    def gt(n: int) -> mpmath.mpf:
        return 2 * mpmath.ncdf(-n / mp(scale))

    assert gt(g) <= mp(alpha) and (g == 0 or gt(g - 1) > mp(alpha))


def test_discrete_gaussian_tail_bound_holds() -> None:
    # the true discrete Gaussian tail (summed directly) is below the bound used
    for sigma in (Fraction(1, 2), Fraction(3), Fraction(25, 2)):
        s = mp(sigma)
        xs = range(-int(40 * s) - 5, int(40 * s) + 6)
        w = {x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s * s)) for x in xs}
        total = sum(w.values())
        for alpha in (Fraction(1, 10), Fraction(1, 1000)):
            a = int(acc.discrete_gaussian_accuracy(sigma, alpha))
            assert sum(v for x, v in w.items() if abs(x) > a) / total <= mp(alpha)


def test_continuous_accuracy_and_inverses() -> None:
    assert acc.laplace_accuracy(2, 0.05) >= 2 * math.log(20)
    assert acc.laplace_accuracy(2, 0.05) - 2 * math.log(20) < 1e-12
    z = acc.gaussian_accuracy(1, 0.05)
    assert 1.959963984 <= z < 1.95996399
    s = acc.gaussian_scale_for_accuracy(10, 0.05)
    assert acc.gaussian_accuracy(s, 0.05) <= 10 + 1e-9
    b = acc.laplace_scale_for_accuracy(3, 0.05)
    assert acc.laplace_accuracy(b, 0.05) <= 3 + 1e-12
    t = acc.discrete_laplace_scale_for_accuracy(10, 0.05)
    assert acc.discrete_laplace_accuracy(t, 0.05) <= 10
    assert acc.discrete_laplace_accuracy(t * 1.01, 0.05) > 10
    assert acc.laplace_variance(3) == 18 and acc.gaussian_variance(Fraction(1, 2)) == Fraction(1, 4)
    q = math.exp(-1 / 2)
    assert acc.discrete_laplace_variance(2) >= 2 * q / (1 - q) ** 2
    for bad in (0, 1, -0.5, float("nan")):
        with pytest.raises(InvalidParameter, match="alpha"):
            acc.laplace_accuracy(1, bad)


def test_measurement_accuracy_hooks() -> None:
    m = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=2)
    assert m.accuracy(0.05) == acc.discrete_laplace_accuracy(2, 0.05)


def test_classic_and_analytic_gaussian() -> None:
    s = cal.classic_gaussian_scale(0.5, 1e-5, 2)
    assert s >= 2 * math.sqrt(2 * math.log(1.25e5)) / 0.5
    with pytest.raises(InvalidParameter, match="< 1"):
        cal.classic_gaussian_scale(1.0, 1e-5)
    with pytest.raises(InvalidParameter, match="delta"):
        cal.classic_gaussian_scale(0.5, 0)
    for eps, delta in ((0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-10), (0.05, 1e-3)):
        sig = cal.analytic_gaussian_scale(eps, delta)
        if eps < 1:
            assert sig <= cal.classic_gaussian_scale(eps, delta)

        def dl(s: float, eps: float = eps) -> mpmath.mpf:
            a, b = 1 / (2 * s) - eps * s, -1 / (2 * s) - eps * s
            return mpmath.ncdf(a) - mpmath.exp(eps) * mpmath.ncdf(b)

        assert dl(sig) <= delta < dl(sig * (1 - 1e-6))


def test_zcdp_conversion_and_gaussian_approx() -> None:
    rho, delta = Fraction(1, 2), Fraction(1, 10**6)
    eps = cal.zcdp_to_approx_epsilon(rho, delta)
    # CKS20 Prop. 12: ε(α) = αρ + (ln(1/δ) + (α−1) ln(1−1/α) − ln α)/(α−1), minimised over α
    def eps_at(a: float) -> float:
        return float(a * mp(rho) + (mpmath.log(1 / mp(delta)) + (a - 1) * mpmath.log(1 - 1 / a)
                                    - mpmath.log(a)) / (a - 1))

    opt = minimize_scalar(eps_at, bounds=(1.001, 100), method="bounded",
                          options={"xatol": 1e-10})
    assert opt.fun - 1e-9 <= float(eps) <= opt.fun + 1e-6
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta))
    m = cal.make_gaussian_approx(dp.VectorDomain(dp.AtomDomain(int)), dp.L2Distance(), 8, 1e-6)
    assert isinstance(m.output_measure, dp.ApproxDP)
    e1, d1 = m.map(1)
    assert d1 == Fraction(1, 10**6) and e1 == cal.zcdp_to_approx_epsilon(Fraction(1, 128), d1)
    assert m.map(0) == (0, 0)
    s = cal.gaussian_scale(1.0, 1e-6, method="zcdp")
    g = cal.make_gaussian_approx(dp.AtomDomain(int), dp.AbsoluteDistance(), s, 1e-6)
    assert g.check(1, (1.0, 1e-6))
