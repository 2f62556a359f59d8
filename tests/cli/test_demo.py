"""`make demo` stays true: its `dpcert budget init` and `dpcert release` commands, as written in
the Makefile, run on the example spec (on a small table from the documented generator)."""

from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path

import pytest

from dpcert.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def demo_commands() -> list[list[str]]:
    """The `dpcert ...` commands of the Makefile's demo recipe, continuation lines joined."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    recipe = text.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    return [shlex.split(line.strip())[1:] for line in recipe.splitlines()
            if line.strip().startswith("$(BIN)/dpcert ")]


def test_the_demo_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("gen", ROOT / "examples" / "generate_people.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    data = tmp_path / "examples" / "data" / "people.csv"
    data.parent.mkdir(parents=True)
    gen.generate(people=2_000).write_csv(data)
    (tmp_path / "examples" / "people_release.toml").write_text(
        (ROOT / "examples" / "people_release.toml").read_text())
    monkeypatch.chdir(tmp_path)
    subs = {"$(DEMO_LEDGER)": "examples/data/people.budget.sqlite",
            "$(DEMO_DATA)": "examples/data/people.csv"}
    commands = [[subs.get(a, a) for a in c] for c in demo_commands()]
    assert [c[:2] for c in commands] == [["example", "framework"], ["budget", "init"],
                                         ["release", "examples/people_release.toml"]]
    for command in commands[1:]:
        assert main(command) == 0, command
    out = tmp_path / "out" / "people"
    assert (out / "by_region.csv").exists() and (out / "adults_by_occupation.csv").exists()
    assert "spent ε = 1.5" in capsys.readouterr().out
