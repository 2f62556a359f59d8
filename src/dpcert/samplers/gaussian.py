"""Exact discrete Gaussian sampler: ``P(X = x) ∝ exp(-x² / (2σ²))`` on ℤ.

Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020),
define the distribution and a scalar rejection sampler; dpcert uses the vectorised exact engine
of `dpcert.samplers._cells` (inversion for ``sigma < 128``; for larger sigma, rejection from a
piecewise-constant envelope on cells of width ``2**e``, so the work per draw does not grow with
sigma).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dpcert._validate import check_size
from dpcert.samplers._cells import cell_sampler
from dpcert.samplers._limits import check_scale
from dpcert.samplers.entropy import EntropySource, default_source

__all__ = ["discrete_gaussian"]


def discrete_gaussian(sigma: object, size: int, *, source: EntropySource | None = None
                      ) -> npt.NDArray[np.int64]:
    """``size`` exact draws with ``P(X = x) ∝ exp(-x² / (2 sigma²))``, ``x`` in ℤ.

    ``sigma`` is a positive rational (a float means its decimal) up to 2**52.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from dpcert.samplers import InsecureSeededSource
    >>> x = discrete_gaussian(Fraction(5, 2), 200_000, source=InsecureSeededSource(5))
    >>> x.dtype, bool(abs(x.mean()) < 0.05), bool(abs(x.var() - 6.25) < 0.2)
    (dtype('int64'), True, True)
    """
    s = check_scale(sigma, "sigma")
    n = check_size(size)
    src = default_source() if source is None else source
    return cell_sampler("gaussian", s, False).sample(n, src)
