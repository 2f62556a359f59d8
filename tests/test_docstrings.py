"""Docstrings are Markdown: no Sphinx role (``:class:`X```) that the API pages would show raw.

mkdocstrings renders docstrings as Markdown; write ```X``` or a cross-reference
``[`X`][dpcert.module.X]`` instead (``tools/sphinx_roles.py`` rewrites roles mechanically).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "dpcert"
ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|mod|data|exc|obj|const|ref):`")


def roles_in(source: str) -> list[tuple[int, str]]:
    """(line, text) of each Sphinx role inside a bare string statement (a docstring)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            for offset, line in enumerate(node.value.value.splitlines()):
                if ROLE.search(line):
                    found.append((node.lineno + offset, line.strip()))
    return found


def test_finder_sees_a_role() -> None:
    source = 'def f():\n    """See\n    :class:`~dpcert.X` here."""\n'
    assert roles_in(source) == [(3, ":class:`~dpcert.X` here.")]
    assert roles_in('"""See [`X`][dpcert.X] or `Y`."""\n') == []


def test_no_docstring_has_a_sphinx_role() -> None:
    found = [f"{path.relative_to(SRC.parent)}:{line}: {text}"
             for path in sorted(SRC.rglob("*.py"))
             for line, text in roles_in(path.read_text(encoding="utf-8"))]
    assert not found, f"{len(found)} Sphinx roles in docstrings:\n" + "\n".join(found[:30])
