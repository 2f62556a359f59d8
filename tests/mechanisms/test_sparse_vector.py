"""make_sparse_vector: the noise scales for c > 1, sensitivity > 1, monotonic, numeric answers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert.mechanisms.sparse_vector import svt_budget_split

SPACE = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())


@pytest.mark.parametrize("c", [1, 2, 5])
@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize("sens", [1, 3])
def test_noise_scales_exact(c: int, monotonic: bool, sens: int) -> None:
    m = dp.m.make_sparse_vector(*SPACE, [len] * 6, 2, 1.5, c=c, sensitivity=sens,
                                monotonic=monotonic, numeric_epsilon=0.5)
    e1, e2 = svt_budget_split(Fraction(3, 2), c, monotonic)
    assert (m.params["epsilon_threshold"], m.params["epsilon_queries"]) == (e1, e2)
    assert e1 + e2 == Fraction(3, 2)
    assert m.params["scale_threshold"] == sens / e1
    assert m.params["scale_queries"] == (1 if monotonic else 2) * c * sens / e2
    assert m.params["scale_numeric"] == c * sens / Fraction(1, 2)
    assert m.map(1) == 2 and m.map(3) == 6


def _dlap_pmf(scale: Fraction, lim: int) -> tuple[np.ndarray, np.ndarray]:
    z = np.arange(-lim, lim + 1)
    q = math.exp(-1 / float(scale))
    return z, (1 - q) / (1 + q) * q ** np.abs(z)


def test_query_noise_distribution_matches_its_scale_for_c_above_one() -> None:
    # P(first answer is ⊤) = P(ν − ρ ≥ t − q) for ν ~ DLap(2cΔ/ε₂), ρ ~ DLap(Δ/ε₁); with c = 4
    # a query noise that forgot c would make this probability visibly smaller.
    c, thr, answer = 4, 10, 8
    m = dp.m.make_sparse_vector(*SPACE, [lambda xs: answer] * 3, thr, 1.0, c=c)
    z1, p1 = _dlap_pmf(m.params["scale_queries"], 400)
    z2, p2 = _dlap_pmf(m.params["scale_threshold"], 400)
    diff = np.subtract.outer(z1, z2)
    joint = np.multiply.outer(p1, p2)
    p_top = float(joint[diff >= thr - answer].sum())
    wrong_scale = m.params["scale_queries"] / c
    zw, pw = _dlap_pmf(wrong_scale, 400)
    p_wrong = float(np.multiply.outer(pw, p2)[np.subtract.outer(zw, z2) >= thr - answer].sum())
    n = 20000
    runs = m.batch_map([0], n)  # type: ignore[misc]
    hits = sum(1 for r in runs if r[0] is True)
    sd = math.sqrt(n * p_top * (1 - p_top))
    assert abs(hits - n * p_top) < 6 * sd  # fails w.p. < 2e-9
    assert abs(n * p_wrong - n * p_top) > 12 * sd  # and the wrong scale is far outside
