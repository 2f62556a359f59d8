"""Report-noisy-max with Laplace noise: an exact-PMF lower bound on its privacy loss.

Over two candidates, report-noisy-max with discrete Laplace noise ``DLap(b)`` picks candidate 0
with probability ``P(W < D) + ½·P(W = D)`` where ``D = u₀ − u₁`` and ``W = Z₁ − Z₀`` is the
difference of two independent ``DLap(b)`` draws (its PMF is a convolution, computed here in
binary64 on ``|z| ≤ 400``; the tails beyond are below 10⁻⁸⁰).  The test reads the scale ``b``
the mechanism hands to its exact sampler (Dwork & Roth 2014, Claim 3.9: ``b = 2Δ/ε`` for scores
that may move in opposite directions), and over every pair of score vectors that differ by at
most ``Δ = 1`` per coordinate, the attained max log-ratio must be ≤ ``map(1) = ε`` and at least
``ε/1.5`` (attained: 0.82 ε at ε = 1, 0.73 ε at ε = ½; at ``b = Δ/ε`` it would be
1.78 ε and 1.64 ε).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import dpcert as dp
import dpcert.mechanisms.exponential as exponential_module

SPACE = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
N = 400


def _scale_used(m: dp.Measurement, data: list[int], monkeypatch: pytest.MonkeyPatch) -> Fraction:
    seen: list[Fraction] = []
    real = exponential_module.noisy_max_index

    def spy(scores: list[int], scale: Fraction) -> int:
        seen.append(scale)
        return real(scores, scale)

    monkeypatch.setattr(exponential_module, "noisy_max_index", spy)
    m(data)
    monkeypatch.setattr(exponential_module, "noisy_max_index", real)
    assert len(seen) == 1
    return seen[0]


def _pick_first(d: int, scale: Fraction) -> float:
    q = math.exp(-1 / float(scale))
    z = np.arange(-N, N + 1)
    p = (1 - q) / (1 + q) * q ** np.abs(z)
    w = np.convolve(p, p)  # PMF of Z1 - Z0 on -2N .. 2N
    c = 2 * N
    return float(w[: c + d].sum() + 0.5 * w[c + d])


def _first_two(xs: Any) -> list[int]:
    return [int(xs[0]), int(xs[1])]


@pytest.mark.parametrize("eps", [Fraction(1), Fraction(1, 2)])
def test_laplace_report_noisy_max_exact_pmf_two_candidates(
        eps: Fraction, monkeypatch: pytest.MonkeyPatch) -> None:
    m = dp.m.make_report_noisy_max(*SPACE, ["a", "b"], _first_two, 1, eps, noise="laplace")
    assert m.map(1) == eps and m.map(3) == 3 * eps
    scale = _scale_used(m, [0, 0], monkeypatch)
    worst = 0.0
    for u0, u1 in itertools.product(range(-3, 4), repeat=2):
        for v0, v1 in itertools.product((u0 - 1, u0, u0 + 1), (u1 - 1, u1, u1 + 1)):
            p, pp = _pick_first(u0 - u1, scale), _pick_first(v0 - v1, scale)
            worst = max(worst, abs(math.log(p / pp)), abs(math.log((1 - p) / (1 - pp))))
    assert worst <= float(eps) * (1 + 1e-9)
    assert worst >= float(eps) / Fraction(3, 2)


def test_the_pmf_reference_sums_to_one_and_is_symmetric() -> None:
    for scale in (Fraction(1), Fraction(2), Fraction(4)):
        assert _pick_first(0, scale) == pytest.approx(0.5, abs=1e-15)
        for d in (1, 2, 5):
            assert _pick_first(d, scale) + _pick_first(-d, scale) == pytest.approx(1, abs=1e-12)
