"""Exact output probabilities used by refutations, against closed forms."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("lark")

from dpcert.verify import parse_program
from dpcert.verify.semantics import Lin, region_probability
from dpcert.verify.symexec import unroll

SRC = """input q : real[n]; adjacent q : all in [-1, 1]; param eps > 0; claim eps;
r := []; for i in 0 .. n { r := r ++ [lap(2/eps)]; } return r;"""


def lap_cdf(x: float, b: float) -> float:
    return 0.5 * math.exp(x / b) if x < 0 else 1 - 0.5 * math.exp(-x / b)


@pytest.mark.parametrize("t", [-8.0, -1.0, 0.5, 3.0])
def test_max_of_three_laplace(t: float) -> None:
    u = unroll(parse_program(SRC), 3)
    ks = sorted(u.noises)
    scales = dict.fromkeys(ks, 2.0)
    total = 0.0
    for w in range(3):  # η_w is the maximum and is <= t: a hub-shaped region
        cons = [Lin(((ks[j], 1.0), (ks[w], -1.0)), 0.0, "<") for j in range(3) if j != w]
        cons.append(Lin(((ks[w], 1.0),), -t, "<="))
        p = region_probability(u, cons, scales)
        assert p is not None
        total += p
    assert total == pytest.approx(lap_cdf(t, 2.0) ** 3, rel=1e-12)


def test_not_hub_shaped_is_none() -> None:
    u = unroll(parse_program(SRC), 4)
    a, b, c, d = sorted(u.noises)
    cons = [Lin(((a, 1.0), (b, -1.0)), 0.0, "<"), Lin(((c, 1.0), (d, -1.0)), 0.0, "<")]
    assert region_probability(u, cons, dict.fromkeys(u.noises, 1.0)) is None


def test_equality_with_continuous_noise_has_probability_zero() -> None:
    u = unroll(parse_program(SRC), 1)
    (a,) = u.noises
    assert region_probability(u, [Lin(((a, 1.0),), 0.0, "==")], {a: 1.0}) == 0.0


DSRC = """input q : int[n]; adjacent q : all in [-1, 1]; param eps > 0; claim eps;
r := []; for i in 0 .. n { r := r ++ [dlap(1/eps)]; } return r;"""


def dlap_pmf(k: int, b: float) -> float:
    t = math.exp(-1 / b)
    return (1 - t) / (1 + t) * t ** abs(k)


@pytest.mark.parametrize("k", [0, 1, -3])
def test_lattice_equation_of_two_discrete_laplace(k: int) -> None:
    # η_a − η_b = k (and ≠ k) on the lattice, against the sum of the two pmfs
    u = unroll(parse_program(DSRC), 2)
    a, b = sorted(u.noises)
    want = sum(dlap_pmf(j + k, 1.5) * dlap_pmf(j, 1.5) for j in range(-200, 201))
    eq = region_probability(u, [Lin(((a, 1.0), (b, -1.0)), -float(k), "==")], {a: 1.5, b: 1.5})
    ne = region_probability(u, [Lin(((a, 1.0), (b, -1.0)), -float(k), "!=")], {a: 1.5, b: 1.5})
    assert eq == pytest.approx(want, rel=1e-12) and ne == pytest.approx(1 - want, rel=1e-12)


def test_a_point_off_the_lattice_has_probability_zero() -> None:
    # wrong variant: a half step (η = 1/2) must not be rounded onto the lattice
    u = unroll(parse_program(DSRC), 1)
    (a,) = u.noises
    assert region_probability(u, [Lin(((a, 1.0),), -0.5, "==")], {a: 1.0}) == 0.0
    on = region_probability(u, [Lin(((a, 2.0),), -2.0, "==")], {a: 1.0})  # 2η = 2
    assert on == pytest.approx(dlap_pmf(1, 1.0), rel=1e-12)


def test_deep_tail_masses_keep_their_relative_accuracy() -> None:
    # wrong variant: masses as differences of CDF values near 1 lose their digits in a tail
    # (η = 27 under dlap(1): relative error ~1e-4, enough to fake a loss above ε)
    u = unroll(parse_program(DSRC), 1)
    (a,) = u.noises
    deep = region_probability(u, [Lin(((a, 1.0),), -27.0, "==")], {a: 1.0})
    assert deep == pytest.approx(dlap_pmf(27, 1.0), rel=1e-12)
    uc = unroll(parse_program(SRC), 1)
    (c,) = uc.noises
    cons = [Lin(((c, -1.0),), 30.0, "<"), Lin(((c, 1.0),), -31.0, "<=")]  # 30 < η ≤ 31
    p = region_probability(uc, cons, {c: 1.0})
    assert p == pytest.approx(0.5 * (math.exp(-30) - math.exp(-31)), rel=1e-12)
