"""Symmetry of the two-sided exact samplers at scales where the cell engine is used (≥ 128).

The cell sampler draws a cell ``V`` and an offset ``R`` inside it, and accepts with a probability
that depends on the distance to the cell's inner end: ``R`` for ``V ≥ 0``, ``t − 1 − R`` for
``V < 0``.  Measuring negative cells from the wrong end skews the offsets of negative draws only
(by about ``t/(6·scale)`` of a cell), which no test of ``|X|`` or of the mean can see.  These tests
compare the residues ``|X| mod t`` of negative draws with those of positive draws (one law by
symmetry), and the two halves' magnitudes and masses.  Seeded; thresholds are 6 standard errors
(two-sided p < 2e-9).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpcert.samplers import InsecureSeededSource, discrete_gaussian, discrete_laplace
from dpcert.samplers._cells import cell_sampler

pytestmark = pytest.mark.slow
N = 4 * 10**6
Z = 6.0

SAMPLERS: dict[str, Callable[..., np.ndarray]] = {
    "laplace": discrete_laplace,
    "gaussian": discrete_gaussian,
}


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
@pytest.mark.parametrize("scale", [Fraction(128), Fraction(4096), Fraction(10**6 + 1, 3)])
def test_negative_cells_mirror_positive_cells(kind: str, scale: Fraction) -> None:
    t = cell_sampler(kind, scale, False).t
    assert t >= 2  # the cell engine (not plain inversion) is in use
    x = np.asarray(SAMPLERS[kind](scale, N, source=InsecureSeededSource(int(scale) % 1000 + 17)))
    pos, neg = x[x > 0], -x[x < 0]
    # masses: P(X > 0) = P(X < 0)
    n = pos.size + neg.size
    assert abs(pos.size - neg.size) < Z * np.sqrt(n)
    # |X| given X > 0 and given X < 0 have one law, so do their residues mod t; a cell measured
    # from the wrong end reverses the offsets (the residues) on one side only
    a = (pos % t).astype(np.float64)
    b = (neg % t).astype(np.float64)
    se = np.sqrt(a.var() / a.size + b.var() / b.size)
    assert abs(a.mean() - b.mean()) < Z * se
    # magnitudes: |X| | X > 0 has the law of |X| | X < 0
    ks = stats.ks_2samp(pos[: 200_000], neg[: 200_000])
    assert ks.pvalue > 1e-6
