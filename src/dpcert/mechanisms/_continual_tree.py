"""The binary tree for continual counting, read with Honaker's subtree estimator.

Steps ``0 … T−1`` are the leaves of a complete binary tree of height ``h`` (``2^h ≥ T``, padded
with zero counts); levels ``0 … h−1`` are kept (level ``ℓ`` holds the ``2^(h−ℓ)`` sums over
blocks of ``2^ℓ`` steps; the root is not needed: every prefix of ``2^h`` or fewer steps is a union
of blocks below it).  Every step falls in exactly one block per level, so one unit whose counts
have L1 norm ``d`` moves the vector of node sums by at most ``h·d`` in L1 and ``√h·d`` in L2.

Each node gets independent integer noise.  The running sum after ``t`` steps is the sum of the
blocks of the binary expansion of ``t`` (Dwork, Naor, Pitassi & Rothblum 2010; Chan, Shi & Song
2011).  *Honaker's estimator* (Honaker 2015, "Efficient use of differentially private binary
trees") replaces each block's noisy sum by the best linear unbiased estimate of that block from
all the noisy nodes of its subtree, computed bottom-up: at level ``ℓ``
``z_ℓ = a_ℓ·y_ℓ + (1 − a_ℓ)·(z_left + z_right)`` with ``a_ℓ = 2^ℓ/(2^(ℓ+1) − 1)``, the
inverse-variance weighting, so ``Var z_ℓ = a_ℓ·v``.  A block's subtree ends with the block, so the
release after step ``t`` uses only steps ``≤ t``: the estimator runs online.

Examples
--------
>>> tree_levels(4096), tree_levels(4097), tree_levels(1)
(12, 13, 1)
>>> [str(v) for v in node_variances(3, honaker=True)]
['1', '2/3', '4/7']
>>> prefix_variances(4, honaker=False).tolist()
[1.0, 1.0, 2.0, 2.0]
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = ["honaker_prefix", "node_sums", "node_variances", "prefix_variances",
           "smoothed_prefix", "smoothed_variances", "tree_levels"]

FloatArray = npt.NDArray[np.float64]


def tree_levels(steps: int) -> int:
    """Levels kept for ``steps`` leaves: ``h = max(1, ⌈log2 steps⌉)``."""
    return max(1, (steps - 1).bit_length())


def node_sums(x: npt.NDArray[np.int64], levels: int) -> list[npt.NDArray[np.int64]]:
    """Exact block sums per level (``x`` padded with zeros to ``2^levels`` steps; Python
    integers when an int64 sum could overflow)."""
    big = x.size and int(np.abs(x.astype(object)).sum()) >= 1 << 62
    padded = np.zeros(1 << levels, dtype=object if big else x.dtype)
    padded[: x.size] = x
    return [padded.reshape(-1, 1 << ell).sum(axis=1) for ell in range(levels)]


def honaker_weight(ell: int) -> Fraction:
    """``a_ℓ = 2^ℓ / (2^(ℓ+1) − 1)``: the weight of a node's own noisy sum at level ``ℓ``."""
    return Fraction(1 << ell, (1 << (ell + 1)) - 1)


def _subtree_estimates(noisy: list[FloatArray], honaker: bool) -> list[FloatArray]:
    if not honaker:
        return noisy
    out = [noisy[0]]
    for ell in range(1, len(noisy)):
        a = float(honaker_weight(ell))
        below = out[-1]
        out.append(a * noisy[ell] + (1 - a) * (below[..., 0::2] + below[..., 1::2]))
    return out


def honaker_prefix(noisy: list[FloatArray], steps: int, *, honaker: bool = True) -> FloatArray:
    """The ``steps`` running sums read from the noisy node sums (per level, leaves first;
    leading axes are independent releases).

    ``honaker=False`` gives the plain binary-tree reading (each block's own noisy sum).
    """
    z = _subtree_estimates(noisy, honaker)
    levels = len(z)
    inner = min(steps, (1 << levels) - 1)
    t = np.arange(1, inner + 1, dtype=np.int64)
    out = np.zeros((*z[0].shape[:-1], steps), dtype=np.float64)
    for ell in range(levels):
        has = np.flatnonzero((t >> ell) & 1)
        out[..., has] += z[ell][..., (t[has] >> ell) - 1]
    if steps > inner:  # t = 2^h: the two top blocks
        out[..., -1] = z[-1][..., 0] + z[-1][..., 1]
    return out


def smoothed_prefix(noisy: list[FloatArray], steps: int) -> FloatArray:
    """Honaker's full estimator: the subtree estimates made consistent top-down
    (``est_child = z_child + (est_parent − z_left − z_right)/2``, the least-squares fit of the
    whole tree, Hay, Rastogi, Miklau & Suciu 2010; Honaker 2015), then running sums of the
    leaves.  Every block draws on every node of its top-level tree: *not causal*."""
    z = _subtree_estimates(noisy, True)
    est = z[-1]
    for ell in range(len(z) - 1, 0, -1):
        below = z[ell - 1]
        left, right = below[..., 0::2], below[..., 1::2]
        gap = (est - left - right) / 2
        new = np.empty_like(below)
        new[..., 0::2] = left + gap
        new[..., 1::2] = right + gap
        est = new
    return np.asarray(np.cumsum(est, axis=-1)[..., :steps], dtype=np.float64)


@lru_cache(maxsize=8)
def smoothed_variances(steps: int, chunk: int = 512) -> FloatArray:
    """Expected squared error of each running sum of `smoothed_prefix`, in units of one
    node's noise variance: the squared norms of the rows of the (linear) estimator, computed by
    applying it to the unit vectors, ``chunk`` at a time."""
    levels = tree_levels(steps)
    offsets = np.cumsum([0, *[1 << (levels - ell) for ell in range(levels)]])
    nodes = int(offsets[-1])
    acc = np.zeros(steps, dtype=np.float64)
    for start in range(0, nodes, chunk):
        idx = np.arange(start, min(nodes, start + chunk))
        eye = np.zeros((idx.size, nodes), dtype=np.float64)
        eye[np.arange(idx.size), idx] = 1.0
        parts = [eye[:, offsets[ell]:offsets[ell + 1]] for ell in range(levels)]
        acc += (smoothed_prefix(parts, steps) ** 2).sum(axis=0)
    acc.setflags(write=False)
    return acc


def node_variances(levels: int, *, honaker: bool) -> list[Fraction]:
    """Variance of each level's block estimate, in units of one node's noise variance."""
    return [honaker_weight(ell) if honaker else Fraction(1) for ell in range(levels)]


def prefix_variances(steps: int, *, honaker: bool) -> FloatArray:
    """Expected squared error of each running sum, in units of one node's noise variance
    (exact: the blocks of a prefix are disjoint subtrees, so their estimates are independent)."""
    levels = tree_levels(steps)
    per_level = node_variances(levels, honaker=honaker)
    t = np.arange(1, steps + 1, dtype=np.int64)
    out = np.zeros(steps, dtype=np.float64)
    for ell, v in enumerate(per_level):
        out += ((t >> ell) & 1) * float(v)
    if steps == 1 << levels:
        out[-1] = 2 * float(per_level[-1])
    return out
