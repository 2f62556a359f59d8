"""Continual release in the engine: batch and online give the same series, the stream is charged
once (session and ledger), bounding is per unit over the whole stream (stability ≤ R), and every
check runs before the charge (docs/proofs/continual.md, *In the engine*)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert.errors import BudgetExceeded, InvalidParameter, MeasureMismatch, OutOfDomain
from dpcert.frame.continual import _bounded_counts
from dpcert.mechanisms._continual_tree import tree_levels
from dpcert.samplers import InsecureSeededSource

DAYS = [1, 2, 3, 4, 5]
KEYS = ["n", "s"]


def _table(seed: int = 0, units: int = 30) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = units * 4
    return pl.DataFrame({"pid": rng.integers(0, units, n), "day": rng.integers(1, 6, n),
                         "region": rng.choice(["n", "s", "w"], n)})


def _session(df: pl.DataFrame, seed: int = 5, **kw: Any) -> dp.Session:
    return dp.Session(df, "pid", budget=dp.ZCDP(2), _source=InsecureSeededSource(seed), **kw)


def _query(sess: dp.Session, method: str = "tree", r: int = 3) -> Any:
    return sess.continual("day", DAYS, by="region", keys=KEYS, max_contributions=r,
                          method=method)


@pytest.mark.parametrize("method", ["tree", "factorization", "streaming"])
def test_online_equals_batch_and_is_charged_once(method: str) -> None:
    df = _table()
    a, b = _session(df), _session(df)
    batch = _query(a, method).release(dp.ZCDP(1))
    stream = _query(b, method).open(dp.ZCDP(1))
    spent = b.spent
    assert spent == a.spent and 0 < spent <= 1
    parts = [stream.append(df.filter(pl.col("day") == d)) for d in DAYS]
    assert b.spent == spent  # nothing more charged per period
    online = pl.concat(parts).sort("region", "day")
    assert online.columns == batch.table.columns
    np.testing.assert_allclose(online["running_total"].to_numpy(),
                               batch.table.sort("region", "day")["running_total"].to_numpy(),
                               rtol=0, atol=1e-9)
    with pytest.raises(InvalidParameter, match="all 5 periods"):
        stream.append(df)
    cert = stream.certificate
    assert cert["mode"] == "online" and cert["periods"] == 5 and cert["groups"] == 2
    assert Fraction(cert["privacy"]["charged"]) == spent


def test_ledger_records_one_charge_for_the_stream(tmp_path: Path) -> None:
    from dpcert.accounting.ledger import Ledger

    path = str(tmp_path / "ledger.sqlite")
    Ledger(path).create("t", dp.PureDP(3))
    df = _table()
    sess = dp.Session(df, "pid", budget=dp.PureDP(3), ledger=path, dataset="t")
    stream = _query(sess).open(dp.PureDP(1), name="daily cases")
    for d in DAYS:
        stream.append(df.filter(pl.col("day") == d))
    hist = Ledger(path).history("t")
    assert len(hist) == 1 and "online stream: daily cases" in (hist[0].note or "")
    assert Ledger(path).remaining("t") == 2  # ε = 1 exactly (Laplace scale solved exactly)
    assert stream.certificate["ledger"]["charges"] == 1


def test_bounding_keeps_at_most_r_rows_per_unit_over_the_stream() -> None:
    df = _table(3)
    sess = _session(df)
    q = _query(sess, r=2)
    counts = _bounded_counts(q, df.lazy(), None, None, 7)
    inside = df.filter(pl.col("region").is_in(KEYS) & pl.col("day").is_in(DAYS))
    per_unit = inside.group_by("pid").len()
    assert counts["n"].sum() == per_unit["len"].clip(upper_bound=2).sum()
    # online bounding, period by period, keeps the same rows
    used = pl.DataFrame()
    total = []
    for t, d in enumerate(DAYS):
        c, used = _bounded_counts(q, df.filter(pl.col("day") == d).lazy(), t, used, 7)
        total.append(c)
    online = pl.concat(total).sort("g", "t")
    assert online.equals(counts.sort("g", "t").select(online.columns))


def _cells(q: Any, df: pl.DataFrame) -> np.ndarray:
    c = _bounded_counts(q, df.lazy(), None, None, 7)
    x = np.zeros((2, 5), dtype=np.int64)
    np.add.at(x, (c["g"].to_numpy(), c["t"].to_numpy()), c["n"].to_numpy())
    return x


def test_adding_one_unit_moves_the_counts_by_at_most_r() -> None:
    df = _table(4)
    q = _query(_session(df), r=3)
    base = _cells(q, df)
    rng = np.random.default_rng(2)
    for _ in range(10):
        k = int(rng.integers(1, 9))
        extra = pl.DataFrame({"pid": [999] * k, "day": rng.integers(1, 6, k),
                              "region": rng.choice(["n", "s"], k)})
        moved = np.abs(_cells(q, pl.concat([df, extra])) - base).sum()
        assert moved <= 3
        assert moved == min(k, 3)
    # a unit with 2 rows on each day: bounded over the stream it moves the counts by 3; a
    # wrong rule bounding per period (3 rows a day) would move them by 10 > R
    heavy = pl.DataFrame({"pid": [999] * 10, "day": DAYS * 2, "region": ["n"] * 10})
    assert np.abs(_cells(q, pl.concat([df, heavy])) - base).sum() == 3
    per_period_rule = sum(min(3, int((heavy["day"] == d).sum())) for d in DAYS)
    assert per_period_rule == 10


def test_checks_run_before_any_charge() -> None:
    df = _table()
    sess = _session(df)
    with pytest.raises(InvalidParameter, match="method='matrix'"):
        _query(sess, "matrix")
    with pytest.raises(InvalidParameter, match="not in the data"):
        sess.continual("week", DAYS)
    with pytest.raises(InvalidParameter, match="periods="):
        sess.continual("day", [])
    with pytest.raises(OutOfDomain, match="public key"):
        sess.continual("day", ["mon"])
    with pytest.raises(InvalidParameter, match="needs keys"):
        sess.continual("day", DAYS, by="region")
    with pytest.raises(InvalidParameter, match="max_contributions"):
        sess.continual("day", DAYS, max_contributions=0)
    q = _query(sess)
    with pytest.raises(MeasureMismatch, match="expected ZCDP, got PureDP"):
        q.release(dp.PureDP(1))
    with pytest.raises(BudgetExceeded, match="left"):
        q.release(dp.ZCDP(3))
    assert sess.spent == 0
    unitless = dp.Session(df, None, budget=dp.ZCDP(1))
    with pytest.raises(InvalidParameter, match="privacy_unit"):
        unitless.continual("day", DAYS)


def test_release_table_and_standard_errors() -> None:
    df = _table()
    sess = _session(df)
    rel = _query(sess, "factorization").release(dp.ZCDP(1))
    t = rel.to_polars()
    assert t.height == 10 and t["region"].to_list() == ["n"] * 5 + ["s"] * 5
    assert t["day"].to_list() == DAYS * 2
    per = t.filter(pl.col("region") == "n")
    np.testing.assert_allclose(per["count"].cum_sum().to_numpy(),
                               per["running_total"].to_numpy(), atol=1e-9)
    se = per["running_total_se"].to_numpy()
    assert (np.diff(se) >= 0).all() and se[0] > 0
    assert (per["running_total_ci_low"] < per["running_total"]).all()
    assert (per["running_total"] < per["running_total_ci_high"]).all()
    assert rel.certificate["neighbours"].startswith("add or remove one privacy unit")


def test_integer_sums_are_clipped_and_charged_for_r_times_the_bound() -> None:
    df = _table(5).with_columns(pl.Series("cases", np.arange(120) % 9 - 2))
    sess = _session(df)
    q = sess.continual("day", DAYS, by="region", keys=KEYS, max_contributions=2,
                       value="cases", bounds=(-1, 4))
    assert q.sensitivity == 8 and q.statistic == "sum"
    counts = _bounded_counts(q, df.lazy(), None, None, 7)
    kept = (df.filter(pl.col("region").is_in(KEYS))
            .with_columns(pl.col("cases").clip(-1, 4)))
    assert counts["n"].sum() <= kept.group_by("pid").agg(
        pl.col("cases").clip(0, None).sort(descending=True).head(2).sum())["cases"].sum()
    rel = q.release(dp.ZCDP(1))
    assert "sum" in rel.table.columns and rel.certificate["mechanism"]["sensitivity_l1"] == 8
    pure = dp.Session(df, "pid", budget=dp.PureDP(2)).continual(
        "day", DAYS, max_contributions=2, value="cases", bounds=(-1, 4))
    assert pure.cost(dp.PureDP(1)) == 1
    assert pure.plan(dp.PureDP(1)).scale == 8 * tree_levels(5)
    with pytest.raises(InvalidParameter, match="needs bounds"):
        sess.continual("day", DAYS, value="cases")
    with pytest.raises(InvalidParameter, match="integer column"):
        dp.Session(df.with_columns(pl.col("cases").cast(pl.Float64)), "pid",
                   budget=dp.ZCDP(1)).continual("day", DAYS, value="cases", bounds=(0, 3))


def test_smoothed_batch_costs_the_same_and_has_smaller_errors() -> None:
    df = _table()
    a, b = _session(df), _session(df)
    plain = _query(a).release(dp.ZCDP(1))
    smooth = _query(b).release(dp.ZCDP(1), smooth=True)
    assert a.spent == b.spent and smooth.certificate["mechanism"]["smooth"] is True
    se_plain = plain.table["running_total_se"].to_numpy()
    se_smooth = smooth.table["running_total_se"].to_numpy()
    assert (se_smooth <= se_plain + 1e-12).all() and se_smooth.sum() < se_plain.sum()
    with pytest.raises(InvalidParameter, match="smooth=True applies"):
        _query(a, "factorization").release(dp.ZCDP(0.5), smooth=True)
    assert a.spent == b.spent  # refused before the charge


def test_approx_dp_sessions_spend_epsilon_with_zero_delta() -> None:
    df = _table()
    sess = dp.Session(df, "pid", budget=dp.ApproxDP(2, 1e-6))
    rel = _query(sess).release(dp.ApproxDP(1, 1e-7))
    assert sess.spent == (1, 0) and rel.certificate["mechanism"]["noise"] == "laplace"


@pytest.mark.parametrize("budget", [dp.PureDP(1), dp.ZCDP(Fraction(1, 2))])
def test_streaming_charge_pays_rounding_per_group_and_fits(budget: Any) -> None:
    df = _table()
    sess = dp.Session(df, "pid", budget=type(budget)(5))
    q = _query(sess, "streaming", r=3)
    plan = q.plan(budget)
    total = q.cost(budget)
    assert total <= budget.require_value()
    one = plan.epsilon(Fraction(3)) if plan.noise == "laplace" else plan.rho(Fraction(3))
    assert one < total  # two groups: the rounding term is paid twice
    assert total > budget.require_value() * (1 - Fraction(1, 10**6))  # and little is wasted
