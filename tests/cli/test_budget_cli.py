"""`dpcert budget init --data`: the curator's binding is checked before the ledger is touched,
and `budget show` prints it back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpcert.cli.main import main


@pytest.mark.parametrize(("extra", "needle"), [
    (["--data", "missing.csv"], "no such file"),
    (["--data", "people.csv", "--privacy-unit", "person"], "columns ['person'] are not in"),
    (["--data", "people.csv", "--type", "income=decimal"], "each type must be one of"),
    (["--data", "people.csv", "--type", "income"], "must be COL=TYPE"),
    (["--unbound", "--privacy-unit", "pid"], "describe a bound --data source"),
])
def test_a_bad_binding_creates_nothing(curator: Any, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch, extra: list[str],
                                       needle: str) -> None:
    monkeypatch.chdir(curator.root)
    fresh = curator.root / "fresh.sqlite"
    assert main(["budget", "init", str(fresh), "d", *extra, "--epsilon", "1"]) == 2
    assert needle in capsys.readouterr().err
    assert not fresh.exists()


def test_init_needs_a_source_or_unbound(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as e:
        main(["budget", "init", str(tmp_path / "l.sqlite"), "d", "--epsilon", "1"])
    assert e.value.code == 2
    assert not (tmp_path / "l.sqlite").exists()


def test_show_prints_the_binding(curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["budget", "show", curator.ledger, "people"]) == 0
    out = capsys.readouterr().out
    assert f"source:    {(curator.root / 'people.csv').resolve()}" in out
    assert "schema:    sha256:" in out and "unit:      pid" in out
    assert main(["budget", "init", curator.ledger, "people", "--unbound", "--epsilon", "9"]) == 2
    assert "already has a budget" in capsys.readouterr().err
