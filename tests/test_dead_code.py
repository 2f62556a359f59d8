"""No dead definitions: every module-level function and class of ``src/dpcert`` is used.

Unused imports and local variables are ruff's F401 / F841 (``make lint``).  This test finds what
ruff cannot: a module-level ``def`` or ``class`` that nothing references.  A public name counts as
used when its word appears anywhere else in the repository's Python (a test, a benchmark, an
``__all__`` of the public facade); a private name (``_helper``) only when its own module uses it
again or another module imports it by name (a common private name elsewhere does not hide it).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dpcert"
PYFILES = [p for d in ("src", "tests", "benchmarks", "examples", "tools")
           for p in (ROOT / d).rglob("*.py")]
TEXT = {p: p.read_text(encoding="utf-8") for p in PYFILES}
WORDS = Counter(w for t in TEXT.values() for w in re.findall(r"\w+", t))


def _imported_by_name(name: str, home: Path) -> bool:
    pat = re.compile(rf"^\s*from\s+[\w.]+\s+import\s+[^#\n]*\b{re.escape(name)}\b|"
                     rf"^\s+{re.escape(name)},?\s*$", re.M)
    return any(p != home and "import" in t and pat.search(t) for p, t in TEXT.items())


def _dead() -> list[str]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        text = TEXT[path]
        for node in ast.parse(text).body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            name = node.name
            if name.startswith("__"):
                continue  # module dunders (__getattr__, __dir__) are called by Python
            if name.startswith("_"):
                used = len(re.findall(rf"\b{re.escape(name)}\b", text)) > 1 or (
                    _imported_by_name(name, path))
            else:
                used = WORDS[name] > 1
            if not used:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    return out


def test_no_dead_definitions() -> None:
    assert _dead() == []


def test_a_dead_definition_is_found(tmp_path: Path) -> None:
    home = SRC / "core" / "search.py"
    TEXT[home] += "\n\ndef _never_called_anywhere() -> None:\n    pass\n"
    try:
        assert [d.split()[-1] for d in _dead()] == ["_never_called_anywhere"]
    finally:
        TEXT[home] = home.read_text(encoding="utf-8")
