"""Audit-style lower bounds: every privacy map must be at least the loss that one pair of
neighbours actually attains, computed exactly from the mechanism's output distribution (not
from the map's formula).  This is the second, independent test of maps whose exact-value test
was the only one to fail under a mutant (docs/mutation.md, "single killers").

References: Dwork & Roth 2014 (Laplace, randomized response); Desfontaines et al. 2022 and
Wilson et al. 2020 (partition selection with a noisy threshold).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

import dpcert as dp
from dpcert.accounting.pure import epsilon_of

mpmath.mp.dps = 40
STR5 = dp.VectorDomain(dp.AtomDomain(str), size=5)


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("scale", [1, 2, 7])
def test_histogram_laplace_change_one_attains_two_units_per_change(d: int, scale: int) -> None:
    """Changing d records from "a" to "b" moves two counts by d each; with Laplace noise of
    scale s the output density ratio at a point beyond both reaches e^(2d/s)."""
    m = dp.m.make_histogram(STR5, dp.ChangeOneDistance(), ["a", "b"], scale)
    attained = Fraction(2 * d, scale)
    assert m.map(d) >= attained


@pytest.mark.parametrize("d", [1, 2, 3])
def test_histogram_gaussian_change_one_attains_d_squared_over_s_squared(d: int) -> None:
    """Same pair under Gaussian noise: the shift vector is (−d, d), ‖·‖₂² = 2d², so the
    Rényi divergence (every order) is 2d²/(2s²) = d²/s²: the zCDP ρ is at least that."""
    s = 3
    m = dp.m.make_histogram(STR5, dp.ChangeOneDistance(), ["a", "b"], s, noise="gaussian")
    assert m.map(d) >= Fraction(d * d, s * s)


@pytest.mark.parametrize("categories", [["a", "b"], ["a", "b", "c", "d", "e"]])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_randomized_response_attains_its_probability_ratio(categories: list[str],
                                                           d: int) -> None:
    """One person's answer "a" vs "b": P(report a | a) / P(report a | b) = p_truth/p_other;
    d people: that ratio to the power d (their reports are independent)."""
    m = dp.m.make_randomized_response(categories, 1)
    p, q = m.params["p_truth"], m.params["p_other"]
    attained = d * mpmath.log(_mp(p) / _mp(q))  # 40 digits, compared without slack
    assert _mp(m.map(d)) >= attained
    assert _mp(epsilon_of(m.event(d))) >= attained  # the accounting event too


@pytest.mark.parametrize("eps", [Fraction(1, 2), Fraction(1), Fraction(3)])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_binary_randomized_response_attains_p_over_one_minus_p(eps: Fraction, d: int) -> None:
    m = dp.m.make_randomized_response_bool(eps)
    p = m.params["p_truth"]
    attained = d * mpmath.log(_mp(p) / _mp(1 - p))
    assert _mp(m.map(d)) >= attained
    assert _mp(epsilon_of(m.event(d))) >= attained


@pytest.mark.parametrize(("eps", "delta"), [(1, Fraction(1, 10**6)), (Fraction(1, 2),
                                                                      Fraction(1, 10**9))])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_partition_selection_attains_its_delta_and_d_epsilon(eps: object, delta: Fraction,
                                                              d: int) -> None:
    """d added units all holding a new key: it is released with probability P(d + Z ≥ τ),
    Z ~ DLap(1/ε), which the map's δ must cover; a key present on both sides with counts c
    and c + d has noisy-count ratio e^(dε) above τ, which the map's ε must cover."""
    m = dp.m.make_partition_selection(dp.VectorDomain(dp.AtomDomain(str)),
                                      dp.SymmetricDistance(), eps, delta)
    tau, b = m.params["threshold"], m.params["scale"]
    q = mpmath.exp(-1 / (mpmath.mpf(b.numerator) / b.denominator))
    k = tau - d  # P(Z ≥ k) = q^k / (1 + q) for k ≥ 0
    released = q**k / (1 + q) if k > 0 else mpmath.mpf(1)
    e_d, dl_d = m.map(d)
    assert dl_d >= Fraction(float(released)) * (1 - Fraction(1, 10**9))
    assert e_d >= d * Fraction(eps)  # type: ignore[arg-type]
    assert math.isfinite(float(e_d))


def _rounding_pair(m: int, k: int, n: int = 2**20) -> tuple[list[float], list[float], Fraction]:
    """Float inputs ``x, x'`` (``m`` coordinates) whose exact difference is ``(n + 1/64)·2^k``
    per coordinate but whose lattice indices differ by ``n + 1`` each: ``x/2^k = 0.4921875``
    rounds down to 0 and ``x'/2^k = n + 0.5078125`` rounds up (docs/proofs/lattice.md).  Every
    number is dyadic, so the floats are exact.  Returns ``x, x'`` and the per-coordinate
    difference."""
    u = Fraction(2) ** k
    lo = Fraction(63, 128) * u
    r = (n + Fraction(1, 64)) * u
    return [float(lo)] * m, [float(lo + r)] * m, r


@pytest.mark.parametrize("sized", [True, False])
@pytest.mark.parametrize("m", [1, 3, 5])
def test_float_laplace_map_covers_the_lattice_rounding_it_performs(m: int, sized: bool) -> None:
    """The discrete Laplace noise on the lattice index (scale b/2^k) loses Σ|Δn|·2^k/b between
    these inputs, whose real L1 distance is m·r: the map at that distance must cover it, and so
    must the accounting event (the rounding gain is m·(63/64)·2^k here)."""
    from dpcert.samplers.lattice import lattice_indices

    dom = dp.AtomDomain(float) if m == 1 and sized else dp.VectorDomain(
        dp.AtomDomain(float), size=m if sized else None)  # unsized: up to 1024 coordinates
    met = dp.AbsoluteDistance() if m == 1 and sized else dp.L1Distance()
    mech = dp.m.make_laplace(dom, met, 2.0)
    k = mech.params["lattice_exponent"]
    x, y, r = _rounding_pair(m, k)
    shift = int(abs(lattice_indices(y, k) - lattice_indices(x, k)).sum())
    assert shift == m * (2**20 + 1)
    attained = shift * Fraction(2) ** k / mech.params["scale"]
    d_in = m * r  # exact L1 distance of x and x'
    assert mech.map(d_in) >= attained
    assert epsilon_of(mech.event(d_in)) >= attained


@pytest.mark.parametrize("sized", [True, False])
@pytest.mark.parametrize("m", [1, 3, 5])
def test_float_gaussian_map_covers_the_lattice_rounding_it_performs(m: int, sized: bool) -> None:
    """Same pair under the discrete Gaussian on the lattice (σ/2^k): ρ = ‖Δn‖²·4^k/(2σ²); the
    real L2 distance is √m·r (bounded above by a rational), the rounding gain √m·(63/64)·2^k."""
    from dpcert.accounting.zcdp import rho_of
    from dpcert.samplers.lattice import lattice_indices
    from dpcert.transformations.frame.stats import sqrt_up

    dom = dp.AtomDomain(float) if m == 1 and sized else dp.VectorDomain(
        dp.AtomDomain(float), size=m if sized else None)
    met = dp.AbsoluteDistance() if m == 1 and sized else dp.L2Distance()
    mech = dp.m.make_gaussian(dom, met, 2.0)
    k = mech.params["lattice_exponent"]
    x, y, r = _rounding_pair(m, k)
    dn = lattice_indices(y, k) - lattice_indices(x, k)
    sq = sum(int(v) * int(v) for v in dn)
    sigma = mech.params["scale"]
    attained = sq * Fraction(2) ** (2 * k) / (2 * sigma * sigma)
    d_in = sqrt_up(m * r * r)  # ≥ the exact L2 distance √m·r
    assert mech.map(d_in) >= attained
    assert rho_of(mech.event(d_in)) >= attained


def test_unsized_float_vectors_accepted_are_within_the_charged_coordinates() -> None:
    """The map of an unsized float vector charges the lattice allowance (5/4)·2^k for some
    number m of coordinates: read m back from ``map(1) = (1 + m·(5/4)·2^k)/b`` (not from the
    constant) and check that a vector of m coordinates is released and one of m + 1 refused,
    by the release and by the batch path: any longer vector would gain rounding the map does
    not cover."""
    mech = dp.m.make_laplace(dp.VectorDomain(dp.AtomDomain(float)), dp.L1Distance(), 2.0)
    k, b = mech.params["lattice_exponent"], mech.params["scale"]
    charged = (mech.map(1) * b - 1) / (Fraction(5, 4) * Fraction(2) ** k)
    assert charged.denominator == 1 and charged > 1
    m = int(charged)
    assert len(mech([0.5] * m)) == m
    assert mech.batch_map([0.5] * m, 2).shape == (2, m)  # type: ignore[misc]
    with pytest.raises(dp.errors.InvalidParameter, match="exceeds"):
        mech([0.5] * (m + 1))
    with pytest.raises(dp.errors.InvalidParameter, match="exceeds"):
        mech.batch_map([0.5] * (m + 1), 2)  # type: ignore[misc]


ALLOWANCE = Fraction(5, 4) / 2**20  # documented bound on the lattice allowance / scale


@pytest.mark.parametrize("m", [None, 1, 2, 3, 1000, 5000])
@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(2), Fraction(10**6)])
def test_lattice_allowance_stays_within_its_documented_share_of_the_scale(
        m: int | None, scale: Fraction) -> None:
    """The map's excess over the real-valued mechanism's is the lattice allowance, kept within
    ``[¼, 1]·(5/4)·2^-20`` of the scale (``_additive.mechanism_exponent``): Laplace (L1,
    ``map(1) − 1/b``) and Gaussian (L2, ``√(2ρ)·σ − 1``, compared by squaring: exact).  ``None``:
    an unsized vector; 1: a scalar.  An exponent that ignores how many coordinates L1 charges
    (√m instead of m) overshoots the upper end at m ≥ 3."""
    if m == 1:
        dom: dp.Domain = dp.AtomDomain(float)
        lap_met, gau_met = dp.AbsoluteDistance(), dp.AbsoluteDistance()
    else:
        dom = dp.VectorDomain(dp.AtomDomain(float), size=m)
        lap_met, gau_met = dp.L1Distance(), dp.L2Distance()
    lap = dp.m.make_laplace(dom, lap_met, scale)
    excess = lap.map(1) - 1 / lap.params["scale"]
    assert ALLOWANCE / 4 <= excess <= ALLOWANCE
    gau = dp.m.make_gaussian(dom, gau_met, scale)
    sigma = gau.params["scale"]
    two_rho_s2 = 2 * gau.map(1) * sigma * sigma  # = (1 + excess·σ)² (rounded up)
    assert two_rho_s2 <= (1 + ALLOWANCE * sigma) ** 2
    assert two_rho_s2 >= (1 + ALLOWANCE / 4 * sigma) ** 2
