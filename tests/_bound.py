"""A real release charged to a ledger, and its certificate as a checker reads it (JSON), shared
by the certificate tests (imported as a top-level module, like ``_strategies``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import dpcert as dp
from dpcert.accounting.ledger import Ledger
from dpcert.frame.certify import compiled_certificate, plan_from_json
from dpcert.frame.compile import compile_plan
from dpcert.samplers import InsecureSeededSource


def table() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    n = 200
    return pl.DataFrame({"uid": np.arange(n), "g": rng.integers(0, 4, n),
                         "x": rng.uniform(0, 50, n)})


def released(tmp: Path, budget: Any = None) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    """``(certificate, ledger path, [certificates of a two-query batch])``: one release, then
    a batch, both charged to ledger dataset ``people`` (total ε = 4)."""
    path = str(tmp / "ledger.sqlite")
    Ledger(path).create("people", dp.PureDP(4))
    sess = dp.Session(table(), "uid", budget=dp.PureDP(4), ledger=path, dataset="people",
                      _source=InsecureSeededSource(5))
    q = (sess.query().filter("x > 3").filter(pl.col("x") < 45)
         .group_by("g", keys=[0, 1, 2, 3]).agg(dp.count(), dp.sum("x", (0, 50)))
         .bound_contributions(1, 2))
    cert = q.release(budget or dp.PureDP(1)).certificate
    batch = sess.release_all([(q, dp.PureDP(Fraction(1, 4)), "a"),
                              (q, dp.PureDP(Fraction(1, 4)), "b")])
    return (json.loads(json.dumps(cert)), path,
            [json.loads(json.dumps(r.certificate)) for r in batch])


def recorded_admission(cert: dict[str, Any], plan: Any) -> Any:
    """The admission a release certificate records (its ``admit`` step), as a forger rebuilds
    it with the library's own function."""
    from dpcert.frame.admit import admission_from_json

    step = next(s for s in cert["steps"] if s["constructor"] == "admit")
    return admission_from_json(step["params"]["columns"], plan, cert["schema"])


def lowered_budget(cert: dict[str, Any], factor: int = 1000) -> dict[str, Any]:
    """The issue's forgery: the budget divided by ``factor`` and the compiled part (plan,
    schema, budget, charged amount, steps) regenerated with the public helper."""
    plan = plan_from_json(cert["plan"])
    budget = dp.PureDP(Fraction(cert["budget"]["value"]) / factor)
    m = compile_plan(plan, budget, schema=cert["schema"], backend=None,
                     admission=recorded_admission(cert, plan))
    forged = dict(cert)
    forged.update(compiled_certificate(m, plan, budget, cert["schema"]))
    forged["plan"] = cert["plan"]  # the helper drops the filters: keep the recorded ones
    return forged


def edit(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """An edit setting the field at dotted ``path`` (list indices as numbers) to ``value``."""

    def apply(c: dict[str, Any]) -> None:
        *head, last = path.split(".")
        d: Any = c
        for k in head:
            d = d[int(k)] if isinstance(d, list) else d[k]
        if isinstance(d, list):
            d[int(last)] = value
        else:
            d[last] = value
    return apply


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "charged": edit("charged.epsilon.exact", "1/1000"),
    "release_total": edit("release_total.epsilon.exact", "1/1000"),
    "contribution_bounds": edit("contribution_bounds.max_rows_per_group", 1),
    "privacy_unit": edit("privacy_unit", "row"),
    "measurements.scale": edit("measurements.0.scale", "2000"),
    "session": edit("session.spent_total", dp.PureDP().to_json(Fraction(2))),
    "session.budget": lambda c: c["session"].update(
        budget="PureDP(1000.0)", budget_exact={"measure": "PureDP", "value": "1000"}),
    "ledger.remaining": edit("ledger.remaining", dp.PureDP().to_json(Fraction(4))),
    "ledger.chain_head": edit("ledger.chain_head", "0" * 64),
    "ledger.dataset": edit("ledger.dataset", "people-again"),
    "ledger": edit("ledger", None),
    "binding.dataset": edit("binding.dataset", "people-again"),
}
