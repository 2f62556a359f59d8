"""Sessions and `dpcert release` charge events: a declared batch is costed by the PLD."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

import dpcert as dp
from dpcert.accounting import DiscreteLaplaceEvent, PLDAccountant
from dpcert.accounting.ledger import Ledger
from dpcert.errors import BudgetExceeded
from dpcert.samplers import InsecureSeededSource

DF = pl.DataFrame({"region": ["n", "s", "n", "s", "n"], "income": [1.0, 2.0, 3.0, 4.0, 5.0]})


def _session(tmp_path: Path, budget: dp.core.measures.Measure,
             rule: str = "auto") -> dp.Session:
    path = str(tmp_path / "l.sqlite")
    Ledger(path).create("d", budget, rule=rule)
    return dp.Session(DF, budget=budget, ledger=path, dataset="d", rule=rule,
                      _source=InsecureSeededSource(1))


def test_release_all_charges_one_batch_by_the_pld(tmp_path: Path) -> None:
    sess = _session(tmp_path, dp.ApproxDP(3, 1e-6))
    q = sess.query().agg(dp.count())
    items = [(q, dp.ApproxDP(0.1, 0), f"count{i}") for i in range(40)]
    quote = q.cost(dp.ApproxDP(0.1, 0))
    assert quote["basic"] == (Fraction(1, 10), Fraction(0)) and quote["session"]["fits"]
    rels = sess.release_all(items)
    assert len(rels) == 40 and rels[0].to_polars().height == 1
    exact = PLDAccountant().compose(DiscreteLaplaceEvent(10, 1), 40).epsilon(1e-6)
    for spent in (sess.spent, Ledger(str(tmp_path / "l.sqlite")).status("d").spent):
        assert spent[1] == Fraction(1, 10**6)
        assert exact - 1e-9 <= float(spent[0]) <= exact + 1e-6 < 4  # basic would be 4
    assert sess.basic_spent == (Fraction(4), Fraction(0))
    (charge,) = Ledger(str(tmp_path / "l.sqlite")).history("d")
    assert charge.batch and charge.note is not None and charge.note.startswith(
        "release batch: count0; count1")


def test_one_by_one_is_basic_and_refused_when_over(tmp_path: Path) -> None:
    sess = _session(tmp_path, dp.ApproxDP(0.25, 1e-6), rule="basic")
    q = sess.query().agg(dp.count())
    q.release(dp.ApproxDP(0.1, 0), name="people")
    q.release(dp.ApproxDP(0.1, 0))
    assert sess.spent == (Fraction(1, 5), Fraction(0))
    with pytest.raises(BudgetExceeded):
        q.release(dp.ApproxDP(0.1, 0))
    hist = Ledger(str(tmp_path / "l.sqlite")).history("d")
    assert [h.note for h in hist] == ["release people", "release count"]
    assert all(h.event is not None and not h.legacy for h in hist)


def test_zcdp_session_events_carry_rho(tmp_path: Path) -> None:
    sess = _session(tmp_path, dp.ZCDP(1))
    q = sess.query().group_by("region", keys=["n", "s"]).agg(dp.count(),
                                                             dp.sum("income", bounds=(0, 10)))
    q.release(dp.ZCDP(Fraction(1, 4)))
    (h,) = Ledger(str(tmp_path / "l.sqlite")).history("d")
    assert sess.spent == h.amount and float(sess.spent) <= 0.25
    assert dp.accounting.ZCDPAccountant().compose(h.event).rho == h.amount


def test_a_session_limit_below_the_ledgers_refuses_before_the_ledger_is_charged(
        tmp_path: Path) -> None:
    """Replay the ledger against the session: a session whose own budget is smaller than the
    ledger's refuses the release that would overspend *it* -- and the ledger, replayed charge
    by charge, holds exactly the releases the session admitted (nothing for the refused one,
    although the ledger alone could pay for it)."""
    import warnings

    from dpcert.frame.ledger import BudgetMismatchWarning

    path = str(tmp_path / "l.sqlite")
    Ledger(path).create("d", dp.PureDP(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetMismatchWarning)  # 1/4 < the ledger's 1
        sess = dp.Session(DF, budget=dp.PureDP(Fraction(1, 4)), ledger=path, dataset="d",
                          _source=InsecureSeededSource(2))
    q = sess.query().agg(dp.count())
    admitted = []
    for eps in (Fraction(1, 10), Fraction(1, 10), Fraction(1, 10), Fraction(1, 20)):
        try:
            q.release(dp.PureDP(eps))
            admitted.append(eps)
        except BudgetExceeded:
            pass
    assert admitted == [Fraction(1, 10), Fraction(1, 10), Fraction(1, 20)]  # the third: 3/10
    history = Ledger(path).history("d")
    assert [s.amount for s in history] == admitted
    assert sess.spent == sum(admitted) == Fraction(1, 4)
    assert Ledger(path).remaining("d") == 1 - sum(admitted)


def test_the_session_rule_is_named_by_query_cost(tmp_path: Path) -> None:
    for rule, used in (("auto", "renyi"), ("basic", "approx")):
        sess = dp.Session(DF, budget=dp.ApproxDP(5, 1e-6), rule=rule,
                          _source=InsecureSeededSource(1))
        q = sess.query().agg(dp.count())
        cost = q.cost(dp.ApproxDP(Fraction(1, 10), 0))
        assert cost["session"]["rule"] == used and cost["session"]["fits"]
        q.release(dp.ApproxDP(Fraction(1, 10), 0))
        assert sess._filter.rule == used
    with pytest.raises(dp.errors.InvalidParameter, match="rule='gdp'"):
        dp.Session(DF, budget=dp.PureDP(1), rule="gdp")
