"""Exact inversion sampling against a table of real thresholds, vectorised.

Given reals ``0 <= c_0 <= c_1 <= ... <= c_{n-1} <= 1`` (known only through bounds at any
precision) and a uniform ``U`` in [0, 1), the index ``I = #{j : c_j <= U}`` has
``P(I = i) = c_i - c_{i-1}``.  We draw the first 32 bits ``h`` of ``U`` for every element and
compare them with ``A_j``, a 32-bit floor of ``c_j``: ``h < A_j`` proves ``U < c_j`` and
``h >= A_j + 2`` proves ``U >= c_j``.  Only when ``h`` is ``A_j`` or ``A_j + 1`` for some ``j``
(probability at most ``2n / 2**32``) is the element *ambiguous*; it is then resolved exactly,
one element at a time, by drawing more bits of the same ``U``
(`lazy_less`).
The result is exactly ``I``: the 32-bit test is a filter whose undecided cases are decided exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from dpcert._directed import Bounds
from dpcert.samplers._exact import LazyUniform, lazy_less
from dpcert.samplers.entropy import EntropySource

__all__ = ["ThresholdTable"]

I64 = npt.NDArray[np.int64]

#: Precision (bits) of the bounds computed when a table is built.
BASE_PREC = 128


class ThresholdTable:
    """Exact vectorised inversion against thresholds given by ``cdf_bounds(P)``.

    ``cdf_bounds(P)`` returns, for every threshold ``j``, integers bracketing ``c_j * 2**P``.
    """

    def __init__(self, cdf_bounds: Callable[[int], Sequence[Bounds]]) -> None:
        self._cdf_bounds = cdf_bounds
        self._cache: dict[int, Sequence[Bounds]] = {}
        bounds = self._bounds_at(BASE_PREC)
        n = len(bounds)
        shift = BASE_PREC - 32
        a = np.array([lo >> shift for lo, _ in bounds], dtype=np.int64)
        a = np.maximum.accumulate(a) if n else a
        for j, (_lo, hi) in enumerate(bounds):  # invariant: c_j * 2^32 <= A_j + 2
            if hi > (int(a[j]) + 2) << shift:
                raise AssertionError("threshold bounds too loose")  # pragma: no cover
        self.n = n
        self.a = a
        # a_ext[i] = A_i (sentinel beyond the end); amb_ext[i] = A_{i-1} + 1 (-1 for i = 0).
        self._a_ext = np.concatenate([a, np.array([1 << 40], dtype=np.int64)])
        self._amb_ext = np.concatenate([np.array([-1], dtype=np.int64), a + 1])
        g = min(max(int(n).bit_length() + 2, 4), 18)
        self._gshift = 32 - g
        cells = np.arange(1 << g, dtype=np.int64) << self._gshift
        self._guide = np.searchsorted(a, cells, side="left").astype(np.int64)

    def _bounds_at(self, prec: int) -> Sequence[Bounds]:
        got = self._cache.get(prec)
        if got is None:
            got = self._cdf_bounds(prec)
            if len(self._cache) < 8:
                self._cache[prec] = got
        return got

    def threshold_bounds(self, j: int, prec: int) -> Bounds:
        """Bounds on ``c_j * 2**prec`` (computed at a cached precision, then rounded outward)."""
        p2 = max(BASE_PREC, -(-prec // BASE_PREC) * BASE_PREC)
        lo, hi = self._bounds_at(p2)[j]
        shift = p2 - prec
        return lo >> shift, -((-hi) >> shift)

    def sample(self, hh: I64, source: EntropySource) -> I64:
        """Indices ``I`` for the uniforms whose first 32 bits are ``hh`` (int64 in [0, 2**32))."""
        idx = self._guide[hh >> self._gshift]
        more = self._a_ext[idx] <= hh
        idx += more
        if self.n > 1:  # cells holding several thresholds: binary search for those elements
            todo = np.flatnonzero(self._a_ext[idx] <= hh)
            if todo.size:
                idx[todo] = np.searchsorted(self.a, hh[todo], side="right")
        amb = np.flatnonzero(self._amb_ext[idx] >= hh)
        for i in amb.tolist():
            idx[i] = self._resolve(int(hh[i]), source)
        out: I64 = idx
        return out

    def _resolve(self, h: int, source: EntropySource) -> int:
        """Exact index for one uniform whose 32-bit prefix ``h`` is ambiguous."""
        first = int(np.searchsorted(self.a, h - 1, side="left"))  # A_j >= h - 1
        last = int(np.searchsorted(self.a, h, side="right"))  # A_j <= h
        u = LazyUniform(h, 32, source)
        idx = first
        for j in range(first, last):
            def bounds(prec: int, j: int = j) -> Bounds:
                return self.threshold_bounds(j, prec)
            if lazy_less(u, bounds):  # U < c_j: so U < c_k for every k >= j
                break
            idx = j + 1
        return idx
