"""Every output shown in the docs is what its code prints (``tools/docs_outputs.py``).

A block marked ``<!-- output -->`` is compared with what the ```python block before it prints,
run with the test-only seeded source (so the noise, and the page, are reproducible).  When one
differs: ``python tools/docs_outputs.py --write PAGE`` rewrites it from a fresh run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools import docs_outputs  # noqa: E402

PAGES = docs_outputs.pages()


STALE = {  # a page with one stale output block, and the diff the report must show
    "python": ('```python\nprint(1 + 1)\nprint("x")\n```\n\n<!-- output -->\n```\n2\ny\n```\n',
               "-y\n+x"),
    "console": ("<!-- output -->\n```console\n$ dpcert --version | cut -c 1-6\ndpcurt\n```\n",
                "-dpcurt\n+dpcert"),
}


@pytest.mark.parametrize("kind", sorted(STALE))
def test_a_stale_output_is_found(kind: str) -> None:
    page = ROOT / "docs" / f"_outputs_probe_{kind}.md"
    text, diff = STALE[kind]
    page.write_text(text)
    try:
        shown = docs_outputs.run_page(page)
        assert [s.stale for s in shown] == [True]
        assert diff in docs_outputs.report(page, shown)
        assert docs_outputs.write_page(page, shown) == 1
        assert not any(s.stale for s in docs_outputs.run_page(page))
    finally:
        page.unlink()


def test_seeded_noise_is_reproducible() -> None:
    import dpcert as dp

    m = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=100)
    with docs_outputs.seeded(7):
        first = [m(0) for _ in range(5)]
    with docs_outputs.seeded(7):
        assert [m(0) for _ in range(5)] == first


def test_pages_with_outputs_are_found() -> None:
    assert ROOT / "docs" / "guide" / "real-data.md" in PAGES


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_shown_outputs_are_what_the_code_prints(page: Path) -> None:
    docs_outputs.ensure_people_csv()
    shown = docs_outputs.run_page(page)
    assert shown, f"{page} has an output mark but no output block after a python block"
    text = docs_outputs.report(page, shown)
    assert not any(s.stale for s in shown), (
        f"{text}\nrun: python tools/docs_outputs.py --write {page.relative_to(ROOT)}")
    if any(s.printed is None for s in shown):
        pytest.skip(text)  # a block needs a module not installed here (the dev extra has it)
