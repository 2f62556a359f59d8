"""Exact (not yet private) per-group statistics, as produced by a backend.

A backend compiles a :class:`~dpcert.frame.plan.QueryPlan` into these numbers; the noise is added
afterwards, backend-independently (:mod:`dpcert.frame.noise`), so every backend yields the same
distribution of results for the same plan and budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["GroupStats", "SparseHistogram"]


@dataclass(frozen=True)
class SparseHistogram:
    """Per-group counts of values in candidate bins, kept sparse: one entry per non-empty
    (group, bin) cell, so memory is bounded by the number of rows, not groups × candidates.

    Examples
    --------
    >>> h = SparseHistogram(np.array([0, 0, 1]), np.array([0, 2, 1]), np.array([3, 1, 2]), 2, 3)
    >>> h.cumulative(0, 2).tolist()
    [[3, 3, 4], [0, 2, 2]]
    """

    group: np.ndarray[Any, Any]
    bin: np.ndarray[Any, Any]
    count: np.ndarray[Any, Any]
    n_groups: int
    n_bins: int

    def cumulative(self, start: int, stop: int) -> np.ndarray[Any, Any]:
        """Dense ``(stop − start) × n_bins`` int64 counts of values ≤ each candidate for the
        groups ``start:stop`` (the caller bounds ``stop − start`` to bound memory)."""
        order = np.argsort(self.group, kind="stable")
        g = self.group[order]
        lo, hi = np.searchsorted(g, [start, stop])
        sel = order[lo:hi]
        dense = np.zeros((stop - start, self.n_bins), dtype=np.int64)
        np.add.at(dense, (self.group[sel] - start, self.bin[sel]), self.count[sel])
        return np.cumsum(dense, axis=1)


@dataclass(frozen=True)
class GroupStats:
    """Per-group exact statistics after contribution bounding.

    Attributes
    ----------
    keys
        One tuple of key values per group, in output order.
    values
        Component name → exact integer values in the component's units (NumPy int64 or object
        array of Python ints), one per group.
    histograms
        Quantile component name → :class:`SparseHistogram` of the group's values per candidate.
    candidates
        Quantile component name → candidate values (float64 array).
    """

    keys: list[tuple[Any, ...]]
    values: dict[str, np.ndarray[Any, Any]]
    histograms: dict[str, SparseHistogram]
    candidates: dict[str, np.ndarray[Any, Any]]

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return len(self.keys)
