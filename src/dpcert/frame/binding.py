"""The charge body of a release certificate: what is fixed before the charge, hashed into the
ledger's chain when the release is charged.

A certificate is completed after its charge (the ledger's remaining budget and chain head are
known only then), so the ledger cannot store the hash of the whole certificate.  It stores the
SHA-256 of the certificate's *charge body* instead: the fields `BODY_FIELDS`, everything
known before the charge — the plan with its filters, the schema, the budget, every step, the
measurements with their noise scales, the charged amount, the contribution bounds, the privacy
unit and neighbouring relation, the session's budget and total after the charge, the ledger
dataset and its budget, the query's label and its place in a batch, the versions.  The hash is
over `canonical_json` (keys sorted, no spaces, UTF-8, no NaN), so anyone can recompute it
from a certificate file; ``dpcert certificate check CERT --ledger LEDGER`` finds it in the chain
at the position the certificate states (`dpcert.frame.certify`).

Examples
--------
>>> body = {k: None for k in BODY_FIELDS}
>>> len(charge_body_hash(body))
64
>>> charge_body_hash(dict(body, extra=1)) == charge_body_hash(body)  # only the body counts
True
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcert.core.measurement import Measurement
from dpcert.core.measures import Measure
from dpcert.errors import InvalidParameter
from dpcert.frame.plan import QueryPlan

if TYPE_CHECKING:
    from dpcert._types import JSON
    from dpcert.accounting.filters import Amount

__all__ = ["BODY_FIELDS", "NEIGHBOURING", "canonical_json", "charge_body", "charge_body_hash",
           "filter_records", "fixed_fields"]

#: The top-level certificate fields hashed into the ledger's chain (the charge body).
BODY_FIELDS = (
    "format", "plan", "schema", "budget", "d_in", "charged", "charged_exact", "steps",
    "versions", "backend", "privacy_unit", "neighbouring", "contribution_bounds", "checks",
    "measure", "budget_split", "measurements", "composition", "release_total", "session",
    "binding", "filters", "confidence_level", "sampler", "proofs",
)

#: The neighbouring relation of every engine release (``UnitDistance`` at d_in = 1).
NEIGHBOURING = "add or remove all rows of one privacy unit (d_in = 1 unit)"


def _finite(obj: object) -> object:
    """``obj`` with every non-finite float as ``{"__float__": "inf" | "-inf" | "nan"}`` (a
    public key may be ±inf or NaN; JSON has no such numbers)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return {"__float__": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def canonical_json(obj: object) -> bytes:
    """The canonical encoding hashed: sorted keys, no spaces, UTF-8, non-finite floats tagged
    (`_finite`)."""
    try:
        return json.dumps(_finite(obj), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise InvalidParameter(f"the certificate's charge body is not canonical JSON: {e}"
                               ) from None


def charge_body_hash(cert: Mapping[str, object]) -> str:
    """SHA-256 (hex) of the charge body of ``cert`` (its `BODY_FIELDS`; absent fields
    count as null)."""
    return hashlib.sha256(canonical_json({k: cert.get(k) for k in BODY_FIELDS})).hexdigest()


def filter_records(plan: QueryPlan) -> list[dict[str, str]]:
    """Each filter in a form the check can re-run through the engine's allow-list: a SQL
    predicate as ``{"sql": text}``, a Polars expression as ``{"polars_json": serialized}``, a
    Spark Column as ``{"spark_column": its text form}``."""
    import re

    out: list[dict[str, str]] = []
    for f in plan.filters:
        if isinstance(f, str):
            out.append({"sql": f})
        elif type(f).__name__ == "Column":
            m = re.fullmatch(r"Column<'(.*)'>", str(f), re.DOTALL)
            out.append({"spark_column": m.group(1) if m else str(f)})
        else:
            out.append({"polars_json": f.meta.serialize(format="json")})
    return out


def fixed_fields(plan: QueryPlan) -> dict[str, JSON]:
    """The certificate fields that depend on the plan alone (re-derived by the check)."""
    return {
        "privacy_unit": plan.privacy_unit or "row",
        "neighbouring": NEIGHBOURING,
        "contribution_bounds": {
            "max_groups": plan.max_groups, "max_rows_per_group": plan.max_rows_per_group,
            "method": "first groups and rows in a keyed pseudo-random order (fresh CSPRNG key "
                      "per release); units compared exactly, hashes only order",
        },
        "checks": "filters row-local and infallible (allow-list walk), public keys distinct "
                  "after the strict cast, output names distinct, all before the charge",
        "budget_split": "by aggregate weight across the distinct noisy statistics",
        "composition": "the compiled chain's privacy map (see steps)",
        "sampler": ("exact integer samplers fed by os.getrandom (os.urandom where the OS lacks "
                    "it; dpcert.samplers.SystemSource)"),
        "proofs": "docs/proofs/engine.md",
    }


def charge_body(m: Measurement, plan: QueryPlan, budget: Measure, schema: Mapping[str, str],
                *, session_budget: Measure, session_spent: Amount, dataset: str | None,
                ledger_total: Amount | None, label: str, batch: tuple[int, int] | None,
                alpha: Fraction,
                backend: str) -> dict[str, JSON]:
    """The charge body of the release of ``plan`` compiled to ``m`` (JSON-normalised): built
    before the charge from public facts only; ``session_spent`` is the session's total after
    this charge, ``ledger_total`` the ledger dataset's budget (``None`` without a ledger),
    ``batch`` the query's ``(index, size)`` in a declared batch."""
    from dpcert.core.events import relation_of
    from dpcert.frame.compiled import budget_json, compiled_certificate, release_components

    body = compiled_certificate(m, plan, budget, schema)
    try:
        import polars as pl

        body["versions"]["polars"] = pl.__version__
    except ImportError:  # pragma: no cover
        pass
    body.update(fixed_fields(plan))
    body.update({
        "backend": backend,
        "measure": type(budget).__name__,
        "measurements": release_components(m, plan, budget),
        "release_total": budget.to_json(m.map(1)),
        "session": {"budget": repr(session_budget),
                    "budget_exact": budget_json(session_budget),
                    "spent_total": session_budget.to_json(session_spent)},
        "binding": {
            "dataset": dataset,
            "ledger_budget": None if ledger_total is None else session_budget.to_json(
                ledger_total),
            "label": label,
            "batch": None if batch is None else {"index": batch[0], "size": batch[1]},
            "relation": relation_of(m.event(1)),
        },
        "filters": filter_records(plan),
        "confidence_level": 1 - float(alpha),
    })
    normal: dict[str, JSON] = json.loads(json.dumps(body, default=str))
    return normal
