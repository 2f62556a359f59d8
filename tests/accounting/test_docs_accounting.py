"""Every Python snippet of docs/guide/accounting.md runs, in order, and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "guide" / "accounting.md"


def test_accounting_guide_snippets_run_and_print_what_they_claim() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 5
    scope: dict[str, object] = {}
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(DOC), "exec"), scope)
        printed = [ln for ln in out.getvalue().splitlines() if ln.strip()]
        claimed = [m.group(1).strip() for m in re.finditer(r"print\(.*\)\s+#\s*([^—(\n]+)", block)]
        for got, want in zip(printed, claimed, strict=True):
            assert got.split() == want.split(), (got, want)
