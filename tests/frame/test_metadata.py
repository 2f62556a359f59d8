"""Table metadata: strict parsing (misspelled keys, wrong types, bad bounds and keys are errors
naming them), admission against the data's schema before any charge, and its use as defaults by
``Session.sql``, ``dpcert sql --metadata`` and specs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert.errors import InvalidParameter, UnsupportedSQL
from dpcert.frame.metadata import load_metadata, parse_metadata

META = """\
name = "people"
privacy_unit = "pid"
max_ids = 2

[columns.income]
type = "float"
lower = 0
upper = 100

[columns.region]
type = "str"
keys = ["a", "b", "c"]

[columns.age]
type = "int"
"""


def table(n: int = 400) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    return pl.DataFrame({"pid": np.arange(n) % 200, "region": rng.choice(["a", "b", "c"], n),
                         "income": rng.uniform(0, 100, n), "age": rng.integers(0, 90, n)})


@pytest.fixture
def meta_path(tmp_path: Path) -> Path:
    p = tmp_path / "people.toml"
    p.write_text(META)
    return p


@pytest.mark.parametrize(("raw", "msg"), [
    ({"privacy_unit": "pid", "max_id": 2}, "max_id: Extra inputs"),
    ({"privacy_unit": "pid", "columns": {"x": {"type": "float", "lowr": 0}}},
     "columns.x.lowr: Extra inputs"),
    ({"privacy_unit": "pid", "columns": {"x": {"type": "decimal"}}}, "columns.x.type"),
    ({"privacy_unit": "pid", "columns": {"x": {"type": "str", "lower": 0, "upper": 1}}},
     "need a numeric column"),
    ({"privacy_unit": "pid", "columns": {"x": {"type": "float", "lower": 2, "upper": 1}}},
     "lower=2 > upper=1"),
    ({"privacy_unit": "pid", "columns": {"x": {"type": "float", "lower": 2}}}, "both lower"),
    ({"privacy_unit": "pid", "columns": {"x": {"type": "int", "keys": [1, "1"]}}},
     "is not of type 'int'"),
    ({"privacy_unit": "pid", "columns": {"x": {"type": "int", "keys": [1, 1]}}}, "repeat"),
    ({"privacy_unit": "pid", "columns": {"x": {"type": "int", "keys": [True]}}},
     "is not of type 'int'"),
    ({"privacy_unit": "pid", "max_ids": 0}, "max_ids"),
    ({"privacy_unit": "pid", "max_ids": "2"}, "max_ids"),
    ({"privacy_unit": "pid", "columns": {"pid": {"type": "int", "keys": [1]}}},
     "privacy unit 'pid' cannot have"),
    ({"max_ids": 1}, "privacy_unit: Field required"),
])
def test_bad_metadata_is_refused_naming_the_key(raw: Any, msg: str) -> None:
    with pytest.raises(InvalidParameter, match=msg):
        parse_metadata(raw)


def test_a_file_is_read_and_errors_name_it(meta_path: Path, tmp_path: Path) -> None:
    meta = load_metadata(meta_path)
    assert (meta.name, meta.unit, meta.max_ids) == ("people", "pid", 2)
    assert meta.bounds() == {"income": (0, 100)}
    assert meta.keys_for(["region"]) == [("a",), ("b",), ("c",)]
    assert meta.keys_for(["region", "age"]) is None
    bad = tmp_path / "bad.toml"
    bad.write_text(META.replace("upper = 100", "uper = 100"))
    with pytest.raises(InvalidParameter, match=r"bad\.toml: columns\.income\.uper"):
        load_metadata(bad)
    with pytest.raises(InvalidParameter, match="cannot be read"):
        load_metadata(tmp_path / "missing.toml")
    yml = tmp_path / "people.yaml"
    yml.write_text("privacy_unit: pid\ncolumns:\n  income: {type: float, lower: 0, upper: 9}\n")
    pytest.importorskip("yaml")
    assert load_metadata(yml).bounds() == {"income": (0, 9)}


def test_metadata_is_admitted_against_the_schema_before_any_charge(meta_path: Path) -> None:
    df = table()
    with pytest.raises(InvalidParameter, match="column 'age' is declared type='int' but the "
                                               "data's column is float"):
        dp.Session(df.with_columns(pl.col("age").cast(pl.Float64)), budget=dp.ZCDP(1),
                   metadata=meta_path)
    with pytest.raises(InvalidParameter, match="column 'region' is not in the data"):
        dp.Session(df.drop("region"), budget=dp.ZCDP(1), metadata=meta_path)
    with pytest.raises(InvalidParameter, match="privacy_unit='age' but the metadata's"):
        dp.Session(df, "age", budget=dp.ZCDP(1), metadata=meta_path)


def test_session_sql_takes_unit_name_bounds_keys_and_max_ids(meta_path: Path) -> None:
    sess = dp.Session(table(), budget=dp.ZCDP(10), metadata=meta_path)
    assert (sess.privacy_unit, sess.name) == ("pid", "people")
    q = sess.sql("SELECT region, COUNT(*) AS n, SUM(income) AS s FROM people GROUP BY region")
    plan = q.plan()
    assert plan.public_keys == (("a",), ("b",), ("c",))
    assert plan.max_groups == 2 and plan.max_rows_per_group == 1
    assert plan.aggregates[1].bounds == (0, 100)  # type: ignore[attr-defined]
    # a given bound and given keys win over the metadata's; OPTIONS win over max_ids
    q2 = sess.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(rho = 1, "
                  "max_groups_contributed = 3) region, SUM(income) FROM people GROUP BY region",
                  keys=["a"], bounds={"income": (0, 50)})
    p2 = q2.plan()
    assert p2.public_keys == (("a",),) and p2.max_groups == 3
    assert p2.aggregates[0].bounds == (0, 50)  # type: ignore[attr-defined]
    r = q.release(budget=dp.ZCDP(1))
    assert r.table["region"].to_list() == ["a", "b", "c"]
    # an omitted bound is an error naming the column, before any charge
    with pytest.raises(UnsupportedSQL, match="give bounds for 'age'"):
        sess.sql("SELECT SUM(age) FROM people").release(budget=dp.ZCDP(1))
    # a column without a key set: private keys
    assert sess.sql("SELECT age, COUNT(*) FROM people GROUP BY age").plan().public_keys is None


def test_dpcert_sql_and_specs_take_metadata(meta_path: Path, tmp_path: Path) -> None:
    from dpcert.cli.main import main

    table().write_parquet(tmp_path / "people.parquet")
    common = ["--no-ledger", "--data", str(tmp_path / "people.parquet"), "--budget-epsilon",
              "100", "--budget-delta", "0"]
    assert main(["sql", "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 0) "
                 "region, AVG(income) AS m FROM people GROUP BY region", "--metadata",
                 str(meta_path), "--out", str(tmp_path / "o1"), *common]) == 0
    out = pl.read_csv(tmp_path / "o1" / "query.csv")
    assert out["region"].to_list() == ["a", "b", "c"]
    (tmp_path / "spec.toml").write_text(
        '[data]\nprivacy_unit = "pid"\nmetadata = "people.toml"\n\n[[query]]\nname = "s"\n'
        'group_by = ["region"]\nkeys = ["a", "b", "c"]\nbudget = { epsilon = 1, delta = 0 }\n'
        'aggregates = [{ kind = "sum", column = "income" }]\n')
    assert main(["release", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "o2"),
                 *common]) == 0
    cert = json.loads((tmp_path / "o2" / "certificate.json").read_text())
    assert "income" in json.dumps(cert["s"]["plan"])
