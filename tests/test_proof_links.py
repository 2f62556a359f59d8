"""Proofs and code point at each other, and neither side points at nothing.

* every ``Measurement(...)`` / ``Transformation(...)`` built in ``src/dpcert`` passes
  ``proof="<note>.md"``, a file of ``docs/proofs/`` (the one link from code to proof: the
  component carries it, and certificates read it through :func:`dpcert.core.trace.proof_note`);
* every public ``make_*`` constructor that returns a Measurement or Transformation (exported by
  ``dpcert``, ``dpcert.t``/``m``/``c`` or a public module of those packages and ``frame``)
  builds its result through such a construction, directly or through other public
  constructors or ``>>``;
* every note in ``docs/proofs/`` names code, and all the code it names exists: source paths
  (``frame/admit.py``), dotted names (``dpcert.core.chaining.chain``) and constructors
  (``make_laplace``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import dpcert as dp
from _names import resolves
from dpcert.core.trace import proof_note, trace

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dpcert"
NOTES = ROOT / "docs" / "proofs"
NOTE_NAMES = {p.name for p in NOTES.glob("*.md")} - {"README.md"}
BUILDERS = ("Measurement", "Transformation")
#: Packages whose public modules export constructors.
CONSTRUCTOR_PACKAGES = ("core", "transformations", "mechanisms", "combinators", "frame")


def _constructions() -> Iterator[tuple[str, ast.Call]]:
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in BUILDERS):
                yield f"{path.relative_to(SRC)}:{node.lineno}", node


def _proof_of(call: ast.Call) -> object:
    for kw in call.keywords:
        if kw.arg == "proof":
            return kw.value.value if isinstance(kw.value, ast.Constant) else ast.unparse(kw.value)
    return None


CONSTRUCTIONS = list(_constructions())


def test_constructions_are_found() -> None:
    assert len(CONSTRUCTIONS) > 40


@pytest.mark.parametrize(("where", "call"), CONSTRUCTIONS, ids=[w for w, _ in CONSTRUCTIONS])
def test_every_construction_names_a_note_that_exists(where: str, call: ast.Call) -> None:
    note = _proof_of(call)
    assert isinstance(note, str), f"{where}: pass proof='<note>.md' (a literal), got {note!r}"
    assert note in NOTE_NAMES, f"{where}: proof={note!r} is not a file of docs/proofs/"


def _builds(fn: Callable[..., object]) -> bool:
    """Whether ``fn`` is declared to return a Measurement or Transformation (an odometer is not)."""
    ret = str(inspect.signature(fn).return_annotation)
    return any(b in ret for b in BUILDERS)


def _public_constructors() -> dict[str, Callable[..., object]]:
    out: dict[str, Callable[..., object]] = {}
    mods = [dp, dp.t, dp.m, dp.c] + [
        importlib.import_module("dpcert." + ".".join(p.relative_to(SRC).with_suffix("").parts))
        for pkg in CONSTRUCTOR_PACKAGES for p in sorted((SRC / pkg).rglob("*.py"))
        if not any(part.startswith("_") for part in p.relative_to(SRC).parts)]
    for mod in mods:
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if name.startswith("make_") and callable(obj) and _builds(obj):
                out[name] = obj
    return out


PUBLIC = _public_constructors()


def _links(fn: Callable[..., object], seen: frozenset[str] = frozenset()) -> bool:
    """``fn`` builds through a noted construction, a linked constructor it calls, or ``>>``."""
    fn = inspect.unwrap(fn)
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    scope = getattr(fn, "__globals__", {})
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.RShift):
            return True  # a chain: dpcert.core.chaining, proof="chaining.md"
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else (
            node.func.attr if isinstance(node.func, ast.Attribute) else "")
        if name in BUILDERS and isinstance(_proof_of(node), str):
            return True
        callee = scope.get(name)
        if (name not in seen and callable(callee) and getattr(callee, "__module__", "")
                .startswith("dpcert") and (name.startswith(("make_", "_")) or name in PUBLIC)
                and inspect.isfunction(inspect.unwrap(callee))
                and _links(callee, seen | {name})):
            return True
    return False


def test_public_constructors_are_found() -> None:
    assert {"make_laplace", "make_sum", "make_composition", "make_zCDP_to_approxDP"} <= set(PUBLIC)
    assert len(PUBLIC) > 40 and "make_odometer" not in PUBLIC


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_constructor_builds_through_a_note(name: str) -> None:
    assert _links(PUBLIC[name], frozenset({name})), (
        f"{name} builds no Measurement/Transformation with proof=..., directly or through "
        "another constructor")


def test_every_step_of_a_certificate_names_a_note() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
    m = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum() >> dp.m.then_laplace(25.0)
    both = dp.c.make_composition([m, m])
    steps = list(trace(dp.c.make_pureDP_to_zCDP(both) >> round, 1))
    assert [s.proof for s in steps][-1] == "chaining.md"
    assert all(s.proof in NOTE_NAMES for s in steps), [(s.constructor, s.proof) for s in steps]
    assert proof_note(m) == "chaining.md" and proof_note(both) == "composition.md"


# --------------------------------------------------------------------- notes -> code

_TICKS = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(r"^(?:src/)?(?:dpcert/)?((?:[A-Za-z_][\w]*/)*[A-Za-z_]\w*\.py)$")
_DOTTED = re.compile(r"^dpcert(?:\.[A-Za-z_]\w*)+$")
_CONSTRUCTOR = re.compile(r"\b((?:make|then)_[A-Za-z0-9_]+)")
_FILES = {p.name for p in SRC.rglob("*.py")}
_DEFINED = {m.group(1) for p in SRC.rglob("*.py")
            for m in re.finditer(r"^\s*(?:def|class)\s+(\w+)", p.read_text(encoding="utf-8"),
                                 re.M)}


def _code_refs(text: str) -> Iterator[tuple[str, bool]]:
    """``(reference, exists)`` for every piece of code a note names."""
    for tick in _TICKS.findall(text):
        token = tick.strip().split("(")[0].split("::")[0]
        if m := _PATH.match(token):
            rel = m.group(1)
            # a bare file name is read beside the package the note is about
            yield rel, (SRC / rel).is_file() or (ROOT / token).is_file() or (
                "/" not in rel and rel in _FILES)
        elif _DOTTED.match(token):
            yield token, resolves(token)
        for c in _CONSTRUCTOR.findall(tick):
            yield c, c in _DEFINED


@pytest.mark.parametrize("note", sorted(NOTE_NAMES))
def test_every_note_names_code_that_exists(note: str) -> None:
    refs = list(_code_refs((NOTES / note).read_text(encoding="utf-8")))
    assert refs, f"docs/proofs/{note} names no module, path or constructor"
    missing = sorted({r for r, ok in refs if not ok})
    assert not missing, f"docs/proofs/{note} names code that does not exist: {missing}"
