"""Markdown report of a release: tidy tables with intervals, what was spent, and plots (PNG,
with matplotlib; otherwise the report says they are absent).  Numbers use
[`dpcert.report.format`][dpcert.report.format], as the HTML report does."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcert.frame.result import tidy_table
from dpcert.report.format import format_loss, format_number
from dpcert.report.html import PLOTS_ABSENT, plot_png
from dpcert.report.tables import columns, rows

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

    from dpcert.frame.session import Session

__all__ = ["write_report"]


def _md_table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def write_report(out_dir: Path, results: Mapping[str, pl.DataFrame],
                 certs: Mapping[str, Mapping[str, Any]], session: Session) -> Path:
    """Write ``report.md`` (and ``report_<query>.png`` with matplotlib) into ``out_dir``."""
    parts = ["# DP release report", "",
             f"Dataset budget: `{session.budget!r}`; spent so far: "
             f"{session.budget.describe(session.spent)}.", ""]
    plots_absent = False
    for name, raw in results.items():
        cert = certs[name]
        df = tidy_table(raw, cert)
        keys, values = columns(df)
        bounds = cert["contribution_bounds"]
        parts += [f"## {name}", "",
                  f"Privacy unit: `{cert['privacy_unit']}`; contribution bounds: "
                  f"{bounds['max_groups']} group(s), {bounds['max_rows_per_group']} row(s) per "
                  f"group; this release spent {format_loss(cert['release_total'])}.", "",
                  _md_table(keys + values, rows(df, keys, values)), "",
                  f"Intervals hold with probability ≥ "
                  f"{format_number(100 * cert['confidence_level'])}% each, for the bounded "
                  "(clamped, contribution-limited) statistic; counts are "
                  "post-processed to non-negative integers; a quantile's interval contains "
                  "the group's quantile, and one without an interval shows how many rows its "
                  "rank may miss the target rank by.", ""]
        png = plot_png(name, df, keys, values)
        if png is None:
            plots_absent = True
        elif png:
            path = out_dir / f"report_{name}.png"
            path.write_bytes(base64.b64decode(png))
            parts += [f"![{name}: estimates with intervals]({path.name})", ""]
    if plots_absent:
        parts += [PLOTS_ABSENT, ""]
    parts += ["Certificates: `certificate.json` (every measurement, its scale, sensitivity, "
              "and cost). The same report with plots and certificates: `report.html`.", ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts))
    return path
