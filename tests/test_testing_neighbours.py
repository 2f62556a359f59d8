"""The neighbour harness of ``dpcert.testing``, driven by Hypothesis over generated plans,
tables (unit, key and value dtypes with NaN, −0.0, null and extremes), filters and key lists."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpcert as dp
from dpcert import errors
from dpcert.frame.checks import check_public_keys
from dpcert.testing import adversarial_unit, check_neighbours, neighbours

UNIT_VALUES = {
    pl.Int64: st.one_of(st.integers(0, 6), st.none()),
    pl.Float64: st.sampled_from([0.0, -0.0, 1.0, 2.5, math.nan, None, 1e300]),
    pl.String: st.one_of(st.sampled_from(["ann", "bob", "", "é"]), st.none()),
}
KEY_VALUES = {pl.String: st.sampled_from(["a", "b", "c", None]),
              pl.Float64: st.sampled_from([0.0, -0.0, 1.0, math.nan, None]),
              pl.Int32: st.sampled_from([0, 1, 2, None])}
PUBLIC = {pl.String: ["a", "b", "c", "d"], pl.Float64: [0.0, 1.0, math.nan, 2.5],
          pl.Int32: [0, 1, 2, 3]}
VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.none(),
                   st.sampled_from([-0.0, 1e308, -1e308, 5e-324]))


@st.composite
def tables(draw: Any) -> tuple[pl.DataFrame, Any]:
    unit_dtype = draw(st.sampled_from(list(UNIT_VALUES)))
    key_dtype = draw(st.sampled_from(list(KEY_VALUES)))
    n = draw(st.integers(1, 25))
    rows = draw(st.lists(st.tuples(UNIT_VALUES[unit_dtype], KEY_VALUES[key_dtype], VALUES,
                                   st.integers(-3, 3)), min_size=n, max_size=n))
    df = pl.DataFrame({"u": [r[0] for r in rows], "g": [r[1] for r in rows],
                       "x": [r[2] for r in rows], "y": [r[3] for r in rows]},
                      schema={"u": unit_dtype, "g": key_dtype, "x": pl.Float64, "y": pl.Int64})
    return df, key_dtype


AGGREGATES = [
    lambda: dp.count(), lambda: dp.count_distinct(), lambda: dp.sum("x", (-5, 10)),
    lambda: dp.mean("x", (0, 3)), lambda: dp.variance("y", (-3, 3)),
    lambda: dp.quantile("x", [0.5, 0.1 + 0.2], (-10, 10), candidates=17),
]
FILTERS = [None, pl.col("y") >= 0, "x IS NULL OR x < 5", pl.col("g").is_not_null(),
           pl.when(pl.col("x").is_nan()).then(pl.col("y") > 1).otherwise(pl.col("y") < 2)]


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(table=tables(), aggs=st.sets(st.integers(0, len(AGGREGATES) - 1), min_size=1),
       G=st.integers(1, 3), R=st.integers(1, 3), private=st.booleans(),
       keys=st.sets(st.integers(0, 3), min_size=1),
       flt=st.sampled_from(FILTERS), seed=st.integers(0, 3))
def test_generated_plans_move_within_the_map(table: tuple[pl.DataFrame, Any], aggs: set[int],
                                             G: int, R: int, private: bool, keys: set[int],
                                             flt: Any, seed: int) -> None:
    df, key_dtype = table
    public = [PUBLIC[key_dtype][i] for i in sorted(keys)]
    budget = dp.ApproxDP(1.0, 1e-6)
    q = dp.Session(df, "u", budget=budget).query()
    if flt is not None:
        q = q.filter(flt)
    q = (q.group_by("g", keys="private" if private else public)
         .agg(*[AGGREGATES[i]() for i in sorted(aggs)]).bound_contributions(G, R))
    if not private and any(isinstance(k, float) and math.isnan(k) for k in public):
        # the compiled release refuses a NaN public key (equality can never match it)
        with pytest.raises(errors.InvalidParameter, match="does not convert exactly"):
            check_neighbours(df, q.plan(), budget, seed=seed)
        return
    assert check_neighbours(df, q.plan(), budget, seed=seed) >= 7


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.sampled_from([0, 1, 0.0, -0.0, 1.0, math.nan, 2.5, None]),
                     min_size=1, max_size=5))
def test_key_lists_are_refused_iff_they_repeat_after_the_cast(keys: list[Any]) -> None:
    def canon(v: Any) -> Any:
        if v is None:
            return None
        return "nan" if math.isnan(v) else float(v) + 0.0

    repeats = len({canon(k) for k in keys}) < len(keys)
    if repeats:
        with pytest.raises(errors.InvalidParameter, match="duplicate"):
            check_public_keys(("x",), [(k,) for k in keys], {"x": pl.Float64})
    else:
        assert check_public_keys(("x",), [(k,) for k in keys], {"x": pl.Float64}).height == len(
            keys)


def test_adversarial_unit_has_every_hostile_ingredient() -> None:
    df = pl.DataFrame({"u": [1.0, 2.0], "g": ["a", "b"], "x": [1.0, 2.0]})
    plan = (dp.Session(df, "u", budget=dp.PureDP(1.0)).query().group_by("g", keys=["a", "b"])
            .agg(dp.sum("x", (0, 1))).bound_contributions(2, 2).plan())
    add = adversarial_unit(df, plan)
    assert add["u"].is_nan().all() and add["g"].null_count() > 0
    assert add.group_by("g").len()["len"].min() == 5  # R + 3 rows per key
    assert add["x"].is_nan().any() and add["x"].is_infinite().any() and add["x"].null_count()
    descriptions = [d for d, _ in neighbours(df, plan)]
    assert any(d.startswith("remove") for d in descriptions) and len(descriptions) >= 7


def test_the_harness_catches_an_understated_sensitivity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deliberately wrong variant: a stat map that claims one group's count moves by l∞ − 1."""
    from dpcert.frame import neighbours as nb_module
    from dpcert.transformations.frame import per_group_change as real

    df = pl.DataFrame({"u": [1, 1, 2], "g": ["a", "a", "b"]})
    plan = (dp.Session(df, "u", budget=dp.PureDP(1.0)).query().group_by("g", keys=["a", "b"])
            .agg(dp.count()).bound_contributions(1, 3).plan())
    assert check_neighbours(df, plan, dp.PureDP(1.0)) >= 7
    monkeypatch.setattr(nb_module, "per_group_change",
                        lambda s, d, centred=False: real(s, d, centred) - 1)
    with pytest.raises(AssertionError, match="count moved one group by 3 > 2"):
        check_neighbours(df, plan, dp.PureDP(1.0))


def test_the_harness_catches_bounding_that_keeps_one_row_too_many(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Deliberately wrong variant: the backend's bounding keeps R + 1 rows per unit and group
    while the compiled GroupDistance map says R."""
    from dataclasses import replace

    from dpcert.backends.polars import PolarsBackend

    df = pl.DataFrame({"u": [1, 1, 2], "g": ["a", "a", "b"], "x": [1.0, 2.0, 3.0]})
    plan = (dp.Session(df, "u", budget=dp.PureDP(1.0)).query().group_by("g", keys=["a", "b"])
            .agg(dp.count(), dp.sum("x", (0, 1))).bound_contributions(1, 2).plan())
    assert check_neighbours(df, plan, dp.PureDP(1.0)) >= 7
    real = PolarsBackend.keyed_bound

    def one_too_many(self: Any, data: Any, spec: Any) -> Any:
        return real(self, data, replace(spec, max_rows_per_group=spec.max_rows_per_group + 1))

    monkeypatch.setattr(PolarsBackend, "keyed_bound", one_too_many)
    with pytest.raises(AssertionError, match="moved one group by"):
        check_neighbours(df, plan, dp.PureDP(1.0))
