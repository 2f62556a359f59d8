"""The geometric sampler's first two moments at small and large rates (seeded; an independent
route from the chi-square test in tests/statistical): mean 1/(e^γ − 1), variance
e^γ/(e^γ − 1)²; thresholds of 6 standard errors (a correct sampler fails with probability
< 1e-8 for a fresh seed; the seeds are fixed)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpcert.samplers import InsecureSeededSource
from dpcert.samplers.geom import geometric

N = 100_000


@pytest.mark.parametrize("gamma", [Fraction(1, 50), Fraction(1, 3), Fraction(1), Fraction(4)])
def test_geometric_mean_and_variance(gamma: Fraction) -> None:
    g = float(gamma)
    mean = 1 / math.expm1(g)
    var = math.exp(g) / math.expm1(g) ** 2
    x = geometric(gamma, N, source=InsecureSeededSource(101)).astype(np.float64)
    assert x.min() >= 0
    assert abs(x.mean() - mean) < 6 * math.sqrt(var / N)
    # the sample variance's standard error is about var·√(2/N) for these light tails (x3)
    assert abs(x.var() - var) < 6 * 3 * var * math.sqrt(2 / N) + 1e-9
