"""The HTML report, the number format and the console helpers."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert.report.console import print_table, progress
from dpcert.report.format import format_interval, format_number
from dpcert.report.html import write_html_report
from dpcert.samplers import InsecureSeededSource


def releases() -> dict[str, dp.Release]:
    rng = np.random.default_rng(0)
    n = 5000
    df = pl.DataFrame({"pid": np.arange(n), "g": rng.choice(["north", "south"], n),
                       "x": rng.uniform(0, 100, n)})
    sess = dp.Session(df, privacy_unit="pid", budget=dp.PureDP(2.0),
                      _source=InsecureSeededSource(1))
    q = (sess.query().group_by("g", keys=["north", "south"])
         .agg(dp.count(), dp.mean("x", (0, 100)), dp.quantile("x", [0.5], bounds=(0, 100)))
         .bound_contributions(1, 1))
    return {"by_g": q.release(dp.PureDP(1.0)), "again": q.release(dp.PureDP(0.5))}


def test_report_has_tables_plots_spend_and_certificate(tmp_path: Path) -> None:
    rel = releases()
    path = write_html_report(tmp_path / "out", rel)
    assert path is not None
    html = path.read_text()
    assert path == tmp_path / "out" / "report.html"
    assert html.count("data:image/png;base64,") == 2 and "Plots are absent" not in html
    count = int(rel["by_g"].tidy()["count"][0])
    assert format_number(count) in html and "," in format_number(count)
    tidy = rel["by_g"].tidy()  # a quantile shows its value interval, not a rank error
    lo, hi = tidy["quantile_0.5_x_ci_low"][0], tidy["quantile_0.5_x_ci_high"][0]
    cell = f"{format_number(tidy['quantile_0.5_x'][0])} {format_interval(lo, hi)}"
    assert cell in html and "rows in rank" not in html and "What was spent" in html
    assert "dpcert-compiled-certificate/1" in html and "spent so far" in html
    assert "Fraction(" not in html and "{'" not in html  # no raw reprs or dicts


def test_report_says_when_plots_are_absent(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    path = write_html_report(tmp_path, releases())
    assert path is not None
    html = path.read_text()
    assert "Plots are absent: matplotlib is not installed" in html
    assert "data:image/png" not in html


def test_report_escapes_and_accepts_plain_frames(tmp_path: Path) -> None:
    df = pl.DataFrame({"k": ["<script>"], "v": [1.5], "v_ci_low": [1.0], "v_ci_high": [2.0]})
    path = write_html_report(tmp_path, {"t<1>": df})
    assert path is not None
    html = path.read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html and "[1, 2]" in html
    with pytest.raises(dp.errors.InvalidParameter, match="release="):
        write_html_report(tmp_path, {"bad": 3})


def test_number_format() -> None:
    assert format_number(np.int64(1234567)) == "1,234,567"
    assert format_number(74.89331) == "74.89" and format_number(-0.5) == "-0.5"
    assert format_number(float("inf")) == "∞" and format_number(2e20) == "2e+20"
    assert format_interval(None, float("nan")) == ""
    assert format_interval(0, 12000.4) == "[0, 12,000]"


def test_console_plain_and_rich() -> None:
    out = io.StringIO()
    print_table("t", ["a", "b"], [["1", "22"]], file=out, plain=False)  # rich, to a string
    assert "22" in out.getvalue()
    err = io.StringIO()
    assert list(progress([1, 2], "x", file=err, plain=True)) == [1, 2]
    assert err.getvalue().splitlines() == ["[0/2] x", "[1/2] x"]
    assert list(progress(iter([5]), "y", file=io.StringIO(), plain=False)) == [5]


def test_report_without_jinja2_writes_nothing(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)
    assert write_html_report(tmp_path, releases()) is None
    assert not (tmp_path / "report.html").exists()


def test_markdown_report_uses_the_same_format(tmp_path: Path) -> None:
    from dpcert.report.markdown import write_report

    rel = releases()
    results = {k: r.to_polars() for k, r in rel.items()}
    certs = {k: r.certificate for k, r in rel.items()}

    class Sess:
        budget = dp.PureDP(2.0)
        spent = dp.PureDP(2.0).require_value()

    text = write_report(tmp_path, results, certs, Sess()).read_text()
    assert "rows in rank" not in text and "ε = 1" in text and "{'" not in text
    count = int(rel["by_g"].tidy()["count"][0])
    assert format_number(count) in text
    assert (tmp_path / "report_by_g.png").exists()


def test_release_cli_writes_the_html_report(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from dpcert.cli.main import main

    rng = np.random.default_rng(0)
    pl.DataFrame({"pid": np.arange(300), "region": rng.choice(["n", "s"], 300),
                  "income": rng.uniform(0, 100, 300)}).write_csv(tmp_path / "people.csv")
    led = str(tmp_path / "l.sqlite")
    assert main(["budget", "init", led, "p", "--data", str(tmp_path / "people.csv"),
                 "--privacy-unit", "pid", "--epsilon", "1"]) == 0
    (tmp_path / "spec.toml").write_text(
        '[data]\nprivacy_unit = "pid"\n'
        '[[query]]\nname = "by_region"\ngroup_by = ["region"]\nkeys = ["n", "s"]\n'
        'budget = { epsilon = 1.0 }\naggregates = [{ kind = "count" }]\n')
    assert main(["release", str(tmp_path / "spec.toml"), "--ledger", led, "--dataset", "p",
                 "--out", str(tmp_path / "out")]) == 0
    html = (tmp_path / "out" / "report.html").read_text()
    assert "by_region" in html and "data:image/png" in html and "What was spent" in html
    assert "HTML report:" in capsys.readouterr().out
