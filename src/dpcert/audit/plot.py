"""Plots of the two output distributions behind an audit (optional: needs matplotlib).

For each audited mechanism the plot shows, for the witness pair ``x, x'``, histograms of the
witness event's statistic (the output itself for 1-D outputs, else the learned score) on fresh
draws from ``M(x)`` and ``M(x')``, with the witness event shaded.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from dpcert.audit.auditor import AuditResult
from dpcert.audit.kernel.outputs import OutputEncoder, Sampler

__all__ = ["matplotlib_available", "plot_result"]


def matplotlib_available() -> bool:
    """Whether matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot_result(result: AuditResult, sampler: Sampler, path: str | Path, *, n: int = 20_000
                ) -> Path | None:
    """Write a PNG of the two distributions of ``result``'s witness; None if nothing to plot."""
    if result.witness is None or not matplotlib_available():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w = result.witness
    enc = OutputEncoder()
    stat = w.event.statistic
    sa = stat(enc.encode(sampler(w.x, n), n))
    sb = stat(enc.encode(sampler(w.x_prime, n), n))
    both = np.concatenate([sa, sb])
    both = both[np.isfinite(both)]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if both.size:
        lo, hi = np.quantile(both, [0.001, 0.999])
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        bins: Any = np.linspace(lo, hi, 60)
        if np.unique(both).size <= 60:
            u = np.unique(both)
            bins = np.concatenate([u - 0.5, [u[-1] + 0.5]]) if np.all(u == np.round(u)) else 60
        ax.hist(sa, bins=bins, alpha=0.5, density=True, label="M(x)")
        ax.hist(sb, bins=bins, alpha=0.5, density=True, label="M(x')")
        e_lo = lo if math.isinf(w.event.low) else w.event.low
        e_hi = hi if math.isinf(w.event.high) else w.event.high
        ax.axvspan(e_lo, e_hi, color="grey", alpha=0.15, label="witness event")
    ax.set_title(f"{result.mechanism}: ε ≥ {result.epsilon_lower:.3f} ({result.verdict})")
    ax.set_xlabel(stat.describe())
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
