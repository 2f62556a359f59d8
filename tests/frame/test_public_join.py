"""SQL joins with a public table (``docs/proofs/frame_public_join.md``): the join step is 1-stable
and named in the trace; its public columns are filters and group keys (public keys from the
public table); every other join, a non-unique or null key, mismatched key types, and a public
table holding the privacy unit are refused before any charge; Polars and DuckDB agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert.backends.polars import PolarsBackend
from dpcert.core.frames import FrameDomain, UnitDistance
from dpcert.core.trace import trace
from dpcert.errors import InvalidParameter, UnsupportedSQL
from dpcert.frame.public_join import PublicJoin, join_frame, make_public_join, plan_join

PROOFS = Path(__file__).resolve().parents[2] / "docs" / "proofs"


def people(n: int = 600) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    return pl.DataFrame({"pid": np.arange(n) % 300, "rid": rng.choice([10, 20, 30, 99], n),
                         "x": rng.uniform(0, 1, n)})


REGIONS = pl.DataFrame({"rid": [10, 20, 30, 40], "region": ["n", "s", "e", "w"],
                        "big": [True, False, True, False]})


def session(data: Any = None, **kw: Any) -> dp.Session:
    return dp.Session(people() if data is None else data, "pid", budget=dp.ZCDP(100),
                      public={"regions": REGIONS}, **kw)


def test_join_is_one_stable_and_names_its_proof() -> None:
    sess = session()
    q = sess.sql("SELECT region, COUNT(*) AS n FROM data JOIN regions "
                 "ON data.rid = regions.rid GROUP BY region")
    m = q.measurement(dp.ZCDP(1), key=bytes(16))
    steps = trace(m, 1)
    join_steps = [s for s in steps if s.constructor == "public_join"]
    assert len(join_steps) == 1 and "frame_public_join.md" in join_steps[0].proof
    assert (PROOFS / "frame_public_join.md").is_file()
    plain = (sess.query().group_by("rid", keys=[10, 20, 30, 40]).agg(dp.count())
             .bound_contributions(1, 1).measurement(dp.ZCDP(1), key=bytes(16)))
    assert m.map(1) == plain.map(1)
    assert q.plan().public_keys == (("n",), ("s",), ("e",), ("w",))


def test_join_rows_and_public_columns_as_filters_and_keys() -> None:
    df = people()
    sess = session(df)
    r = sess.sql("SELECT region, COUNT(*) AS n FROM data d LEFT JOIN regions r USING (rid) "
                 "WHERE big = TRUE GROUP BY region",
                 ).release(budget=dp.ZCDP(50))
    assert r.table["region"].to_list() == ["n", "s", "e", "w"]
    got = dict(zip(r.table["region"].to_list(), r.table["n"].to_list(), strict=True))
    assert got["s"] == pytest.approx(0, abs=3) and got["w"] == pytest.approx(0, abs=3)
    assert "JOIN regions" in r.certificate["plan"]["sql"]
    # the joined frame: inner drops rid 99, left keeps it with null public columns
    join = plan_join(sess, "regions", "inner", "rid", "rid")
    inner = join_frame("polars", df.lazy(), join).collect()
    left = join_frame("polars", df.lazy(), plan_join(sess, "regions", "left", "rid", "rid")
                      ).collect()
    assert inner.height == df.filter(pl.col("rid") != 99).height and left.height == df.height
    assert left.filter(pl.col("rid") == 99)["region"].null_count() == left.filter(
        pl.col("rid") == 99).height


@pytest.mark.parametrize(("sql", "msg"), [
    ("SELECT COUNT(*) FROM data RIGHT JOIN regions ON data.rid = regions.rid", "RIGHT JOIN"),
    ("SELECT COUNT(*) FROM data FULL OUTER JOIN regions ON data.rid = regions.rid", "FULL"),
    ("SELECT COUNT(*) FROM data CROSS JOIN regions", "CROSS JOIN"),
    ("SELECT COUNT(*) FROM data NATURAL JOIN regions", "NATURAL"),
    ("SELECT COUNT(*) FROM data LEFT SEMI JOIN regions ON data.rid = regions.rid", "SEMI"),
    ("SELECT COUNT(*) FROM data, regions", "only an equality"),
    ("SELECT COUNT(*) FROM data JOIN regions ON data.rid > regions.rid", "only an equality"),
    ("SELECT COUNT(*) FROM data JOIN regions ON data.rid = regions.rid AND big = TRUE",
     "only an equality"),
    ("SELECT COUNT(*) FROM data JOIN regions ON data.rid = data.pid", "equate one column"),
    ("SELECT COUNT(*) FROM data JOIN regions USING (rid, region)", "one key column"),
    ("SELECT COUNT(*) FROM data JOIN other ON data.rid = other.rid", "not a public table"),
    ("SELECT COUNT(*) FROM data JOIN (SELECT * FROM regions) r ON data.rid = r.rid",
     "subquery"),
    ("SELECT COUNT(*) FROM data JOIN regions ON data.rid = regions.rid "
     "JOIN regions r2 ON data.rid = r2.rid", "one join"),
    ("SELECT COUNT(*) FROM data JOIN regions ON data.x = regions.rid", "types"),
    ("SELECT COUNT(*) FROM data JOIN regions ON data.rid = regions.region", "types"),
    ("SELECT regions.pid, COUNT(*) FROM data JOIN regions USING (rid) GROUP BY regions.pid",
     "not in public table"),
])
def test_other_joins_are_refused_before_any_charge(sql: str, msg: str) -> None:
    sess = session()
    with pytest.raises(UnsupportedSQL, match=msg):
        sess.sql(sql).release(budget=dp.ZCDP(1))
    assert sess.spent == 0


def test_bad_public_tables_are_refused_before_any_charge() -> None:
    dup = pl.DataFrame({"rid": [10, 10], "region": ["n", "s"]})
    nul = pl.DataFrame({"rid": [10, None], "region": ["n", "s"]})
    clash = pl.DataFrame({"rid": [10], "x": [1.0]})
    for pub, msg in ((dup, "not unique"), (nul, "null"), (clash, r"\['x'\] are also private")):
        sess = dp.Session(people(), "pid", budget=dp.ZCDP(1), public={"r": pub})
        with pytest.raises(UnsupportedSQL, match=msg):
            sess.sql("SELECT COUNT(*) FROM data JOIN r USING (rid)").release(
                budget=dp.ZCDP(1))
        assert sess.spent == 0
    with pytest.raises(InvalidParameter, match="privacy unit"):
        dp.Session(people(), "pid", budget=dp.ZCDP(1),
                   public={"r": pl.DataFrame({"rid": [1], "pid": [1]})})
    with pytest.raises(InvalidParameter, match="other than the session's table"):
        dp.Session(people(), "pid", budget=dp.ZCDP(1), public={"data": REGIONS})


def test_a_non_unique_key_would_count_a_unit_twice() -> None:
    """The wrong variant the uniqueness check exists for: joined without it, one unit's row
    becomes two rows, so adding one unit moves a count by 2 (not 1-stable)."""
    one = pl.DataFrame({"pid": [1], "rid": [10], "x": [0.5]})
    dup = pl.DataFrame({"rid": [10, 10], "region": ["n", "s"]})
    bad = PublicJoin("r", "inner", "rid", "rid", ("region",), dup)
    assert join_frame("polars", one.lazy(), bad).collect().height == 2
    schema = PolarsBackend().schema(one)
    dom = FrameDomain(tuple(schema.items()), PolarsBackend().schema)
    t = make_public_join(dom, UnitDistance("pid"), dom, bad, "polars")
    assert t.map(1) == 1  # the map is only sound because plan_join refuses this table


def test_polars_and_duckdb_give_the_same_joined_statistics() -> None:
    duckdb = pytest.importorskip("duckdb")
    from dpcert.backends.base import BoundSpec, StatSpec
    from dpcert.backends.duckdb import DuckDBBackend, to_duck

    df = people()
    con = duckdb.connect()
    con.register("src", df.to_arrow())
    con.execute("CREATE TABLE p AS SELECT * FROM src")
    pl_sess, db_sess = session(df), session((con, "p"))
    for how in ("inner", "left"):
        a = join_frame("polars", df.lazy(), plan_join(pl_sess, "regions", how, "rid", "rid"))
        b = join_frame("duckdb", to_duck((con, "p")),
                       plan_join(db_sess, "regions", how, "rid", "rid"))
        spec = BoundSpec("pid", ("region",), 1, 2, key=bytes(range(16)), value_columns=("x",))
        keys = [("n",), ("s",), ("e",), ("w",), (None,)]
        sa = PolarsBackend().group_stats(PolarsBackend().keyed_bound(a, spec), ["region"], keys,
                                         [StatSpec("n", "count")])
        db = DuckDBBackend()
        sb = db.group_stats(db.keyed_bound(b, spec), ["region"], keys, [StatSpec("n", "count")])
        assert sa.values["n"].tolist() == sb.values["n"].tolist()
        assert (sa.values["n"][-1] > 0) == (how == "left")


def test_a_duckdb_session_joins_a_duckdb_public_table() -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.execute("CREATE TABLE p AS SELECT i % 100 AS pid, i % 4 AS rid FROM range(1000) t(i)")
    con.execute("CREATE TABLE r AS SELECT * FROM (VALUES (0, 'a'), (1, 'b'), (2, 'c')) "
                "v(rid, name)")
    sess = dp.Session((con, "p"), "pid", budget=dp.ZCDP(100), public={"regions": (con, "r")})
    res = sess.sql("SELECT name, COUNT(*) AS n FROM data JOIN regions USING (rid) "
                   "GROUP BY name").release(budget=dp.ZCDP(50))
    assert res.table["name"].to_list() == ["a", "b", "c"]
    assert res.certificate["backend"] == "duckdb"
    assert [round(v) for v in res.table["n"].to_list()] == [25, 25, 25]  # ρ = 50: sd < 0.2
