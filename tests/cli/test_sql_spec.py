"""``sql = "SELECT ..."`` queries in a release spec: the same checks, charge and certificate as
the Python ``Session.sql``; a spec mixing SQL and structured keys is refused before any
charge."""

from __future__ import annotations

import json
from typing import Any

import pytest

SQL_QUERY = '''[[query]]
name = "by_region_sql"
sql = """SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 0,
  max_groups_contributed = 1, privacy_unit_column = pid)
  region, COUNT(*, contribution_bounds_per_group => (0, 2)) AS n, SUM(income) AS total
  FROM data GROUP BY region ORDER BY region"""
keys = ["n", "s"]
bounds = {{ income = [0, 100] }}
{extra}
'''


def test_a_sql_query_releases_with_its_sql_in_the_certificate(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert curator.release(curator.queries(SQL_QUERY.format(extra=""))) == 0
    cert = json.loads((curator.out / "by_region_sql.certificate.json").read_text())
    assert "WITH DIFFERENTIAL_PRIVACY" in cert["plan"]["sql"]
    assert cert["plan"]["max_rows_per_group"] == 2
    assert cert["release_total"]["epsilon"]["exact"] == "1"
    assert len(curator.history()) == 1


@pytest.mark.parametrize(("extra", "needle"), [
    ('group_by = ["region"]', "sql replaces ['group_by']"),
    ('aggregates = [ { kind = "count" } ]', "sql replaces ['aggregates']"),
    ("", ""),
])
def test_bad_sql_queries_are_refused_before_any_charge(
        curator: Any, capsys: pytest.CaptureFixture[str], extra: str, needle: str) -> None:
    body = SQL_QUERY.format(extra=extra)
    if not extra:  # a clause outside the subset, named in the error
        body, needle = body.replace("FROM data", "FROM data JOIN other ON TRUE"), "JOIN"
    assert curator.release(curator.queries(body)) != 0
    assert needle in capsys.readouterr().err
    curator.assert_nothing_charged()


def test_dpcert_sql_releases_one_query(curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from dpcert.cli.main import main

    sql = ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5, delta = 0) region, "
           "COUNT(*) AS n, AVG(income) AS m FROM data GROUP BY region")
    flags = ["--ledger", curator.ledger, "--dataset", "people", "--out", str(curator.out)]
    assert main(["sql", "SELECT COUNT(*) FROM data; SELECT 1", "--privacy-unit", "pid",
                 *flags]) != 0
    assert "one statement" in capsys.readouterr().err
    curator.assert_nothing_charged()
    assert main(["sql", sql, "--privacy-unit", "pid", "--keys", '["n", "s"]',
                 "--bounds", "income=0:100", "--name", "by_region", *flags]) == 0
    cert = json.loads((curator.out / "by_region.certificate.json").read_text())
    assert cert["plan"]["sql"] == sql and len(curator.history()) == 1


def test_dpcert_sql_errors_name_the_query_not_a_scratch_file(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from dpcert.cli.main import main

    sql = ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5, delta = 0) region, "
           "AVG(incme) AS m FROM data GROUP BY region")
    assert main(["sql", sql, "--privacy-unit", "pid", "--bounds", "incme=0:100", "--name",
                 "wages", "--ledger", curator.ledger, "--dataset", "people"]) == 2
    err = capsys.readouterr().err
    assert "SpecError: query 'wages': " in err and "'incme'" in err
    assert "sql-query.toml" not in err
    curator.assert_nothing_charged()
