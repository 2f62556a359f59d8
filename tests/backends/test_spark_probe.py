"""The environment before the charge (issue 37, item 3): executors that cannot import dpcert
are found by a probe job and the release falls back to the SQL bounding, with a warning; no
JVM is a typed error.  Each case runs in its own process: a default Spark session (one per
process) whose executors run a fresh virtual environment's Python, or no Java at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _run(script: str, tmp: Path, env: dict[str, str], timeout: int = 480
         ) -> subprocess.CompletedProcess[str]:
    (tmp / "script.py").write_text(textwrap.dedent(script))
    return subprocess.run([sys.executable, str(tmp / "script.py"), SRC, str(tmp)], env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    return {**env, **extra}


@pytest.fixture
def bare_python(tmp_path: Path) -> str:
    """A fresh virtual environment without dpcert, Polars or pyarrow (the same Python
    version as the driver, as Spark requires)."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    py = str(tmp_path / "bare" / "bin" / "python")
    probe = subprocess.run([py, "-c", "import pyarrow"], capture_output=True, check=False)
    assert probe.returncode != 0  # the executors' Python really lacks what dpcert needs
    return py


EXECUTORS_WITHOUT_DPCERT = """\
import json, os, sys, warnings
sys.path.insert(0, sys.argv[1])
tmp = sys.argv[2]
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
import polars as pl
from pyspark.sql import SparkSession
import dpcert as dp
from dpcert.accounting.ledger import Ledger
from dpcert.backends._spark_probe import cached_probe
from dpcert.backends.spark import SparkBackend
from dpcert.errors import BackendUnavailable, ExecutorEnvironmentWarning, ReleaseFailed
from dpcert.samplers import InsecureSeededSource

# a default local session: no PYSPARK_PYTHON; the executors run the bare venv's Python
spark = (SparkSession.builder.master("local[2]")
         .config("spark.driver.host", "127.0.0.1").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.pyspark.python", os.environ["BARE_PYTHON"]).getOrCreate())
spark.sparkContext.setLogLevel("OFF")
rows = [(u % 40, "abc"[u % 3], float(u % 13)) for u in range(200)]
df = spark.createDataFrame(rows, "uid long, g string, x double")
pdf = pl.DataFrame(rows, schema={"uid": pl.Int64, "g": pl.String, "x": pl.Float64},
                   orient="row")
ledger = os.path.join(tmp, "ledger.sqlite")
Ledger(ledger).create("people", dp.PureDP(3000))
out = {}

def query(sess):
    return (sess.query().group_by("g", keys=["a", "b", "c"])
            .agg(dp.count()).bound_contributions(2, 3))

def charges():
    return len(Ledger(ledger).history("people"))

sess = dp.Session(df, "uid", budget=dp.PureDP(3000), ledger=ledger, dataset="people",
                  _source=InsecureSeededSource(7))
EPS = dp.PureDP(1000)  # noise scale 6/1000 (discrete): a count is exact w.p. > 1 - 1e-70
# 1. the warning comes before the charge: as an error, it stops the release uncharged
with warnings.catch_warnings():
    warnings.simplefilter("error", ExecutorEnvironmentWarning)
    try:
        query(sess).release(EPS)
        out["warning_as_error"] = None
    except ExecutorEnvironmentWarning as w:
        out["warning_as_error"] = str(w)
out["charges_after_warning"] = charges()
out["spent_after_warning"] = str(sess.spent)
# 2. released with the SQL bounding: charged once
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    rel = query(sess).release(EPS)
out["warnings"] = [str(w.message) for w in seen
                   if issubclass(w.category, ExecutorEnvironmentWarning)]
out["charges"] = charges()
out["spent"] = str(sess.spent)
out["probe_ok"] = cached_probe(spark).ok
out["bounding"] = SparkBackend()._bounding(df)
out["spark_table"] = rel.to_polars().to_dicts()
# the same release on Polars (same seed, so the same bounding key)
ref = dp.Session(pdf, "uid", budget=dp.PureDP(3000), _source=InsecureSeededSource(7))
out["polars_table"] = query(ref).release(EPS).to_polars().to_dicts()
# the exact statistics of the fallback, for a fixed key: bit-identical to Polars
from fractions import Fraction
from dpcert.backends.base import BoundSpec, StatSpec
from dpcert.backends.polars import PolarsBackend
spec = BoundSpec("uid", ("g",), 2, 3, key=bytes(range(16)), value_columns=("x",))
stats = [StatSpec("n", "count"),
         StatSpec("s", "fixed_sum", "x", Fraction(0), Fraction(12), exponent=-3)]
sb, pb = SparkBackend(), PolarsBackend()
a = sb.group_stats(sb.keyed_bound(df, spec), ["g"], None, stats)
b = pb.group_stats(pb.keyed_bound(pdf, spec), ["g"], None, stats)
out["stats_equal"] = (a.keys == b.keys and all(
    a.values[k].tolist() == b.values[k].tolist() for k in ("n", "s")))
out["stats_n"] = a.values["n"].tolist()
# 3. the Arrow bounding asked for explicitly: refused before the charge
spark.conf.set("spark.dpcert.bounding", "arrow")
try:
    query(sess).release(EPS)
    out["explicit_arrow"] = None
except BackendUnavailable as e:
    out["explicit_arrow"] = str(e)
out["charges_after_explicit_arrow"] = charges()
spark.conf.unset("spark.dpcert.bounding")
# 4. the Arrow bounding run anyway (no session, no probe first): a typed, classed failure
m = query(sess).measurement(EPS, backend=SparkBackend("arrow"))
try:
    m(df)
    out["arrow_failure"] = None
except ReleaseFailed as e:
    out["arrow_failure"] = [str(e), e.failure_class]
print("RESULT " + json.dumps(out))
spark.stop()
"""


@pytest.mark.spark
def test_executors_without_dpcert_fall_back_to_sql_before_the_charge(
        tmp_path: Path, bare_python: str) -> None:
    pytest.importorskip("pyspark")
    proc = _run(EXECUTORS_WITHOUT_DPCERT, tmp_path, _clean_env(BARE_PYTHON=bare_python))
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines and "JAVA_GATEWAY_EXITED" in proc.stderr and os.environ.get("CI") != "true":
        pytest.skip("no Java")
    assert lines, proc.stderr[-4000:]
    out = json.loads(lines[0].removeprefix("RESULT "))
    (tmp_path / "result.json").write_text(json.dumps(out, indent=1))
    # the warning names the cause and the remedy, before anything is charged
    assert "the executors' Python cannot import dpcert" in out["warning_as_error"], out
    assert "PYSPARK_PYTHON" in out["warning_as_error"] and "dpcert[spark]" in out[
        "warning_as_error"]
    assert out["charges_after_warning"] == 0 and out["spent_after_warning"] == "0"
    # the release ran with the SQL bounding, charged exactly once
    assert len(out["warnings"]) == 1 and out["charges"] == 1 and out["spent"] == "1000"
    assert out["probe_ok"] is False and out["bounding"] == "sql"
    assert out["spark_table"] == out["polars_table"]
    assert out["stats_equal"] is True and sum(out["stats_n"]) > 0
    # an explicit Arrow bounding is refused before the charge; run anyway, its failure says
    # it is an import error (a fresh data-free probe fails too), with nothing from the data
    assert "bounding='arrow'" in out["explicit_arrow"] and "PYSPARK_PYTHON" in out[
        "explicit_arrow"]
    assert out["charges_after_explicit_arrow"] == 1
    text, cls = out["arrow_failure"]
    assert cls == "environment: import error" and "environment: import error" in text
    assert "Traceback" not in text and "pyarrow" not in text


NO_JAVA = """\
import sys
sys.path.insert(0, sys.argv[1])
tmp = sys.argv[2]
import polars as pl
import dpcert as dp
from dpcert.accounting.ledger import Ledger
from dpcert.backends.spark import read_table
from dpcert.cli.main import main
from dpcert.errors import BackendUnavailable

pl.DataFrame({"pid": [1, 2], "g": ["a", "b"]}).write_parquet(tmp + "/people.parquet")
try:
    read_table(tmp + "/people.parquet", master="local[1]")
    print("RESULT none")
except BackendUnavailable as e:
    print("RESULT " + str(e))
assert main(["budget", "init", tmp + "/ledger.sqlite", "people", "--unbound",
             "--epsilon", "10"]) == 0
open(tmp + "/spec.toml", "w").write('''
[data]
privacy_unit = "pid"

[[query]]
name = "q"
group_by = ["g"]
keys = ["a", "b"]
max_groups = 1
max_rows_per_group = 1
budget = { epsilon = 1, delta = 0 }
aggregates = [{ kind = "count" }]
''')
print("CODE", main(["release", tmp + "/spec.toml", "--ledger", tmp + "/ledger.sqlite",
                    "--dataset", "people", "--data", tmp + "/people.parquet",
                    "--engine", "spark", "--spark-master", "local[1]", "--out", tmp + "/out"]))
print("CHARGES", len(Ledger(tmp + "/ledger.sqlite").history("people")))
"""


def test_no_java_is_a_typed_error_before_any_charge(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    proc = _run(NO_JAVA, tmp_path, _clean_env(JAVA_HOME=str(tmp_path / "no-java")),
                timeout=120)
    out = {ln.split(" ", 1)[0]: ln.split(" ", 1)[1] for ln in proc.stdout.splitlines()
           if ln.split(" ", 1)[0] in ("RESULT", "CODE", "CHARGES")}
    assert "Java 17" in out["RESULT"] and "JAVA_HOME" in out["RESULT"], proc.stderr[-3000:]
    assert str(tmp_path / "no-java") in out["RESULT"]
    assert out["CODE"] == "1" and "BackendUnavailable" in proc.stderr  # refused, nothing charged
    assert out["CHARGES"] == "0"


# -- the probe and the bounding choice, on stand-ins for a Spark session (no JVM) -------------

class _Context:
    _jsc = object()


class _Job:
    def __init__(self, spark: _FakeSpark) -> None:
        self.spark = spark

    def mapInArrow(self, f: Any, schema: str) -> _Job:
        self.f = f
        return self

    def collect(self) -> list[dict[str, Any]]:
        self.spark.jobs += 1
        if self.spark.fail is not None:
            raise self.spark.fail
        batch = next(iter(self.f(iter([]))))
        return [{"version": batch.column(0)[0].as_py()}]


class _FakeSpark:
    version = "4.3.0"

    def __init__(self, fail: BaseException | None = None) -> None:
        self.sparkContext, self.fail, self.jobs = _Context(), fail, 0

    def range(self, *args: int) -> _Job:
        return _Job(self)


class PythonException(Exception):
    def getCondition(self) -> str:
        return "PYTHON_EXCEPTION"


class Py4JNetworkError(Exception):
    pass


def test_the_probe_runs_once_per_context_and_names_the_missing_module() -> None:
    from dpcert.backends._spark_probe import cached_probe, executor_probe

    good = _FakeSpark()
    assert cached_probe(good) is None
    assert executor_probe(good).ok and executor_probe(good).ok and good.jobs == 1
    bad = _FakeSpark(PythonException("Traceback ...\nModuleNotFoundError: No module named "
                                     "'polars'"))
    res = executor_probe(bad)
    assert not res.ok and res.reason == "the executors' Python cannot import polars"
    assert cached_probe(bad) == res and executor_probe(bad) == res and bad.jobs == 1
    assert executor_probe(bad, fresh=True) == res and bad.jobs == 2


def test_a_spark_that_does_not_answer_is_backend_unavailable() -> None:
    from dpcert.backends._spark_probe import alive, executor_probe
    from dpcert.errors import BackendUnavailable

    with pytest.raises(BackendUnavailable, match="JVM does not answer"):
        executor_probe(_FakeSpark(Py4JNetworkError("Answer from Java side is empty")))
    stopped = _FakeSpark()
    stopped.sparkContext._jsc = None  # type: ignore[assignment]
    with pytest.raises(BackendUnavailable, match="start a new SparkSession"):
        alive(stopped)


def test_session_start_problems_are_typed_before_any_charge() -> None:
    from dpcert.backends.spark import _started
    from dpcert.errors import BackendUnavailable

    class Gateway(RuntimeError):
        def getCondition(self) -> str:
            return "JAVA_GATEWAY_EXITED"

    class RetriesExceeded(Exception):
        pass

    def raise_(e: BaseException) -> Any:
        raise e

    with pytest.raises(BackendUnavailable, match="Java 17"):
        _started(lambda: raise_(Gateway("[JAVA_GATEWAY_EXITED]")))
    with pytest.raises(BackendUnavailable, match="remote= address"):
        _started(lambda: raise_(RetriesExceeded("[RETRIES_EXCEEDED]")))
    with pytest.raises(FileNotFoundError):  # anything else is not the environment's
        _started(lambda: raise_(FileNotFoundError("people.parquet")))
