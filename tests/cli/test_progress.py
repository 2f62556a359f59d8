"""Progress of long CLI work: a rich bar on a terminal, a plain bar without rich, plain lines
when stderr is not a terminal, nothing with ``--quiet``."""

from __future__ import annotations

import importlib.util
import io
from typing import Any

import pytest

from dpcert.cli.progress import Steps, progress_mode


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_mode_follows_the_stream_and_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    assert progress_mode(quiet=True, stream=Terminal()) == "off"
    assert progress_mode(quiet=False, stream=io.StringIO()) == "lines"
    has_rich = importlib.util.find_spec("rich") is not None
    assert progress_mode(quiet=False, stream=Terminal()) == ("rich" if has_rich else "bar")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "rich" else real(name, *a))
    assert progress_mode(quiet=False, stream=Terminal()) == "bar"  # degrades without rich


def _run(mode: Any, stream: io.StringIO, total: int = 2) -> str:
    with Steps(total, "dpcert release", mode, stream) as steps:
        steps.note("starting")
        steps.step("first")
        steps.step("second")
    return stream.getvalue()


def test_plain_lines_count_the_steps() -> None:
    assert _run("lines", io.StringIO()).splitlines() == [
        "dpcert release: [0/2] starting", "dpcert release: [1/2] first",
        "dpcert release: [2/2] second"]
    assert _run("lines", io.StringIO(), total=0).splitlines()[0] == "dpcert release: starting"


def test_quiet_prints_nothing() -> None:
    assert _run("off", Terminal()) == ""


def test_the_plain_bar_redraws_one_line() -> None:
    out = _run("bar", Terminal())
    assert out.count("\r") == 3 and out.endswith("\n") and "[2/2]" in out
    assert "#" * 20 in out


def test_the_rich_bar_shows_the_count() -> None:
    pytest.importorskip("rich")
    out = _run("rich", Terminal())
    assert "2/2" in out and "second" in out
