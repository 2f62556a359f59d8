"""Exact geometric sampler, parametrised by the decay rate γ: ``P(X = k) = (1 - e^-γ) e^(-γk)``.

This is the one-sided discrete Laplace: the engine is `dpcert.samplers._cells` with
``f(k) = γ k`` on ℕ.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dpcert._validate import check_positive, check_size
from dpcert.errors import InvalidParameter
from dpcert.samplers._cells import cell_sampler
from dpcert.samplers._limits import MAX_SCALE
from dpcert.samplers.entropy import EntropySource, default_source

__all__ = ["geometric"]


def geometric(gamma: object, size: int, *, source: EntropySource | None = None
              ) -> npt.NDArray[np.int64]:
    """``size`` draws with ``P(X = k) = (1 - exp(-gamma)) exp(-gamma k)`` for k = 0, 1, 2, ...

    ``gamma > 0`` is a rational (a float means its decimal); ``1 / gamma`` must be at most 2**52.
    The mean is ``1 / (exp(gamma) - 1)``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from dpcert.samplers import InsecureSeededSource
    >>> x = geometric(Fraction(1, 10), 200_000, source=InsecureSeededSource(3))
    >>> x.dtype, bool(x.min() >= 0), bool(abs(x.mean() - 9.508) < 0.2)
    (dtype('int64'), True, True)
    """
    g = check_positive(gamma, "gamma")
    n = check_size(size)
    if 1 / g > MAX_SCALE:
        raise InvalidParameter(f"gamma={gamma!r} must be >= 2**-52")
    src = default_source() if source is None else source
    return cell_sampler("laplace", 1 / g, True).sample(n, src)
