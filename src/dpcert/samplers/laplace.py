"""Exact discrete Laplace sampler: ``P(X = x) ∝ exp(-|x| / scale)`` on ℤ.

Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020) give
the reference scalar algorithm; dpcert samples the same distribution with the vectorised exact
engine of `dpcert.samplers._cells` (inversion for ``scale < 128``; for larger scales a
rejection step from a piecewise-constant envelope whose cells have width ``2**e``, so the work per
draw does not grow with the scale).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dpcert._validate import check_size
from dpcert.samplers._cells import cell_sampler
from dpcert.samplers._limits import MAX_SCALE, check_scale
from dpcert.samplers.entropy import EntropySource, default_source

__all__ = ["MAX_SCALE", "check_scale", "discrete_laplace"]


def discrete_laplace(scale: object, size: int, *, source: EntropySource | None = None
                     ) -> npt.NDArray[np.int64]:
    """``size`` exact draws with ``P(X = x) ∝ exp(-|x| / scale)``, ``x`` in ℤ.

    ``scale`` is a positive rational (a float means its decimal) up to 2**52.

    Examples
    --------
    >>> from dpcert.samplers import InsecureSeededSource
    >>> from fractions import Fraction
    >>> x = discrete_laplace(Fraction(3), 200_000, source=InsecureSeededSource(4))
    >>> x.dtype, bool(abs(x.mean()) < 0.05), bool(abs(x.var() - 17.5) < 0.5)
    (dtype('int64'), True, True)
    """
    s = check_scale(scale, "scale")
    n = check_size(size)
    src = default_source() if source is None else source
    return cell_sampler("laplace", s, False).sample(n, src)
