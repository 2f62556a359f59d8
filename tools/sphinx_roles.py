"""Rewrite Sphinx roles in dpcert's docstrings as Markdown the API pages render.

mkdocstrings renders docstrings as Markdown, where ``:class:`~dpcert.x.Name``` shows raw.  Each
role in a docstring (and only in docstrings: the lines come from :mod:`ast`) becomes

* ``[Name][dpcert.x.Name]``, a cross-reference mkdocs-autorefs resolves, when the target (as
  written, or relative to the module, its class or the package) is an object of the built
  site's inventory (``site/objects.inv``, written by ``mkdocs build``);
* plain code, ```Name```, otherwise (a private helper, the standard library, a module the API
  pages do not render).

A leading ``~`` shows the last dotted part only, as in Sphinx.  ``tests/test_docstrings.py``
fails on any role left, so run this after merging code that adds some::

    mkdocs build -q -d /tmp/site && python tools/sphinx_roles.py --inventory /tmp/site/objects.inv
"""

from __future__ import annotations

import argparse
import ast
import re
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROLE = re.compile(r":(?:py:)?(class|meth|func|attr|mod|data|exc|obj|const):`([^`]+)`")


def read_inventory(path: Path) -> set[str]:
    """The object names of a Sphinx-format ``objects.inv`` (version 2)."""
    raw = path.read_bytes()
    body = raw.split(b"\n", 4)[4]
    names: set[str] = set()
    for line in zlib.decompress(body).decode("utf-8").splitlines():
        if line.strip():
            names.add(line.split(" ", 1)[0])
    return names


def docstring_lines(tree: ast.Module) -> set[int]:
    """1-based line numbers of every bare string statement: module, class and function
    docstrings, and the attribute docstrings griffe also renders."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def candidates(target: str, module: str) -> list[str]:
    """Fully qualified names ``target`` may mean inside ``module`` (most specific first)."""
    if target.startswith("dpcert."):
        return [target]
    name = target.lstrip(".")
    parts = module.split(".")
    return [".".join([*parts[:i], name]) for i in range(len(parts), 0, -1)]


def rewrite(text: str, module: str, inventory: set[str], lines: set[int],
            width: int = 100) -> tuple[str, int, int]:
    """``text`` with the roles on docstring ``lines`` rewritten; (text, cross-refs, plain).

    A cross-reference that would push its line past ``width`` characters is written as plain
    code instead (the docstrings are not reflowed)."""
    linked = plain = 0

    def render(m: re.Match[str], link: bool) -> tuple[str, bool]:
        target = m.group(2).strip()
        short = target.startswith("~")
        bare = target.lstrip("~").removesuffix("()")
        shown = bare.rsplit(".", 1)[-1] if short else bare.lstrip(".")
        shown += "()" if target.endswith("()") else ""
        for full in candidates(bare, module) if link else []:
            if full in inventory:
                return f"[`{shown}`][{full}]", True
        return f"`{shown}`", False

    out = []
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        while number in lines and (m := ROLE.search(line)):
            new, is_link = render(m, link=True)
            trial = line[:m.start()] + new + line[m.end():]
            if is_link and len(ROLE.sub(lambda r: render(r, False)[0],
                                        trial).rstrip("\n")) > width:
                new, is_link = render(m, link=False)
                trial = line[:m.start()] + new + line[m.end():]
            linked += is_link
            plain += not is_link
            line = trial
        out.append(line)
    return "".join(out), linked, plain


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--inventory", type=Path, default=ROOT / "site" / "objects.inv")
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "src" / "dpcert"])
    args = parser.parse_args(argv)
    inventory = read_inventory(args.inventory)
    total_linked = total_plain = 0
    for root in args.paths:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            text = path.read_text(encoding="utf-8")
            rel = path.resolve().relative_to(ROOT / "src").with_suffix("")
            module = ".".join(p for p in rel.parts if p != "__init__")
            new, linked, plain = rewrite(text, module, inventory,
                                         docstring_lines(ast.parse(text)))
            if new != text:
                path.write_text(new, encoding="utf-8")
            total_linked += linked
            total_plain += plain
    print(f"{total_linked} roles became cross-references, {total_plain} plain code")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
