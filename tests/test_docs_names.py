"""The user docs and the README name only modules, classes and commands that exist.

Read from every ``docs/**/*.md`` and ``README.md``:

* backticked dotted names under ``dpcert`` (``dpcert.frame.session``) resolve to a module or an
  attribute;
* backticked source paths (``frame/plan.py``, ``src/dpcert/_directed.py``, ``tests/...``,
  ``examples/programs/*.dp``) are files of the repository (a bare ``name.py`` anywhere in it);
* backticked CamelCase class names (``` `GroupedDomain` ```, ``` `PLDAccountant(` ```) are names
  of the repository's code or classes of a library the docs talk about (Python, NumPy, Polars,
  PySpark, DuckDB);
* ``dpcert COMMAND [SUBCOMMAND]`` in code blocks and backticks is a command of the CLI.

(``docs/architecture.md`` once named classes that did not exist, issue 15.7; a README once ran a
command named after a planning document.)
"""

from __future__ import annotations

import argparse
import builtins
import fractions
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from _names import resolves
from dpcert.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dpcert"
#: The proof notes are checked against the code by ``tests/test_proof_links.py`` (their class-like
#: names are mathematical notation: ``SampledWOR(E, m, n)``).
DOCS = sorted([*(p for p in (ROOT / "docs").rglob("*.md") if "proofs" not in p.parts),
               ROOT / "README.md"])
PYFILES = [p for d in ("src", "tests", "benchmarks", "examples", "tools")
           for p in (ROOT / d).rglob("*.py") if p.name != Path(__file__).name]
#: Every word of the repository's Python: a class, or a name the code gives to something (a
#: benchmark row, an exception Spark raises that the operator log classifies).
WORDS = set(re.findall(r"\w+", "\n".join(p.read_text(encoding="utf-8") for p in PYFILES)))
FILES = {p.name for p in ROOT.rglob("*") if p.suffix in (".py", ".dp") and ".git" not in p.parts}

_TICKS = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"^dpcert(?:\.[A-Za-z_]\w*)+")
_PATH = re.compile(r"^[\w./-]*[\w-]+\.(?:py|dp)$")
#: CamelCase with two capitals at least (``Queryable`` alone reads as a word, ``Lap`` as maths).
_CLASS = re.compile(r"^([A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)(?:\(|$)")
_COMMAND = re.compile(r"(?:^|[`$]\s*|\n\s*)dpcert ([a-z][\w-]*)(?: ([a-z][\w-]*))?")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)


#: Nodes of Spark's physical plans (JVM classes, not in PySpark) that docs/spark.md discusses.
SPARK_PLAN_NODES = {"WindowGroupLimit"}


def _external_class(name: str) -> bool:
    if name in SPARK_PLAN_NODES:
        return True
    if hasattr(builtins, name) or hasattr(fractions, name):
        return True
    for mod in ("polars", "numpy", "pyspark", "pyspark.sql", "pyspark.sql.types", "duckdb",
                "decimal",
                "datetime", "pathlib", "sqlglot.expressions"):
        try:
            if hasattr(importlib.import_module(mod), name):
                return True
        except ImportError:
            continue
    return False


def _path_exists(token: str, doc: Path) -> bool:
    token = token.lstrip("./")
    if token.startswith("shared/"):  # the project's shared folder, beside the checkout
        return True
    for base in (ROOT, SRC, ROOT / "src", doc.parent, ROOT / "docs"):
        if (base / token).exists():
            return True
    return "/" not in token and token in FILES


def _commands() -> dict[str, set[str]]:
    parser = build_parser()
    out: dict[str, set[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                subs: set[str] = set()
                for a in sub._actions:  # sub-commands, or the choices of the first positional
                    if isinstance(a, argparse._SubParsersAction) or (
                            not a.option_strings and a.choices and not subs):
                        subs |= set(a.choices or ())
                out[name] = subs
    return out


COMMANDS = _commands()
#: Words that follow ``dpcert`` in prose without being a command.
PROSE = {"is", "and", "the", "a", "has", "does", "can", "uses", "itself", "package", "library",
         "command", "cli", "audit"}


def _names(text: str, doc: Path) -> Iterator[tuple[str, bool]]:
    """``(name, exists)`` for every module, path, class and command the text names."""
    for tick in _TICKS.findall(text):
        token = tick.strip()
        if m := _DOTTED.match(token):
            yield m.group(0), resolves(m.group(0))
        elif _PATH.match(token) and "*" not in token and "<" not in token:
            yield token, _path_exists(token, doc)
        elif (m := _CLASS.match(token)) and " " not in token:
            name = m.group(1)
            yield name, name in WORDS or _external_class(name)
    blocks = "\n".join(_FENCE.findall(text)) + "\n" + "\n".join(_TICKS.findall(text))
    for m in _COMMAND.finditer(blocks):
        cmd, sub = m.group(1), m.group(2)
        if cmd in PROSE and cmd not in COMMANDS:
            continue
        yield f"dpcert {cmd}", cmd in COMMANDS
        if cmd in COMMANDS and COMMANDS[cmd] and sub and not sub.startswith("-"):
            yield f"dpcert {cmd} {sub}", sub in COMMANDS[cmd]


def test_the_cli_is_read() -> None:
    assert {"example", "budget", "release", "audit"} <= set(COMMANDS)
    assert "init" in COMMANDS["budget"]


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_docs_name_only_things_that_exist(doc: Path) -> None:
    names = list(_names(doc.read_text(encoding="utf-8"), doc))
    missing = sorted({n for n, ok in names if not ok})
    assert not missing, f"{doc.relative_to(ROOT)} names what does not exist: {missing}"


def test_a_wrong_name_is_caught() -> None:
    text = ("Run `dpcert example seed004`, read `dpcert.frame.nothing` and `frame/nothing.py`, "
            "build a `SparkPlanner(`.\n```\ndpcert frobnicate x\n```")
    missing = {n for n, ok in _names(text, ROOT / "README.md") if not ok}
    assert missing == {"dpcert.frame.nothing", "frame/nothing.py", "SparkPlanner",
                       "dpcert frobnicate", "dpcert example seed004"}


def test_architecture_names_only_classes_that_exist() -> None:
    """The strict form for docs/architecture.md: every capitalised name is a dpcert class."""
    arch = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    names = set(re.findall(r"`([A-Z][A-Za-z]+)(?:\(|`)", arch)) - {"Fraction"}
    source = "\n".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py"))
    missing = sorted(n for n in names if not re.search(rf"^\s*class {n}\b", source, re.M))
    assert names and not missing, missing
