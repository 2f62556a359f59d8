"""Every curated mutant of ``tools/mutants.py`` still applies to the code it names.

A refactor that rewrites a mutated line leaves its mutant "stale": the mutation run then skips
it, and ``make mutate-ci`` fails at the end of ``make test``.  This check (``tools/mutate.py
--check``, without running any mutant) fails in the unit suite instead, next to the change.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools import mutate  # noqa: E402
from tools.mutants import MUTANTS, Mutant  # noqa: E402


def _stale(mutants: list[Mutant]) -> list[str]:
    return [m.id for m in mutants
            if mutate._apply((ROOT / "src" / m.path).read_text(encoding="utf-8"), m) is None]


def test_every_mutant_applies() -> None:
    assert _stale(MUTANTS) == []


def test_a_stale_mutant_is_found() -> None:
    """Wrong variant: a mutant whose original text is not in its file is reported."""
    m = MUTANTS[0]
    gone = replace(m, id="probe", find="no such line in any file")
    assert _stale([gone]) == ["probe"]
