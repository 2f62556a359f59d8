"""``dpcert.frame.admit``: the closed internal form, refusals before the charge, the admit step."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import dpcert as dp
from dpcert.backends.admission import ADMITTED_TYPES
from dpcert.backends.polars import PolarsBackend
from dpcert.errors import InadmissibleColumn, InvalidParameter
from dpcert.frame.admit import admission_from_json, admit_plan
from dpcert.frame.plan import Count, CountDistinct, QueryPlan, Sum

PL = PolarsBackend()


def _plan(**kw: Any) -> QueryPlan:
    base: dict[str, Any] = dict(aggregates=(Count(), Sum("v", (0, 1))), group_keys=("k",),
                                public_keys=None, privacy_unit="u", max_groups=1,
                                max_rows_per_group=1)
    base.update(kw)
    return QueryPlan(**base)


def _frame(u: pl.Series, k: pl.Series | None = None, v: pl.Series | None = None) -> pl.DataFrame:
    n = u.len()
    return pl.DataFrame([u.alias("u"), (k if k is not None else pl.Series(["a"] * n)).alias("k"),
                         (v if v is not None else pl.Series([1.0] * n)).alias("v")])


@pytest.mark.parametrize(("series", "expected"), [
    (pl.Series([1, 2], dtype=pl.Int8), "int"), (pl.Series([1, 2], dtype=pl.UInt32), "int"),
    (pl.Series([1.0, -0.0], dtype=pl.Float32), "float"), (pl.Series(["a", "b"]), "str"),
    (pl.Series(["a", "b"], dtype=pl.Categorical), "str"),
    (pl.Series(["a", "b"], dtype=pl.Enum(["a", "b"])), "str"),
    (pl.Series([True, False]), "bool"), (pl.Series([dt.date(2020, 1, 1)] * 2), "date"),
    (pl.Series([dt.datetime(2020, 1, 1)] * 2).dt.replace_time_zone("Asia/Tokyo"), "datetime"),
    (pl.Series([dt.datetime(2020, 1, 1)] * 2, dtype=pl.Datetime("ns")), "datetime_ntz"),
])
def test_admitted_key_and_unit_types(series: pl.Series, expected: str) -> None:
    adm = admit_plan(_plan(), PL, _frame(series, series))
    assert [c.type for c in adm.columns[:2]] == [expected, expected]
    assert set(adm.schema.values()) <= set(ADMITTED_TYPES)
    got = adm.frame(_frame(series, series)).collect()
    assert got.columns == [c.internal for c in adm.columns]


@pytest.mark.parametrize(("series", "cast"), [
    (pl.Series([1, 2], dtype=pl.UInt64), "Int64"), (pl.Series([1, 2], dtype=pl.Int128), "Int64"),
    (pl.Series([1, 2], dtype=pl.Decimal(10, 2)), "Float64"),
    (pl.Series([dt.timedelta(1)] * 2), "total_microseconds"),
    (pl.Series([dt.time(1)] * 2), "to_physical"), (pl.Series([b"a", b"b"]), "encode"),
    (pl.Series([[1], [2]]), "explode"), (pl.Series([{"a": 1}, {"a": 2}]), "unnest"),
    (pl.Series([None, None], dtype=pl.Null), "every value is null"),
])
def test_refused_keys_name_column_type_and_cast(series: pl.Series, cast: str) -> None:
    df = _frame(pl.Series([1, 2]), series)
    with pytest.raises(InadmissibleColumn, match=rf"'k' has type .*group key.*{cast}"):
        admit_plan(_plan(), PL, df)


@pytest.mark.parametrize("dtype", [pl.Int128, pl.UInt64, pl.Decimal(20, 2), pl.Null, pl.Int8])
def test_every_numeric_value_column_is_read_as_float(dtype: Any) -> None:
    v = pl.Series([None, None], dtype=pl.Null) if dtype == pl.Null else pl.Series([1, 2]).cast(
        dtype)
    adm = admit_plan(_plan(), PL, _frame(pl.Series([1, 2]), v=v))
    assert adm.columns[2].type == "float" and adm.columns[2].roles == ("value",)
    assert adm.frame(_frame(pl.Series([1, 2]), v=v)).collect()["c2"].dtype == pl.Float64


@pytest.mark.parametrize("series", [pl.Series(["1", "2"]), pl.Series([True, False])])
def test_text_and_boolean_values_are_refused(series: pl.Series) -> None:
    with pytest.raises(InadmissibleColumn, match=r"'v' .* value column.*Float64"):
        admit_plan(_plan(), PL, _frame(pl.Series([1, 2]), v=series))


def test_one_column_in_two_roles_gets_one_internal_column_per_type() -> None:
    df = pl.DataFrame({"u": [1, 2], "k": ["a", "b"], "v": [3, 4]})
    plan = _plan(aggregates=(Sum("v", (0, 9)),), filters=(pl.col("v") > 3, pl.col("k") == "a"))
    adm = admit_plan(plan, PL, df)
    assert [(c.user, c.internal, c.type, c.roles) for c in adm.columns] == [
        ("u", "c0", "int", ("unit",)), ("k", "c1", "str", ("key", "filter")),
        ("v", "c2", "float", ("value",)), ("v", "c3", "int", ("filter",))]
    assert [p.meta.root_names() for p in adm.predicates] == [["c3"], ["c1"]]


def test_public_keys_are_cast_through_the_source_type() -> None:
    """A Float32 key column: the key 0.1 means the Float32 nearest 0.1, as the rows hold it."""
    k = pl.Series([0.1, 0.2], dtype=pl.Float32)
    adm = admit_plan(_plan(public_keys=((0.1,), (0.2,))), PL, _frame(pl.Series([1, 2]), k))
    rows = adm.frame(_frame(pl.Series([1, 2]), k)).collect()["c1"].to_list()
    assert [k[0] for k in adm.public_keys or ()] == rows


def test_a_plan_that_reads_no_column_still_counts_rows() -> None:
    df = pl.DataFrame({"x": [1, 2, 3]})
    adm = admit_plan(QueryPlan((Count(),)), PL, df)
    assert adm.columns == () and adm.frame(df).collect().height == 3


def test_session_refuses_before_any_charge_with_a_ledger(tmp_path: Path) -> None:
    from dpcert.accounting.ledger import Ledger

    path = str(tmp_path / "l.sqlite")
    Ledger(path).create("d", dp.PureDP(1))
    df = pl.DataFrame({"u": [1, 2], "t": pl.Series([dt.timedelta(1)] * 2), "x": [1.0, 2.0]})
    sess = dp.Session(df, privacy_unit="u", budget=dp.PureDP(1), ledger=path, dataset="d")
    q = sess.query().group_by("t", keys="private").agg(dp.count()).bound_contributions(1, 1)
    with pytest.raises(InadmissibleColumn, match="'t' has type Duration"):
        q.release(dp.PureDP(1))
    assert sess.spent == 0 and Ledger(path).history("d") == []


def test_pandas_and_arrow_inputs_go_through_the_same_rule() -> None:
    pd = pytest.importorskip("pandas")
    pdf = pd.DataFrame({"u": [1, 2], "k": pd.to_timedelta([1, 2], unit="s"), "x": [1.0, 2.0]})
    sess = dp.Session(pdf, privacy_unit="u", budget=dp.PureDP(1))
    q = sess.query().group_by("k", keys="private").agg(dp.count()).bound_contributions(1, 1)
    with pytest.raises(InadmissibleColumn, match="'k' has type Duration"):
        q.check(dp.PureDP(1))
    with pytest.raises(InadmissibleColumn, match="privacy unit"):
        dp.Session(pdf, privacy_unit="k", budget=dp.PureDP(1))


def test_admission_record_round_trips_and_hostile_records_are_refused() -> None:
    plan = _plan(aggregates=(CountDistinct(), Sum("v", (0, 1))))
    adm = admit_plan(plan, PL, _frame(pl.Series([1, 2])))
    again = admission_from_json(adm.describe(), plan, adm.user_schema)
    assert again.columns == adm.columns and again.unit == "c0" and again.values == {"v": "c2"}
    for bad in ([{"column": "u"}], "x", [dict(adm.describe()[0], type="decimal")],
                [dict(adm.describe()[0], **{"as": "_s"})], adm.describe()[1:]):
        with pytest.raises(InvalidParameter):
            admission_from_json(bad, plan, adm.user_schema)


@pytest.mark.parametrize("name", ["*", "^c.*$", "^u$"])
def test_names_polars_reads_as_patterns_are_read_by_position(name: str) -> None:
    """``pl.col("*")`` selects every column and ``pl.col("^c.*$")`` a regex: the admission
    reads columns by position, so such names are just names (found by the totality property)."""
    df = pl.DataFrame({name: [1, 1, 2], "u": [7, 8, 9], "c0": [0.5, 1.5, 2.5]})
    for unit, key in ((name, "u"), ("u", name)):
        plan = _plan(aggregates=(Count(), Sum("c0", (0, 3))), group_keys=(key,), privacy_unit=unit)
        adm = admit_plan(plan, PL, df)
        got = adm.frame(df).collect()
        assert got.columns == ["c0", "c1", "c2"]
        assert got["c0"].to_list() == df[unit].to_list()
        assert got["c2"].to_list() == [0.5, 1.5, 2.5]


def test_csv_headers_polars_reads_as_patterns_parse(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("*,^a.*$,x\n1,2,3\nfoo,4,5\n")
    from dpcert.frame.io import to_lazy

    got = to_lazy(str(path)).collect()
    assert got.columns == ["*", "^a.*$", "x"] and got["x"].to_list() == [3, 5]
