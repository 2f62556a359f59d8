"""Markdown report of a release: tables with intervals, what was spent, and a plot if possible."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

__all__ = ["write_report"]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        return f"{v:,.4g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def _table(df: Any) -> str:
    cols = df.columns
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.iter_rows():
        lines.append("| " + " | ".join(_fmt(v) for v in row) + " |")
    return "\n".join(lines)


def _plot(out_dir: Path, results: dict[str, Any]) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    panels = []
    for name, df in results.items():
        for col in df.columns:
            if f"{col}_ci_low" in df.columns:
                panels.append((name, df, col))
    if not panels:
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.4 * len(panels)), squeeze=False)
    for ax, (name, df, col) in zip(axes[:, 0], panels, strict=True):
        keys = [c for c in df.columns if not any(c.startswith(p) for p in ("count", "sum_", "mean_",
                "variance_", "quantile_"))]
        labels = [" / ".join(str(v) for v in r) for r in df.select(keys).iter_rows()] if keys \
            else ["all"]
        y = df[col].to_numpy()
        lo, hi = df[f"{col}_ci_low"].to_numpy(), df[f"{col}_ci_high"].to_numpy()
        x = range(len(y))
        has_ci = bool((lo == lo).any())  # quantiles carry no interval (NaN)
        if has_ci:
            ax.errorbar(list(x), y, yerr=[y - lo, hi - y], fmt="o", capsize=3)
        else:
            ax.plot(list(x), y, "o")
        ax.set_xticks(list(x), labels, fontsize=7)
        ax.set_title(f"{name}: {col}" + (" (95% interval)" if has_ci else " (no interval)"),
                     fontsize=9)
    fig.tight_layout()
    path = out_dir / "report.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path.name


def write_report(out_dir: Path, results: dict[str, Any], certs: dict[str, Any],
                 session: Any) -> Path:
    """Write ``report.md`` (and ``report.png`` with matplotlib) into ``out_dir``."""
    parts = ["# DP release report", "",
             f"Dataset budget: `{session.budget!r}`; spent so far: "
             f"{session.budget.describe(session.spent)}.", ""]
    for name, df in results.items():
        cert = certs[name]
        parts += [f"## {name}", "",
                  f"Privacy unit: `{cert['privacy_unit']}`; contribution bounds: "
                  f"{cert['contribution_bounds']['max_groups']} group(s), "
                  f"{cert['contribution_bounds']['max_rows_per_group']} row(s) per group; "
                  f"this release: {cert['release_total']}.", "", _table(df), ""]
        parts += ["Intervals hold with probability ≥ 95% for the bounded (clamped, "
                  "contribution-limited) statistic; quantiles carry no interval.", ""]
    png = _plot(out_dir, results)
    if png:
        parts += [f"![estimates with intervals]({png})", ""]
    parts += ["Certificates: `certificate.json` (every measurement, its scale, sensitivity, "
              "and cost).", ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts))
    return path
