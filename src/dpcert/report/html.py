"""The HTML report of a release: estimates with intervals (tables and plots), what was spent,
and the certificate, in one self-contained file (Jinja2 template, plots embedded as PNG).

Plots need matplotlib (``pip install "dpcert[report]"``); without it the report says so where
the plots would be.  Numbers use [`dpcert.report.format`][dpcert.report.format] throughout.

Examples
--------
>>> import tempfile, polars as pl
>>> import dpcert as dp
>>> from dpcert.samplers import InsecureSeededSource
>>> df = pl.DataFrame({"pid": [1, 2, 3, 4], "g": ["a", "b", "a", "b"], "x": [1.0, 2, 3, 4]})
>>> sess = dp.Session(df, privacy_unit="pid", budget=dp.PureDP(1.0),
...                   _source=InsecureSeededSource(0))
>>> rel = (sess.query().group_by("g", keys=["a", "b"]).agg(dp.count())
...        .bound_contributions(1, 1).release(dp.PureDP(0.5)))
>>> path = write_html_report(tempfile.mkdtemp(), {"by_g": rel})
>>> path is not None and path.name, "by_g" in path.read_text()
('report.html', True)
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from dpcert.errors import InvalidParameter
from dpcert.report.format import format_loss, format_number
from dpcert.report.tables import columns as _columns
from dpcert.report.tables import rows as _rows

if TYPE_CHECKING:
    from os import PathLike

    from dpcert.frame.session import Release

__all__ = ["PLOTS_ABSENT", "plot_png", "write_html_report"]

PLOTS_ABSENT = ("Plots are absent: matplotlib is not installed "
                "(pip install \"dpcert[report]\" adds it).")


def _tables(release: Release | pl.DataFrame) -> tuple[pl.DataFrame, dict[str, Any] | None]:
    if isinstance(release, pl.DataFrame):
        return release, None
    if hasattr(release, "tidy") and hasattr(release, "certificate"):
        return release.tidy(), release.certificate
    raise InvalidParameter(f"release={release!r} must be a Release or a polars DataFrame")


def plot_png(name: str, df: pl.DataFrame, keys: list[str], values: list[str]) -> str | None:
    """Base64 PNG of estimates with intervals; ``None`` without matplotlib, ``""`` if empty."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    if not values or df.height == 0:
        return ""
    labels = [" / ".join(str(x) for x in r) for r in df.select(keys).iter_rows()] if keys \
        else ["all"] * df.height
    fig, axes = plt.subplots(len(values), 1, figsize=(7.5, 2.3 * len(values)), squeeze=False)
    for ax, col in zip(axes[:, 0], values, strict=True):
        y = df[col].cast(pl.Float64).to_numpy()
        pos = list(range(len(y)))
        if f"{col}_ci_low" in df.columns:
            lo = df[f"{col}_ci_low"].cast(pl.Float64).to_numpy()
            hi = df[f"{col}_ci_high"].cast(pl.Float64).to_numpy()
            ax.errorbar(pos, y, yerr=[y - lo, hi - y], fmt="o", capsize=3)
            ax.set_title(f"{col}: estimate and interval", fontsize=9)
        else:
            ax.plot(pos, y, "o")
            ax.set_title(f"{col}: estimate (no value interval)", fontsize=9)
        ax.set_xticks(pos, labels, fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle(name, fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _spend(cert: dict[str, Any]) -> list[list[str]]:
    return [[str(m.get("name")), str(m.get("mechanism")), format_number(m.get("scale")),
             format_loss(m.get("d_out"))] for m in cert.get("measurements", [])]


def write_html_report(out_dir: str | PathLike[str], releases: Mapping[str, Release | pl.DataFrame],
                      certificate: Mapping[str, Any] | None = None) -> Path | None:
    """Write ``report.html`` into ``out_dir`` and return its path (``None``, writing nothing,
    when Jinja2 is not installed: ``pip install "dpcert[report]"``).

    Parameters
    ----------
    out_dir : path
        An existing or new directory.
    releases : mapping of name to Release (or polars DataFrame)
        The releases to show, in order; Releases are shown tidied (integer counts, quantile
        intervals or rank errors).
    certificate : mapping of name to certificate dict, optional
        Defaults to each Release's own certificate.
    """
    try:
        import jinja2
    except ImportError:
        return None
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    sections = []
    last_cert: dict[str, Any] | None = None
    for name, rel in releases.items():
        table, own = _tables(rel)
        cert = dict(certificate[name]) if certificate and name in certificate else own
        keys, values = _columns(table)
        png = plot_png(name, table, keys, values)
        sections.append({
            "name": name, "header": keys + values, "rows": _rows(table, keys, values),
            "png": png, "cert": cert,
            "cert_json": json.dumps(cert, indent=2, default=str) if cert else "",
            "spend": _spend(cert) if cert else [],
            "total": format_loss(cert.get("release_total")) if cert else "",
            "confidence": format_number(100 * float(cert.get("confidence_level", 0.95)))
            if cert else "95",
        })
        last_cert = cert or last_cert
    session = (last_cert or {}).get("session", {})
    from dpcert._version import __version__

    template = resources.files("dpcert.report").joinpath("templates/report.html.j2")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    html = env.from_string(template.read_text(encoding="utf-8")).render(
        sections=sections, plots_absent=PLOTS_ABSENT,
        budget=session.get("budget", ""), spent=format_loss(session.get("spent_total")),
        ledger=(last_cert or {}).get("ledger"), version=__version__,
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    )
    path = d / "report.html"
    path.write_text(html, encoding="utf-8")
    return path
