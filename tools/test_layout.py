"""Two checks of where tests live and what they pin down (issue 20, items 1 and 2).

``python tools/test_layout.py constructors``
    Lists every public ``make_*`` constructor in ``src/dpcert/{transformations,mechanisms,
    combinators}`` and, for each, whether some test calls it and asserts an exact map value at
    a distance ``d_in > 1`` (a ``.map(k)`` / ``.map((u, l0, li))`` with an integer ``k >= 2`` or
    a tuple with a component ``>= 2``, in a test that names the constructor).  A constructor
    without one is a gap: ``--strict`` exits non-zero then.

``python tools/test_layout.py mirror``
    Checks that ``tests/`` mirrors ``src/dpcert/``: each ``tests/<pkg>/test_<name>.py`` names a
    module ``src/dpcert/<pkg>/<name>.py`` (or a package ``<pkg>/<name>/``), or is listed in
    :data:`CROSS_CUTTING` with the reason it spans modules.  Prints the misplaced files.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "dpcert"
TESTS = ROOT / "tests"
PACKAGES = ("transformations", "mechanisms", "combinators")

#: Test files that deliberately span several modules, with the reason (item 5 of issue 20).
CROSS_CUTTING: dict[str, str] = {
    "tests/conftest.py": "fixtures",
    "tests/_strategies.py": "shared hypothesis strategies",
    "tests/test_docs_snippets.py": "every docs page's code blocks",
    "tests/test_docs_outputs.py": "every docs page's shown outputs (tools/docs_outputs.py)",
    "tests/test_docs_site.py": "the built documentation site's links",
    "tests/test_docstrings.py": "every docstring of the package (no Sphinx roles)",
    "tests/test_layers.py": "import layering of the whole package",
    "tests/test_packaging.py": "the built wheel",
    "tests/test_testing_neighbours.py": "dpcert/testing.py (module at the package root)",
    "tests/statistical/": "seeded distribution tests of the samplers (slow; one place)",
    "tests/mechanisms/test_mechanism_maps_exact.py":
        "exact maps of every mechanism at d_in > 1 (the mutation set's cross-check)",
    "tests/mechanisms/test_map_lower_bounds.py":
        "audit-style lower bounds of every mechanism's map (second tests, docs/mutation.md)",
    "tests/mechanisms/test_selection.py": "exponential, report-noisy-max and quantile together",
    "tests/mechanisms/test_svt_threshold_histogram.py":
        "sparse vector, threshold and histogram mechanisms (shared fixtures)",
    "tests/mechanisms/test_batch_sampling.py": "batch_map of every mechanism",
    "tests/mechanisms/test_accuracy_calibration.py": "accuracy.py and calibration.py",
    "tests/mechanisms/test_exponential_zcdp.py": "exponential.py under zCDP (conversions)",
    "tests/mechanisms/test_rr_local.py": "randomized_response.py (local model)",
    "tests/transformations/test_mean_variance.py": "mean.py and variance.py",
    "tests/transformations/test_moments_exact.py": "_moments.py",
    "tests/transformations/test_vector_helpers.py": "small vector constructors' contracts",
    "tests/transformations/frame/test_frame_constructors.py":
        "bound, filter, group_by and select_stat on shared fixtures (transformations/frame/)",
    "tests/accounting/test_leaf_values_exact.py": "every accountant's value of every leaf",
    "tests/accounting/test_accountants.py": "the accountants against each other",
    "tests/accounting/test_session_wiring.py": "accounting wired into Session",
    "tests/accounting/test_docs_accounting.py": "docs/guide/accounting.md examples",
    "tests/accounting/test_pld_interval.py": "pld.py epsilon_interval",
    "tests/accounting/test_rdp_fractional.py": "rdp.py at fractional orders",
    "tests/accounting/test_ledger_events.py": "ledger.py events",
    "tests/accounting/test_convert.py": "_convert.py",
    "tests/accounting/test_nesting.py": "_nesting.py",
    "tests/combinators/test_combinators.py": "composition, group, parallel, conversions",
    "tests/combinators/test_queryable_filters.py": "queryable.py with filters",
    "tests/samplers/": "sampler internals share fixtures",
    "tests/core/test_domains_metrics.py": "domains.py and metrics.py",
    "tests/core/test_numbers_and_errors.py": "_numbers.py and errors.py",
    "tests/frame/test_soundness.py": "the engine end to end (neighbour harness)",
    "tests/frame/test_measurement_audit.py": "the engine under the auditor",
    "tests/audit/": "the auditor's modules (test_audit_<module>.py)",
    "tests/backends/": "backends (reference and shared conftest)",
    "tests/verify/": "the verifier's modules",
    "tests/report/test_html_report.py": "report/html.py",
    "tests/cli/": "cli/<command>.py as test_<command>_cli.py",
}

_MAP = re.compile(r"\.map\(\s*(\(?[^()]*\)?)\s*\)")


def constructors() -> dict[str, str]:
    """``make_*`` functions defined at module level in the privacy-critical packages."""
    out: dict[str, str] = {}
    for pkg in PACKAGES:
        for f in sorted((SRC / pkg).rglob("*.py")):
            tree = ast.parse(f.read_text(encoding="utf-8"))
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name.startswith("make_"):
                    out[node.name] = str(f.relative_to(ROOT))
    return out


def _big(arg: str) -> bool:
    nums = [int(x) for x in re.findall(r"(?<![\w.])(\d+)(?![\w.])", arg)]
    return any(n >= 2 for n in nums)


def _loop_big(arg: str, source: str) -> bool:
    """``.map(d)`` with ``d`` a loop variable or parameter taking a value ``>= 2``."""
    names = re.findall(r"[A-Za-z_]\w*", arg)
    for n in names:
        for m in re.finditer(rf"for\s+(?:\w+\s*,\s*)*{n}\b[^:]*\bin\s+([^:]+):", source):
            if _big(m.group(1)):
                return True
        for m in re.finditer(rf"\b{n}\s*=\s*([^\n]+)", source):
            if _big(m.group(1)):
                return True
        for m in re.finditer(rf"parametrize\(\s*[\"'(][^\n]*\b{n}\b[^\n]*", source):
            if _big(source[m.start():m.start() + 400]):
                return True
    return False


def exact_map_tests() -> dict[str, list[str]]:
    """constructor → test functions that call it and assert ``.map(k)`` with ``k >= 2``."""
    found: dict[str, list[str]] = {}
    for f in sorted(TESTS.rglob("test_*.py")):
        text = f.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test"):
                continue
            body = ast.get_source_segment(text, node) or ""
            decos = " ".join(ast.get_source_segment(text, d) or "" for d in node.decorator_list)
            if not any(isinstance(a, ast.Assert) for a in ast.walk(node)):
                continue
            if not any(_big(m) or _loop_big(m, body + decos) for m in _MAP.findall(body)):
                continue
            names = set(re.findall(r"\b(make_\w+)", body))
            names |= {f"make_{n}" for n in re.findall(r"\bthen_(\w+)", body)}
            for name in sorted(names):
                found.setdefault(name, []).append(f"{f.relative_to(ROOT)}::{node.name}")
    return found


def check_constructors(strict: bool) -> int:
    cons, tests = constructors(), exact_map_tests()
    gaps = []
    for name, where in sorted(cons.items()):
        ts = tests.get(name, [])
        mark = "ok " if ts else "GAP"
        if not ts:
            gaps.append(name)
        print(f"{mark} {name:34} {where:52} {len(ts)} test(s)")
    print(f"\n{len(cons) - len(gaps)}/{len(cons)} constructors have an exact map test at "
          f"d_in > 1; gaps: {', '.join(gaps) or 'none'}")
    return 1 if strict and gaps else 0


def _module_for(test: Path) -> bool:
    rel = test.relative_to(TESTS)
    stem = rel.stem.removeprefix("test_")
    pkg = SRC.joinpath(*rel.parts[:-1])
    return (pkg / f"{stem}.py").exists() or (pkg / stem).is_dir() or (
        pkg / f"_{stem}.py").exists()


def check_mirror() -> int:
    bad = []
    for f in sorted(TESTS.rglob("*.py")):
        rel = str(f.relative_to(ROOT))
        if f.name == "__init__.py" or any(rel == k or (k.endswith("/") and rel.startswith(k))
                                          for k in CROSS_CUTTING):
            continue
        if not f.name.startswith("test_"):
            continue
        if not _module_for(f):
            bad.append(rel)
    for rel in bad:
        print(f"MISPLACED {rel}: no src/dpcert module of that name")
    n = sum(1 for _ in TESTS.rglob("test_*.py"))
    print(f"{n - len(bad)}/{n} test files mirror a module or are listed as cross-cutting")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("check", choices=["constructors", "mirror"])
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args(argv)
    return check_constructors(args.strict) if args.check == "constructors" else check_mirror()


if __name__ == "__main__":
    raise SystemExit(main())
