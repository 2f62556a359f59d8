"""Releases with bounds chosen privately (dpcert.frame.autobounds; proof:
docs/proofs/frame_autobounds.md)."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert.backends.polars import PolarsBackend
from dpcert.core.trace import trace
from dpcert.errors import BackendUnavailable, InvalidParameter
from dpcert.frame.autobounds import candidates_of, split_auto
from dpcert.frame.certify import check_certificate
from dpcert.frame.compile import compile_plan
from dpcert.frame.plan import Count, QueryPlan, Sum
from dpcert.samplers import InsecureSeededSource
from dpcert.testing import check_neighbours

PROOFS = Path(__file__).resolve().parents[2] / "docs" / "proofs"
BUDGETS = [dp.PureDP(1.0), dp.ApproxDP(1.0, 1e-6), dp.ZCDP(0.5)]


def _frame(n_units: int = 300, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 8, n_units)
    unit = np.repeat(np.arange(n_units), rows)
    return pl.DataFrame({"u": unit, "g": rng.choice(["a", "b", "c"], unit.size),
                         "x": rng.lognormal(3, 1, unit.size)})


def _query(sess: dp.Session) -> Any:
    return (sess.query().group_by("g", keys=["a", "b", "c"])
            .agg(dp.count(), dp.sum("x"), dp.mean("x"), dp.quantile("x", 0.5, candidates=33))
            .bound_contributions())


@pytest.mark.parametrize("budget", BUDGETS, ids=lambda b: type(b).__name__)
def test_an_auto_release_charges_its_budget_once_and_certifies(budget: Any) -> None:
    df = _frame()
    sess = dp.Session(df, "u", budget=budget, _source=InsecureSeededSource(1))
    m = _query(sess).measurement(budget)
    assert budget.compare(m.map(1), budget.require_value())
    assert m.map(1) == budget.require_value() or isinstance(budget, dp.ZCDP)  # ε_s² / 2 ≤ s
    assert [c.name for c in m.children[-1].children] == [
        "select(max_groups)", "select(max_rows_per_group)", "select(bounds:x, median)",
        "select(bounds:x, lower)", "select(bounds:x, upper)", "release(chosen bounds)"]
    rel = _query(sess).release(budget)
    assert sess.basic_spent == m.map(1)
    chosen = rel.certificate["chosen_bounds"]
    assert 1 <= chosen["max_groups"] <= 1 << 16 and 1 <= chosen["max_rows_per_group"] <= 1 << 16
    lo, hi = chosen["bounds"]["x"]
    assert lo < hi
    assert check_certificate(json.loads(json.dumps(rel.certificate, default=str))).ok
    steps = [s.proof for s in trace(m, 1)]
    assert all(steps) and all((PROOFS / p).exists() for p in steps)
    assert {"frame_autobounds.md", "edge_rank.md"} <= set(steps)


def test_the_share_is_split_and_shown() -> None:
    plan = QueryPlan((Count(), Sum("x", None)), ("g",), (("a",),), "u", None, 2,
                     auto_share=Fraction(1, 5))
    m = compile_plan(plan, dp.PureDP(1), schema={"g": "str", "u": "int", "x": "float"},
                     backend=None)
    parts = m.children[-1].children
    sel = [c for c in parts if c.name.startswith("select")]
    # one public key: G = 1 without a choice; the column's median, lower, upper: 1/5, 2/5, 2/5
    assert [c.map(1) for c in sel] == [Fraction(1, 25), Fraction(2, 25), Fraction(2, 25)]
    assert parts[-1].map(1) == Fraction(4, 5) and m.map(1) == 1
    assert m.map(2) == 2  # group privacy of each part, composed
    sess = dp.Session(_frame(), "u", budget=dp.PureDP(1.0))
    acc = _query(sess).auto_share(0.2).accuracy(0.05)
    rows = acc.filter(pl.col("kind") == "select_bounds")
    assert rows["output"].to_list() == ["(choose max_groups)", "(choose max_rows_per_group)",
                                       "(choose bounds:x)"]
    assert all("clipping bias" in t for t in acc["interval"].to_list()[3:])
    assert all(re.search(r"ε = 0\.0[0-9]+", t) for t in rows["interval"].to_list())


def test_shares_follow_the_number_of_candidates() -> None:
    """Two public keys: G among {1, 2}; the shares are ∝ ln(C): ln 2 for G, ln 64 for R."""
    plan = QueryPlan((Count(),), ("g",), (("a",), ("b",)), "u", None, None,
                     auto_share=Fraction(3, 10))
    assert candidates_of(plan, "max_groups") == (1, 2)
    shares, main = split_auto(plan, dp.PureDP(1))
    r = len(candidates_of(plan, "max_rows_per_group"))
    assert abs(float(shares["max_rows_per_group"] / shares["max_groups"])
               - math.log(r) / math.log(2)) < 1e-5
    assert sum(shares.values()) + main.require_value() == 1


def test_a_bad_share_is_refused_before_anything() -> None:
    sess = dp.Session(_frame(), "u", budget=dp.PureDP(1.0))
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(InvalidParameter, match="auto_share"):
            _query(sess).auto_share(bad)
    assert sess.spent == 0


class _NoProfiles:
    """A backend without the bound-choosing operations (as Spark's is)."""

    name = "spark"

    def __init__(self) -> None:
        self._inner = PolarsBackend()

    def __getattr__(self, attr: str) -> Any:
        if attr in ("unit_profile", "unit_extremes"):
            raise AttributeError(attr)
        return getattr(self._inner, attr)


def test_a_backend_without_profiles_is_refused_before_the_charge() -> None:
    sess = dp.Session(_frame(), "u", budget=dp.PureDP(1.0))
    sess._backend = _NoProfiles()  # type: ignore[assignment]
    with pytest.raises(BackendUnavailable, match="Polars backend"):
        _query(sess).release(dp.PureDP(0.5))
    assert sess.spent == 0
    fixed = (sess.query().group_by("g", keys=["a", "b"]).agg(dp.sum("x", (0, 10)))
             .bound_contributions(1, 1))
    fixed.release(dp.PureDP(0.5))  # explicit bounds still run there
    assert sess.spent == Fraction(1, 2)


_MAX_F = 1.7976931348623157e308
HOSTILE = {
    "all values equal": lambda n: [7.25] * n,
    "all null": lambda n: [None] * n,
    "heavy tails": lambda n: [10.0 ** (i % 300) * (-1) ** i for i in range(n)],
    "type limits": lambda n: [[_MAX_F, -_MAX_F, math.inf, -math.inf, math.nan, 5e-324][i % 6]
                              for i in range(n)],
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("units", [1, 40])
def test_hostile_values_never_fail_after_the_charge(case: str, units: int) -> None:
    n = 3 * units
    df = pl.DataFrame({"u": [i % units for i in range(n)], "g": ["a", "b", "c"] * units,
                       "x": pl.Series(HOSTILE[case](n), dtype=pl.Float64)})
    sess = dp.Session(df, "u", budget=dp.PureDP(10.0), _source=InsecureSeededSource(2))
    rel = (sess.query().group_by("g", keys=["a", "b"])
           .agg(dp.count(), dp.sum("x"), dp.mean("x"), dp.variance("x"),
                dp.quantile("x", [0.1, 0.9], candidates=17))
           .bound_contributions().release(dp.PureDP(1.0)))
    assert rel.table.height == 2
    lo, hi = rel.certificate["chosen_bounds"]["bounds"]["x"]
    assert -(2.0**64) <= lo < hi <= 2.0**64
    for c in ("count", "sum_x", "mean_x", "variance_x"):
        assert all(math.isfinite(v) for v in rel.table[c].to_list())
    rel.tidy()


def test_integer_values_at_the_type_limits() -> None:
    df = pl.DataFrame({"u": [1, 2, 3, 4], "x": [2**63 - 1, -(2**63), 0, 2**63 - 1]})
    sess = dp.Session(df, "u", budget=dp.PureDP(2.0))
    rel = sess.query().agg(dp.sum("x"), dp.mean("x")).bound_contributions().release(
        dp.PureDP(1.0))
    assert all(math.isfinite(v) for v in rel.table.row(0))


def test_rows_as_units_choose_value_bounds_only() -> None:
    df = pl.DataFrame({"x": np.arange(2000, dtype=np.float64)})
    sess = dp.Session(df, budget=dp.PureDP(1.0), _source=InsecureSeededSource(3))
    q = sess.query().agg(dp.mean("x"))
    assert [c.name for c in q.measurement(dp.PureDP(1.0)).children[-1].children][:3] == [
        "select(bounds:x, median)", "select(bounds:x, lower)", "select(bounds:x, upper)"]
    rel = q.release(dp.PureDP(1.0))
    assert set(rel.certificate["chosen_bounds"]) == {"bounds"}
    lo, hi = rel.certificate["chosen_bounds"]["bounds"]["x"]
    assert -1 <= lo < 1000 < hi <= 4096  # a few rows beyond each bound, the prior near the data


def test_the_choices_follow_the_data() -> None:
    """Units with 1..4 groups and 1..20 rows per group: with a large budget the chosen bounds
    land within a candidate step of the maxima (failure probability < 1e-9 per choice at these
    ε: the mechanism's weight beyond one step is below exp(−ε·Δscore/2))."""
    rng = np.random.default_rng(5)
    rows = []
    for u in range(3000):
        for g in range(1 + u % 4):
            rows += [(u, g, float(rng.uniform(10, 100)))] * (1 + u % 20)
    df = pl.DataFrame(rows, schema=["u", "g", "x"], orient="row")
    sess = dp.Session(df, "u", budget=dp.PureDP(100.0), _source=InsecureSeededSource(4))
    rel = (sess.query().group_by("g", keys=[0, 1, 2, 3]).agg(dp.sum("x"))
           .bound_contributions().auto_share(0.5).release(dp.PureDP(40.0)))
    c = rel.certificate["chosen_bounds"]
    assert c["max_groups"] == 4 and 20 <= c["max_rows_per_group"] <= 23  # candidates 19, 23
    lo, hi = c["bounds"]["x"]
    assert -1 <= lo <= 10.5 and 95 <= hi <= 120  # below 10 the prior barely moves: 0 is cheap


def test_neighbour_harness_covers_the_choices() -> None:
    df = _frame(40)
    sess = dp.Session(df, "u", budget=dp.PureDP(1.0))
    assert check_neighbours(df, _query(sess).plan(), dp.PureDP(1.0)) >= 4 * 10


def test_the_harness_catches_a_profile_that_is_not_one_number_per_unit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrong variant: one number per (unit, group) instead of per unit -- a unit in many groups
    then moves many entries, beyond the stability map d ↦ d."""
    from dpcert.backends import _polars_profile

    def per_pair(lf: pl.LazyFrame, unit: str, by: Any, what: str) -> np.ndarray[Any, Any]:
        out = lf.group_by([unit, *by]).len().sort([unit, *by]).collect()
        return out["len"].to_numpy().astype(np.int64)  # type: ignore[no-any-return]

    monkeypatch.setattr(_polars_profile, "unit_profile", per_pair)
    df = _frame(40)
    sess = dp.Session(df, "u", budget=dp.PureDP(1.0))
    with pytest.raises(AssertionError, match=r"max_groups|max_rows_per_group"):
        check_neighbours(df, _query(sess).plan(), dp.PureDP(1.0))


def test_specs_may_omit_bounds() -> None:
    from dpcert.cli.spec import applied_defaults, parse_spec

    spec = parse_spec('[data]\nprivacy_unit = "pid"\n[[query]]\nbudget = { epsilon = 1 }\n'
                      'max_rows_per_group = "auto"\n'
                      'aggregates = [{ kind = "mean", column = "x" }]\n', "s.toml")
    lines = applied_defaults(spec)
    assert any("bounds = chosen privately" in s for s in lines)
    assert any("auto_share = 0.1" in s for s in lines)


def test_the_proof_note_names_the_code_it_proves() -> None:
    note = (PROOFS / "frame_autobounds.md").read_text()
    import dpcert.frame.autobounds as ab
    import dpcert.mechanisms.edge_rank as er
    import dpcert.transformations.frame.profile as pr

    for mod, names in ((ab, ["compile_auto", "selection_steps", "split_auto", "concrete_plan"]),
                       (pr, ["make_unit_profile", "make_unit_extremes"]),
                       (er, ["make_edge_rank", "prior_exponents"])):
        for n in names:
            assert hasattr(mod, n) and f"`{n}`" in note, n
    assert "`edge_scores`" in (PROOFS / "edge_rank.md").read_text()
