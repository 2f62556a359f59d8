"""One ``Schedule`` owns every share of the time budget."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dpcert.audit.search.schedule import SCHEDULE, Schedule
from dpcert.errors import InvalidParameter

AUDIT = Path(__file__).resolve().parents[2] / "src" / "dpcert" / "audit"


def test_the_default_schedule() -> None:
    assert (SCHEDULE.planned, SCHEDULE.search, SCHEDULE.discrete, SCHEDULE.wide,
            SCHEDULE.wide_first, SCHEDULE.final_round, SCHEDULE.join, SCHEDULE.confirm,
            SCHEDULE.contest, SCHEDULE.drawing) == (
        0.8, 0.4, 0.75, 0.15, 0.35, 0.18, 0.25, 0.05, 0.06, 0.8)
    assert SCHEDULE.estimation == 1.0 - 0.4


@pytest.mark.parametrize("bad", [{"search": 0.0}, {"wide": 1.5}, {"join": True},
                                 {"search": 0.9, "confirm": 0.05, "contest": 0.06}])
def test_a_share_outside_its_range_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(InvalidParameter, match="Schedule"):
        Schedule(**bad)


def _share_constants(tree: ast.Module) -> list[str]:
    """Module-level names with SHARE (or a time-share's FIRST) bound to a float literal."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, float):
            out += [t.id for t in node.targets if isinstance(t, ast.Name)
                    and ("SHARE" in t.id or t.id.endswith("_FIRST"))]
    return out


def test_no_module_keeps_a_time_share_of_its_own() -> None:
    """Shares of the time budget are Schedule fields, not module constants (FAMILY_SHARE and
    SENTINEL_SHARE are shares of a prediction and of a column, not of time)."""
    found = {str(p.relative_to(AUDIT)): _share_constants(ast.parse(p.read_text("utf-8")))
             for p in AUDIT.rglob("*.py")}
    found = {k: [n for n in v if n not in ("FAMILY_SHARE", "SENTINEL_SHARE")]
             for k, v in found.items()}
    assert not {k: v for k, v in found.items() if v}
    # the check sees a planted constant
    assert _share_constants(ast.parse("WIDE_SHARE = 0.15\nX = 1")) == ["WIDE_SHARE"]
