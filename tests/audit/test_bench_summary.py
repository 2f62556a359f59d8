"""The DP-Sniper benchmark's summary line (benchmarks/bench_audit_dpsniper.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_audit_dpsniper",
                                                  ROOT / "benchmarks" / "bench_audit_dpsniper.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_audit_dpsniper", mod)
    spec.loader.exec_module(mod)
    return mod


def test_summary_counts_every_seed_and_sums_private_means() -> None:
    subs = [SimpleNamespace(name="A", private=True), SimpleNamespace(name="B", private=True),
            SimpleNamespace(name="Bug", private=False), SimpleNamespace(name="New", private=True)]
    rows = [{"mechanism": "A", "epsilon_lower": e, "dpsniper_epsilon": 0.1} for e in (0.1, 0.12)]
    rows += [{"mechanism": "B", "epsilon_lower": e, "dpsniper_epsilon": 0.3} for e in (0.2, 0.4)]
    rows += [{"mechanism": "Bug", "epsilon_lower": e, "dpsniper_epsilon": 0.3} for e in (9, 9)]
    rows += [{"mechanism": "New", "epsilon_lower": 5.0, "dpsniper_epsilon": None}]
    line = _bench().summary(rows, subs)
    # A (0.1, 0.12 ≥ 0.1) and Bug on every seed, B not; A and B private: 0.11 + 0.3
    assert line == ("at or above DP-Sniper on every seed: 2 of 3; private mechanisms (2): "
                    "sum of mean bounds 0.4100 (DP-Sniper 0.4000)")
