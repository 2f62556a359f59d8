"""Enclosures at huge and tiny arguments, and the closed forms they feed (issue 37, item 4).

Every enclosure is checked against mpmath at 1000 digits, at small and at extreme arguments;
the saturation and refusal rules of ``docs/proofs/accuracy.md`` ("Bounded work") and
``docs/proofs/threshold.md`` are checked as values.  A deliberately wrong variant of each series
(its remainder dropped) is shown to fail the same check.  No test here asserts a duration.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import mpmath
import polars as pl
import pytest

import dpcert as dp
from dpcert import _directed as em
from dpcert.errors import InvalidParameter
from dpcert.mechanisms import accuracy as acc
from dpcert.mechanisms import threshold as th

Interval = tuple[Fraction, Fraction]


def mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def encloses(bounds: Callable[[Fraction], Interval], ref: Callable[[mpmath.mpf], mpmath.mpf],
             x: Fraction, rel: Fraction = Fraction(1, 2**180)) -> bool:
    """``lo ≤ f(x) ≤ hi`` at 1000 digits, and the enclosure is tight (relative ``rel``)."""
    with mpmath.workdps(1000):
        lo, hi = bounds(x)
        v = ref(mp(x))
        return bool(mp(lo) <= v <= mp(hi)) and hi - lo <= max(abs(hi), abs(lo)) * rel


EXP_ARGS = [Fraction(-2048), Fraction(-2047, 1), Fraction(-700), Fraction(-1, 10**9),
            Fraction(1, 10**9), Fraction(1, 3), Fraction(-(2**64) + 1, 3**40), Fraction(700),
            Fraction(2048), Fraction(10**12 + 1, 10**12)]


@pytest.mark.parametrize("x", EXP_ARGS)
def test_exp_encloses_at_every_magnitude(x: Fraction) -> None:
    assert encloses(em.exp_bounds, mpmath.exp, x)


@pytest.mark.parametrize("x", [Fraction(-2049), Fraction(-10**9), Fraction(-(10**300), 7)])
def test_exp_saturates_below_the_cap(x: Fraction) -> None:
    lo, hi = em.exp_bounds(x)
    assert (lo, hi) == (0, em.exp_floor())
    with mpmath.workdps(1000):
        assert mpmath.exp(mp(x)) <= mpmath.exp(-em.EXP_ARG_MAX) <= mp(hi)
        assert mp(hi) <= mpmath.exp(-em.EXP_ARG_MAX) * (1 + mpmath.mpf(2) ** -180)


def test_exp_refuses_an_upper_bound_above_the_cap_and_exp_lower_saturates() -> None:
    with pytest.raises(ValueError, match="exceeds 2048"):
        em.exp_bounds(Fraction(2049))
    assert em.exp_lower(Fraction(10**9)) == em.exp_lower(Fraction(2048)) == em.exp_bounds(2048)[0]
    assert em.exp_lower(Fraction(1, 3)) == em.exp_bounds(Fraction(1, 3))[0]


LOG_ARGS = [Fraction(1, 10**300), 1 + em.exp_floor(), Fraction(10**30),
            Fraction(3**200, 2**300 + 1), Fraction(2**64), Fraction(7, 3),
            Fraction(10**9 + 7, 10**9)]


@pytest.mark.parametrize("y", LOG_ARGS)
def test_log_encloses(y: Fraction) -> None:
    # the argument is rounded outward to PREC bits: absolute width about 2^-PREC near ln = 0
    lo, hi = em.log_bounds(y)
    with mpmath.workdps(1000):
        assert mp(lo) <= mpmath.log(mp(y)) <= mp(hi)
    assert hi - lo <= max(abs(hi), Fraction(1)) * Fraction(1, 2**180)


PHI_ARGS = [Fraction(-10**9), Fraction(-40), Fraction(-13), Fraction(-12), Fraction(-119, 10),
            Fraction(-3), Fraction(0), Fraction(1, 3**100), Fraction(5), Fraction(119, 10),
            Fraction(13), Fraction(10**9)]


@pytest.mark.parametrize("x", PHI_ARGS)
def test_normal_cdf_encloses(x: Fraction) -> None:
    lo, hi = em.normal_cdf_bounds(x)
    with mpmath.workdps(1000):
        v = mpmath.ncdf(mp(x))
        assert mp(lo) <= v <= mp(hi)
    # absolute width 2^-190 in the series range; relative in the Mills-ratio tails
    assert hi - lo <= max(hi * Fraction(1, 2**180), Fraction(1, 2**190)) or x < -12 or x > 12


@pytest.mark.parametrize("z", [Fraction(1, 3), Fraction(1, 10**9), Fraction(2**199 - 1, 2**201)])
def test_atanh_fixed_point_encloses(z: Fraction) -> None:
    assert encloses(em._atanh_bounds, mpmath.atanh, z)


def _phi_series_ref(x: mpmath.mpf) -> mpmath.mpf:
    # S(x) = (Φ(x) − 1/2)/φ(x)
    return (mpmath.ncdf(x) - mpmath.mpf(1) / 2) / mpmath.npdf(x)


@pytest.mark.parametrize("x", [Fraction(1, 10**6), Fraction(3), Fraction(12)])
def test_phi_series_fixed_point_encloses(x: Fraction) -> None:
    assert encloses(em._phi_series, _phi_series_ref, x)


def _atanh_without_remainder(z: Fraction) -> Interval:
    """A deliberately wrong upper bound: the ceiled series truncated, its remainder dropped."""
    a, b = z.numerator, z.denominator
    w = em.PREC + 24
    lo, _ = em._atanh_bounds(z)
    p, hi, j = -((-a << w) // b), 0, 0
    while p > 1 << 40:  # stops early: the terms left out are not paid for
        hi += -((-p) // (2 * j + 1))
        p = -((-p * a * a) // (b * b))
        j += 1
    return lo, Fraction(hi, 1 << w)


def _exp_neg_floor_only(x: Fraction) -> Interval:
    """A deliberately wrong enclosure of e^x: the saturation floor without its bound check."""
    return Fraction(0), Fraction(1, 2**3000) if x < -2000 else em.exp_bounds(x)[1]


def test_the_checks_catch_wrong_variants() -> None:
    assert not encloses(_atanh_without_remainder, mpmath.atanh, Fraction(1, 3))
    # e^-2048 ≈ 2^-2954.7 > 2^-3000: a floor below the true value is caught
    with mpmath.workdps(1000):
        assert mpmath.exp(-2048) > mp(_exp_neg_floor_only(Fraction(-2048))[1])


# ----------------------------------------------------------- closed forms fed by the enclosures

def _dlap_accuracy_ref(t: Fraction, alpha: Fraction) -> int:
    """Smallest a ≥ 0 with 2q^{a+1}/(1+q) ≤ α, q = e^{-1/t}, at 1000 digits."""
    with mpmath.workdps(1000):
        q = mpmath.exp(-1 / mp(t))
        need = (mpmath.log(2 / mp(alpha)) - mpmath.log(1 + q)) * mp(t)
        return max(0, int(mpmath.ceil(need)) - 1)


@pytest.mark.parametrize("t", [Fraction(1, 10**9), Fraction(1, 3), Fraction(1), Fraction(2**20),
                               Fraction(2**52)])
@pytest.mark.parametrize("alpha", [Fraction(1, 20), Fraction(1, 10**12)])
def test_discrete_laplace_accuracy_matches_mpmath(t: Fraction, alpha: Fraction) -> None:
    assert acc.discrete_laplace_accuracy(t, alpha) == _dlap_accuracy_ref(t, alpha)


@pytest.mark.parametrize("sigma", [Fraction(1, 10**9), Fraction(1, 3), Fraction(2**20),
                                   Fraction(2**52)])
def test_discrete_gaussian_accuracy_matches_mpmath(sigma: Fraction) -> None:
    alpha = Fraction(1, 20)
    a = int(acc.discrete_gaussian_accuracy(sigma, alpha))
    with mpmath.workdps(100):
        def tail(n: int) -> mpmath.mpf:
            return 2 * mpmath.ncdf(-mpmath.mpf(n) / mp(sigma))
        assert tail(a) <= mp(alpha)
        assert a == 0 or tail(a - 1) > mp(alpha) * (1 + mpmath.mpf(10) ** -40)


def test_discrete_laplace_variance_tiny_scale_is_a_bound() -> None:
    v = acc.discrete_laplace_variance(Fraction(1, 10**9))  # 2q/(1−q)² ≈ 2e^{−10⁹}, rounded up
    assert 0 < v <= 1e-300


def _keyed_threshold_ref(s: Fraction, c: int, groups: int, delta: Fraction) -> int:
    """Smallest τ ≥ c + 1 with groups·q^{τ−c}/(1+q) ≤ δ, q = e^{−1/s}, at 1000 digits."""
    with mpmath.workdps(1000):
        q = mpmath.exp(-1 / mp(s))
        need = (mpmath.log(groups / mp(delta)) - mpmath.log(1 + q)) * mp(s)
        return max(c + 1, int(mpmath.ceil(need)) + c)


@pytest.mark.parametrize("s", [Fraction(1, 10**9), Fraction(1, 10**3), Fraction(1, 2),
                               Fraction(3), Fraction(10**9)])
@pytest.mark.parametrize(("c", "groups", "delta"), [(1, 1, Fraction(1, 10**6)),
                                                    (3, 5, Fraction(1, 10**300))])
def test_keyed_threshold_matches_mpmath(s: Fraction, c: int, groups: int,
                                        delta: Fraction) -> None:
    assert th.keyed_threshold(s, c, groups, delta) == _keyed_threshold_ref(s, c, groups, delta)


def test_keyed_threshold_refuses_a_delta_below_the_floor() -> None:
    with pytest.raises(InvalidParameter, match="delta="):
        th.keyed_threshold(Fraction(1, 10**9), 1, 2, em.exp_floor())
    assert th.keyed_threshold(Fraction(1, 10**9), 1, 1, em.exp_floor() * 2) == 2


def test_laplace_tail_is_an_upper_bound_at_tiny_scale() -> None:
    t = th.laplace_tail(Fraction(1, 10**9), 1)
    with mpmath.workdps(1000):
        q = mpmath.exp(-mpmath.mpf(10) ** 9)
        assert q / (1 + q) <= mp(t) <= mpmath.exp(-2048) * (1 + mpmath.mpf(2) ** -180)


def test_partition_selection_group_map_is_one_beyond_the_cap() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
    sel = space >> dp.m.then_partition_selection(epsilon=10**9, delta=1e-6)
    assert sel.params["threshold"] == 2
    assert sel.map(2) == (2 * 10**9, 1)
    small = space >> dp.m.then_partition_selection(epsilon=1, delta=1e-6)
    with mpmath.workdps(100):
        eps, delta = small.map(3)
        assert eps == 3 and mp(delta) >= 3 * mpmath.exp(2) * mpmath.mpf(1e-6)


# ----------------------------------------------------------------- the engine at extreme budgets

def _query(budget: dp.Measure, keys: object = ("n", "s")) -> tuple[dp.Session, object]:
    df = pl.DataFrame({"pid": [1, 2, 3, 4], "region": ["n", "s", "n", "s"],
                       "income": [10.0, 20.0, 30.0, 40.0]})
    sess = dp.Session(df, privacy_unit="pid", budget=budget)
    q = (sess.query().group_by("region", keys=list(keys) if keys != "private" else keys)
         .agg(dp.count(), dp.variance("income", bounds=(-(2.0**64), 2.0**64)))
         .bound_contributions(max_groups=1, max_rows_per_group=1))
    return sess, q


@pytest.mark.parametrize("budget", [dp.PureDP(1e9), dp.ZCDP(1e9), dp.ApproxDP(1e9, 1e-9)])
def test_huge_budgets_quote_the_closed_form(budget: dp.Measure) -> None:
    _, q = _query(budget)
    table = q.accuracy(budget=budget)  # type: ignore[attr-defined]
    count = table.filter(pl.col("output") == "count").row(0, named=True)
    scale = Fraction(q.measurement(budget).params["scales"]["count"])  # type: ignore[attr-defined]
    ref = (_dlap_accuracy_ref(scale, Fraction(1, 20)) if not isinstance(budget, dp.ZCDP)
           else int(acc.discrete_gaussian_accuracy(scale, Fraction(1, 20))))
    # the discrete Gaussian's tail bound 2Φ(−a/σ) is 1 at a = 0, so its smallest half-width is 1
    assert count["half_width"] == ref == (1 if isinstance(budget, dp.ZCDP) else 0)
    rel = q.release(budget)  # type: ignore[attr-defined]
    assert rel.to_polars()["count"].to_list() == [2.0, 2.0]


def test_huge_budget_private_keys_release() -> None:
    budget = dp.ApproxDP(1e9, 1e-9)
    _, q = _query(budget, "private")
    assert q.check(budget).params["threshold"] == 2  # type: ignore[attr-defined]
    out = q.release(budget).to_polars()  # type: ignore[attr-defined]
    assert sorted(out["region"].to_list()) == ["n", "s"]


def test_tiny_budget_scale_limit_refused_before_any_charge() -> None:
    budget = dp.PureDP(1e-17)  # count scale 1e17 > 2^52: the samplers' limit
    sess, q = _query(dp.PureDP(1))
    with pytest.raises(InvalidParameter):
        q.release(budget)  # type: ignore[attr-defined]
    assert sess.spent == 0


@pytest.mark.parametrize("guess", [0, 1, 5, 6, 7, 1000, 2**60])
def test_first_true_finds_the_threshold_from_any_guess(guess: int) -> None:
    calls: list[int] = []

    def ok(n: int) -> bool:
        calls.append(n)
        return n >= 6

    assert acc._first_true(ok, guess) == 6
    assert len(calls) <= 2 * max(guess, 6).bit_length() + 4
    assert acc._first_true(lambda n: True, guess) == 0


@pytest.mark.parametrize("scale", [Fraction(1, 10**9), Fraction(1, 10**3)])
def test_samplers_at_tiny_scales_are_exactly_zero(scale: Fraction) -> None:
    """P(X ≠ 0) = 2q/(1+q) ≤ 2e^{-1000} for DLap and ≤ 2e^{-500000}·… for N_ℤ at these scales:
    any non-zero draw in 10^5 means a wrong sampler (a correct one fails w.p. < 1e-400)."""
    from dpcert.samplers import InsecureSeededSource, discrete_gaussian, discrete_laplace

    src = InsecureSeededSource(37)
    assert not discrete_laplace(scale, 100_000, source=src).any()
    assert not discrete_gaussian(scale, 100_000, source=src).any()
