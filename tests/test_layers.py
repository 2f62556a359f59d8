"""The package's import graph respects the layers of ``docs/architecture.md`` and has no cycle.

Every ``import`` in ``src/dpcert`` counts, including imports inside functions (a lazy import is
still a dependency: it only hides a cycle); imports under ``if TYPE_CHECKING:`` do not run and are
ignored.  ``importlib.import_module`` strings (the facade's lazy aliases) are not followed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dpcert"

#: Layers, lowest first: a module may import modules of its own layer or of lower layers only.
#: (``backends`` holds the data work of the engine; the frame transformations in
#: ``transformations/frame`` call it, so it sits below ``mechanisms`` and ``transformations``.)
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "operator", "_numbers", "_types", "_validate", "_exact", "_directed", "_version"),
    ("core",),
    ("samplers",),
    ("backends",),
    ("mechanisms",),
    ("transformations",),
    ("combinators", "accounting"),
    ("frame",),
    ("audit", "verify", "testing"),
    ("selfaudit",),
    ("report",),
    ("cli", "__init__"),
)
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def _modules() -> dict[str, Path]:
    out = {}
    for p in SRC.rglob("*.py"):
        parts = list(p.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for every dpcert import that runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def walk(nodes: list[ast.stmt] | list[ast.AST]) -> Iterator[tuple[str, int]]:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                yield from walk(node.orelse)
                continue
            if isinstance(node, ast.Import):
                for a in node.names:
                    yield a.name, node.lineno
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in MODULES]
                # `from pkg import submodule` depends on the submodule, not on pkg's __init__
                if len(subs) < len(node.names):
                    yield mod, node.lineno
                for s in subs:
                    yield s, node.lineno
            yield from walk(list(ast.iter_child_nodes(node)))

    for mod, line in walk(tree.body):
        if mod in MODULES and mod != name:
            yield mod, line


GRAPH = {name: sorted(set(_imports(name, path))) for name, path in MODULES.items()}


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if top not in LAYER_OF:
        raise AssertionError(
            f"{module}: package {top!r} has no layer; add it to LAYERS in tests/test_layers.py "
            "and to the table in docs/architecture.md")
    return LAYER_OF[top]


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_every_package_has_a_layer() -> None:
    for name in MODULES:
        _layer(name)


def test_no_upward_import() -> None:
    bad = [f"{name}:{line} imports {mod} (layer {LAYERS[_layer(mod)]} is above "
           f"{LAYERS[_layer(name)]})"
           for name, deps in GRAPH.items() for mod, line in deps if _layer(mod) > _layer(name)]
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_import_cycle() -> None:
    graph = {name: [m for m, _ in deps] for name, deps in GRAPH.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_checker_sees_cycles_and_upward_imports() -> None:
    """The checks can fail: a planted cycle and a planted upward import are found."""
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert _cycles({"a": ["b"], "b": []}) == []
    assert _layer("dpcert.frame.session") > _layer("dpcert.core.measurement")
    # a lazy import inside a function is still seen
    deps = dict(GRAPH["dpcert.core.measurement"])
    assert "dpcert.core.events" in deps


@pytest.mark.parametrize("module", ["dpcert.core.measurement", "dpcert.samplers._cells"])
def test_former_cycles_stay_broken(module: str) -> None:
    graph = {name: [m for m, _ in deps] for name, deps in GRAPH.items()}
    assert not any(module in c for c in _cycles(graph))


#: Today's imports, from another package, of a private module (``dpcert.pkg._mod``) or of a private
#: name (``_name``).  They hold the line: remove an entry when its import is fixed, never add one.
#: (``dpcert._numbers``, ``dpcert._directed``, ... are the package-wide lowest layer, not private to
#: a package.)
PRIVATE_ACROSS = frozenset({
    "dpcert.selfaudit.targets -> dpcert.mechanisms._additive",
    "dpcert.cli.build -> dpcert.accounting.ledger._KINDS",
    "dpcert.cli.certificate -> dpcert.frame.certify._recompile",
    "dpcert.combinators.conversions -> dpcert.accounting._convert",
    "dpcert.combinators.queryable -> dpcert.accounting._nesting",
    "dpcert.frame.certify -> dpcert.core._describe",
    "dpcert.frame.compiled -> dpcert.core._describe",
    "dpcert.transformations.frame.stats -> dpcert.backends._fixed",
})


def _private_imports() -> set[str]:
    out = set()
    for name, path in MODULES.items():
        pkg = name.split(".")[1] if "." in name else None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module and not node.level):
                continue
            parts = node.module.split(".")
            if parts[0] != "dpcert" or len(parts) < 3 or parts[1] == pkg:
                continue
            if any(p.startswith("_") for p in parts[2:]):
                out.add(f"{name} -> {node.module}")
            out |= {f"{name} -> {node.module}.{a.name}" for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")}
    return out


def test_no_new_private_import_across_packages() -> None:
    found = _private_imports()
    new, fixed = sorted(found - PRIVATE_ACROSS), sorted(PRIVATE_ACROSS - found)
    assert not new, f"private module or name imported from another package: {new}"
    assert not fixed, f"fixed, remove from PRIVATE_ACROSS: {fixed}"


#: Parts of ``dpcert.audit``, lowest first: the sound kernel (outputs, pairs, claims, bounds,
#: estimation, membership, parallel draws, the verdict), the fixed statistics, the searches.
#: A part may import its own part or lower ones; the auditor's top modules may import any.
AUDIT_PARTS: tuple[str, ...] = ("dpcert.audit.stats", "dpcert.audit.kernel",
                                "dpcert.audit.search")


def _audit_part(module: str) -> int | None:
    for i, part in enumerate(AUDIT_PARTS):
        if module == part or module.startswith(part + "."):
            return i
    return None


def _audit_violations(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Imports from a part of the auditor to a higher part, or to the auditor's top modules
    (``dpcert.audit``, ``dpcert.audit.auditor``, ...), which sit above every part."""
    bad = []
    for name, deps in graph.items():
        mine = _audit_part(name)
        if mine is None:
            continue
        for mod, line in deps:
            if not (mod == "dpcert.audit" or mod.startswith("dpcert.audit.")):
                continue
            theirs = _audit_part(mod)
            if theirs is None or theirs > mine:
                bad.append(f"{name}:{line} imports {mod}")
    return bad


def test_the_audit_kernel_never_imports_the_search() -> None:
    """The sound kernel (what the soundness argument covers) and the fixed statistics import
    nothing from the searches or the auditor's entry points: whatever a search does, it can
    only hand the kernel a pair, a fixed event and a direction."""
    bad = _audit_violations(GRAPH)
    assert not bad, "audit kernel imports upward:\n" + "\n".join(bad)
    assert any(n.startswith("dpcert.audit.kernel.") for n in GRAPH)


def test_the_audit_part_check_can_fail() -> None:
    planted = {"dpcert.audit.kernel.estimate": [("dpcert.audit.search.standard", 1)],
               "dpcert.audit.stats.events": [("dpcert.audit.kernel.bounds", 2)],
               "dpcert.audit.kernel.bounds": [("dpcert.audit.auditor", 3)],
               "dpcert.audit.search.standard": [("dpcert.audit.kernel.bounds", 4)]}
    assert _audit_violations(planted) == [
        "dpcert.audit.kernel.estimate:1 imports dpcert.audit.search.standard",
        "dpcert.audit.stats.events:2 imports dpcert.audit.kernel.bounds",
        "dpcert.audit.kernel.bounds:3 imports dpcert.audit.auditor"]
