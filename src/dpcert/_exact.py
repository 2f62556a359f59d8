"""Exact sums of float and integer arrays (no floating-point rounding inside the sum).

Naive float summation depends on order and rounds at every step, so the sensitivity of a computed
sum can exceed the sensitivity of the true sum (Casacuberta et al., CCS 2022).  dpcert sums floats
exactly: every float is ``m·2^e`` with a 53-bit integer ``m``, so the sum is an exact integer
combination of powers of two.  The result is the exact rational, which callers round once.

Examples
--------
>>> import numpy as np
>>> exact_float_sum(np.array([0.1, 0.2, -0.3]))
Fraction(1, 36028797018963968)
>>> float(exact_float_sum(np.array([1e16, 1.0, -1e16])))
1.0
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from dpcert._types import Array

__all__ = ["exact_float_sum", "exact_int_sum"]

_CHUNK = 1 << 25  # per chunk, sums of 27-bit halves stay below 2^53 in float64 (exact)


def exact_float_sum(values: Array) -> Fraction:
    """The exact sum of a float64 array of finite values, as a Fraction (vectorised)."""
    arr = np.ascontiguousarray(values, dtype=np.float64).ravel()
    total = Fraction(0)
    for start in range(0, arr.size, _CHUNK):
        total += _chunk_sum(arr[start:start + _CHUNK])
    return total


def _chunk_sum(arr: Array) -> Fraction:
    if arr.size == 0:
        return Fraction(0)
    mant, expo = np.frexp(arr)  # arr = mant·2^expo, 0.5 <= |mant| < 1 (exact)
    ints = np.ldexp(mant, 53).astype(np.int64)  # exact 54-bit signed integers
    exps = expo.astype(np.int64) - 53
    uniq, inverse = np.unique(exps, return_inverse=True)
    hi = (ints >> 26).astype(np.float64)  # |hi| < 2^28, exact in float64
    lo = (ints & ((1 << 26) - 1)).astype(np.float64)  # 0 <= lo < 2^26
    # bincount sums in float64; with at most 2^25 terms below 2^28 every partial sum is < 2^53,
    # hence exact.
    hs = np.bincount(inverse, weights=hi, minlength=uniq.size)
    ls = np.bincount(inverse, weights=lo, minlength=uniq.size)
    total = Fraction(0)
    for e, h, lw in zip(uniq.tolist(), hs.tolist(), ls.tolist(), strict=True):
        n = int(h) * (1 << 26) + int(lw)
        total += Fraction(n) * (Fraction(2) ** e)
    return total


def exact_int_sum(values: Array, bound: int) -> int:
    """The exact sum of an integer array whose elements satisfy ``|v| <= bound``.

    Sums in int64 chunks small enough never to overflow, then adds the chunk sums as Python ints.
    """
    arr = np.asarray(values)
    if arr.dtype == object:
        return int(sum(int(v) for v in arr.tolist()))
    chunk = max(1, (1 << 62) // max(1, int(bound)))
    total = 0
    for start in range(0, arr.size, chunk):
        total += int(arr[start:start + chunk].sum(dtype=np.int64))
    return total
