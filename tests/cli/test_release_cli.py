"""`dpcert release SPEC --ledger L --dataset D --out DIR`: outputs, dry run, and spec errors
that name their line; every refusal charges nothing and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpcert.cli.main import main


def test_release_writes_everything(curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert curator.release(curator.spec()) == 0
    out = curator.out
    for f in ("by_region.csv", "results.json", "certificate.json", "report.md"):
        assert (out / f).exists(), f
    cert = json.loads((out / "certificate.json").read_text())
    assert cert["by_region"]["release_total"]["epsilon"]["exact"] == "1"
    assert "count" in capsys.readouterr().out
    assert (out / "by_region.certificate.json").exists()
    # the spend that would exceed what the ledger has left is refused before any charge
    before = (out / "results.json").stat().st_mtime_ns
    assert curator.release(curator.spec(eps=1.5)) == 1
    assert "what ledger dataset 'people' has left" in capsys.readouterr().err
    assert (out / "results.json").stat().st_mtime_ns == before
    assert len(curator.history()) == 1


def test_dry_run_reads_no_data_and_spends_nothing(curator: Any,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert curator.release(curator.spec(), "--dry-run") == 0
    text = capsys.readouterr().out
    assert "would spend ε = 1.0" in text and "within" in text
    curator.assert_nothing_charged()
    assert curator.release(curator.spec(eps=3.0), "--dry-run") == 1
    curator.assert_nothing_charged()


def test_dry_run_shows_every_default_it_applied(curator: Any,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.queries('[[query]]\nbudget = { epsilon = 0.5, delta = 0 }\n'
                           'aggregates = [{ kind = "count" }]\n')
    assert main(["release", str(spec), "--ledger", curator.ledger, "--dataset", "people",
                 "--dry-run"]) == 0
    text = capsys.readouterr().out.split("defaults applied:")[1]
    for needle in ("--out = ", "--engine = polars", "--alpha = 0.05", 'name = "query1"',
                   "filter = none", "group_by = none", "max_groups = 1",
                   "max_rows_per_group = 1", "(count).alias", "(count).weight = 1"):
        assert needle in text, needle
    curator.assert_nothing_charged()


@pytest.mark.parametrize(
    ("kwargs", "needle", "line"),
    [
        (dict(col="salary"), "unknown column 'salary'", 4),
        (dict(lo=100, hi=0), "bounds reversed", 14),
        (dict(eps=-1), "epsilon=-1", 10),
    ],
)
def test_spec_errors_name_the_line(curator: Any, capsys: pytest.CaptureFixture[str],
                                   kwargs: dict[str, Any], needle: str, line: int) -> None:
    spec = curator.spec(**kwargs)
    assert curator.release(spec) == 2
    err = capsys.readouterr().err
    assert needle in err
    at = int(err.split(f"{spec}:")[1].split()[0].rstrip(":"))
    assert 1 <= at <= 16 and abs(at - line) <= 10
    curator.assert_nothing_charged()


@pytest.mark.parametrize("name", ["../../x", "a/b", "..", "", "x" * 65, "1abc", "-x", "a b",
                                  "C:x", "ok\n"])
def test_query_names_must_be_safe_file_names(curator: Any,
                                             capsys: pytest.CaptureFixture[str],
                                             name: str) -> None:
    spec = curator.queries(curator.query(name.replace("\n", "\\n"), 0.5))
    assert curator.release(spec) == 2
    assert "must match" in capsys.readouterr().err
    curator.assert_nothing_charged()
    assert not (curator.root.parent / "x.csv").exists()


def test_the_total_of_all_queries_is_checked_before_any_charge(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.queries(curator.query("a", 1.5) + curator.query("b", 1))
    assert curator.release(spec) == 1
    assert "the queries together would spend ε = 2.5" in capsys.readouterr().err
    curator.assert_nothing_charged()
    same = curator.queries(curator.query("a", 1) + curator.query("A", 1))
    assert curator.release(same) == 2
    assert "used twice" in capsys.readouterr().err
    curator.assert_nothing_charged()


def test_each_release_is_written_as_soon_as_it_is_paid(
        curator: Any, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dpcert.errors import ReleaseFailed
    from dpcert.frame.session import Query

    real = Query._compute  # the spec is charged once, then computed query by query
    calls = []

    def flaky(self: Query, *args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise ReleaseFailed("the release failed after ε = 1 was charged")
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Query, "_compute", flaky)
    spec = curator.queries(curator.query("first", 0.5) + curator.query("second", 0.5))
    assert curator.release(spec, "--json") == 3
    captured = capsys.readouterr()
    assert "ReleaseFailed" in captured.err
    assert "written before the failure: first" in captured.err
    record = json.loads(captured.out)
    assert record["exit_code"] == 3 and record["status"] == "partially_charged"
    assert list(record["queries"]) == ["first"]
    out = curator.out
    assert (out / "first.csv").exists() and (out / "first.certificate.json").exists()
    assert not (out / "second.csv").exists()
    assert len(curator.history()) == 1  # the batch was charged once


def test_a_bad_csv_cell_does_not_fail_the_release(tmp_path: Path) -> None:
    csv = tmp_path / "people.csv"
    csv.write_text("pid,region,income\n1,n,3.5\n2,s,4\n999,n,NOT-A-NUMBER\n")
    led = str(tmp_path / "l.sqlite")
    assert main(["budget", "init", led, "p", "--data", str(csv), "--type", "income=float",
                 "--privacy-unit", "pid", "--epsilon", "1"]) == 0
    spec = tmp_path / "s.toml"
    spec.write_text('[data]\nprivacy_unit = "pid"\n[[query]]\nname = "a"\n'
                    'budget = { epsilon = 1 }\n'
                    'aggregates = [{ kind = "sum", column = "income", bounds = [0, 100] }]\n')
    assert main(["release", str(spec), "--ledger", led, "--dataset", "p",
                 "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "a.csv").exists()


def test_engine_flags_are_checked_before_anything_is_read_or_charged(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert curator.release(curator.spec(), "--spark-master", "local[2]") == 2
    assert "go with --engine spark" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        curator.release(curator.spec(), "--engine", "sqlite")
    assert e.value.code == 2
    curator.assert_nothing_charged()


def test_a_query_budget_of_another_kind_names_its_line(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.queries(curator.query("a", 1).replace(", delta = 0", ""))
    assert curator.release(spec) == 2
    err = capsys.readouterr().err
    assert f"{spec}:8 (query 'a')" in err and "ApproxDP" in err  # its budget line
    curator.assert_nothing_charged()


def test_dry_run_gives_an_interval_per_output(curator: Any,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.queries(
        '[[query]]\nname = "q"\nkeys = "private"\ngroup_by = ["region"]\n'
        'budget = { epsilon = 0.5, delta = 1e-7 }\n'
        'aggregates = [{ kind = "count" }, { kind = "mean", column = "income", '
        'bounds = [0, 100] }, { kind = "quantile", column = "income", q = [0.5], '
        'bounds = [0, 100] }]\n')
    args = ["release", str(spec), "--ledger", curator.ledger, "--dataset", "people",
            "--dry-run"]
    assert main([*args, "--group-size", "500"]) == 0
    text = capsys.readouterr().out
    assert "count: estimate ± " in text and "for a group of 500 rows" in text
    assert "value interval: endpoints at ranks q·n ∓ " in text and "τ = " in text
    assert "kept with probability" in text
    assert "--group-size = " not in text
    assert main([*args, "--json"]) == 0
    dry = json.loads(capsys.readouterr().out)
    rows = {r["output"]: r for r in dry["queries"][0]["accuracy"]}
    assert rows["mean_income"]["n"] == 1000 and rows["mean_income"]["half_width"] > 0
    assert 0 < rows["quantile_0.5_income"]["half_width"] <= 100  # a value interval, not NaN
    assert rows["(partition selection)"]["n"] > 0 and rows["count"]["rank_error"] is None
    assert any(d.startswith("--group-size = 1000") for d in dry["defaults"])
    curator.assert_nothing_charged()


def test_a_run_states_the_contribution_bounds_it_defaulted(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.queries('[[query]]\nbudget = { epsilon = 0.5, delta = 0 }\n'
                           'aggregates = [{ kind = "count" }]\n')
    assert main(["release", str(spec), "--ledger", curator.ledger, "--dataset", "people",
                 "--out", str(curator.out)]) == 0
    err = capsys.readouterr().err
    assert "dpcert: default query 1: max_groups = 1" in err
    assert "dpcert: default query 1: max_rows_per_group = 1" in err


def test_progress_is_plain_lines_off_a_terminal_and_quiet_hides_it(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.queries(curator.query("a", 0.25) + curator.query("b", 0.25))
    assert curator.release(spec) == 0
    err = capsys.readouterr().err
    assert "dpcert release: [0/3] charging the spec as one batch" in err
    assert "dpcert release: [3/3] wrote b" in err
    assert curator.release(spec, "--quiet") == 0
    assert "dpcert release:" not in capsys.readouterr().err


def test_an_error_in_a_later_query_names_it_and_its_line(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    bad = curator.query("wages", 0.5).replace(
        '{ kind = "count" } ]',
        '{ kind = "count" },\n  { kind = "mean", column = "incme", bounds = [0, 9] } ]')
    spec = curator.queries(curator.query("a", 0.5) + "\n" + bad)
    lines = spec.read_text().splitlines()
    at = next(i + 1 for i, ln in enumerate(lines) if "incme" in ln)
    assert at > 12  # the second query's aggregates, not its [[query]] header
    assert curator.release(spec) == 2
    err = capsys.readouterr().err
    assert f"{spec}:{at} (query 'wages'): unknown column 'incme'" in err
    curator.assert_nothing_charged()


def test_a_schema_error_names_the_query_by_its_name(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    bad = curator.query("wages", 0.5).replace('name = "wages"', 'name = "wages"\nmax_groups = "2"')
    spec = curator.queries(curator.query("a", 0.5) + "\n" + bad)
    at = next(i + 1 for i, ln in enumerate(spec.read_text().splitlines()) if "max_groups" in ln)
    assert curator.release(spec) == 2
    err = capsys.readouterr().err
    assert f"{spec}:{at}: query 'wages' max_groups: " in err
    curator.assert_nothing_charged()


def test_a_spec_without_bounds_chooses_them_in_the_release(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.queries('[[query]]\nname = "auto"\ngroup_by = ["region"]\nkeys = ["n", "s"]\n'
                           'max_groups = "auto"\nmax_rows_per_group = "auto"\n'
                           "budget = { epsilon = 0.5, delta = 0 }\n"
                           'aggregates = [{ kind = "count" }, { kind = "mean", '
                           'column = "income" }]\n')
    args = ["release", str(spec), "--ledger", curator.ledger, "--dataset", "people"]
    assert main([*args, "--dry-run"]) == 0
    text = capsys.readouterr().out
    for needle in ("(choose max_rows_per_group)", "(choose bounds:income)", "clipping bias",
                   "bounds = chosen privately", "auto_share = 0.1"):
        assert needle in text, needle
    curator.assert_nothing_charged()
    assert main([*args, "--out", str(curator.out)]) == 0
    cert = json.loads((curator.out / "auto.certificate.json").read_text())
    assert set(cert["chosen_bounds"]) == {"max_groups", "max_rows_per_group", "bounds"}
    assert cert["release_total"]["epsilon"]["exact"] == "1/2"
    assert main(["certificate", "check", str(curator.out / "auto.certificate.json"),
                 "--ledger", curator.ledger]) == 0
