"""``make_parallel_composition`` against the exact law of its parts' outputs on real neighbouring
datasets (issue 20, item 4: a second route beside the hand-computed maps of
``test_combinators.py``).

The parts are noisy counts: the output of part p is ``count_p + Z_p`` with Z_p discrete Laplace
(P(z) ∝ e^{−|z|/s}) or discrete Gaussian (P(z) ∝ e^{−z²/2σ²}), independent across parts.  For
two partitioned datasets the joint output law is the product of the parts' laws, so its privacy
loss is computed from the PMFs themselves on a window of outputs: the largest log-ratio (pure DP)
and the hockey-stick divergence Σ max(0, P − e^ε Q) (approximate DP, Dwork & Roth 2014,
Def. 2.4).  The parallel map at the partitions' actual distance (l0, l1, l∞) must cover both.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert.transformations.partition import PartitionDistance, then_partition

SPACE = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
PART = SPACE >> then_partition(by=lambda x: x % 3, keys=[0, 1, 2])
INNER = (PART.output_domain.inner, dp.SymmetricDistance())
BASE = [0, 1, 2, 3, 4, 5, 6, 7, 8]


def _counts(data: list[int]) -> list[int]:
    return [len(p) for p in PART(data)]


def _dlap_max_log_ratio(shift: int, s: float) -> float:
    """max_y log P(y)/Q(y) for y ~ c + DLap(s) vs c + shift + DLap(s), over a wide window."""
    y = np.arange(-60 * s - abs(shift), 60 * s + abs(shift) + 1)
    return float(np.max((-np.abs(y) + np.abs(y - shift)) / s))


def _dgauss_pmf(y: np.ndarray, centre: int, sigma: float) -> np.ndarray:
    w = np.exp(-((y - centre) ** 2) / (2 * sigma * sigma))
    z = np.exp(-(np.arange(-60 * sigma, 60 * sigma + 1) ** 2) / (2 * sigma * sigma)).sum()
    out: np.ndarray = w / z
    return out


def _dgauss_hockey(shift: int, sigma: float, eps: float) -> float:
    """δ(ε) of the discrete Gaussian at count difference ``shift``, both directions."""
    y = np.arange(-60 * sigma - abs(shift), 60 * sigma + abs(shift) + 1)
    p, q = _dgauss_pmf(y, 0, sigma), _dgauss_pmf(y, shift, sigma)
    e = math.exp(eps)
    return float(max(np.maximum(p - e * q, 0).sum(), np.maximum(q - e * p, 0).sum()))


NEIGHBOURS = [  # records added to BASE, and which parts they land in
    [0],              # one record, part 0
    [3, 3],           # two records in part 0: l∞ = 2
    [1, 4, 7],        # three records in part 1: l∞ = 3
    [0, 1, 4],        # parts 0 and 1: l0 = 2, l∞ = 2
    [2, 5, 0, 3],     # parts 2 and 0: l0 = 2, l∞ = 2
]


@pytest.mark.parametrize("added", NEIGHBOURS)
def test_laplace_parts_cover_the_exact_loss_of_real_neighbours(added: list[int]) -> None:
    scales = (1.0, 2.0, 4.0)
    ms = [INNER >> dp.t.then_count() >> dp.m.then_laplace(s) for s in scales]
    par = PART >> dp.c.make_parallel_composition(PART.output_domain, PART.output_metric, ms)
    x, y = BASE, [*BASE, *added]
    d = PartitionDistance().distance(PART(x), PART(y))
    diffs = [b - a for a, b in zip(_counts(x), _counts(y), strict=True)]
    exact = sum(_dlap_max_log_ratio(c, s) for c, s in zip(diffs, scales, strict=True) if c)
    assert exact == pytest.approx(sum(abs(c) / s for c, s in zip(diffs, scales, strict=True)))
    inner_par = dp.c.make_parallel_composition(PART.output_domain, PART.output_metric, ms)
    assert float(inner_par.map(d)) >= exact * (1 - 1e-12), (d, exact)
    assert float(par.map(len(added))) >= exact * (1 - 1e-12)


@pytest.mark.parametrize("added", NEIGHBOURS)
def test_approx_parts_cover_the_exact_hockey_stick_of_real_neighbours(added: list[int]) -> None:
    """Discrete Gaussian parts converted to (ε, δ) with different δ: the part with the largest
    δ is neither the first nor the one with the largest ε, so the parallel (ε, δ) must take
    the maximum of each coordinate, at each changed part's own l∞."""
    parts = [(20.0, Fraction(1, 10**9)), (1.0, Fraction(1, 10**3)), (3.0, Fraction(1, 10**6))]
    ms = [dp.c.make_zCDP_to_approxDP(INNER >> dp.t.then_count() >> dp.m.then_gaussian(s), dl)
          for s, dl in parts]
    par = dp.c.make_parallel_composition(PART.output_domain, PART.output_metric, ms)
    x, y = BASE, [*BASE, *added]
    d = PartitionDistance().distance(PART(x), PART(y))
    eps, delta = par.map(d)
    diffs = [b - a for a, b in zip(_counts(x), _counts(y), strict=True)]
    changed = [(c, s) for c, (s, _) in zip(diffs, parts, strict=True) if c]
    # every changed part, seen alone at the composed ε, stays within the composed δ (its
    # output is a post-processing of the joint output)
    for c, s in changed:
        assert _dgauss_hockey(c, s, float(eps)) <= float(delta) * (1 + 1e-9), (c, s, eps, delta)
