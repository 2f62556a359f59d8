"""Exact sums of squares for the variance (no float rounding before the final result)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from dpcert._exact import exact_float_sum
from dpcert._types import Array

__all__ = ["exact_sum_and_squares"]

_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)


def exact_sum_and_squares(arr: Array) -> tuple[Fraction, Fraction]:
    """``(Σx, Σx²)`` exactly, for an int or float array (vectorised where safe)."""
    if arr.size == 0:
        return Fraction(0), Fraction(0)
    if arr.dtype.kind in "iu" or arr.dtype == object:
        vals = [int(v) for v in arr.tolist()] if arr.dtype == object else None
        if vals is None:
            big = int(np.abs(arr).max())
            if big * big * arr.size < 2**63:  # neither sum can overflow int64
                a = arr.astype(np.int64)
                return Fraction(int(a.sum())), Fraction(int((a * a).sum()))
            vals = [int(v) for v in arr.tolist()]
        return Fraction(sum(vals)), Fraction(sum(v * v for v in vals))
    x = np.asarray(arr, dtype=np.float64)
    ax = np.abs(x[x != 0])
    if ax.size and (ax.max() > 2.0**500 or ax.min() < 2.0**-400):
        fr = [Fraction(v) for v in x.tolist()]
        return sum(fr, Fraction(0)), sum((v * v for v in fr), Fraction(0))
    c = _SPLIT * x
    hi = c - (c - x)
    lo = x - hi
    # x² = hi² + 2·hi·lo + lo², every product exact (Dekker 1971)
    sq = exact_float_sum(hi * hi) + exact_float_sum(2 * hi * lo) + exact_float_sum(lo * lo)
    return exact_float_sum(x), sq
