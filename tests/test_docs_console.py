"""Console transcripts in the docs are rebuilt from their commands (``tools/docs_console.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools import docs_console, docs_outputs  # noqa: E402

TEXT = "a1\nb22\nc333\n"


def test_filters_pick_what_coreutils_pick() -> None:
    assert docs_console.apply_filter(TEXT, "head -n 2") == "a1\nb22\n"
    assert docs_console.apply_filter(TEXT, " tail -n 1") == "c333\n"
    assert docs_console.apply_filter(TEXT, "tail -n 0") == ""
    assert docs_console.apply_filter(TEXT, "tail -n 9") == TEXT
    assert docs_console.apply_filter(TEXT, "cut -c 2-3") == "1\n22\n33\n"
    assert docs_console.apply_filter("é1\n", "cut -c 1-2") == "é\n"  # bytes, as GNU cut


@pytest.mark.parametrize("command", ["grep x", "head -5", "sort"])
def test_other_filters_are_refused(command: str) -> None:
    with pytest.raises(docs_console.TranscriptError, match="only 'head -n K'"):
        docs_console.apply_filter(TEXT, command)


def test_only_dpcert_commands_run() -> None:
    with pytest.raises(docs_console.TranscriptError, match=r"only 'dpcert \.\.\.'"):
        docs_console.run_command("rm -rf build")
    with pytest.raises(docs_console.TranscriptError, match="no-such-option"):
        docs_console.run_command("dpcert --no-such-option")


def test_a_transcript_is_rebuilt_from_its_commands() -> None:
    from dpcert import __version__

    body = "$ dpcert --version\ndpcert 0.0.0\n$ dpcert --version | cut -c 1-6\n"
    assert docs_console.transcript(body) == (
        f"$ dpcert --version\ndpcert {__version__}\n$ dpcert --version | cut -c 1-6\ndpcert")


@pytest.mark.skipif(importlib.util.find_spec("z3") is None, reason="needs the verify extra")
def test_verify_once_answers_a_program_once(tmp_path: Path) -> None:
    import dpcert.verify as v

    text = ("input q : real[1]; adjacent q : all in [-1, 1]; param eps > 0;"
            " claim eps; return q[0] + lap(1/eps);")
    prog = tmp_path / "laplace.dp"
    prog.write_text(text)
    real = v.verify
    with docs_outputs.verify_once():
        assert v.verify(text) is v.verify(text)
        first = v.verify(str(prog))
        assert v.verify(prog, timeout=120) is first  # the same call, its defaults written out
        assert v.verify(str(prog), n=1) is not first
        smt = v.verify(str(prog), n=1, smt_out=tmp_path / "smt")
        assert smt is not v.verify(str(prog), n=1, smt_out=tmp_path / "smt")  # it writes files
    assert v.verify is real
