"""A quantile's released value and confidence interval, from its three cell selections.

Each quantile ``q = a/b`` of a group is selected three times on the same grid of candidates
``c_0 < … < c_{C−1}`` (``c_0``, ``c_{C−1}`` the bounds), each with the *cell* utility of
`make_grouped_quantile` (candidate ``j`` stands for the
cell ``(c_{j−1}, c_j]``, ``{c_0}`` for ``j = 0``):

* the **value**: target rank ``q·n``; the released value is drawn uniformly inside the selected
  cell (a lattice 2^-`JITTER_BITS` of the cell's width; ``c_0`` for the first cell), so
  values are not on the grid;
* the **lower endpoint**: target ``q·n − K/b``; ``ci_low`` is the selected cell's lower edge;
* the **upper endpoint**: target ``q·n + K/b``; ``ci_high`` is the selected cell's upper edge.

``K = ⌈s·ln(2C/α)⌉`` (`endpoint_shift`, ``s`` the selection's scale) makes each endpoint
miss the group's quantile with probability at most ``α/2``, so ``[ci_low, ci_high]`` contains
the group's ``q``-quantile (of its bounded, clamped rows: ``x_(⌈q·n⌉)``, ``x_(1)`` for ``q = 0``)
with probability at least ``1 − α`` (proof: ``docs/proofs/quantile_interval.md``).  The value is
then clipped into its interval (post-processing; it does not change the coverage).

Examples
--------
>>> import numpy as np
>>> grid = np.array([0.0, 10.0, 20.0, 30.0])
>>> v, lo, hi = quantile_columns(grid, np.array([2]), np.array([1]), np.array([3]))
>>> bool(10.0 < v[0] <= 20.0), lo.tolist(), hi.tolist()
(True, [0.0], [30.0])
>>> endpoint_shift(4, 1025, Fraction(1, 20))
43
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dpcert._types import FloatArray, IntArray
from dpcert.core.measurement import Measurement
from dpcert.core.params import param_number
from dpcert.errors import InvalidParameter
from dpcert.samplers import uniform_below

__all__ = ["JITTER_BITS", "MAX_SHIFT", "endpoint_margin", "endpoint_shift", "quantile_columns"]

#: The released value is uniform on a lattice of 2^JITTER_BITS points inside its cell.
JITTER_BITS = 20
#: Largest endpoint shift (utility units): keeps ``b·n + shift`` inside int64 (refused when
#: compiling, before any charge).
MAX_SHIFT = 2**60


def endpoint_shift(scale: Fraction | int, candidates: int, alpha: Fraction | int) -> int:
    """``K = ⌈s·ln(2C/α)⌉`` (utility units): a selection at scale ``s`` over ``C`` cells picks
    a cell ``K`` or more worse than the best (0) with probability at most
    ``C·exp(−K/s) ≤ α/2`` (the float logarithm is enlarged by 1e-12 relative, far above its
    rounding error)."""
    s, a = Fraction(scale), Fraction(alpha)
    t = float(s) * math.log(2 * candidates / float(a)) * (1 + 1e-12)
    if not t < MAX_SHIFT:
        raise InvalidParameter(
            f"a quantile interval at scale {float(s):.3g} needs a rank shift of {t:.3g} utility "
            f"units (> 2**60): give the quantile more budget or use interval=False")
    return math.ceil(t)


def endpoint_margin(m: Measurement) -> Fraction:
    """Rows an endpoint selection ``m`` is shifted by: ``|shift|/b``."""
    level = Fraction(param_number(m.params["level"], "level"))
    return Fraction(abs(int(param_number(m.params["shift"], "shift"))), level.denominator)


def _jitter(grid: FloatArray, idx: IntArray) -> FloatArray:
    """A uniform point of the lattice ``c_{j−1} + (c_j − c_{j−1})·u/2^B``, ``u ∈ {1..2^B}``, of
    each selected cell ``j`` (``c_0`` for ``j = 0``)."""
    u = (uniform_below(1 << JITTER_BITS, idx.size) + 1).astype(np.float64) / 2.0**JITTER_BITS
    left = grid[np.maximum(idx - 1, 0)]
    out: FloatArray = np.where(idx > 0, left + (grid[idx] - left) * u, grid[0])
    return out


def quantile_columns(grid: FloatArray, value: npt.ArrayLike, low: npt.ArrayLike | None = None,
                     high: npt.ArrayLike | None = None, integer: bool = False
                     ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(value, ci_low, ci_high)`` per group from the selected cell indices (``low``/``high``
    ``None``: no interval, NaN).

    ``integer``: the clamped rows are integers (an integer column with integer bounds), so the
    group's quantile is one: the value is rounded up to an integer (in a cell ``(k − 1, k]`` of
    an integer grid that is ``k``), ``ci_low`` up and ``ci_high`` down, which keeps every integer
    the interval held."""
    idx = np.asarray(value, dtype=np.int64)
    v = _jitter(grid, idx)
    if integer:
        v = np.ceil(v)
    if low is None or high is None:
        nan = np.full(idx.size, math.nan)
        return v, nan, nan.copy()
    lo = grid[np.maximum(np.asarray(low, dtype=np.int64) - 1, 0)]
    hi = grid[np.asarray(high, dtype=np.int64)]
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)  # crossed endpoints already missed
    if integer:
        lo, hi = np.ceil(lo), np.floor(hi)
        hi = np.maximum(hi, lo)  # no integer inside: the interval had already missed
    return np.clip(v, lo, hi), lo, hi
