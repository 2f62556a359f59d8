"""The SQL front end: queries become the Python API's plan; hostile SQL is refused before any
charge, naming the clause; HAVING/ORDER BY/LIMIT and STDDEV are post-processing only."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert import errors
from dpcert.frame.certify import check_certificate
from dpcert.frame.sql_text import prepass
from dpcert.samplers import InsecureSeededSource

KEYS = ["a", "b", "c"]


def table(n: int = 300, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({"pid": np.arange(n), "region": rng.choice(KEYS, n),
                         "income": rng.uniform(0, 100, n), "age": rng.integers(0, 90, n)})


def session(budget: dp.Measure | None = None, seed: int = 1, **kw: object) -> dp.Session:
    return dp.Session(table(), "pid", budget=budget or dp.ApproxDP(10, Fraction(1, 10**6)),
                      _source=InsecureSeededSource(seed), **kw)  # type: ignore[arg-type]


def test_sql_builds_the_python_plan() -> None:
    s = session()
    q = s.sql("SELECT region, COUNT(*) AS n, SUM(income) AS total FROM data "
              "WHERE age >= 18 GROUP BY region", keys=KEYS, bounds={"income": (0, 100)})
    py = (s.query().filter('"age" >= 18').group_by("region", keys=KEYS)
          .agg(dp.count().alias("n"), dp.sum("income", (0, 100)).alias("total"))
          .bound_contributions(1, 1))
    sql_plan, py_plan = q.plan(), py.plan()
    assert sql_plan.sql is not None and "COUNT(*)" in sql_plan.sql
    assert {**sql_plan.describe(), "sql": None} == {**py_plan.describe(), "sql": None}


def test_sql_release_is_charged_as_the_python_release_and_certificate_shows_sql() -> None:
    text = "SELECT region, COUNT(*) AS n, AVG(income) AS m FROM data GROUP BY region"
    r_sql = session().sql(text, keys=KEYS, bounds={"income": (0, 100)}).release(
        dp.ApproxDP(1, 0))
    r_py = (session().query().group_by("region", keys=KEYS)
            .agg(dp.count().alias("n"), dp.mean("income", (0, 100)).alias("m"))
            .bound_contributions(1, 1)).release(dp.ApproxDP(1, 0))
    assert r_sql.to_polars().columns == r_py.to_polars().columns
    assert r_sql.certificate["plan"]["sql"] == text
    assert check_certificate(r_sql.certificate).ok  # re-compiled from the certificate
    assert "sql" not in r_py.certificate["plan"]
    for k in ("charged", "steps", "measurements"):
        assert r_sql.certificate[k] == r_py.certificate[k]


def test_bigquery_syntax_sets_budget_unit_and_bounds() -> None:
    s = session()
    q = s.sql("""SELECT WITH DIFFERENTIAL_PRIVACY
                   OPTIONS(epsilon = 1, delta = 1e-7, max_groups_contributed = 2,
                           privacy_unit_column = pid)
                   region,
                   AVG(income, contribution_bounds_per_group => (0, 100)) AS average_income,
                   COUNT(*, contribution_bounds_per_group => (0, 3)) AS n
                 FROM data GROUP BY region""", keys=KEYS)
    assert q.default_budget == dp.ApproxDP(1, Fraction(1, 10**7))
    plan = q.plan()
    assert (plan.max_groups, plan.max_rows_per_group) == (2, 3)
    assert plan.aggregates[0].bounds == (0.0, 100.0)  # type: ignore[attr-defined]
    res = q.release()
    assert res.to_polars().columns[:2] == ["region", "average_income"]
    assert s.spent == dp.ApproxDP(1, Fraction(1, 10**7)).value or float(s.spent[0]) <= 1


@pytest.mark.parametrize(("text", "msg"), [
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = other) "
     "COUNT(*) FROM data", "privacy_unit_column='other'"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, min_privacy_units_per_group = 3) "
     "COUNT(*) FROM data", "min_privacy_units_per_group"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_groups_contributed = 0) "
     "COUNT(*) FROM data", "max_groups_contributed"),
    ("SELECT COUNT(*, contribution_bounds_per_group => (1, 2.5)) FROM data", "(0, k)"),
])
def test_bad_dp_options_refused(text: str, msg: str) -> None:
    s = session()
    with pytest.raises(errors.UnsupportedSQL, match=_re(msg)):
        s.sql(text).release(dp.ApproxDP(1, 0))
    assert s.spent == s.budget.zero()


def _re(s: str) -> str:
    import re

    return re.escape(s)


HOSTILE = [
    ("SELECT COUNT(*) FROM data WHERE income > (SELECT AVG(income) FROM data)", "subquery"),
    ("SELECT COUNT(*) FROM (SELECT * FROM data)", "subquery"),
    ("WITH t AS (SELECT * FROM data) SELECT COUNT(*) FROM t", "WITH"),
    ("SELECT SUM(income) OVER (PARTITION BY region) FROM data", "window"),
    ("SELECT COUNT(*) FROM data UNION SELECT COUNT(*) FROM data", "UNION"),
    ("SELECT COUNT(*) FROM data EXCEPT SELECT COUNT(*) FROM data", "EXCEPT"),
    ("SELECT my_udf(income) FROM data", "my_udf"),
    ("SELECT COUNT(*) FROM data WHERE my_udf(income) > 1", "my_udf"),
    ("SELECT COUNT(*) FROM data JOIN other ON data.pid = other.pid", "JOIN"),
    ("SELECT COUNT(*) FROM data, other", "JOIN"),
    ("SELECT COUNT(*) FROM data -- comment", "comments"),
    ("SELECT COUNT(*) /* hidden */ FROM data", "comments"),
    ("SELECT COUNT(*) FROM data; DROP TABLE data", "one statement"),
    ("SELECT COUNT(*) FROM data; SELECT COUNT(*) FROM data", "one statement"),
    ("SELECT COUNT(*) FROM data WHERE income > " + "9" * 500, "characters"),
    ("SELECT COUNT(*) FROM data WHERE region = '" + "x" * 500 + "'", "characters"),
    ("SELECT COUNT(*) FROM data WHERE " + " OR ".join(["age = 1"] * 3000), "characters"),
    ('SELECT COUNT(*) FROM data WHERE "age"" OR 1=1 --" > 3', "is not in the table"),
    ("SELECT COUNT(*) FROM secrets", "secrets"),
    ("SELECT COUNT(*) FROM other.data", "only the session's table"),
    ("SELECT DISTINCT region FROM data", "SELECT DISTINCT"),
    ("SELECT COUNT(*) FROM data LIMIT 3 OFFSET 2", "OFFSET"),
    ("SELECT income FROM data", "GROUP BY column"),
    ("SELECT * FROM data", "*"),
    ("SELECT SUM(income * 2) FROM data", "plain column"),
    ("SELECT SUM(income) / COUNT(*) FROM data", "is not supported"),
    ("SELECT COUNT(income) FROM data", "COUNT(*)"),
    ("SELECT COUNT(DISTINCT region) FROM data", "privacy unit"),
    ("SELECT SUM(age) FROM data", "give bounds"),
    ("SELECT COUNT(*) FROM data WHERE COUNT(*) > 1", "HAVING"),
    ("SELECT COUNT(*) FROM data GROUP BY region HAVING income > 3", "not a released column"),
    ("SELECT COUNT(*) FROM data ORDER BY age", "not a released column"),
    ("SELECT COUNT(*) FROM data ORDER BY 5", "SELECT position"),
    ("SELECT COUNT(*) FROM data LIMIT 99999999999999", "LIMIT"),
    ("DELETE FROM data", "DELETE"),
    ("SELECT COUNT(*) FROM data WHERE age > ?", "parameter"),
    ("SELECT DPCERT_BOUNDS(SUM(income), 0) FROM data", "reserved"),
    ("SELECT COUNT(*) FROM data WHERE age > 1 ORDER BY COUNT(*) LIMIT 'x'", "LIMIT"),
    ("SELECT PERCENTILE_CONT(2) WITHIN GROUP (ORDER BY income) FROM data", "[0, 1]"),
    ("SELECT COUNT(*) FROM data AS d WHERE e.age > 3", "names table 'e'"),
    ("SELECT COUNT(*) FROM data WHERE other.data.age > 3", "another database"),
    ("", "non-empty"),
]


@pytest.mark.parametrize(("text", "msg"), HOSTILE)
def test_hostile_sql_refused_before_any_charge(text: str, msg: str) -> None:
    s = session()
    with pytest.raises(errors.UnsupportedSQL, match=_re(msg)):
        s.sql(text, bounds={"income": (0, 100)}).release(dp.ApproxDP(1, 0))
    assert s.spent == s.budget.zero()


def test_where_goes_through_the_row_local_allow_list() -> None:
    s = session()
    with pytest.raises(errors.UnsupportedSQL, match="window"):
        s.sql("SELECT COUNT(*) FROM data WHERE age > AVG(age) OVER ()")
    for cond in ("CAST(region AS INT) > 1", "ROW_NUMBER() > 1", "age / 0 > 1"):
        q = s.sql(f"SELECT COUNT(*) FROM data WHERE {cond}")
        with pytest.raises(errors.UnsafeExpression):
            q.release(dp.ApproxDP(1, 0))
    assert s.spent == s.budget.zero()
    q = s.sql("SELECT COUNT(*) FROM data WHERE UPPER(region) = 'A' AND age IS NOT NULL")
    assert q.plan().filters == ("UPPER(\"region\") = 'A' AND NOT \"age\" IS NULL",)
    assert q.release(dp.ApproxDP(1, 0)).certificate["filters"] == [{"sql": q.plan().filters[0]}]


def test_literals_hiding_syntax_stay_literals() -> None:
    s = session()
    q = s.sql("SELECT COUNT(*) AS n FROM data WHERE region = 'a; DROP TABLE x -- /*'")
    assert q.plan().filters == ("\"region\" = 'a; DROP TABLE x -- /*'",)
    assert q.release(dp.ApproxDP(1, 0)).to_polars().columns[0] == "n"


def test_table_name_and_qualified_columns() -> None:
    s = session(name="people")
    q = s.sql("SELECT p.region, COUNT(*) FROM people AS p WHERE p.age > 3 GROUP BY p.region",
              keys=KEYS)
    assert q.plan().group_keys == ("region",)
    with pytest.raises(errors.UnsupportedSQL, match="'people'"):
        s.sql("SELECT COUNT(*) FROM data")
    with pytest.raises(errors.InvalidParameter, match="name=''"):
        session(name="")


def test_having_order_limit_are_post_processing() -> None:
    s = session()
    q = s.sql("SELECT region AS r, COUNT(*) AS n FROM data GROUP BY region "
              "HAVING COUNT(*) > 95 ORDER BY n DESC LIMIT 2", keys=KEYS)
    plain = s.sql("SELECT region, COUNT(*) AS n FROM data GROUP BY region", keys=KEYS)
    assert q.plan().describe() == {**plain.plan().describe(), "sql": q.sql}  # same release
    released = pl.DataFrame({"region": KEYS, "n": [90.0, 120.0, 99.0],
                             "n_ci_low": [87.0, 117.0, 96.0], "n_ci_high": [93.0, 123.0, 102.0]})
    assert q.post.apply(released).rows() == [("b", 120.0, 117.0, 123.0), ("c", 99.0, 96.0, 102.0)]
    assert q.post.apply(released).columns == ["r", "n", "n_ci_low", "n_ci_high"]
    out = q.release(dp.ApproxDP(1, 0)).to_polars()
    assert out.height <= 2 and (out["n"] > 95).all() and out["n"].is_sorted(descending=True)


def test_stddev_is_the_root_of_the_released_variance() -> None:
    s = session()
    q = s.sql("SELECT STDDEV(income) AS sd FROM data", bounds={"income": (0, 100)})
    agg = q.plan().aggregates[0]
    assert type(agg).__name__ == "Variance" and agg.name == "sd"
    released = pl.DataFrame({"sd": [400.0], "sd_ci_low": [-4.0], "sd_ci_high": [900.0]})
    assert q.post.apply(released).rows() == [(20.0, 0.0, 30.0)]
    out = q.release(dp.ApproxDP(1, 0)).to_polars()
    assert 0 <= out["sd_ci_low"][0] <= out["sd"][0] <= out["sd_ci_high"][0] <= 50


def test_quantile_forms() -> None:
    s = session()
    q = s.sql("SELECT MEDIAN(income), PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY income) AS p90,"
              " APPROX_QUANTILES(age, 4) AS qa FROM data",
              bounds={"income": (0, 100), "age": (0, 100)})
    qs = [a.qs for a in q.plan().aggregates]  # type: ignore[attr-defined]
    assert qs == [(0.5,), (0.9,), (0.0, 0.25, 0.5, 0.75, 1.0)]
    bq = s.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 0) "
               "PERCENTILE_CONT(income, 0.5, contribution_bounds_per_row => (0, 50)) AS med "
               "FROM data")
    agg = bq.plan().aggregates[0]
    assert agg.qs == (0.5,) and agg.bounds == (0.0, 50.0)  # type: ignore[attr-defined]
    assert bq.release().to_polars().columns[0] == "med"


def test_count_distinct_unit_and_private_keys() -> None:
    s = session()
    q = s.sql("SELECT region, COUNT(DISTINCT pid) AS people FROM data GROUP BY region")
    plan = q.plan()
    assert plan.public_keys is None and type(plan.aggregates[0]).__name__ == "CountDistinct"


def test_budget_from_options_follows_the_session_measure() -> None:
    pure = session(dp.PureDP(5))
    assert pure.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5) COUNT(*) FROM "
                    "data").default_budget == dp.PureDP(Fraction(1, 2))
    with pytest.raises(errors.UnsupportedSQL, match="pure"):
        pure.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 1e-5) COUNT(*) "
                 "FROM data")
    z = session(dp.ZCDP(1))
    with pytest.raises(errors.UnsupportedSQL, match="zCDP"):
        z.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM data")
    with pytest.raises(errors.InvalidParameter, match="budget=None"):
        z.sql("SELECT COUNT(*) FROM data").release()


def test_prepass_ignores_lookalikes_in_strings() -> None:
    p = prepass("SELECT COUNT(*) FROM data WHERE region = 'contribution_bounds_per_group => "
                "(0, 1)'", None)
    assert p.bounds == [] and "contribution_bounds_per_group" in p.text


FUZZ_SEEDS = [
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 1e-7, "
     "max_groups_contributed = 2, privacy_unit_column = pid) region, AVG(income, "
     "contribution_bounds_per_group => (0, 100)) AS m, COUNT(*, contribution_bounds_per_group "
     "=> (0, 3)) AS n FROM data GROUP BY region HAVING n > 3 ORDER BY m DESC LIMIT 2", "bigquery"),
    ("SELECT region AS r, COUNT(*) AS n, STDDEV(income), PERCENTILE_CONT(0.5) WITHIN GROUP "
     "(ORDER BY income) FROM data AS d WHERE d.age > 3 AND region IN ('a', 'b') GROUP BY region "
     "HAVING COUNT(*) > 0 ORDER BY 2 LIMIT 5", None),
]


def test_mangled_queries_raise_only_typed_errors() -> None:
    """Token deletions, duplications and swaps of valid queries: every outcome is a query or a
    dpcert error (no IndexError, AssertionError, sqlglot error, ...)."""
    import sqlglot

    s = session()
    rng = np.random.default_rng(0)
    outcomes = {"query": 0, "refused": 0}
    for trial in range(400):
        base, dialect = FUZZ_SEEDS[trial % 2]
        toks = sqlglot.Dialect.get_or_raise(dialect).tokenize(base)
        parts = [base[t.start:t.end + 1] for t in toks]
        for _ in range(int(rng.integers(1, 4))):
            i, j = (int(v) for v in rng.integers(0, len(parts), 2))
            op = int(rng.integers(0, 3))
            if op == 0 and len(parts) > 1:
                del parts[i]
            elif op == 1:
                parts.insert(i, parts[j])
            else:
                parts[i], parts[j] = parts[j], parts[i]
        try:
            s.sql(" ".join(parts), bounds={"income": (0, 100)})
            outcomes["query"] += 1
        except (errors.InvalidParameter, errors.UnsafeExpression):
            outcomes["refused"] += 1
    assert min(outcomes.values()) > 0, outcomes


def test_the_allow_list_still_guards_a_where_the_front_end_let_through(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong variant of the front end that lets subqueries through: the WHERE it renders is
    still refused by the engine's allow-list before any charge (two independent layers)."""
    from dpcert.frame import sql

    monkeypatch.setattr(sql, "_REFUSED_NODES", ())
    s = session()
    q = s.sql("SELECT COUNT(*) FROM data WHERE age IN (SELECT age FROM data)")
    with pytest.raises(errors.UnsafeExpression):
        q.release(dp.ApproxDP(1, 0))
    assert s.spent == s.budget.zero()
