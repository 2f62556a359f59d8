"""``dpcert.frame.recheck``: without the ledger, every displayed field of a release certificate
is re-derived from the recompiled plan, and each forgery of issue 38 fails the check: the
budget lowered 1000× with the steps recomputed by the public helper, and edited ``charged``,
``release_total``, ``contribution_bounds``, ``privacy_unit``, ``measurements[*].scale``,
``session`` and ``ledger``; filters the engine refuses (a window, a strict cast) fail too."""

from __future__ import annotations

import copy
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import dpcert as dp
from _bound import EDITS, lowered_budget, recorded_admission, released
from dpcert.frame.binding import charge_body_hash
from dpcert.frame.certify import check_certificate, plan_from_json
from dpcert.frame.compile import compile_plan


@pytest.fixture(scope="module")
def bound(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str,
                                                              list[dict[str, Any]]]:
    return released(tmp_path_factory.mktemp("recheck"))


def test_an_untouched_release_certificate_re_derives_exactly(bound: Any) -> None:
    cert, _, batch = bound
    for c in (cert, *batch):
        res = check_certificate(c)
        assert res.ok, res.messages
        assert res.messages == ()
    assert cert["charge"]["body_sha256"] == charge_body_hash(cert)
    assert cert["binding"]["relation"] == "add_remove"
    assert [c["binding"]["batch"] for c in batch] == [{"index": 0, "size": 2},
                                                       {"index": 1, "size": 2}]


def test_the_budget_lowered_1000_times_with_recomputed_steps_fails(bound: Any) -> None:
    """Accepted before the binding (the steps alone re-derived); now the scales, the release
    total and the charge body's hash no longer match."""
    forged = lowered_budget(bound[0])
    res = check_certificate(forged)
    assert not res.ok
    text = "\n".join(res.messages)
    for field in ("measurements[0].scale", "release_total", "charge.body_sha256"):
        assert field in text, (field, text)


#: Edits of what the ledger showed after the charge (not in the charge body), to consistent
#: values: only the ledger can refute them (``test_chargecheck``).
LEDGER_ONLY = {"ledger.remaining", "ledger.chain_head"}


@pytest.mark.parametrize("name", sorted(set(EDITS) - LEDGER_ONLY))
def test_each_edited_field_fails(bound: Any, name: str) -> None:
    forged = copy.deepcopy(bound[0])
    EDITS[name](forged)
    res = check_certificate(forged)
    assert not res.ok, name
    if not name.startswith("ledger"):  # a body field: its hash no longer matches
        assert any("charge.body_sha256" in m for m in res.messages), res.messages


@pytest.mark.parametrize("name", sorted(EDITS))
def test_each_edit_with_its_hash_recomputed_still_fails_where_derivable(
        bound: Any, name: str) -> None:
    """Recomputing the body hash hides an edit only where the field cannot be re-derived from
    the plan (the session's and ledger's own numbers): those are the ledger's to confirm
    (``test_chargecheck``)."""
    forged = copy.deepcopy(bound[0])
    EDITS[name](forged)
    forged["charge"]["body_sha256"] = charge_body_hash(forged)
    res = check_certificate(forged)
    assert res.ok == (name in {"session", "session.budget"} | LEDGER_ONLY), (name, res.messages)


@pytest.mark.parametrize("sql", ["count(*) over () > 1", "CAST(g AS INT) > 1",
                                 "x > AVG(x) OVER (PARTITION BY g)"])
def test_a_filter_the_engine_refuses_fails_the_check(bound: Any, sql: str) -> None:
    forged = copy.deepcopy(bound[0])
    forged["plan"]["filters"][0] = sql
    forged["filters"][0] = {"sql": sql}
    res = check_certificate(forged)
    assert not res.ok
    assert any("refused by the engine's allow-list" in m for m in res.messages)
    assert not any(m.startswith("note:") for m in res.messages)


def test_a_filter_record_that_does_not_match_the_plan_fails(bound: Any) -> None:
    forged = copy.deepcopy(bound[0])
    forged["filters"][0] = {"sql": "x > -1"}
    assert not check_certificate(forged).ok


def test_a_polars_filter_is_re_checked_from_its_serialized_form(bound: Any) -> None:
    cert = bound[0]
    assert "polars_json" in cert["filters"][1]
    forged = copy.deepcopy(cert)
    forged["filters"][1] = {"polars_json": '{"Column": "x"}'}  # not a predicate
    res = check_certificate(forged)
    assert not res.ok and any("filters[1]" in m for m in res.messages)


def test_the_public_helper_alone_makes_a_consistent_forgery(tmp_path: Path, bound: Any) -> None:
    """What the check without the ledger cannot prove: a forger who regenerates every field
    (here the whole body with the library's own functions) writes a consistent certificate.
    The CLI says so; ``--ledger`` refuses it (``test_chargecheck``)."""
    from dpcert.cli.main import main

    forged = lowered_budget(bound[0])
    plan = plan_from_json(forged["plan"])
    budget = dp.PureDP(Fraction(forged["budget"]["value"]))
    m = compile_plan(plan, budget, schema=forged["schema"], backend=None,
                     admission=recorded_admission(forged, plan))
    import json

    from dpcert.frame.certify import release_components

    forged["measurements"] = json.loads(json.dumps(release_components(m, plan, budget),
                                                   default=str))
    forged["release_total"] = budget.to_json(m.map(1))
    forged["charge"]["body_sha256"] = charge_body_hash(forged)
    assert check_certificate(forged).ok
    f = tmp_path / "forged.json"
    f.write_text(json.dumps(forged))
    assert main(["certificate", "check", str(f)]) == 0
    assert main(["certificate", "check", str(f), "--ledger", bound[1]]) == 1


def test_a_spark_column_filter_is_re_checked_with_the_spark_allow_list(bound: Any) -> None:
    """A Spark Column filter is recorded by its text form and re-checked without Spark."""
    forged = copy.deepcopy(bound[0])
    forged["plan"]["filters"][0] = "Column<'>(x, 3)'>"
    forged["filters"][0] = {"spark_column": ">(x, 3)"}
    assert not any("filters[0]" in m for m in check_certificate(forged).messages)
    forged["plan"]["filters"][0] = "Column<'>(rand(), 3)'>"
    forged["filters"][0] = {"spark_column": ">(rand(), 3)"}
    assert any("filters[0]" in m and "allow-list" in m
               for m in check_certificate(forged).messages)
