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


def test_init_chooses_the_rule_and_show_quotes_the_next_release(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from dpcert.accounting.ledger import Ledger
    from dpcert.core.events import LaplaceEvent

    path = str(tmp_path / "l.sqlite")
    for rule in ("auto", "basic"):
        assert main(["budget", "init", path, rule, "--unbound", "--epsilon", "5", "--delta",
                     "1e-6", "--rule", rule, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["choice"] == rule
    led = Ledger(path)
    for _ in range(50):
        led.charge("auto", LaplaceEvent(10))
        led.charge("basic", LaplaceEvent(10))
    assert main(["budget", "show", path, "basic", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["rule"] == "approx" and shown["choice"] == "basic"
    assert shown["next"] == {"release": "Laplace ε = 0.1", "rule": "approx",
                             "cost": "ε = 0.1, δ = 0.0", "fits": False}
    assert main(["budget", "show", path, "auto"]) == 0
    out = capsys.readouterr().out
    assert "rule:      renyi (chosen: auto) at order α = 6.4" in out
    assert "under the renyi rule; fits" in out
    assert main(["budget", "init", path, "p", "--unbound", "--epsilon", "1", "--rule",
                 "renyi"]) == 2
    assert "rule='renyi' needs an ApproxDP" in capsys.readouterr().err
