"""The engine: Session API, contribution bounding, coverage of intervals, budgets, errors."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert import errors
from dpcert.backends.base import BoundSpec
from dpcert.backends.polars import PolarsBackend
from dpcert.frame.compile import compile_transformation
from dpcert.samplers import InsecureSeededSource
from dpcert.transformations.frame import make_select_stat, per_group_change


def prefix(plan: object, budget: dp.Measure, seed: int) -> object:
    """The compiled release's data work (filter >> bound >> group_by) with a fixed key."""
    b = PolarsBackend()
    return compile_transformation(plan, budget, schema={"uid": "int", "g": "int", "x": "float",
                                                        "y": "int"},  # type: ignore[arg-type]
                                  backend=b, key=InsecureSeededSource(seed).random_uint64(2)
                                  .tobytes())


def table(n_units: int = 400, groups: int = 10, rows: int = 3, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    unit = np.repeat(np.arange(n_units), rows)
    grp = np.repeat(rng.integers(0, groups, n_units), rows)  # each unit in one group
    return pl.DataFrame({"uid": unit, "g": grp.astype(np.int64),
                         "x": rng.uniform(0, 100, unit.size), "y": rng.integers(0, 10, unit.size)})


KEYS = list(range(10))


def test_release_shape_names_and_certificate() -> None:
    df = table()
    sess = dp.Session(df, "uid", budget=dp.ZCDP(1.0), _source=InsecureSeededSource(3))
    q = (sess.query().group_by("g", keys=KEYS)
         .agg(dp.count(), dp.count_distinct(), dp.sum("x", (0, 100)), dp.mean("x", (0, 100)),
              dp.variance("x", (0, 100)), dp.quantile("x", [0.5], (0, 100)).alias("med"))
         .bound_contributions(max_groups=1, max_rows_per_group=3))
    # one row per released output: counts, sum, mean and variance with a value half-width,
    # the quantile with a rank error and a value half-width (its interval's)
    acc = q.accuracy(0.05, dp.ZCDP(0.5))
    assert acc["output"].to_list() == ["count", "count_distinct_units", "sum_x", "mean_x",
                                       "variance_x", "med"]
    assert (acc["half_width"] > 0).all() and acc["half_width"].is_nan().sum() == 0
    assert acc.filter(pl.col("output") == "med")["rank_error"][0] > 0
    res = q.release(dp.ZCDP(0.5))
    out = res.to_polars(tidy=False)
    assert out.columns[:4] == ["g", "count", "count_ci_low", "count_ci_high"]
    for name in ("count_distinct_units", "sum_x", "mean_x", "variance_x", "med"):
        assert name in out.columns and f"{name}_ci_low" in out.columns
    assert out.height == 10
    assert ((out["mean_x"] >= 0) & (out["mean_x"] <= 100)).all()
    assert ((out["med"] >= 0) & (out["med"] <= 100)).all()
    cert = res.certificate
    json.dumps(cert)
    assert Fraction(cert["release_total"]["rho"]["exact"]) <= Fraction(1, 2)
    assert Fraction(cert["session"]["spent_total"]["rho"]["exact"]) == sess.spent
    assert len(cert["measurements"]) == 11  # the median: its value and its interval's two ends


def test_intervals_cover_truth() -> None:
    """Counts and sums fall inside their 95% intervals for >= 93% of groups (seeded)."""
    df = table(n_units=2000, rows=2)
    truth = df.group_by("g").agg(pl.len().alias("n"), pl.col("x").sum().alias("s")).sort("g")
    hits = total = 0
    for seed in range(20):
        for budget in (dp.ZCDP(0.2), dp.PureDP(0.5)):
            sess = dp.Session(df, "uid", budget=budget, _source=InsecureSeededSource(seed))
            out = (sess.query().group_by("g", keys=KEYS).agg(dp.count(), dp.sum("x", (0, 100)))
                   .bound_contributions(1, 2).release(budget)).to_polars().sort("g")
            for col, tcol in (("count", "n"), ("sum_x", "s")):
                inside = ((out[f"{col}_ci_low"] <= truth[tcol]) &
                          (truth[tcol] <= out[f"{col}_ci_high"]))
                hits += int(inside.sum())
                total += inside.len()
    assert hits / total >= 0.93, hits / total


def test_unit_with_many_rows_moves_stats_within_bounds() -> None:
    """Adding a unit with 1000 rows changes exact bounded stats by at most the sensitivity.

    Base units have one row each, so bounding keeps all of them whatever the randomness (a
    coupling of the two runs); only the heavy unit is cut down.
    """
    base = table(n_units=300, rows=1)
    heavy = pl.DataFrame({"uid": np.full(1000, 10_000), "g": np.arange(1000) % 10,
                          "x": np.full(1000, 99.0), "y": np.full(1000, 9)})
    big = pl.concat([base, heavy])
    sess = dp.Session(base, "uid", budget=dp.PureDP(1.0))
    for G, R in ((1, 1), (2, 3), (3, 5)):
        q = (sess.query().group_by("g", keys=KEYS)
             .agg(dp.count(), dp.count_distinct(), dp.sum("x", (-10, 100)))
             .bound_contributions(G, R))
        plan = q.plan()
        for seed in range(3):
            pa, pb_ = prefix(plan, dp.PureDP(1.0), seed), prefix(plan, dp.PureDP(1.0), seed + 100)
            t = pa.transformation  # type: ignore[attr-defined]
            a, b = t(base.lazy()), pb_.transformation(big.lazy())  # type: ignore[attr-defined]
            d = t.map(1)
            assert d == (1, G, R, G * R)
            for spec in pa.specs.values():  # type: ignore[attr-defined]
                diff = np.abs(np.asarray(b.values[spec.name], dtype=object)
                              - np.asarray(a.values[spec.name], dtype=object))
                l1 = make_select_stat(t.output_domain, t.output_metric, spec).map(d)
                assert sum(int(x) for x in diff) <= l1, (spec.name, G, R)
                assert max(int(x) for x in diff) <= per_group_change(spec, d)
                # the bound is attained: the heavy unit uses its full allowance
                assert sum(int(x) for x in diff) >= l1 * Fraction(9, 10) or spec.kind != "count"


def test_no_privacy_unit_means_rows() -> None:
    df = table()
    sess = dp.Session(df, budget=dp.PureDP(2.0), _source=InsecureSeededSource(0))
    out = sess.query().agg(dp.count()).release(dp.PureDP(1.0)).to_polars()
    assert out.height == 1 and abs(out["count"][0] - df.height) < 60
    with pytest.raises(errors.InvalidParameter, match="privacy_unit"):
        sess.query().agg(dp.count()).bound_contributions(2, 2).release(dp.PureDP(0.1))


def test_budget_is_enforced_and_nothing_is_spent_on_errors() -> None:
    df = table()
    sess = dp.Session(df, "uid", budget=dp.PureDP(1.0))
    q = sess.query().group_by("g", keys=KEYS).agg(dp.count()).bound_contributions(1, 1)
    q.release(dp.PureDP(0.6))
    with pytest.raises(errors.BudgetExceeded, match="left"):
        q.release(dp.PureDP(0.6))
    assert sess.spent == Fraction(3, 5)
    with pytest.raises(errors.InvalidParameter, match="unknown column 'nope'"):
        sess.query().agg(dp.sum("nope", (0, 1))).bound_contributions(1, 1).release(
            dp.PureDP(0.1))
    assert sess.spent == Fraction(3, 5)
    with pytest.raises(errors.MeasureMismatch):
        q.release(dp.ZCDP(0.1))
    q.release(dp.PureDP(0.4))  # exactly exhausts the budget (exact arithmetic)
    assert sess.remaining == 0


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda s: s.query().agg(dp.sum("x", (10, 0))), errors.InvalidParameter,
         "bounds reversed"),
        (lambda s: s.query().agg(dp.count()), errors.InvalidParameter, "bound_contributions"),
        (lambda s: s.query().group_by("g").agg(dp.count()), errors.InvalidParameter, "keys"),
        (lambda s: s.query().agg(dp.count(), dp.count()).bound_contributions(),
         errors.InvalidParameter, "duplicate"),
        (lambda s: s.query().group_by("g", keys="private").agg(dp.count())
         .bound_contributions(), errors.InvalidParameter, "ApproxDP"),
        (lambda s: s.query().agg(dp.quantile("x", [1.5], (0, 1))), errors.InvalidParameter,
         "q=1.5"),
        (lambda s: s.query().agg(dp.sum("x", (0, float("nan")))), errors.InvalidParameter,
         "nan"),
    ],
)
def test_bad_queries(build: object, error: type, match: str) -> None:
    sess = dp.Session(table(), "uid", budget=dp.ZCDP(1.0))
    with pytest.raises(error, match=match):
        build(sess).release(dp.ZCDP(0.1))  # type: ignore[operator]
    assert sess.spent == 0


def test_session_argument_errors() -> None:
    with pytest.raises(errors.InvalidParameter, match="privacy_unit='who'"):
        dp.Session(table(), "who", budget=dp.ZCDP(1.0))
    with pytest.raises(errors.InvalidParameter, match="carries no amount"):
        dp.Session(table(), "uid", budget=dp.ZCDP())
    with pytest.raises(errors.InvalidParameter, match="budget="):
        dp.Session(table(), "uid", budget=1.0)  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidParameter, match="csv"):
        dp.Session("data.txt", budget=dp.ZCDP(1.0))


def test_public_keys_missing_groups_are_noisy_zeros() -> None:
    df = table()
    sess = dp.Session(df, "uid", budget=dp.ZCDP(1.0), _source=InsecureSeededSource(5))
    out = (sess.query().group_by("g", keys=[*KEYS, 99, 100]).agg(dp.count())
           .bound_contributions(1, 3).release(dp.ZCDP(0.5))).to_polars()
    assert out["g"].to_list() == [*KEYS, 99, 100]
    tail = out.filter(pl.col("g") >= 99)["count"]
    assert (tail.abs() < 30).all()


def test_private_keys_partition_selection() -> None:
    rng = np.random.default_rng(0)
    popular = pl.DataFrame({"uid": np.arange(5000), "k": rng.integers(0, 5, 5000).astype(str),
                            "x": np.ones(5000)})
    rare = pl.DataFrame({"uid": 10_000 + np.arange(50), "k": [f"rare{i}" for i in range(50)],
                         "x": np.ones(50)})
    df = pl.concat([popular, rare])
    released_rare = 0
    for seed in range(5):
        sess = dp.Session(df, "uid", budget=dp.ApproxDP(2.0, 1e-5),
                          _source=InsecureSeededSource(seed))
        res = (sess.query().group_by("k", keys="private").agg(dp.count())
               .bound_contributions(1, 1).release(dp.ApproxDP(1.0, 1e-6)))
        keys = set(res.to_polars()["k"].to_list())
        assert {"0", "1", "2", "3", "4"} <= keys
        released_rare += len(keys - {"0", "1", "2", "3", "4"})
        sel = next(m for m in res.certificate["measurements"] if m["kind"] == "select")
        assert sel["threshold"] > 10
    assert released_rare == 0


def test_quantile_is_accurate_with_large_budget() -> None:
    df = pl.DataFrame({"x": np.linspace(0, 100, 20001)})
    sess = dp.Session(df, budget=dp.PureDP(100.0), _source=InsecureSeededSource(1))
    out = sess.query().agg(dp.quantile("x", [0.1, 0.5, 0.9], (0, 100))).release(
        dp.PureDP(30.0)).to_polars()
    assert abs(out["quantile_0.5_x"][0] - 50) < 1
    assert abs(out["quantile_0.1_x"][0] - 10) < 1
    assert abs(out["quantile_0.9_x"][0] - 90) < 1


def test_filters_sql_and_expr() -> None:
    df = table()
    sess = dp.Session(df, "uid", budget=dp.PureDP(100.0), _source=InsecureSeededSource(2))
    a = (sess.query().filter("y >= 5").agg(dp.count()).bound_contributions(1, 3)
         .release(dp.PureDP(20.0))).to_polars()["count"][0]
    b = (sess.query().filter(pl.col("y") >= 5).agg(dp.count()).bound_contributions(1, 3)
         .release(dp.PureDP(20.0))).to_polars()["count"][0]
    truth = df.filter(pl.col("y") >= 5).height
    assert abs(a - truth) < 5 and abs(b - truth) < 5


@pytest.mark.parametrize("mask", [0xFFFFFFFF00000000, 0xFFFFFFFF, 0x3, 0x0])
def test_bounding_invariants_even_with_hash_collisions(
        monkeypatch: pytest.MonkeyPatch, mask: int) -> None:
    """Every unit keeps <= G groups and <= R rows per group and exactly what the bounds allow,
    also when the hashes collide (masked: units and keys are compared exactly, the hashes
    only order, so colliding units are never merged).  Runs the release's backend bounding."""
    from dpcert.backends import _hash

    for name in ("hash_series", "hash_chain"):
        real = getattr(_hash, name)
        monkeypatch.setattr(_hash, name, lambda *a, _r=real: _r(*a) & np.uint64(mask))
    rng = np.random.default_rng(3)
    n = 3000
    df = pl.DataFrame({"u": rng.integers(0, 60, n), "g": rng.integers(0, 12, n).astype(str),
                       "x": rng.uniform(0, 1, n)})
    for G, R in ((1, 1), (2, 3), (5, 2)):
        key = InsecureSeededSource(G * 10 + R).random_uint64(2).tobytes()
        out = PolarsBackend().keyed_bound(df.lazy(), BoundSpec("u", ("g",), G, R, key))
        per_pair = out.group_by("u", "g").len()
        assert per_pair["len"].max() <= R
        assert per_pair.group_by("u").len()["len"].max() <= G
        # nothing is dropped that the bounds allow to keep: every unit keeps min(G, #groups)
        # groups and min(R, #rows) rows in each kept group
        full = df.group_by("u", "g").len()
        expect = full.group_by("u").agg(
            pl.col("len").clip(upper_bound=R).sort(descending=True).head(G).sum().alias("max"),
            pl.col("len").clip(upper_bound=R).sort().head(G).sum().alias("min"))
        got = out.group_by("u").len().join(expect, on="u")
        assert ((got["len"] <= got["max"]) & (got["len"] >= got["min"])).all()
        assert got.height == df["u"].n_unique()


def test_ledger_is_charged_before_release_and_matches_certificate(tmp_path: object) -> None:
    from pathlib import Path

    from dpcert.accounting.ledger import Ledger

    path = str(Path(str(tmp_path)) / "ledger.sqlite")
    Ledger(path).create("t", dp.ZCDP(1.0))
    df = table()
    sess = dp.Session(df, "uid", budget=dp.ZCDP(1.0), ledger=path, dataset="t")
    q = sess.query().group_by("g", keys=KEYS).agg(dp.count()).bound_contributions(1, 1)
    res = q.release(dp.ZCDP(0.6))
    ledger = Ledger(path)
    assert ledger.remaining("t") == 1 - Fraction(res.certificate["release_total"]["rho"]["exact"])
    assert res.certificate["ledger"]["remaining"]["rho"]["exact"] == str(ledger.remaining("t"))
    # a second session on the same ledger (another process, say) cannot overspend it
    other = dp.Session(df, "uid", budget=dp.ZCDP(1.0), ledger=path, dataset="t")
    q2 = other.query().group_by("g", keys=KEYS).agg(dp.count()).bound_contributions(1, 1)
    with pytest.raises(errors.BudgetExceeded, match="remaining"):
        q2.release(dp.ZCDP(0.6))
    assert other.spent == 0 and len(ledger.history("t")) == 1


def test_partwise_bounding_equals_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large tables are bounded in unit-disjoint parts; the exact statistics are the same."""
    from dpcert.backends import polars as pb

    rng = np.random.default_rng(11)
    n = 5000
    df = pl.DataFrame({"uid": np.arange(n), "g": rng.integers(0, 7, n),
                       "x": rng.uniform(-5, 50, n), "y": np.zeros(n, dtype=np.int64)})
    sess = dp.Session(df, "uid", budget=dp.ZCDP(1.0))
    q = (sess.query().group_by("g", keys=list(range(7)))
         .agg(dp.count(), dp.count_distinct(), dp.sum("x", (0, 40)), dp.mean("x", (0, 40)),
              dp.quantile("x", [0.5], (0, 40)))
         .bound_contributions(1, 1))
    t = prefix(q.plan(), dp.ZCDP(0.5), 1).transformation  # type: ignore[attr-defined]
    whole = t(df.lazy())
    monkeypatch.setattr(pb, "_PART_ROWS", 256)  # forces 2 * ceil(5000 / 256) = 40 parts
    parts = t(df.lazy())
    assert parts.keys == whole.keys
    for name, v in whole.values.items():
        assert np.array_equal(np.asarray(parts.values[name]), np.asarray(v)), name


def test_weights_split_the_budget_proportionally() -> None:
    sess = dp.Session(table(), "uid", budget=dp.PureDP(1.0))
    q = (sess.query().group_by("g", keys=KEYS)
         .agg(dp.count(), dp.count_distinct().weighted(3)).bound_contributions(1, 2))
    pre = prefix(q.plan(), dp.PureDP(1.0), 0)
    assert pre.shares == {"count": Fraction(1, 4), "units": Fraction(3, 4)}  # type: ignore
    assert q.measurement(dp.PureDP(1.0)).map(1) == 1
    acc = q.accuracy(0.05, dp.PureDP(1.0))
    hw = dict(zip(acc["output"].to_list(), acc["half_width"].to_list(), strict=True))
    assert hw["count_distinct_units"] < hw["count"] / 5  # 3x the share, half the sensitivity
    zq = (sess.query().group_by("g", keys=KEYS).agg(dp.mean("x", (0, 100)).weighted(0.5),
                                                    dp.count()).bound_contributions(1, 1))
    assert zq.measurement(dp.ZCDP(0.4)).map(1) <= Fraction(2, 5)
    with pytest.raises(errors.InvalidParameter, match="weight=0"):
        dp.count().weighted(0)


def test_public_keys_of_the_wrong_type_fail_before_spending() -> None:
    sess = dp.Session(table(), "uid", budget=dp.ZCDP(1.0))
    q = sess.query().group_by("g", keys=["north", "south"]).agg(dp.count()).bound_contributions()
    with pytest.raises(errors.OutOfDomain, match="public keys"):
        q.release(dp.ZCDP(0.5))
    assert sess.spent == 0


@pytest.mark.parametrize("bad", ["nope >= 3", pl.col("nope") >= 3])
def test_bad_filters_fail_before_spending(bad: object) -> None:
    sess = dp.Session(table(), "uid", budget=dp.ZCDP(1.0))
    q = sess.query().filter(bad).agg(dp.count()).bound_contributions()
    with pytest.raises(errors.UnsafeExpression, match="unknown column 'nope'"):
        q.release(dp.ZCDP(0.5))
    assert sess.spent == 0


def test_release_charges_exactly_the_compiled_map(tmp_path: Path) -> None:
    """Issue 13: ``release()`` charges exactly ``q.measurement(budget).map(1)`` (session and
    ledger), never the budget it was given, and the certificate records that amount."""
    from dpcert.accounting.ledger import Ledger

    path = str(tmp_path / "l.db")
    Ledger(path).create("t", dp.ZCDP(10))
    sess = dp.Session(table(), "uid", budget=dp.ZCDP(10), ledger=path, dataset="t",
                      _source=InsecureSeededSource(5))
    q = (sess.query().group_by("g", keys=KEYS)
         .agg(dp.count(), dp.mean("x", (0, 100)), dp.quantile("x", [0.5], (0, 100)))
         .bound_contributions(2, 3))
    budget = dp.ZCDP(Fraction(7, 3))  # the quantile's ε rounds down: map < budget
    compiled = q.measurement(budget).map(1)
    assert compiled < Fraction(7, 3)  # so charging the budget would fail below
    assert q.cost(budget)["basic"] == compiled
    res = q.release(budget)
    assert sess.spent == compiled and sess.basic_spent == compiled
    assert Ledger(path).remaining("t") == 10 - compiled
    assert res.certificate["charged_exact"] == str(compiled)
    steps = [s["constructor"] for s in res.certificate["steps"]]
    assert steps[:2] == ["admit", "bound_contributions"]
    batch = [(q, dp.ZCDP(Fraction(1, 2))), (q, dp.ZCDP(Fraction(1, 3)))]
    expect = sum((q.measurement(b).map(1) for _, b in batch), Fraction(0))
    sess.release_all(batch)
    assert sess.basic_spent == compiled + expect


def test_a_release_over_the_session_budget_charges_nothing_anywhere(tmp_path: Path) -> None:
    """The session's own limit is checked before the ledger is charged: a session budget
    smaller than the ledger's refuses the release and leaves the ledger untouched."""
    from dpcert.accounting.ledger import Ledger
    from dpcert.frame.ledger import BudgetMismatchWarning

    path = str(tmp_path / "l.db")
    Ledger(path).create("t", dp.ZCDP(10))
    with pytest.warns(BudgetMismatchWarning):
        sess = dp.Session(table(), "uid", budget=dp.ZCDP(1), ledger=path, dataset="t")
    q = sess.query().group_by("g", keys=KEYS).agg(dp.count()).bound_contributions(1, 1)
    q.release(dp.ZCDP(Fraction(3, 4)))
    first = sess.spent
    assert Fraction(7, 10) < first <= Fraction(3, 4)
    with pytest.raises(errors.BudgetExceeded):
        q.release(dp.ZCDP(Fraction(1, 2)))
    assert sess.spent == first
    assert Ledger(path).remaining("t") == 10 - first
    assert len(Ledger(path).history("t")) == 1


def test_each_certificate_shows_the_running_session_total_by_hand() -> None:
    """Three releases of a grouped count (G = 2, R = 3: Laplace scale G·R/ε, so each charge is
    exactly the asked ε): every certificate's session total is the sum of the charges so far,
    its release total and charge are that release's own, and all equal the session's numbers."""
    sess = dp.Session(table(), "uid", budget=dp.PureDP(1), _source=InsecureSeededSource(4))
    q = sess.query().group_by("g", keys=KEYS).agg(dp.count()).bound_contributions(2, 3)
    running = Fraction(0)
    for eps in (Fraction(1, 4), Fraction(1, 8), Fraction(1, 2)):
        c = q.release(dp.PureDP(eps)).certificate
        running += eps
        assert Fraction(c["measurements"][0]["scale"]) == Fraction(2 * 3) / eps
        assert Fraction(c["charged_exact"]) == eps
        assert Fraction(c["release_total"]["epsilon"]["exact"]) == eps
        assert Fraction(c["session"]["spent_total"]["epsilon"]["exact"]) == running
        assert sess.spent == running
    assert running == Fraction(7, 8) and sess.remaining == Fraction(1, 8)


@pytest.mark.parametrize("budget", [dp.PureDP(1), dp.ApproxDP(Fraction(1, 2), Fraction(1, 10**6)),
                                    dp.ZCDP(Fraction(1, 2))])
def test_released_noise_scales_by_hand(budget: dp.Measure) -> None:
    """A released grouped count and sum (weights 1 : 3, G = 2 groups and R = 3 rows per unit,
    sum on [0, 100]): the certificate's per-statistic noise is the hand-computed calibration --
    Laplace scale = sensitivity / (ε·w/W) with L1 sensitivities G·R and G·R·100; Gaussian
    σ = sensitivity / √(2ρ·w/W) with L2 sensitivities √G·R and √G·R·100 (rounded up only) --
    and the session is charged exactly the compiled map, within the budget.  (The same numbers
    are checked on the compiled plan in ``test_compile.py``; this is the release path.)"""
    G, R = 2, 3
    sess = dp.Session(table(), "uid", budget=budget, _source=InsecureSeededSource(6))
    q = (sess.query().group_by("g", keys=KEYS)
         .agg(dp.count(), dp.sum("x", (0, 100)).weighted(3)).bound_contributions(G, R))
    c = q.release(budget).certificate
    scales = {x["statistic"]: Fraction(x["scale"]) for x in c["measurements"]}
    assert len(scales) == 2
    (count_key,) = [k for k in scales if k == "count"]
    (sum_key,) = [k for k in scales if k != "count"]
    if isinstance(budget, dp.ApproxDP):  # public keys: Laplace noise, no δ spent
        total = Fraction(budget.require_value()[0])
        assert scales[count_key] == Fraction(G * R) / (total / 4)
        assert scales[sum_key] == Fraction(G * R * 100) / (total * 3 / 4)
        assert sess.spent == tuple(Fraction(v) for v in c["charged_exact"]) == (total, 0)
        return
    total = Fraction(budget.require_value())
    if isinstance(budget, dp.PureDP):
        assert scales[count_key] == Fraction(G * R) / (total / 4)
        assert scales[sum_key] == Fraction(G * R * 100) / (total * 3 / 4)
        assert sess.spent == Fraction(c["charged_exact"]) == total
        return
    for key, l2, share in ((count_key, G**0.5 * R, Fraction(1, 4)),
                           (sum_key, G**0.5 * R * 100, Fraction(3, 4))):
        sigma = l2 / (2 * float(total * share)) ** 0.5
        assert sigma <= float(scales[key]) <= sigma * (1 + 1e-9), key
    assert sess.spent == Fraction(c["charged_exact"]) <= total
    assert float(sess.spent) >= float(total) * (1 - 1e-9)


@pytest.mark.parametrize("bare", [0.1, 1, Fraction(1, 2)])
def test_a_bare_number_budget_is_refused_with_the_fix(bare: object) -> None:
    sess = dp.Session(table(20), "uid", budget=dp.PureDP(1.0))
    q = sess.query().agg(dp.count()).bound_contributions(1, 1)
    for call in (lambda: q.release(bare), lambda: q.release(budget=bare),  # type: ignore
                 lambda: q.cost(bare), lambda: q.accuracy(0.05, bare),  # type: ignore
                 lambda: sess.release_all([(q, bare)]),
                 lambda: dp.Session(table(20), "uid", budget=bare)):  # type: ignore
        with pytest.raises(errors.InvalidParameter, match=r"bare number.*dp\.PureDP\("):
            call()
    assert sess.spent == 0


def test_a_batch_name_that_is_not_text_is_refused_before_the_charge() -> None:
    sess = dp.Session(table(20), "uid", budget=dp.PureDP(1.0))
    q = sess.query().agg(dp.count()).bound_contributions(1, 1)
    with pytest.raises(errors.InvalidParameter, match=r"name=5 must be a string"):
        sess.release_all([(q, dp.PureDP(0.1), "first"), (q, dp.PureDP(0.1), 5)])  # type: ignore
    assert sess.spent == 0


def test_reprs_show_decimals_and_spent_stays_exact(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    sess = dp.Session(table(20), "uid", budget=dp.PureDP(1.0))
    q = sess.query().agg(dp.count()).bound_contributions(1, 1)
    with caplog.at_level(logging.INFO, logger="dpcert"):
        rel = q.release(dp.PureDP(0.4))
    assert sess.spent == Fraction(2, 5)  # exact, for arithmetic
    assert sess.spent_summary == "spent ε = 0.4, left ε = 0.6"
    assert repr(sess) == ("Session(privacy_unit='uid', budget=PureDP(1.0), spent ε = 0.4, "
                          "left ε = 0.6, releases=1)")
    assert repr(rel).startswith("Release(1 rows x 3 columns") and "PureDP ε = 0.4" in repr(rel)
    assert "2/5" not in repr(sess) + repr(rel)
    recs = [r for r in caplog.records if r.name == "dpcert.frame.session"]
    assert recs and "charged ε = 0.4" in recs[-1].getMessage()
    assert not logging.getLogger("dpcert").handlers  # the library adds no handlers
