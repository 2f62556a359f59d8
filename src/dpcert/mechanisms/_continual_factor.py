"""The square root of the prefix-sum matrix, on integers, and its Toeplitz algebra in floats.

The prefix-sum matrix ``A`` (lower-triangular ones, ``T×T``) is the square of the
lower-triangular Toeplitz matrix ``L`` with coefficients ``c_k = binom(2k, k)/4^k`` (the series
of ``(1 − x)^(−1/2)``; Fichtenberger, Henzinger & Upadhyay, ICML 2023; Henzinger, Upadhyay &
Upadhyay, SODA 2023).  dpcert releases ``w = C̃·x + z`` with the *integer* Toeplitz matrix
``C̃`` of coefficients ``c̃_k = round(c_k·2^s)`` (so ``C̃·x`` is computed exactly on integer
counts) and integer noise ``z`` of scale ``scale·2^s``, then post-processes
``ŝ = A·C̃^(−1)·w = A·x + A·C̃^(−1)·z``: unbiased, with noise ``≈ L·(z/2^s)``.

Examples
--------
>>> [str(c) for c in sqrt_coefficients(4)]
['1', '1/2', '3/8', '5/16']
>>> integer_factor(4, 4).tolist()
[16, 8, 6, 5]
>>> g = prefix_weights(np.array([1.0, 0.5, 0.375, 0.3125]))   # A·L^(−1) = L
>>> np.allclose(g, [1, 0.5, 0.375, 0.3125])
True
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dpcert._types import Array

__all__ = [
    "FACTOR_BITS",
    "exact_toeplitz_apply",
    "inverse_series",
    "integer_factor",
    "prefix_weights",
    "sqrt_coefficients",
    "toeplitz_apply",
]

FloatArray = npt.NDArray[np.float64]

#: Fixed-point bits of the integer factor: ``c̃_k = round(c_k·2^FACTOR_BITS)``.
FACTOR_BITS = 24
# |C̃x| ≤ 2^FACTOR_BITS·Σ|x| fits int64 below this total count; above it Python integers are used.
_INT64_TOTAL = 1 << (62 - FACTOR_BITS)


def sqrt_coefficients(n: int) -> list[Fraction]:
    """``c_k = binom(2k, k)/4^k`` for ``k < n``, exactly (``c_k = c_(k−1)·(2k−1)/(2k)``)."""
    out = [Fraction(1)]
    for k in range(1, n):
        out.append(out[-1] * Fraction(2 * k - 1, 2 * k))
    return out[:n]


def integer_factor(n: int, bits: int = FACTOR_BITS) -> npt.NDArray[np.int64]:
    """``c̃_k = round(c_k·2^bits)`` (half up), ``k < n``: exact integers, ``c̃_0 = 2^bits``."""
    binom = 1  # binom(2k, k)
    out = np.empty(n, dtype=np.int64)
    for k in range(n):
        if k:
            binom = binom * (2 * k) * (2 * k - 1) // (k * k)
        out[k] = ((binom << (bits + 1)) + (1 << (2 * k))) >> (2 * k + 1)
    return out


def exact_toeplitz_apply(coef: npt.NDArray[np.int64], x: npt.NDArray[np.int64]
                         ) -> Array:
    """``(C·x)_t = Σ_(j≤t) coef[t−j]·x[j]`` exactly on integers (int64 when it cannot overflow,
    Python integers otherwise)."""
    n = x.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    total = int(np.abs(x).astype(object).sum())
    if total < _INT64_TOTAL and int(coef[0]) <= (1 << FACTOR_BITS):
        return np.convolve(x.astype(np.int64), coef[:n])[:n]
    return np.convolve(x.astype(object), coef[:n].astype(object))[:n]


def inverse_series(a: FloatArray) -> FloatArray:
    """Coefficients of ``1/a(x)`` to the length of ``a`` (``a[0] ≠ 0``), in floats."""
    n = a.size
    d = np.zeros(n, dtype=np.float64)
    d[0] = 1.0 / a[0]
    for k in range(1, n):
        d[k] = -np.dot(a[1 : k + 1], d[k - 1 :: -1]) / a[0]
    return d


def prefix_weights(a: FloatArray) -> FloatArray:
    """Coefficients ``g`` of ``A·C^(−1)`` for the Toeplitz ``C`` with coefficients ``a``."""
    return np.cumsum(inverse_series(a))


def toeplitz_apply(g: FloatArray, w: FloatArray) -> FloatArray:
    """``(G·w)_t = Σ_(j≤t) g[t−j]·w[j]`` in floats, along the last axis (FFT for long or
    batched inputs)."""
    n = w.shape[-1]
    if w.ndim == 1 and n <= 512:
        return np.convolve(w, g[:n])[:n]
    size = 1 << (2 * n - 1).bit_length()
    prod = np.fft.irfft(np.fft.rfft(w, size) * np.fft.rfft(g[:n], size), size)
    return np.asarray(prod[..., :n], dtype=np.float64)
