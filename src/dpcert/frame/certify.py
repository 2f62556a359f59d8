"""Certificates generated from the compiled chain, and their re-check.

A certificate lists every step of the compiled measurement (`dpcert.core.trace.trace` at
one privacy unit): constructor, parameters, ``d_in``, ``d_out`` and proof note, plus the plan,
the schema, the budget and the charged amount ``m.map(1)``.  `check_certificate`
re-compiles the plan from the certificate and confirms the charged amount and every step,
re-checks the filters with the engine's allow-list, and for a release's certificate re-derives
every displayed field (`dpcert.frame.recheck`).

Compatibility rules of the format (``"format": "dpcert-compiled-certificate/1"``): the fields
``plan``, ``schema``, ``budget``, ``charged`` and ``steps[*].{constructor, d_in, d_out, proof}``
never change meaning within version 1; new fields may be added; exact numbers are strings
(``"1/3"``), shown numbers are rounded up.  Filters are recorded as text: their map is the
identity (``docs/proofs/frame_filter.md``), so the charged amount is re-derived without them,
and each filter is re-checked with the engine's allow-list (a refused filter fails the check).

Examples
--------
>>> from dpcert.core.measures import PureDP
>>> from dpcert.frame.compile import compile_plan
>>> from dpcert.frame.plan import Count, QueryPlan
>>> plan = QueryPlan((Count(),), group_keys=("g",), public_keys=(("a",), ("b",)))
>>> m = compile_plan(plan, PureDP(1), schema={"g": "str"}, backend=None)
>>> cert = compiled_certificate(m, plan, PureDP(1), {"g": "str"})
>>> [s["constructor"] for s in cert["steps"]][:4]
['bound_contributions', 'group_by', 'composition[1]', 'select_stat']
>>> check_certificate(cert).ok
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcert.core._describe import jsonable
from dpcert.core.measurement import Measurement
from dpcert.core.measures import Measure, basic_loss
from dpcert.core.trace import trace
from dpcert.frame.compiled import (
    FORMAT,
    budget_from_json,
    budget_json,
    compiled_certificate,
    plan_from_json,
    release_components,
)
from dpcert.frame.plan import QueryPlan

if TYPE_CHECKING:
    from dpcert.accounting.filters import Amount

__all__ = ["FORMAT", "CheckResult", "budget_from_json", "budget_json", "check_certificate",
           "compiled_certificate", "plan_from_json", "release_components"]


@dataclass(frozen=True)
class CheckResult:
    """The outcome of `check_certificate`."""

    ok: bool
    charged: Amount
    messages: tuple[str, ...]


def check_certificate(cert: Mapping[str, Any]) -> CheckResult:
    """Re-compile the certificate's plan under its budget and compare the charged amount and
    every step's constructor, ``d_in``, ``d_out`` and proof note; re-check every filter with
    the engine's allow-list; for a release's certificate, re-derive every displayed field
    (`dpcert.frame.recheck.release_mismatches`).  Internal consistency only: the
    charge itself is confirmed against the ledger (`dpcert.frame.chargecheck`).

    A certificate of the wrong shape, or whose plan dpcert cannot compile, raises
    `CertificateError`."""
    from dpcert.frame.certshape import CertificateError, validate_certificate
    from dpcert.frame.recheck import filter_mismatches, release_mismatches

    if cert.get("format") != FORMAT:
        raise CertificateError(f"format={str(cert.get('format'))[:60]!r}: expected {FORMAT!r}")
    validate_certificate(cert)
    plan, budget, m = _recompile(cert)
    admit = _admit_steps(cert)
    charged = basic_loss(m.map(1), "charged")
    msgs: list[str] = []
    if len(admit) > 1 or ("backend" in cert and not admit):
        msgs.append(f"steps: {len(admit)} admission steps; a release has exactly one")
    if jsonable(charged) != cert.get("charged_exact"):
        msgs.append(f"charged: recorded {cert.get('charged_exact')} != recompiled "
                    f"{jsonable(charged)}")
    if not budget.compare(charged, budget.require_value()):
        msgs.append(f"charged {budget.describe(charged)} exceeds the budget {budget!r}")
    fields = ("constructor", "d_in", "d_out", "proof")
    recorded = [s for s in cert.get("steps", []) if s.get("constructor") != "frame_filter"]
    again = [s.to_json() for s in trace(m, 1)]
    if len(recorded) != len(again):
        msgs.append(f"steps: recorded {len(recorded)} (without filters) != recompiled "
                    f"{len(again)}")
    for i, (a, b) in enumerate(zip(recorded, again, strict=False)):
        for f in fields:
            if a.get(f) != b.get(f):
                msgs.append(f"steps[{i}].{f}: recorded {a.get(f)!r} != recompiled {b.get(f)!r}")
    _same_d_in(msgs, cert, plan)
    msgs += filter_mismatches(cert)
    if "measurements" in cert:
        try:
            msgs += release_mismatches(cert, plan, budget, m)
        except (TypeError, ValueError, ArithmeticError, KeyError, IndexError,
                AttributeError) as e:
            raise CertificateError(f"the certificate's fields cannot be compared: "
                                   f"{type(e).__name__}: {str(e)[:200]}") from None
    return CheckResult(not msgs, charged, tuple(msgs))


def _same_d_in(msgs: list[str], cert: Mapping[str, Any], plan: QueryPlan) -> None:
    d_in = "1 privacy unit" if plan.privacy_unit else "1 row"
    if cert.get("d_in") != d_in:
        msgs.append(f"d_in: recorded {cert.get('d_in')!r} != recompiled {d_in!r}")


def _admit_steps(cert: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The certificate's recorded admission steps (a release has exactly one)."""
    return [s for s in cert.get("steps", []) if isinstance(s, dict)
            and s.get("constructor") == "admit"]


def _recompile(cert: Mapping[str, Any]) -> tuple[QueryPlan, Measure, Measurement]:
    """The certificate's plan, budget and compiled measurement; hostile values raise
    `CertificateError`."""
    from dpcert.errors import DPCertError
    from dpcert.frame.admit import admission_from_json
    from dpcert.frame.certshape import CertificateError
    from dpcert.frame.compile import compile_plan

    try:
        plan = plan_from_json(cert["plan"])
        budget = budget_from_json(cert["budget"])
        admit = _admit_steps(cert)
        admission = None
        if admit:  # a release starts with its admission step; the map is re-derived with it
            params = admit[0].get("params")
            admission = admission_from_json(params.get("columns") if isinstance(params, dict)
                                            else None, plan, dict(cert["schema"]))
        m = compile_plan(plan, budget, schema=dict(cert["schema"]), backend=None,
                         admission=admission)
        m.map(1)
    except DPCertError as e:
        raise CertificateError(f"the certificate's plan does not compile: "
                               f"{type(e).__name__}: {str(e)[:300]}") from None
    except (TypeError, ValueError, ArithmeticError, KeyError, IndexError, AttributeError,
            RecursionError, MemoryError) as e:
        raise CertificateError(f"the certificate's plan or budget is malformed: "
                               f"{type(e).__name__}: {str(e)[:200]}") from None
    return plan, budget, m

