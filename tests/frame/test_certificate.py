"""``dpcert.frame.certificate.release_certificate``: the totals a release's certificate shows
are the session's and the ledger's own numbers, not the release's or the asked budget."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert.accounting.ledger import Ledger
from dpcert.frame.ledger import BudgetMismatchWarning
from dpcert.samplers import InsecureSeededSource


def _table() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    n = 300
    return pl.DataFrame({"uid": np.arange(n), "g": rng.integers(0, 4, n),
                         "x": rng.uniform(0, 50, n)})


def test_certificate_totals_equal_the_session_and_the_ledger(tmp_path: Path) -> None:
    path = str(tmp_path / "l.sqlite")
    led = Ledger(path)
    led.create("t", dp.ZCDP(10))
    led.spend("t", dp.ZCDP(Fraction(3, 2)), note="an earlier release by someone else")
    with pytest.warns(BudgetMismatchWarning):  # session budget 5 < ledger total 10
        sess = dp.Session(_table(), "uid", budget=dp.ZCDP(5), ledger=path, dataset="t",
                          _source=InsecureSeededSource(1))
    q = (sess.query().group_by("g", keys=[0, 1, 2, 3])
         .agg(dp.count(), dp.quantile("x", [0.5], (0, 50))).bound_contributions(1, 2))
    b1, b2 = dp.ZCDP(Fraction(7, 3)), dp.ZCDP(Fraction(1, 2))
    m1, m2 = q.measurement(b1).map(1), q.measurement(b2).map(1)
    assert m1 < Fraction(7, 3)  # the quantile's ε rounds down: the charge is below the budget
    r1 = q.release(b1)
    r2 = q.release(b2)
    for r, m, spent in ((r1, m1, m1), (r2, m2, m1 + m2)):
        c = r.certificate
        assert Fraction(c["release_total"]["rho"]["exact"]) == m
        assert Fraction(c["charged_exact"]) == m
        assert Fraction(c["session"]["spent_total"]["rho"]["exact"]) == spent
        ledger_left = 10 - Fraction(3, 2) - spent
        assert Fraction(c["ledger"]["remaining"]["rho"]["exact"]) == ledger_left
        assert c["ledger"]["charges"] == 1 + (1 if r is r1 else 2)
    assert Ledger(path).remaining("t") == 10 - Fraction(3, 2) - m1 - m2
    assert sess.spent == m1 + m2 and sess.basic_spent == m1 + m2
    assert r2.certificate["ledger"]["chain_head"] == Ledger(path).head("t")[0]


@pytest.mark.parametrize("budget", [dp.PureDP(Fraction(1, 2)), dp.ZCDP(Fraction(1, 3))])
def test_a_real_release_certificate_checks_and_a_shortened_one_does_not(budget: Any) -> None:
    """The certificate a release hands out re-derives (``dpcert.frame.certify``) to exactly the
    charge the session took (charged == compiled map ≤ budget); dropping a step -- the last
    (the noise), the first (the contribution bound) or one in the middle -- or adding one
    makes it fail, although every step left is intact."""
    from dpcert.frame.certify import check_certificate

    sess = dp.Session(_table(), "uid", budget=dp.PureDP(1) if isinstance(budget, dp.PureDP)
                      else dp.ZCDP(1), _source=InsecureSeededSource(2))
    q = (sess.query().group_by("g", keys=[0, 1, 2, 3])
         .agg(dp.count(), dp.sum("x", (0, 50))).bound_contributions(1, 2))
    cert = json.loads(json.dumps(q.release(budget).certificate))
    res = check_certificate(cert)
    assert res.ok, res.messages
    assert res.charged == sess.spent == Fraction(cert["charged_exact"])
    assert budget.compare(res.charged, budget.require_value())
    steps = cert["steps"]
    assert len(steps) >= 3
    for cut in (steps[:-1], steps[1:], steps[:1] + steps[2:], [*steps, steps[-1]]):
        bad = check_certificate(dict(cert, steps=cut))
        assert not bad.ok, len(cut)
