"""Release certificates: a JSON-serialisable account of what was spent and why it is private."""

from __future__ import annotations

import datetime as _dt
import platform
from typing import Any

from dpcert.core.measures import Measure
from dpcert.frame.calibrate import Calibration
from dpcert.frame.plan import QueryPlan

__all__ = ["build_certificate"]


def build_certificate(plan: QueryPlan, cal: Calibration, *, session_total: Any,
                      session_budget: Measure, ledger: dict[str, Any] | None,
                      alpha: Any, backend: str) -> dict[str, Any]:
    """Everything needed to re-check a release's privacy claim by hand."""
    import numpy as np

    from dpcert._version import __version__

    versions = {"dpcert": __version__, "python": platform.python_version(),
                "numpy": np.__version__}
    try:
        import polars as pl

        versions["polars"] = pl.__version__
    except ImportError:  # pragma: no cover
        pass
    m = cal.measure
    return {
        "format": "dpcert-certificate/1",
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "backend": backend,
        "privacy_unit": plan.privacy_unit or "row",
        "neighbouring": "add or remove all rows of one privacy unit (d_in = 1 unit)",
        "contribution_bounds": {
            "max_groups": plan.max_groups, "max_rows_per_group": plan.max_rows_per_group,
            "method": "first groups and rows in a keyed pseudo-random order (3 fresh CSPRNG "
                      "seeds per release); units compared exactly (NaN, -0.0/0.0, null "
                      "canonicalised), hashes only order",
        },
        "plan": plan.describe(),
        "checks": "filters row-local and infallible (allow-list walk), public keys distinct "
                  "after the strict cast, output names distinct, all before the charge",
        "measure": type(m).__name__,
        "budget_split": "even across noisy components",
        "measurements": [c.describe(m) for c in cal.components],
        "composition": "sequential (sum of costs; partition selection adds its delta)",
        "release_total": m.to_json(cal.total),
        "session": {"budget": repr(session_budget),
                    "spent_total": session_budget.to_json(session_total)},
        "ledger": ledger,
        "confidence_level": 1 - float(alpha),
        "sampler": ("exact integer samplers fed by os.getrandom (os.urandom where the OS lacks "
                    "it; dpcert.samplers.SystemSource)"),
        "versions": versions,
        "proofs": "docs/proofs/engine.md",
    }
