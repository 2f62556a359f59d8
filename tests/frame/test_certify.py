"""``dpcert.frame.certify``: a certificate is re-derived from its plan, and every kind of
tampering (charged amount, plan, budget, a step's fields, missing or extra steps) is reported."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest

from dpcert.core.measures import ZCDP, ApproxDP, PureDP
from dpcert.frame.certify import check_certificate, compiled_certificate
from dpcert.frame.compile import compile_plan
from dpcert.frame.plan import Count, Mean, QueryPlan, Sum

SCHEMA = {"pid": "int", "g": "str", "x": "float"}
PLAN = QueryPlan((Count(), Sum("x", (-2.0, 10.0)), Mean("x", (-1.0, 3.0)).alias("m")),
                 group_keys=("g",), public_keys=(("a",), ("b",), ("c",)), privacy_unit="pid",
                 max_groups=2, max_rows_per_group=3)
BUDGETS = [PureDP(1), ApproxDP(1, Fraction(1, 10**7)), ZCDP(Fraction(1, 3))]


def cert_for(plan: QueryPlan, budget: Any) -> dict[str, Any]:
    m = compile_plan(plan, budget, schema=SCHEMA, backend=None)
    return json.loads(json.dumps(compiled_certificate(m, plan, budget, SCHEMA)))


@pytest.mark.parametrize("budget", BUDGETS)
def test_an_untouched_certificate_checks_and_charges_the_compiled_map(budget: Any) -> None:
    cert = cert_for(PLAN, budget)
    res = check_certificate(cert)
    assert res.ok and res.messages == ()
    assert res.charged == compile_plan(PLAN, budget, schema=SCHEMA, backend=None).map(1)


@pytest.mark.parametrize("budget", BUDGETS)
def test_missing_or_extra_steps_are_reported(budget: Any) -> None:
    cert = cert_for(PLAN, budget)
    for steps in (cert["steps"][:-1], cert["steps"][1:], [*cert["steps"], cert["steps"][-1]]):
        res = check_certificate(dict(cert, steps=steps))
        assert not res.ok
        assert any(m.startswith("steps: recorded") for m in res.messages)


@pytest.mark.parametrize("field", ["constructor", "d_in", "d_out", "proof"])
def test_each_tampered_step_field_is_reported(field: str) -> None:
    cert = cert_for(PLAN, PureDP(1))
    for i in range(len(cert["steps"])):
        steps = [dict(s) for s in cert["steps"]]
        steps[i][field] = "tampered"
        res = check_certificate(dict(cert, steps=steps))
        assert not res.ok, (i, field)
        assert any(f"steps[{i}].{field}" in m for m in res.messages)


def test_a_tampered_charge_plan_or_budget_is_reported() -> None:
    cert = cert_for(PLAN, ApproxDP(1, Fraction(1, 10**7)))
    assert not check_certificate(dict(cert, charged_exact=["1/2", "1/10000000"])).ok
    # a smaller bound on rows per unit recorded in the plan: the recompiled steps differ
    plan = dict(cert["plan"], max_rows_per_group=1)
    assert not check_certificate(dict(cert, plan=plan)).ok
    # a larger recorded budget: the recompiled charge differs from the recorded one
    bigger = dict(cert, budget={"measure": "ApproxDP", "value": ["2", "1/10000000"]})
    res = check_certificate(bigger)
    assert not res.ok and any(m.startswith("charged: recorded") for m in res.messages)
