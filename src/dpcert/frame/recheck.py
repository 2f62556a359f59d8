"""Re-deriving every displayed field of a release certificate from its recompiled plan.

`release_mismatches` compares what a release's certificate shows — measurements with
their noise scales, charged amount, release total, contribution bounds, privacy unit and
neighbouring relation, session totals, the ledger fields, the charge body's hash — with what
the recompiled measurement gives, and `filter_mismatches` re-runs every filter through
the engine's own allow-list (`dpcert.backends.polars_expr.check_predicate`): a filter
the engine refuses is a failure.  Each returns messages, empty when everything matches.

Without the ledger this proves the certificate's *internal consistency* only: anyone can write
a consistent certificate for a release that never happened; ``dpcert certificate check
--ledger`` confirms the charge (`dpcert.frame.chargecheck`).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, ApproxDP, Measure
from dpcert.frame.binding import charge_body_hash, fixed_fields
from dpcert.frame.plan import QueryPlan

if TYPE_CHECKING:
    from dpcert.accounting.filters import Amount

__all__ = ["amount_from_json", "filter_mismatches", "release_mismatches"]


def amount_from_json(measure: Measure, d: object) -> Amount:
    """The exact amount of ``measure.to_json(amount)``; ``ValueError`` when ``d`` is not one
    (or its rounded floats are not the amount's)."""
    if not isinstance(d, Mapping):
        raise ValueError(f"{d!r} is not an amount")
    keys = ("epsilon", "delta") if isinstance(measure, ApproxDP) else (
        ("rho",) if isinstance(measure, ZCDP) else ("epsilon",))
    try:
        parts = [Fraction(str(d[k]["exact"])) for k in keys]
    except (KeyError, TypeError, ZeroDivisionError) as e:
        raise ValueError(f"{d!r} is not a {type(measure).__name__} amount") from e
    value = (parts[0], parts[1]) if len(parts) == 2 else parts[0]
    if measure.to_json(value) != d:
        raise ValueError(f"{d!r} is not a {type(measure).__name__} amount as dpcert writes it")
    return value


def _same(msgs: list[str], what: str, recorded: object, derived: object) -> None:
    if recorded != derived:
        msgs.append(f"{what}: recorded {_short(recorded)} != recompiled {_short(derived)}")


def _short(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 160 else text[:157] + "..."


def filter_mismatches(cert: Mapping[str, Any]) -> list[str]:
    """Every filter of the certificate re-checked with the engine's allow-list against its
    schema; a release certificate's filter records must render to the plan's filter texts."""
    from dpcert.backends.polars_expr import check_predicate

    texts = list(cert["plan"].get("filters", []))
    records = cert.get("filters")
    if records is None:  # a compiled certificate: its filters are SQL text or nothing
        records = [{"sql": t} for t in texts]
    msgs: list[str] = []
    if len(records) != len(texts):
        msgs.append(f"filters: {len(records)} recorded != {len(texts)} in the plan")
    spark = cert.get("backend") == "spark"
    for i, (rec, text) in enumerate(zip(records, texts, strict=False)):
        try:
            if "spark_column" in rec:
                from dpcert.backends.spark_expr import check_spark_text

                inner = str(rec["spark_column"])
                check_spark_text(inner, dict(cert["schema"]), sql=False)
                if text != f"Column<'{inner}'>":
                    msgs.append(f"filters[{i}]: the checked filter {inner!r} is not the "
                                f"plan's {text!r}")
                continue
            if "sql" in rec:
                sql_text = str(rec["sql"])
                expr: pl.Expr | str = sql_text
                shown = sql_text
                if spark:
                    from dpcert.backends.spark_expr import check_spark_text

                    check_spark_text(sql_text, dict(cert["schema"]), sql=True)
            else:
                import polars as pl

                expr = pl.Expr.deserialize(io.StringIO(str(rec["polars_json"])), format="json")
                shown = str(expr)
            check_predicate(expr, dict(cert["schema"]))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:
            msgs.append(f"filters[{i}] {text!r}: refused by the engine's allow-list "
                        f"({type(e).__name__}: {str(e)[:200]})")
            continue
        if shown != text:
            msgs.append(f"filters[{i}]: the checked filter {shown!r} is not the plan's {text!r}")
    return msgs


def release_mismatches(cert: Mapping[str, Any], plan: QueryPlan, budget: Measure,
                       m: Measurement) -> list[str]:
    """Every displayed field of a release's certificate against the recompiled ``m``."""
    import json

    from dpcert.core.events import relation_of
    from dpcert.frame.compiled import budget_from_json, release_components

    msgs: list[str] = []
    for k, v in fixed_fields(plan).items():
        _same(msgs, k, cert[k], v)
    _same(msgs, "measure", cert["measure"], type(budget).__name__)
    derived = json.loads(json.dumps(release_components(m, plan, budget), default=str))
    if len(cert["measurements"]) != len(derived):
        msgs.append(f"measurements: {len(cert['measurements'])} recorded != "
                    f"{len(derived)} recompiled")
    for i, (a, b) in enumerate(zip(cert["measurements"], derived, strict=False)):
        for key in sorted(set(a) | set(b)):
            _same(msgs, f"measurements[{i}].{key}", a.get(key), b.get(key))
    total = json.loads(json.dumps(budget.to_json(m.map(1))))
    _same(msgs, "release_total", cert["release_total"], total)
    _same(msgs, "charged", cert["charged"], total)
    binding = cert["binding"]
    _same(msgs, "binding.relation", binding["relation"], relation_of(m.event(1)))
    batch = binding["batch"]
    if batch is not None and not 0 <= batch["index"] < batch["size"]:
        msgs.append(f"binding.batch: index {batch['index']} is not in [0, {batch['size']})")
    charged = m.map(1)
    session = cert["session"]
    try:
        s_budget = budget_from_json(session["budget_exact"])
        spent = amount_from_json(s_budget, session["spent_total"])
        if type(s_budget) is not type(budget):
            msgs.append(f"session.budget_exact: a {type(s_budget).__name__} budget for a "
                        f"{type(budget).__name__} release")
        elif not s_budget.compare(spent, s_budget.require_value()):
            msgs.append("session.spent_total exceeds session.budget_exact")
        if batch is None and not budget.compare(charged, spent):
            msgs.append("session.spent_total is less than this release's charge")
        _same(msgs, "session.budget", session["budget"], repr(s_budget))
    except (ValueError, ArithmeticError, TypeError) as e:
        msgs.append(f"session: not an exact budget and total ({e})")
    msgs += _ledger_mismatches(cert, budget)
    body = charge_body_hash(cert)
    _same(msgs, "charge.body_sha256", cert["charge"]["body_sha256"], body)
    return msgs


def _ledger_mismatches(cert: Mapping[str, Any], budget: Measure) -> list[str]:
    """The ledger fields against the binding: same dataset, position, amounts in range."""
    msgs: list[str] = []
    binding, ledger, where = cert["binding"], cert["ledger"], cert["charge"]["ledger"]
    if (ledger is None) != (binding["dataset"] is None) or (ledger is None) != (where is None):
        msgs.append("ledger: the ledger fields, binding.dataset and charge.ledger must be "
                    "given together (or all be null)")
        return msgs
    if ledger is None:
        return msgs
    _same(msgs, "ledger.dataset", ledger["dataset"], binding["dataset"])
    _same(msgs, "ledger.charges", ledger["charges"], where["position"])
    if where["position"] < 1:
        msgs.append(f"charge.ledger.position={where['position']} must be at least 1")
    try:
        total = amount_from_json(budget, binding["ledger_budget"])
        left = amount_from_json(budget, ledger["remaining"])
        if not budget.compare(left, total):
            msgs.append("ledger.remaining exceeds binding.ledger_budget")
        if not budget.compare(m_charged(cert, budget), total):
            msgs.append("charged exceeds binding.ledger_budget")
    except (ValueError, ArithmeticError, TypeError) as e:
        msgs.append(f"ledger: not an exact budget and remaining amount ({e})")
    return msgs


def m_charged(cert: Mapping[str, Any], budget: Measure) -> Amount:
    """The certificate's exact charged amount (already compared with the recompiled one)."""
    return amount_from_json(budget, cert["charged"])
