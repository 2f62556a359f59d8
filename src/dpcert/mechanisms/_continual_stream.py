"""A small-memory factor for streaming: ``(1 − x)^(−1/2)`` as a sum of ``d ≈ 1.4·ln T + 9``
geometric sequences (a buffered linear Toeplitz factor in the sense of Dvijotham, McMahan,
Pillutla, Steinke & Thakurta 2024).

The coefficients ``c_k = binom(2k, k)/4^k`` are the moments of the arcsine law on ``[0, 1]``:
``c_k = (1/π)∫₀¹ λ^k (λ(1−λ))^(−1/2) dλ``.  With ``λ = 1 − exp(−e^u)`` the integrand is smooth in
``u`` and the trapezoidal rule with step ``h = 0.7`` on ``u ∈ [−ln T − 2.7, 3.5]`` gives
``ĉ_k = Σ_j w_j λ_j^k`` with positive weights and rates in ``(0, 1)``.  The factor ``Ĉ`` then
runs on ``d`` buffers: ``b_j ← λ_j·b_j + x_t`` and ``(Ĉx)_t = Σ_j w_j b_j``; its inverse runs
on ``d`` buffers too (the same state-space system solved for its input).
``ĉ(x) = Σ_j w_j/(1 − λ_j x)`` has its ``d − 1`` zeros real and between its poles
``1/λ_j > 1`` (each term is increasing between poles), so the inverse recursion is stable.

**Fixed point.**  The data side keeps the buffers as integers in units ``2^(−s)``, rounding
``λ_j·b_j`` to the nearest unit each step (``λ_j``, ``w_j`` are dyadic, so this is exact integer
arithmetic).  Buffer ``j`` is then within ``min(t, 1/(1 − λ_j))/2`` units of its exact value and the
output within ``e = 1/2 + Σ_j w_j·min(T, 1/(1 − λ_j))/2`` units; the privacy map pays ``2e`` per
step (``docs/proofs/continual.md``).

Examples
--------
>>> f = StreamFactor.for_steps(4096)
>>> f.buffers
21
>>> round(float(f.column_l2_bound()) ** 2, 3)   # Σ ĉ_k²; the exact factor's Σ c_k² is 3.714
3.745
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dpcert._directed import sqrt_bounds
from dpcert._types import Array

__all__ = ["StreamFactor", "StreamState", "decode_all", "encode_all"]

FloatArray = npt.NDArray[np.float64]

#: Trapezoidal step and range (in ``u = ln(−ln(1 − λ))``) of the quadrature.
STEP = 0.7
U_LOW_MARGIN = 2.7
U_HIGH = 3.5
#: Bits of the dyadic rates and weights.
PARAM_BITS = 64


def _pow_down(q: Fraction, n: int, prec: int = 128) -> Fraction:
    """A lower bound on ``q^n`` for dyadic ``0 ≤ q ≤ 1`` (binary powering in ``prec``-bit fixed
    point, every product rounded down)."""
    one = 1 << prec
    base = q.numerator * one // q.denominator
    result = one
    while n:
        if n & 1:
            result = result * base >> prec
        base = base * base >> prec
        n >>= 1
    return Fraction(result, one)


@dataclass(frozen=True)
class StreamFactor:
    """The rates ``λ_j = rates[j]/2^64`` and weights ``w_j = weights[j]/2^64`` for ``steps``."""

    steps: int
    rates: tuple[int, ...]
    weights: tuple[int, ...]

    @classmethod
    def for_steps(cls, steps: int) -> StreamFactor:
        """The quadrature factor for a stream of ``steps`` steps."""
        low = -math.log(steps) - U_LOW_MARGIN
        u = np.arange(low, U_HIGH + 1e-12, STEP)
        e = np.exp(u)
        lam = -np.expm1(-e)
        w = (STEP / math.pi) * e * np.exp(-e / 2) / np.sqrt(lam)
        one = 1 << PARAM_BITS
        rates = tuple(min(one - 1, max(1, round(v * one))) for v in lam)
        weights = tuple(max(1, round(v * one)) for v in w)
        return cls(steps, rates, weights)

    @property
    def buffers(self) -> int:
        """``d``: the buffers each side of the stream keeps."""
        return len(self.rates)

    def _lam(self) -> list[Fraction]:
        return [Fraction(r, 1 << PARAM_BITS) for r in self.rates]

    def _w(self) -> list[Fraction]:
        return [Fraction(w, 1 << PARAM_BITS) for w in self.weights]

    def coefficients(self) -> FloatArray:
        """``ĉ_k = Σ_j w_j λ_j^k`` for ``k < steps`` (floats, for the error formulas)."""
        lam = np.array([float(v) for v in self._lam()])
        w = np.array([float(v) for v in self._w()])
        k = np.arange(self.steps, dtype=np.float64)
        return np.asarray((w[None, :] * lam[None, :] ** k[:, None]).sum(axis=1))

    def coefficient_sum_bound(self) -> Fraction:
        """An upper bound on ``Σ_(k<T) ĉ_k = Σ_j w_j (1 − λ_j^T)/(1 − λ_j)`` (the column L1
        norm of ``Ĉ``)."""
        total = Fraction(0)
        for lam, w in zip(self._lam(), self._w(), strict=True):
            total += w * (1 - _pow_down(lam, self.steps)) / (1 - lam)
        return total

    def square_sum_bound(self) -> Fraction:
        """An upper bound on ``Σ_(k<T) ĉ_k² = Σ_(i,j) w_i w_j (1 − (λ_iλ_j)^T)/(1 − λ_iλ_j)``."""
        lam, w = self._lam(), self._w()
        total = Fraction(0)
        for i in range(len(lam)):
            for j in range(i, len(lam)):
                q = lam[i] * lam[j]
                term = w[i] * w[j] * (1 - _pow_down(q, self.steps)) / (1 - q)
                total += term if i == j else 2 * term
        return total

    def column_l2_bound(self) -> Fraction:
        """An upper bound on the column L2 norm ``√(Σ ĉ_k²)``."""
        return sqrt_bounds(self.square_sum_bound())[1]

    def rounding_bound(self) -> Fraction:
        """``e``: how far (in units ``2^(−s)``) an output can be from ``2^s·(Ĉx)_t``."""
        half = Fraction(1, 2)
        total = half
        for lam, w in zip(self._lam(), self._w(), strict=True):
            total += half * w * min(Fraction(self.steps), 1 / (1 - lam))
        return total


class StreamState:
    """The running state of one stream: ``d`` integer buffers (data side, units ``2^(−s)``),
    ``d`` float buffers (noise side) and the running total.

    `encode` takes the next count and returns the integer ``y_t ≈ 2^s·(Ĉx)_t``;
    `decode` takes the noisy ``y_t + z_t`` and returns the next running sum
    (``A·Ĉ^(−1)`` applied online, post-processing only).
    """

    def __init__(self, factor: StreamFactor, bits: int) -> None:
        self._factor = factor
        self._bits = bits
        self._data = [0] * factor.buffers
        lam = np.array(factor.rates, dtype=np.float64) / 2.0**PARAM_BITS
        w = np.array(factor.weights, dtype=np.float64) / 2.0**PARAM_BITS
        self._lam, self._wlam, self._wsum = lam, w * lam, float(w.sum())
        self._noise = np.zeros(factor.buffers, dtype=np.float64)
        self._total = 0.0

    def encode(self, count: int) -> int:
        """Advance the data side by one step; exact integer arithmetic."""
        one, half = PARAM_BITS, 1 << (PARAM_BITS - 1)
        x = int(count) << self._bits
        data = [((r * b + half) >> one) + x for r, b in
                zip(self._factor.rates, self._data, strict=True)]
        self._data = data
        acc = sum(w * b for w, b in zip(self._factor.weights, data, strict=True))
        return (acc + half) >> one

    def decode(self, noisy: int) -> float:
        """Advance the noise side by one step; returns the next running sum."""
        y = math.ldexp(float(noisy), -self._bits)
        u = (y - float(np.dot(self._wlam, self._noise))) / self._wsum
        self._noise = self._lam * self._noise + u
        self._total += u
        return self._total


def encode_all(factor: StreamFactor, bits: int, x: npt.NDArray[np.int64]) -> list[int]:
    """The data side over a whole stream: ``[StreamState.encode(c) for c in x]``."""
    state = StreamState(factor, bits)
    return [state.encode(int(c)) for c in x.tolist()]


def decode_all(factor: StreamFactor, bits: int, noisy: Array) -> FloatArray:
    """The noise side over whole streams, vectorised over the rows of ``noisy`` (``(n, T)``
    integers): row ``i`` is what `StreamState.decode` returns step by step."""
    lam = np.array(factor.rates, dtype=np.float64) / 2.0**PARAM_BITS
    w = np.array(factor.weights, dtype=np.float64) / 2.0**PARAM_BITS
    wlam, wsum = w * lam, float(w.sum())
    y = np.ldexp(np.asarray(noisy, dtype=np.float64), -bits)
    n, steps = y.shape
    beta = np.zeros((n, factor.buffers), dtype=np.float64)
    out = np.empty((n, steps), dtype=np.float64)
    total = np.zeros(n, dtype=np.float64)
    for t in range(steps):
        u = (y[:, t] - beta @ wlam) / wsum
        beta = lam * beta + u[:, None]
        total += u
        out[:, t] = total
    return out
