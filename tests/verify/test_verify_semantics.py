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
