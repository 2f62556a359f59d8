"""Lattice rounding of correctly rounded reals: midpoint ties (issue 19, item 1).

A sum, mean or variance is an exact real ``S`` rounded once to the float ``fl(S)``; the lattice
mechanisms then round ``fl(S)`` to ``2^k·ℤ`` with ties to even.  When ``fl(S)`` lands exactly on a
lattice midpoint, the lattice point can be on the far side of ``S``; these pairs were constructed
so that two neighbours land one unit further apart than ``floor((Δ + 2^k)/2^k)``, the bound the
maps used to charge.  Every test compares the mechanism's event and map against the *actual*
distance between the lattice indices the sampler adds noise to.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert.samplers import lattice_indices, rounding_allowance

U48 = 2.0**-48  # lattice step 2^k for k = -48 (scale 2^-28 with the default exponent)


def _index_gap(t: dp.Transformation, a: list[float], b: list[float], k: int) -> int:
    return int(abs(lattice_indices([t(a)], k)[0] - lattice_indices([t(b)], k)[0]))


def _pipeline(size: int, lo: float, hi: float, stat: str) -> dp.Transformation:
    space = (dp.VectorDomain(dp.AtomDomain(float), size=size), dp.ChangeOneDistance())
    then = {"sum": dp.t.then_sum(), "mean": dp.t.then_mean()}[stat]
    return space >> dp.t.then_clamp(lo, hi) >> then


def _check_pair(t: dp.Transformation, a: list[float], b: list[float], mech: dp.Measurement,
                gap_expected: int) -> None:
    k = mech.params["lattice_exponent"]
    gap = _index_gap(t, a, b, k)
    assert gap == gap_expected
    ev = (t >> mech).event(1)
    assert ev.sensitivity >= gap  # the integer shift the accountants charge
    unit = Fraction(2) ** k
    # the map charges at least the true lattice distance
    if mech.output_measure == dp.PureDP():
        assert (t >> mech).map(1) >= gap * unit / mech.params["scale"]
    else:
        assert (t >> mech).map(1) >= (gap * unit) ** 2 / (2 * mech.params["scale"] ** 2)


def test_issue_example_sum_laplace() -> None:
    a, a2 = 0.5 + 2**-22, 0.75 + 5 * 2**-22 - 2**-53
    t = _pipeline(2, a, a2, "sum")
    mech = dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), 1)
    assert mech.params["lattice_exponent"] == -20
    _check_pair(t, [a, a], [a, a2], mech, 262146)
    assert (t >> mech).event(1).sensitivity == 262146


def test_sum_tie_pair_two_units_for_under_one_unit() -> None:
    # sums 4 + 0.625u and 4 + 1.375u round onto the midpoints 4 + 0.5u, 4 + 1.5u, then (ties to
    # even) to indices 2^50 and 2^50 + 2: two units apart for a real distance of 0.75u.
    lo, hi, p = 2.0, 2.0 + 6 * U48 / 8, 2.0 + 5 * U48 / 8
    t = _pipeline(2, lo, hi, "sum")
    lap = dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), Fraction(1, 2**28))
    gauss = dp.m.make_gaussian(dp.AtomDomain(float), dp.AbsoluteDistance(), Fraction(1, 2**28))
    assert lap.params["lattice_exponent"] == gauss.params["lattice_exponent"] == -48
    assert t.map(1) == Fraction(3, 4) * Fraction(U48)
    _check_pair(t, [p, lo], [p, hi], lap, 2)
    _check_pair(t, [p, lo], [p, hi], gauss, 2)


@pytest.mark.parametrize(("size", "hi_off", "rest", "a_off", "b_off"), [
    (2, 14, [9], 0, 14),        # mean moves by 7/8 of a step, indices by 2
    (3, 22, [0, 13], 0, 22),    # mean moves by 11/12 of a step, indices by 2
])
def test_mean_tie_pairs(size: int, hi_off: int, rest: list[int], a_off: int,
                        b_off: int) -> None:
    g = U48 / 8
    t = _pipeline(size, 2.0, 2.0 + hi_off * g, "mean")
    a = [2.0 + r * g for r in rest] + [2.0 + a_off * g]
    b = [2.0 + r * g for r in rest] + [2.0 + b_off * g]
    assert t.map(1) < Fraction(U48)
    scale = Fraction(1, 2**28)
    for mech in (dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), scale),
                 dp.m.make_gaussian(dp.AtomDomain(float), dp.AbsoluteDistance(), scale)):
        _check_pair(t, a, b, mech, 2)


def test_rounding_allowance_values() -> None:
    assert rounding_allowance(0) == Fraction(5, 4)
    assert rounding_allowance(-20) == Fraction(5, 4) * Fraction(1, 2**20)
    assert rounding_allowance(-1073) == Fraction(2) ** -1073 + Fraction(2) ** -1074
    assert rounding_allowance(-1074) == 2 * Fraction(2) ** -1074


@pytest.mark.parametrize("k", [-48, -20, 0, 7])
def test_property_rounded_reals_never_exceed_the_allowance(k: int) -> None:
    # Reals S, S' placed a random whole number of steps apart plus a fraction, each a tiny
    # offset from a lattice midpoint in a random binade below the clamp bound; fl() is the
    # correct rounding (Fraction -> float).  The index gap never exceeds
    # floor((|S - S'| + a_k) / 2^k), and the old bound floor((|S - S'| + 2^k) / 2^k) fails.
    rng = np.random.default_rng(7)  # test-only: chooses test inputs, not privacy noise
    unit = Fraction(2) ** k
    old_fails = 0
    for _ in range(400):
        e = int(rng.integers(2, 50))            # binade of S: |S| ~ 2^(k+e)
        j = int(rng.integers(2**(e - 1), 2**e))
        spacing = Fraction(2) ** (k + e - 52)  # float spacing around S (binade [2^(k+e-1), ...))
        s1 = (j + Fraction(1, 2)) * unit + spacing * Fraction(int(rng.integers(1, 64)), 128)
        steps = int(rng.integers(0, 4))
        s2 = (j + steps + Fraction(1, 2)) * unit - spacing * Fraction(int(rng.integers(1, 64)),
                                                                      128)
        if s2 <= s1:
            continue
        x1, x2 = float(s1), float(s2)
        gap = int(abs(lattice_indices([x2], k)[0] - lattice_indices([x1], k)[0]))
        assert gap <= math.floor((s2 - s1 + rounding_allowance(k)) / unit)
        old_fails += gap > math.floor((s2 - s1 + unit) / unit)
    assert old_fails > 0  # the constructed pairs do exercise the tie
