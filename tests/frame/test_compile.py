"""compile_plan: a query plan becomes one core Measurement whose map is what a release costs.

The compiled map never exceeds the budget, and the count's noise is exactly the reference
calibration ``G·R / share`` (Laplace: L1 sensitivity ``l0·l∞`` at one unit).
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from dpcert.core.measures import ZCDP, ApproxDP, PureDP
from dpcert.core.trace import trace
from dpcert.errors import BudgetExceeded, InvalidParameter
from dpcert.frame import compile as compile_mod
from dpcert.frame.compile import compile_plan, plan_stats
from dpcert.frame.plan import Count, CountDistinct, Mean, Quantile, QueryPlan, Sum, Variance

SCHEMA = {"pid": "int", "g": "str", "x": "float"}
KEYS = (("a",), ("b",), ("c",))


def data(n_units: int = 300, seed: int = 0) -> dict[str, list[Any]]:
    rng = random.Random(seed)
    rows = [(u, rng.choice("abc"), rng.uniform(0, 10)) for u in range(n_units)
            for _ in range(rng.randint(1, 3))]
    return {"pid": [r[0] for r in rows], "g": [r[1] for r in rows], "x": [r[2] for r in rows]}


def plan(*aggs: Any, keys: Any = KEYS, G: int = 2, R: int = 2, unit: str | None = "pid",
         filters: tuple[Any, ...] = ()) -> QueryPlan:
    return QueryPlan(tuple(aggs), group_keys=("g",), public_keys=keys, privacy_unit=unit,
                     max_groups=G if unit else 1, max_rows_per_group=R if unit else 1,
                     filters=filters)


PLANS = [
    plan(Count()),
    plan(Count(), Sum("x", (0.0, 10.0))),
    plan(Mean("x", (0.0, 10.0))),
    plan(Count(), Mean("x", (-1.0, 10.0)), Variance("x", (0.0, 10.0))),
    plan(CountDistinct(), Sum("x", (0.0, 10.0)).weighted(3)),
    plan(Count(), Sum("x", (0.0, 5.0)), unit=None),
]
BUDGETS = [PureDP(1), ApproxDP(Fraction(1, 2), Fraction(1, 10**6)), ZCDP(Fraction(1, 2))]


@pytest.mark.parametrize("p", PLANS)
@pytest.mark.parametrize("budget", BUDGETS)
def test_compiled_map_never_charges_more_than_the_budget(p: QueryPlan, budget: Any) -> None:
    m = compile_plan(p, budget, schema=SCHEMA, backend=None)
    assert budget.compare(m.map(1), budget.require_value())
    stats, _ = plan_stats(p)
    if not isinstance(budget, ZCDP) and "count" in stats:
        total = Fraction(budget.require_value()[0] if isinstance(budget, ApproxDP)
                         else budget.require_value())
        share = total * stats["count"].weight / sum(s.weight for s in stats.values())
        G, R = p.max_groups, p.max_rows_per_group
        assert Fraction(m.params["scales"]["count"]) == Fraction(G * R) / share


@pytest.mark.parametrize("budget", BUDGETS[:2])
def test_private_keys_spend_no_separate_selection_budget(budget: Any) -> None:
    p = plan(Count(), keys=None)
    if isinstance(budget, PureDP):
        with pytest.raises(InvalidParameter, match="cannot pay for private keys"):
            compile_plan(p, budget, schema=SCHEMA, backend=None)
        return
    m = compile_plan(p, budget, schema=SCHEMA, backend=None)
    eps, delta = m.map(1)
    assert eps == Fraction(1, 2) and delta <= Fraction(1, 10**6)
    # the whole ε goes to the released count (it is the selection statistic): scale G·R/ε
    assert Fraction(m.params["scales"]["count"]) == Fraction(2 * 2) / Fraction(1, 2)


def test_a_mean_reuses_the_released_count() -> None:
    stats, uses = plan_stats(plan(Count(), Mean("x", (0.0, 10.0))))
    assert sorted(stats) == ["count", "sum:x[0.0,10.0]"]
    assert uses["mean_x"]["n"] == uses["count"]["n"] == "count"


def test_release_values_and_intervals(memory_ops: Any) -> None:
    p = plan(Count(), Mean("x", (0.0, 10.0)), Variance("x", (0.0, 10.0)), G=3, R=3)
    m = compile_plan(p, PureDP(200), schema=SCHEMA, backend=memory_ops, key=bytes(16))
    d = data()
    out = m(d)
    assert out["g"] == ["a", "b", "c"]
    true_counts = [d["g"].count(k) for k in "abc"]
    for got, want, lo, hi in zip(out["count"], true_counts, out["count_ci_low"],
                                 out["count_ci_high"], strict=True):
        assert lo <= got <= hi and abs(got - want) < 10
    for v, lo, hi in zip(out["mean_x"], out["mean_x_ci_low"], out["mean_x_ci_high"],
                         strict=True):
        assert lo <= v <= hi and 4 < v < 6
    assert all(6 < v < 10 for v in out["variance_x"])  # uniform(0, 10): 8.33


def test_filters_go_through_the_backend_allow_list(memory_ops: Any) -> None:
    from dpcert.errors import UnsafeExpression

    with pytest.raises(UnsafeExpression):
        compile_plan(plan(Count(), filters=(("x", "rank", 1),)), PureDP(1), schema=SCHEMA,
                     backend=memory_ops)
    m = compile_plan(plan(Count(), filters=(("x", ">", 5.0),)), PureDP(100), schema=SCHEMA,
                     backend=memory_ops, key=bytes(16))
    d = data()
    assert abs(sum(m(d)["count"]) - sum(x > 5 for x in d["x"])) < 30


def test_private_keys_release(memory_ops: Any) -> None:
    p = plan(Count(), Sum("x", (0.0, 10.0)), keys=None, G=1, R=1)
    m = compile_plan(p, ApproxDP(1, Fraction(1, 10**6)), schema=SCHEMA, backend=memory_ops)
    d = data(200)
    d["g"][:2] = ["rare", "rare"]  # two rows: far below τ
    out = m(d)
    assert "rare" not in out["g"] and set(out["g"]) <= {"a", "b", "c"}
    assert m.params["threshold"] > 2


def test_trace_covers_every_step() -> None:
    m = compile_plan(plan(Count(), Sum("x", (0.0, 10.0))), PureDP(1), schema=SCHEMA,
                     backend=None)
    steps = [s.constructor for s in trace(m, 1)]
    for name in ("bound_contributions", "group_by", "select_stat", "laplace",
                 "composition[2]", "postprocess(to_table)"):
        assert name in steps
    assert all(s.proof for s in trace(m, 1))


def test_self_check_refuses_a_plan_whose_map_exceeds_the_budget(monkeypatch: Any) -> None:
    """A compiler bug that over-spends (shares doubled) is caught before anything runs."""
    real = compile_mod._split

    def doubled(*args: Any) -> Any:
        shares, delta = real(*args)
        return {k: 2 * v for k, v in shares.items()}, delta

    monkeypatch.setattr(compile_mod, "_split", doubled)
    with pytest.raises(BudgetExceeded, match="compiled plan costs"):
        compile_plan(plan(Count()), PureDP(1), schema=SCHEMA, backend=None)


@pytest.mark.parametrize("budget", BUDGETS)
def test_quantiles_compile_to_grouped_permute_and_flip(memory_ops: Any, budget: Any) -> None:
    p = plan(Count(), Quantile("x", (0.25, 0.5), (0.0, 10.0), candidates=41))
    m = compile_plan(p, budget, schema=SCHEMA, backend=memory_ops, key=bytes(16))
    assert budget.compare(m.map(1), budget.require_value())
    # a value and two interval endpoints per level
    assert [s.constructor for s in trace(m, 1)].count("grouped_quantile") == 6
    big = compile_plan(p, type(budget)(*([50] if not isinstance(budget, ApproxDP) else
                                         [50, Fraction(1, 10**6)])),
                       schema=SCHEMA, backend=memory_ops, key=bytes(16))
    out = big(data(600))
    assert all(3.5 <= v <= 6.5 for v in out["quantile_0.5_x"])  # uniform(0, 10): median 5
    assert all(1 <= v <= 4 for v in out["quantile_0.25_x"])
    assert all(lo <= v <= hi for lo, v, hi in zip(out["quantile_0.5_x_ci_low"],
                                                  out["quantile_0.5_x"],
                                                  out["quantile_0.5_x_ci_high"], strict=True))


@pytest.mark.parametrize(("G", "R"), [(1, 1), (3, 1), (1, 4), (3, 4)])
def test_private_keys_threshold_by_hand(G: int, R: int) -> None:
    """The keyed release's τ and δ at one unit, recomputed by hand at 40 digits: a unit can put
    a count of at most R into each of at most G keys absent from its neighbour, so
    δ = G · P(Z ≥ τ − R) with P(Z ≥ m) = q^m / (1 + q), q = e^(−1/b), Z ~ DLap(b); τ is the
    smallest integer meeting the asked δ (Wilson et al. 2020; docs/proofs/keyed_release.md)."""
    import mpmath

    mpmath.mp.dps = 40
    eps, asked = Fraction(1, 2), Fraction(1, 10**6)
    m = compile_plan(plan(Count(), Sum("x", (0.0, 10.0)), keys=None, G=G, R=R),
                     ApproxDP(eps, asked), schema=SCHEMA, backend=None)
    b = Fraction(m.params["scales"]["count"])
    assert b == Fraction(G * R * 2) / eps  # the count's share is ε/2 (two equal weights)
    tau = m.params["threshold"]

    def tail(k: int) -> mpmath.mpf:
        q = mpmath.exp(-1 / mpmath.mpf(b.numerator) * b.denominator)
        return q**k / (1 + q) if k > 0 else mpmath.mpf(1)

    assert G * tail(tau - R) <= mpmath.mpf(asked.numerator) / asked.denominator
    assert G * tail(tau - 1 - R) > mpmath.mpf(asked.numerator) / asked.denominator
    got_eps, got_delta = m.map(1)
    assert got_eps == eps
    assert float(G * tail(tau - R)) <= float(got_delta) <= float(asked)
    assert abs(float(got_delta) / float(G * tail(tau - R)) - 1) < 1e-6


@pytest.mark.parametrize(("wc", "ws"), [(1, 3), (2, 1), (1, 1)])
@pytest.mark.parametrize("budget", [PureDP(1), ZCDP(Fraction(1, 2))])
def test_weighted_split_by_hand(wc: int, ws: int, budget: Any) -> None:
    """Per-component noise against numbers computed by hand from the weights, and the charge
    (the compiled map) equal to the budget: a count (sensitivity G·R in L1, √G·R in L2) and
    a sum on [−2, 10] (a row moves it by max(|L|, |U|) = 10) with weights wc : ws.  Laplace:
    scale = sensitivity / (ε·w/W); Gaussian: σ = sensitivity / √(2ρ·w/W)."""
    G, R = 2, 2
    p = plan(Count().weighted(wc), Sum("x", (-2.0, 10.0)).weighted(ws), G=G, R=R)
    m = compile_plan(p, budget, schema=SCHEMA, backend=None)
    scales = {k: Fraction(v) for k, v in m.params["scales"].items()}
    share_c, share_s = Fraction(wc, wc + ws), Fraction(ws, wc + ws)
    if isinstance(budget, PureDP):
        assert scales["count"] == Fraction(G * R) / share_c
        assert scales["sum:x[-2.0,10.0]"] == Fraction(G * R * 10) / share_s
        assert m.map(1) == 1  # charged == compiled map == budget: the shares add up to ε
        return
    rho = Fraction(1, 2)
    for key, l2, share in (("count", G**0.5 * R, share_c),
                           ("sum:x[-2.0,10.0]", G**0.5 * R * 10, share_s)):
        sigma = l2 / (2 * float(rho * share)) ** 0.5
        assert sigma <= float(scales[key]) <= sigma * (1 + 1e-9), key  # rounded up only
    charged = m.map(1)
    assert charged <= rho and float(charged) >= float(rho) * (1 - 1e-9)


def test_grouped_release_map_grows_linearly_in_units() -> None:
    """Group privacy through the whole compiled chain (issue 39, L1): map(d) = d·map(1) for
    ε budgets (it was d²·map(1) without the l1 component) and d²·map(1) under zCDP (Gaussian
    group privacy; it was d³)."""
    p = plan(Count(), Mean("x", (0, 10)), G=3, R=2)
    m = compile_plan(p, PureDP(1), schema=SCHEMA, backend=None)
    assert [m.map(d) for d in (1, 2, 3)] == [1, 2, 3]
    z = compile_plan(plan(Count(), G=4, R=2), ZCDP(Fraction(1, 2)), schema=SCHEMA, backend=None)
    assert z.map(2) == 4 * z.map(1) and z.map(1) <= Fraction(1, 2)


def test_zcdp_quantile_uses_the_exponential_mechanism_at_a_quarter_of_the_rho() -> None:
    """Under ZCDP(ρ) a median is the exponential mechanism at scale p/√(2ρ) (one group, one
    row): the scale permute-and-flip needs at ZCDP(4ρ)."""
    rho = Fraction(1, 2)
    p = QueryPlan((Quantile("x", (0.5,), (0, 10), 11, interval=False),), privacy_unit="pid")
    m = compile_plan(p, ZCDP(rho), schema=SCHEMA, backend=None)
    q, = (s for s in trace(m, 1) if s.constructor == "grouped_quantile")
    assert m.map(1) <= rho
    em_scale = Fraction(q.params["scale"])
    assert em_scale == 1 and q.params["selection"] == "exponential"  # p = 1, √(2ρ) = 1
    pf = compile_plan(p, PureDP(1), schema=SCHEMA, backend=None)  # ε = 1 is 1/2-zCDP as PF
    q2, = (s for s in trace(pf, 1) if s.constructor == "grouped_quantile")
    assert Fraction(q2.params["scale"]) == 2 * em_scale  # PF at ρ = ε²/2 = 1/2: twice the scale


@pytest.mark.parametrize("budget", [PureDP(1), ZCDP(Fraction(1, 2))], ids=["pure", "zcdp"])
def test_mean_width_does_not_depend_on_a_shift_of_its_bounds(budget: Any) -> None:
    """Mean and variance read centred sums (issue 39, L3): the sum's noise half-width is the
    same for bounds (0, 100), (−50, 50) and (1000, 1100), half of what the uncentred sum over
    (0, 100) needs; the variance sums (x − c)² with c the bounds' midpoint, centred on its range:
    the same for every shift, a quarter of the squares of x over (−100, 100) (x² ∈ [0, 10⁴],
    what (0, 100) cost before the shift)."""
    def width(agg: Any, *more: Any, kind: str = "sum:") -> float:
        m = compile_plan(plan(*more, agg), budget, schema=SCHEMA, backend=None)
        return next(float(v) for k, v in m.params["half_widths"].items() if k.startswith(kind))

    widths = [width(Mean("x", b)) for b in ((0, 100), (-50, 50), (1000, 1100))]
    assert widths[0] == widths[1] == widths[2]
    # a plain Sum keeps the raw sum: magnitude 100, not 50
    assert width(Mean("x", (0, 100)), Sum("x", (0, 100))) > 1.9 * widths[0]
    assert width(Variance("x", (0, 100))) == width(Variance("x", (-50, 50)))
    sq = [width(Variance("x", b), kind="sumsq:")
          for b in ((0, 100), (-50, 50), (1000, 1100), (-100, 100))]
    assert sq[0] == sq[1] == sq[2]
    assert sq[3] == 4 * sq[0]  # (x − c)² in [0, 2500] vs [0, 10⁴], each centred on its range


@pytest.mark.parametrize("shift", [0.0, 1000.0, -1e6])
def test_variance_of_shifted_data_matches_the_exact_variance(shift: float) -> None:
    """The variance from the sum of ``(x − c)²`` (issue 39, L3) is the data's variance whatever
    the bounds' offset: the same table shifted by 10⁶ gives the same estimate at a large ε (a
    sum of squares without the shift would lose it to the squares' rounding)."""
    import polars as pl

    from dpcert.backends.polars import PolarsBackend

    d = data(2000, seed=3)
    frame = pl.DataFrame({**d, "x": [v + shift for v in d["x"]]})
    p = plan(Count(), Variance("x", (shift, shift + 10.0)), G=3, R=3)
    m = compile_plan(p, PureDP(10**4), schema=SCHEMA, backend=PolarsBackend(), key=bytes(16))
    out = m(frame)
    for k, v in zip("abc", out["variance_x"], strict=True):
        xs = [x for x, g in zip(d["x"], d["g"], strict=True) if g == k]
        mu = sum(xs) / len(xs)
        exact = sum((x - mu) ** 2 for x in xs) / len(xs)
        assert abs(v - exact) < 0.05, (k, v, exact)
