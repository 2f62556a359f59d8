"""The filter allow-list: property tests over generated expressions.

Admitted expressions must be row-local (the value on a row equals the value on that row alone)
and must not fail on any value (NaN, ±inf, null, int64 extremes, odd strings); inserting any
forbidden operation anywhere must be refused.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcert.backends.polars_expr import check_predicate, check_row_local
from dpcert.errors import InvalidParameter, UnsafeExpression

SCHEMA = {"i": pl.Int64, "f": pl.Float64, "s": pl.String, "b": pl.Boolean, "u": pl.UInt8}

ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
floats = st.floats(allow_nan=True, allow_infinity=True)
strings = st.text(alphabet="ab1-_.é\x00", max_size=4)


def _lit_num() -> st.SearchStrategy[pl.Expr]:
    return st.one_of(st.integers(-5, 5).map(pl.lit), st.floats(-10, 10).map(pl.lit))


def numeric(depth: int = 3) -> st.SearchStrategy[pl.Expr]:
    leaf = st.one_of(st.just(pl.col("i")), st.just(pl.col("f")), st.just(pl.col("u")),
                     _lit_num())
    if depth == 0:
        return leaf
    sub = st.deferred(lambda: numeric(depth - 1))
    ops = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
           lambda a, b: a // b, lambda a, b: a % b]
    return st.one_of(
        leaf,
        st.tuples(st.sampled_from(ops), sub, sub).map(lambda t: t[0](t[1], t[2])),
        sub.map(lambda e: e.abs()),
        sub.map(lambda e: e.clip(-3, 3)),
        sub.map(lambda e: e.fill_null(0)),
        sub.map(lambda e: e.cast(pl.Int32, strict=False)),
        sub.map(lambda e: e.round(1)),
        st.tuples(boolean(depth - 1), sub, sub).map(
            lambda t: pl.when(t[0]).then(t[1]).otherwise(t[2])),
    )


def boolean(depth: int = 3) -> st.SearchStrategy[pl.Expr]:
    num = numeric(max(depth - 1, 0))
    cmp = [lambda a, b: a < b, lambda a, b: a >= b, lambda a, b: a == b, lambda a, b: a != b]
    leaf = st.one_of(
        st.just(pl.col("b")),
        st.tuples(st.sampled_from(cmp), num, num).map(lambda t: t[0](t[1], t[2])),
        num.map(lambda e: e.is_null()), st.just(pl.col("f").is_nan()),
        st.just(pl.col("f").is_finite()),
        st.lists(st.integers(-3, 3), max_size=3).map(lambda v: pl.col("i").is_in(v)),
        strings.map(lambda p: pl.col("s").str.starts_with(p)),
        strings.map(lambda p: pl.col("s").str.contains(p, literal=True)),
        st.just(pl.col("s").str.contains("^a+[0-9]?$")),
        st.just(pl.col("s").cast(pl.Int64, strict=False).is_null()),
        st.just(pl.col("s").str.len_chars() > 2),
    )
    if depth == 0:
        return leaf
    sub = st.deferred(lambda: boolean(depth - 1))
    return st.one_of(
        leaf,
        st.tuples(sub, sub).map(lambda t: t[0] & t[1]),
        st.tuples(sub, sub).map(lambda t: t[0] | t[1]),
        sub.map(lambda e: ~e),
    )


rows = st.fixed_dictionaries({
    "i": st.one_of(st.none(), ints, st.sampled_from([-(2**63), 2**63 - 1, 0])),
    "f": st.one_of(st.none(), floats, st.sampled_from([math.nan, -0.0, math.inf, 1e308])),
    "s": st.one_of(st.none(), strings),
    "b": st.one_of(st.none(), st.booleans()),
    "u": st.one_of(st.none(), st.integers(0, 255)),
})

FORBIDDEN = [
    lambda e: e.mean(), lambda e: e.max().over("b"), lambda e: e.rank(), lambda e: e.shift(),
    lambda e: e.cum_sum(), lambda e: e.sort(), lambda e: e.head(2), lambda e: e.is_unique(),
    lambda e: e.cast(pl.Int8), lambda e: e.pow(2), lambda e: e.fill_null(strategy="forward"),
    lambda e: e.n_unique(), lambda e: e.diff(), lambda e: e.reverse(), lambda e: e.sum(),
    lambda e: e + pl.len(), lambda e: e.filter(pl.col("b")), lambda e: e.unique(),
    lambda e: e.forward_fill(), lambda e: e.rolling_mean(2), lambda e: e.sample(1),
    lambda e: e + pl.int_range(pl.len()), lambda e: e.gather([0]), lambda e: e.first(),
    lambda e: e.cast(pl.Decimal(5, 2)), lambda e: e.is_first_distinct(), lambda e: e.mode(),
]


def _frame(rs: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rs, schema=SCHEMA)


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expr=boolean(), data=st.lists(rows, min_size=1, max_size=6))
def test_admitted_filters_are_row_local_and_never_fail(expr: pl.Expr,
                                                       data: list[dict[str, Any]]) -> None:
    try:
        check_predicate(expr, SCHEMA)
    except UnsafeExpression as e:  # a type error the dry run found (e.g. negating a UInt8)
        assert "type-check" in str(e), e
        return
    df = _frame(data)
    whole = df.with_columns(expr.alias("o"))["o"].to_list()  # must not raise on any value
    one_by_one = [_frame([r]).with_columns(expr.alias("o"))["o"][0] for r in data]
    assert whole == one_by_one
    assert df.filter(expr).height == sum(1 for v in whole if v)


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expr=numeric(), bad=st.sampled_from(FORBIDDEN), wrap=boolean(1),
       where=st.sampled_from(["left", "right", "when", "not"]))
def test_any_forbidden_operation_anywhere_is_refused(expr: pl.Expr, bad: Any, wrap: pl.Expr,
                                                     where: str) -> None:
    inner = bad(expr)
    if where == "left":
        e = (inner > 0) & wrap
    elif where == "right":
        e = wrap | (pl.lit(1) < inner)
    elif where == "when":
        e = pl.when(wrap).then(inner).otherwise(pl.lit(0)) > 0
    else:
        e = ~(inner == 1)
    with pytest.raises((UnsafeExpression, InvalidParameter)):
        check_predicate(e, SCHEMA)


@pytest.mark.parametrize("sql", [
    "i >= AVG(i) OVER (PARTITION BY b)", "COUNT(*) OVER () = 1000", "i > (SELECT 1)",
    "ROW_NUMBER() OVER (ORDER BY f) <= 10", "RANK() OVER (ORDER BY i) < 3", "CAST(s AS INT) > 1",
    "i > SUM(i)", "LAG(i) OVER (ORDER BY f) > 1", "i = MAX(i)",
])
def test_sql_windows_aggregates_and_strict_casts_are_refused(sql: str) -> None:
    with pytest.raises(UnsafeExpression):
        check_row_local(sql, SCHEMA)


def test_logical_schema_names_are_accepted() -> None:
    logical = {"i": "int", "f": "float", "s": "str", "b": "bool"}
    assert isinstance(check_predicate("i > 3 AND s LIKE 'a%'", logical), pl.Expr)
    with pytest.raises(UnsafeExpression, match="unknown column"):
        check_predicate(pl.col("zz") > 1, logical)


def test_non_boolean_and_non_expressions_are_refused() -> None:
    with pytest.raises(InvalidParameter, match="not a Boolean"):
        check_predicate(pl.col("i") + 1, SCHEMA)
    with pytest.raises(UnsafeExpression, match="neither"):
        check_predicate(42, SCHEMA)  # type: ignore[arg-type]
    with pytest.raises(UnsafeExpression, match="not valid SQL"):
        check_predicate("i >>>= 3", SCHEMA)
