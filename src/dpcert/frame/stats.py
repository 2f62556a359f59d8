"""Exact (not yet private) per-group statistics, as produced by a backend.

A backend compiles a :class:`~dpcert.frame.plan.QueryPlan` into these numbers; the noise is added
afterwards, backend-independently (:mod:`dpcert.frame.noise`), so every backend yields the same
distribution of results for the same plan and budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["GroupStats"]


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
        Quantile component name → (groups × candidates) int64 counts of values ≤ each candidate.
    candidates
        Quantile component name → candidate values (float64 array).
    """

    keys: list[tuple[Any, ...]]
    values: dict[str, np.ndarray[Any, Any]]
    histograms: dict[str, np.ndarray[Any, Any]]
    candidates: dict[str, np.ndarray[Any, Any]]

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return len(self.keys)
