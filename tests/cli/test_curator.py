"""The curator's side of a release: the ledger, dataset, source and output directory come from
the curator's command line or config, never from the spec; a source other than the bound one is
refused; outputs stay inside the output directory. Every refusal charges nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from dpcert.cli.main import main


def test_the_issue_scenario_is_refused(curator: Any,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """An exhausted dataset cannot be re-opened by a spec naming another dataset and budget."""
    assert curator.release(curator.spec(eps=2.0)) == 0
    capsys.readouterr()
    n = len(curator.history())
    files = sorted(p.name for p in curator.out.iterdir())
    text = curator.spec().read_text()
    hostile = curator.spec('[budget]\nepsilon = 1000\nledger = "other.sqlite"\n'
                           'dataset = "people-again"\ncreate = true\n\n' + text, name="h.toml")
    assert curator.release(hostile) == 2
    assert "'budget' is not for a spec" in capsys.readouterr().err
    assert curator.release(curator.spec()) == 1  # the exhausted dataset stays exhausted
    assert "has left" in capsys.readouterr().err
    assert len(curator.history()) == n and sorted(p.name for p in curator.out.iterdir()) == files
    assert not (curator.root / "other.sqlite").exists()


def test_a_release_needs_the_curators_ledger(curator: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.spec()
    assert main(["release", str(spec), "--out", str(curator.out)]) == 2
    assert "needs the curator's --ledger LEDGER and --dataset DATASET" in capsys.readouterr().err
    missing = curator.root / "missing.sqlite"
    assert main(["release", str(spec), "--ledger", str(missing), "--dataset", "people"]) == 2
    assert not missing.exists()  # a release never creates a ledger
    assert curator.release(spec, dataset="people-again") == 2
    assert "is not in the ledger" in capsys.readouterr().err
    curator.assert_nothing_charged()


def test_no_ledger_is_the_curators_explicit_choice(curator: Any,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.spec()
    base = ["release", str(spec), "--out", str(curator.out), "--no-ledger"]
    assert main(base) == 2
    assert "--no-ledger needs the curator's --data SOURCE and a total" in capsys.readouterr().err
    assert main([*base, "--data", str(curator.root / "people.csv"), "--budget-epsilon", "2",
                 "--budget-delta", "1e-6", "--ledger", curator.ledger]) == 2
    curator.assert_nothing_charged()
    assert main([*base, "--data", str(curator.root / "people.csv"),
                 "--budget-epsilon", "2", "--budget-delta", "1e-6"]) == 0
    assert "WARNING: --no-ledger" in capsys.readouterr().err
    assert (curator.out / "by_region.csv").exists()
    assert curator.history() == []  # nothing reached the ledger
    assert curator.release(spec, "--budget-epsilon", "9") == 2  # a ledger has its own total


def test_a_source_other_than_the_bound_one_is_refused(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.spec()
    other = curator.root / "copy.csv"
    other.write_bytes((curator.root / "people.csv").read_bytes())
    assert curator.release(spec, "--data", str(other)) == 1
    assert "is not the source bound to ledger dataset 'people'" in capsys.readouterr().err
    curator.assert_nothing_charged()
    # the bound path with another schema (a column retyped) is refused too
    df = pl.read_csv(curator.root / "people.csv")
    df.with_columns(pl.col("income").cast(pl.Int64)).write_csv(curator.root / "people.csv")
    assert curator.release(spec) == 1
    assert "schema fingerprint" in capsys.readouterr().err
    curator.assert_nothing_charged()


def test_the_bound_source_by_another_path_is_the_same_source(curator: Any) -> None:
    link = curator.root / "alias.csv"
    link.symlink_to(curator.root / "people.csv")
    assert curator.release(curator.spec(), "--data", str(link)) == 0
    assert len(curator.history()) == 1


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_outputs_stay_inside_the_output_directory(
        curator: Any, capsys: pytest.CaptureFixture[str], target: str) -> None:
    curator.out.mkdir()
    elsewhere = curator.root / "elsewhere.csv" if target == "outside" else \
        curator.out / "other.csv"
    elsewhere.write_text("keep")
    (curator.out / "by_region.csv").symlink_to(elsewhere)
    assert curator.release(curator.spec()) == 2
    assert "outside the output directory" in capsys.readouterr().err
    assert elsewhere.read_text() == "keep"
    assert len(curator.history()) == 0
    assert sorted(p.name for p in curator.out.iterdir()) == sorted(
        ["by_region.csv", *(["other.csv"] if target == "inside" else [])])


def test_the_curator_config_file_and_environment(
        curator: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cfg = curator.root / "curator.toml"
    cfg.write_text('ledger = "ledger.sqlite"\ndataset = "people"\nout = "out"\n')
    spec = curator.spec()
    assert main(["release", str(spec), "--curator-config", str(cfg), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["ledger"]["dataset"] == "people"
    assert (curator.out / "by_region.csv").exists() and len(curator.history()) == 1
    monkeypatch.setenv("DPCERT_CURATOR_CONFIG", str(cfg))
    monkeypatch.chdir(curator.root.parent)
    assert main(["release", str(spec), "--dry-run"]) == 0
    cfg.write_text('ledger = "ledger.sqlite"\ndataset = "people"\nout = "out"\nbudgett = 1\n')
    assert main(["release", str(spec)]) == 2
    assert "budgett" in capsys.readouterr().err
    assert len(curator.history()) == 1


def test_an_unbound_dataset_needs_the_curators_data(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["budget", "init", curator.ledger, "free", "--unbound", "--epsilon", "2",
                 "--delta", "1e-6"]) == 0
    spec = curator.spec()
    assert curator.release(spec, dataset="free") == 2
    assert "has no bound data source" in capsys.readouterr().err
    curator.assert_nothing_charged(dataset="free")
    assert curator.release(spec, "--data", str(curator.root / "people.csv"),
                           dataset="free") == 0
    assert "has no bound source" in capsys.readouterr().err


def test_out_path_refuses_names_and_links(tmp_path: Path) -> None:
    from dpcert.cli.curator import out_path
    from dpcert.errors import InvalidParameter

    assert out_path(tmp_path, "a.csv") == Path(os.path.realpath(tmp_path)) / "a.csv"
    for bad in ("../a.csv", "sub/a.csv", "..", ""):
        with pytest.raises(InvalidParameter):
            out_path(tmp_path, bad)
    (tmp_path / "d").mkdir()
    with pytest.raises(InvalidParameter, match="not a file"):
        out_path(tmp_path, "d")
