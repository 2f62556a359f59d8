"""``dpcert certificate check``: a certificate from the compiled chain is re-derived exactly;
a tampered charged amount or step is reported."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from dpcert.cli.main import main
from dpcert.core.measures import ZCDP, ApproxDP, PureDP
from dpcert.frame.certify import check_certificate, compiled_certificate, plan_from_json
from dpcert.frame.compile import compile_plan
from dpcert.frame.plan import Count, Mean, QueryPlan, Sum, Variance

SCHEMA = {"pid": "int", "g": "str", "x": "float"}


def cert_for(plan: QueryPlan, budget: Any) -> dict[str, Any]:
    m = compile_plan(plan, budget, schema=SCHEMA, backend=None)
    return json.loads(json.dumps(compiled_certificate(m, plan, budget, SCHEMA)))


PLAN = QueryPlan((Count(), Sum("x", (0.0, 10.0)).weighted(2), Mean("x", (-1.0, 3.0)).alias("m"),
                  Variance("x", (0.0, 1.0))), group_keys=("g",),
                 public_keys=(("a",), ("b",)), privacy_unit="pid", max_groups=2,
                 max_rows_per_group=3)


@pytest.mark.parametrize("budget", [PureDP(1), ApproxDP(1, Fraction(1, 10**7)),
                                    ZCDP(Fraction(1, 3))])
def test_round_trip_is_ok(budget: Any, tmp_path: Path, capsys: Any) -> None:
    cert = cert_for(PLAN, budget)
    assert plan_from_json(cert["plan"]) == PLAN
    f = tmp_path / "cert.json"
    f.write_text(json.dumps(cert))
    assert main(["certificate", "check", str(f)]) == 0
    assert capsys.readouterr().out.startswith("OK: charged")


def test_private_keys_round_trip() -> None:
    plan = QueryPlan((Count(),), group_keys=("g",), public_keys=None)
    cert = cert_for(plan, ApproxDP(Fraction(1, 2), Fraction(1, 10**6)))
    assert check_certificate(cert).ok
    assert any(s["constructor"] == "keyed_release" and s["proof"] == "keyed_release.md"
               for s in cert["steps"])


def test_tampering_is_reported(tmp_path: Path, capsys: Any) -> None:
    cert = cert_for(PLAN, PureDP(1))
    bad = dict(cert, charged_exact="1/2")
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    assert main(["certificate", "check", str(f)]) == 1
    assert "charged: recorded 1/2" in capsys.readouterr().out
    steps = [dict(s) for s in cert["steps"]]
    steps[0]["d_out"] = ["1", "1", "1"]
    assert not check_certificate(dict(cert, steps=steps)).ok


def test_unreadable_file(tmp_path: Path, capsys: Any) -> None:
    f = tmp_path / "x.json"
    f.write_text("not json")
    assert main(["certificate", "check", str(f)]) == 2  # invalid input
    assert "CertificateError" in capsys.readouterr().err


SPEC = """\
[data]
privacy_unit = "pid"

[[query]]
name = "counts"
filter = "income > 10"
group_by = ["region"]
keys = ["n", "s"]
budget = { epsilon = 0.5 }
aggregates = [{ kind = "count" }]

[[query]]
name = "sums"
budget = { epsilon = 0.5 }
aggregates = [{ kind = "sum", column = "income", bounds = [0, 100] }]
"""


def test_a_specs_combined_certificate_checks_and_is_confirmed_by_the_ledger(
        tmp_path: Path, capsys: Any) -> None:
    """Before the binding, ``certificate.json`` (query name → certificate) failed with
    ``format=None``; now each query's certificate is checked, and confirmed in the ledger."""
    import numpy as np
    import polars as pl


    rng = np.random.default_rng(0)
    pl.DataFrame({"pid": np.repeat(np.arange(100), 2), "region": rng.choice(["n", "s"], 200),
                  "income": rng.uniform(0, 100, 200)}).write_csv(tmp_path / "people.csv")
    (tmp_path / "spec.toml").write_text(SPEC)
    ledger = str(tmp_path / "ledger.sqlite")
    assert main(["budget", "init", ledger, "people", "--data", str(tmp_path / "people.csv"),
                 "--privacy-unit", "pid", "--epsilon", "2"]) == 0
    assert main(["release", str(tmp_path / "spec.toml"), "--ledger", ledger, "--dataset",
                 "people", "--out", str(tmp_path / "out")]) == 0
    combined = tmp_path / "out" / "certificate.json"
    capsys.readouterr()
    assert main(["certificate", "check", str(combined)]) == 0
    out = capsys.readouterr().out
    assert "counts: OK" in out and "sums: OK" in out and "internal consistency only" in out
    assert main(["certificate", "check", str(combined), "--ledger", ledger]) == 0
    assert main(["certificate", "check", str(tmp_path / "out" / "sums.certificate.json"),
                 "--ledger", ledger]) == 0
    doc = json.loads(combined.read_text())
    doc["sums"]["budget"]["value"] = "1/2000"  # one query's budget lowered 1000×
    combined.write_text(json.dumps(doc))
    assert main(["certificate", "check", str(combined), "--ledger", ledger]) == 1
    assert "counts: OK" in capsys.readouterr().out
