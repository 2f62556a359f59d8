"""Release certificates: the compiled chain's certificate plus the session's account.

:func:`release_certificate` extends :func:`dpcert.frame.certify.compiled_certificate` (the plan,
schema, budget, the charged amount ``m.map(1)`` and every step of the chain, re-checkable with
``dpcert certificate check``) with what a reader of one release needs: the session's totals, the
ledger's head and count, the per-output noisy statistics and the confidence level.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

from dpcert.core.measurement import Measurement
from dpcert.core.measures import Measure
from dpcert.frame.certify import compiled_certificate, release_components
from dpcert.frame.plan import QueryPlan

__all__ = ["release_certificate"]


def release_certificate(m: Measurement, plan: QueryPlan, budget: Measure,
                        schema: Mapping[str, str], *, session_total: Any,
                        session_budget: Measure, ledger: dict[str, Any] | None,
                        alpha: Any, backend: str) -> dict[str, Any]:
    """Everything needed to re-check a release's privacy claim: generated from the compiled
    measurement ``m`` that was charged (``m.map(1)``) and run."""
    cert = compiled_certificate(m, plan, budget, schema)
    try:
        import polars as pl

        cert["versions"]["polars"] = pl.__version__
    except ImportError:  # pragma: no cover
        pass
    cert.update({
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "backend": backend,
        "privacy_unit": plan.privacy_unit or "row",
        "neighbouring": "add or remove all rows of one privacy unit (d_in = 1 unit)",
        "contribution_bounds": {
            "max_groups": plan.max_groups, "max_rows_per_group": plan.max_rows_per_group,
            "method": "first groups and rows in a keyed pseudo-random order (fresh CSPRNG key "
                      "per release); units compared exactly, hashes only order",
        },
        "checks": "filters row-local and infallible (allow-list walk), public keys distinct "
                  "after the strict cast, output names distinct, all before the charge",
        "measure": type(budget).__name__,
        "budget_split": "by aggregate weight across the distinct noisy statistics",
        "measurements": release_components(m, plan, budget),
        "composition": "the compiled chain's privacy map (see steps)",
        "release_total": budget.to_json(m.map(1)),
        "session": {"budget": repr(session_budget),
                    "spent_total": session_budget.to_json(session_total)},
        "ledger": ledger,
        "confidence_level": 1 - float(alpha),
        "sampler": ("exact integer samplers fed by os.getrandom (os.urandom where the OS lacks "
                    "it; dpcert.samplers.SystemSource)"),
        "proofs": "docs/proofs/engine.md",
    })
    return cert
