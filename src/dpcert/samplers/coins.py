"""Exact Bernoulli samplers: rational ``p`` and ``exp(-γ)``.

Both compare a uniform ``U`` (first 32 bits drawn for every element, more only when needed)
with the threshold ``c``: the output is ``U < c``, which is exactly Bernoulli(``c``).  For
``c = exp(-γ)`` the threshold is known through rigorous integer bounds at any precision, so no
float ``exp`` is involved (the role played by Canonne, Kamath & Steinke 2020, Algorithm 1, which we
replace by a lazily refined comparison that needs 32 bits per draw instead of a loop).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from dpcert._directed import Bounds, exp_neg_bounds
from dpcert._validate import check_nonnegative, check_probability, check_size
from dpcert.samplers._inversion import ThresholdTable
from dpcert.samplers.entropy import EntropySource, default_source

__all__ = ["bernoulli", "bernoulli_exp"]


@lru_cache(maxsize=256)
def _rational_table(p: Fraction) -> ThresholdTable:
    def bounds(prec: int) -> list[Bounds]:
        num = p.numerator << prec
        return [(num // p.denominator, -((-num) // p.denominator))]

    return ThresholdTable(bounds)


@lru_cache(maxsize=256)
def _exp_table(gamma: Fraction) -> ThresholdTable:
    return ThresholdTable(lambda prec: [exp_neg_bounds(gamma, prec)])


def _draw(table: ThresholdTable, size: int, source: EntropySource | None) -> npt.NDArray[np.bool_]:
    src = default_source() if source is None else source
    out: npt.NDArray[np.bool_] = table.sample(src.random_uint32(size).astype(np.int64), src) == 0
    return out


def bernoulli(p: object, size: int, *, source: EntropySource | None = None
              ) -> npt.NDArray[np.bool_]:
    """``size`` independent draws of Bernoulli(``p``), exactly, for a rational ``p`` in [0, 1].

    A float ``p`` means its decimal (``0.1`` is 1/10).

    Examples
    --------
    >>> from dpcert.samplers import InsecureSeededSource
    >>> bernoulli(Fraction(1, 3), 5, source=InsecureSeededSource(1)).dtype
    dtype('bool')
    >>> bool(bernoulli(1, 4).all())
    True
    """
    pf = check_probability(p, "p")
    n = check_size(size)
    if pf == 0 or pf == 1:
        return np.full(n, pf == 1, dtype=np.bool_)
    return _draw(_rational_table(pf), n, source)


def bernoulli_exp(gamma: object, size: int, *, source: EntropySource | None = None
                  ) -> npt.NDArray[np.bool_]:
    """``size`` independent draws that are True with probability ``exp(-gamma)``, exactly.

    Examples
    --------
    >>> from dpcert.samplers import InsecureSeededSource
    >>> x = bernoulli_exp(Fraction(1, 2), 100_000, source=InsecureSeededSource(2))
    >>> bool(abs(x.mean() - 0.6065) < 0.01)
    True
    """
    g = check_nonnegative(gamma, "gamma")
    n = check_size(size)
    if g == 0:
        return np.ones(n, dtype=np.bool_)
    return _draw(_exp_table(g), n, source)
