"""`dpcert release SPEC.toml`: outputs, dry run, and spec errors that name their line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from dpcert.cli.main import main

SPEC = """\
[data]
path = "people.csv"
privacy_unit = "pid"

[budget]
epsilon = 2.0
delta = 1e-6
ledger = "ledger.sqlite"
dataset = "people"
create = true

[output]
dir = "out"

[[query]]
name = "by_region"
group_by = ["region"]
keys = ["n", "s"]
max_groups = 1
max_rows_per_group = 2
budget = {{ epsilon = {eps}, delta = 0 }}
aggregates = [
  {{ kind = "count" }},
  {{ kind = "sum", column = "{col}", bounds = [{lo}, {hi}] }},
]
"""


def write(tmp: Path, eps: float = 1.0, col: str = "income", lo: int = 0, hi: int = 100,
          unit_line: str | None = None) -> Path:
    rng = np.random.default_rng(0)
    pl.DataFrame({"pid": np.repeat(np.arange(200), 2),
                  "region": rng.choice(["n", "s"], 400),
                  "income": rng.uniform(0, 100, 400)}).write_csv(tmp / "people.csv")
    text = SPEC.format(eps=eps, col=col, lo=lo, hi=hi)
    if unit_line is not None:
        text = text.replace('privacy_unit = "pid"', unit_line)
    spec = tmp / "spec.toml"
    spec.write_text(text)
    return spec


def test_release_writes_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write(tmp_path)
    assert main(["release", str(spec)]) == 0
    out = tmp_path / "out"
    for f in ("by_region.csv", "results.json", "certificate.json", "report.md"):
        assert (out / f).exists(), f
    cert = json.loads((out / "certificate.json").read_text())
    assert cert["by_region"]["release_total"]["epsilon"]["exact"] == "1"
    assert "count" in capsys.readouterr().out
    assert (out / "by_region.certificate.json").exists()
    # the spend that would exceed what the ledger has left is refused before any charge
    from dpcert.accounting.ledger import Ledger

    before = (out / "results.json").stat().st_mtime_ns
    spec2 = write(tmp_path, eps=1.5)
    assert main(["release", str(spec2)]) == 3
    assert "what ledger dataset 'people' has left" in capsys.readouterr().err
    assert (out / "results.json").stat().st_mtime_ns == before
    assert len(Ledger(str(tmp_path / "ledger.sqlite")).history("people")) == 1


def test_dry_run_reads_no_data_and_spends_nothing(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    spec = write(tmp_path)
    assert main(["release", str(spec), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "would spend ε = 1.0" in text and "within" in text
    assert not (tmp_path / "out").exists()
    assert main(["release", str(write(tmp_path, eps=3.0)), "--dry-run"]) == 4


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        (dict(col="salary"), "unknown column 'salary'"),
        (dict(lo=100, hi=0), "bounds reversed"),
        (dict(eps=-1), "epsilon=-1"),
        (dict(unit_line='privacy_unit = "who"'), "privacy_unit='who'"),
    ],
)
def test_spec_errors_name_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   kwargs: dict[str, object], needle: str) -> None:
    spec = write(tmp_path, **kwargs)  # type: ignore[arg-type]
    assert main(["release", str(spec)]) == 3
    err = capsys.readouterr().err
    assert needle in err
    assert f"{spec}:" in err  # path:line
    line = int(err.split(f"{spec}:")[1].split()[0].rstrip(":"))
    assert 1 <= line <= 30
    assert not (tmp_path / "out").exists()


def _spec_text(tmp: Path, queries: str, budget: str = 'epsilon = 2.0\ndelta = 1e-6') -> Path:
    write(tmp)
    spec = tmp / "spec2.toml"
    spec.write_text(f'[data]\npath = "people.csv"\nprivacy_unit = "pid"\n\n[budget]\n{budget}\n'
                    f'\n[output]\ndir = "out"\n\n{queries}')
    return spec


QUERY = """[[query]]
name = "{name}"
group_by = ["region"]
keys = ["n", "s"]
budget = {{ epsilon = {eps}, delta = 0 }}
aggregates = [ {{ kind = "count" }} ]
"""


@pytest.mark.parametrize("name", ["../../x", "a/b", "..", "", "x" * 65, "1abc", "-x", "a b",
                                  "C:x", "ok\n"])
def test_query_names_must_be_safe_file_names(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             name: str) -> None:
    q = QUERY.format(name=name.replace("\n", "\\n"), eps=0.5)
    spec = _spec_text(tmp_path, q, 'epsilon = 2.0\ndelta = 1e-6\nledger = "l.sqlite"\n'
                                   'dataset = "people"\ncreate = true')
    assert main(["release", str(spec)]) == 3
    assert "must match" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "x.csv").exists()
    assert not (tmp_path / "l.sqlite").exists()  # nothing created before the spec validated


def test_the_total_of_all_queries_is_checked_before_any_charge(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec_text(tmp_path, QUERY.format(name="a", eps=1.5) + QUERY.format(name="b", eps=1))
    assert main(["release", str(spec)]) == 3
    assert "the queries together would spend ε = 2.5" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    same = _spec_text(tmp_path, QUERY.format(name="a", eps=1) + QUERY.format(name="A", eps=1))
    assert main(["release", str(same)]) == 3
    assert "used twice" in capsys.readouterr().err


def test_each_release_is_written_as_soon_as_it_is_paid(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
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
    spec = _spec_text(tmp_path, QUERY.format(name="first", eps=0.5)
                      + QUERY.format(name="second", eps=0.5))
    assert main(["release", str(spec)]) == 3
    err = capsys.readouterr().err
    assert "WARNING: no ledger" in err and "ReleaseFailed" in err
    assert "written before the failure: first" in err
    out = tmp_path / "out"
    assert (out / "first.csv").exists() and (out / "first.certificate.json").exists()
    assert not (out / "second.csv").exists()


def test_a_bad_csv_cell_does_not_fail_the_release(tmp_path: Path) -> None:
    spec = _spec_text(tmp_path, QUERY.format(name="a", eps=1).replace(
        'aggregates = [ { kind = "count" } ]',
        'aggregates = [ { kind = "sum", column = "income", bounds = [0, 100] } ]'))
    csv = tmp_path / "people.csv"
    csv.write_text(csv.read_text() + "999,n,NOT-A-NUMBER\n")
    text = spec.read_text().replace('privacy_unit = "pid"',
                                    'privacy_unit = "pid"\ntypes = { income = "float" }')
    spec.write_text(text)
    assert main(["release", str(spec)]) == 0
    assert (tmp_path / "out" / "a.csv").exists()


@pytest.mark.parametrize(("line", "needle"), [
    ('engine = "duckdb"', "engine='duckdb' must be one of"),
    ('master = "local[2]"', 'goes with engine = "spark"'),
    ('engine = "spark"\ntypes = {income = "float"}', "types is for the Polars engine"),
])
def test_engine_fields_are_checked_before_anything_is_read_or_charged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, needle: str) -> None:
    spec = write(tmp_path, unit_line=f'privacy_unit = "pid"\n{line}')
    assert main(["release", str(spec)]) != 0
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "ledger.sqlite").exists() and not (tmp_path / "out").exists()
