"""Before the charge: can this Spark session's executors run the Arrow bounding?

The Arrow bounding (`dpcert.backends._spark_arrow`) runs dpcert, Polars and pyarrow in
the executors' Python.  A default local Spark started from a virtual environment runs its
workers on whatever ``python3`` the environment gives (no ``PYSPARK_PYTHON``), which usually
lacks them.  `executor_probe` finds out with one tiny job on no data
(``spark.range(1)``, one partition, through ``mapInArrow`` exactly as the bounding runs):
the partition imports what the bounding imports and returns its dpcert version.  Its answer is
kept per ``SparkContext`` (classic) or per session (Spark Connect), so the job runs once.

The job reads no user data, so its error text may be read and shown: it names the module the
executors lack.  A JVM that has stopped or a Connect server out of reach raises
`BackendUnavailable` (before any charge), naming the remedy.

Examples
--------
>>> next(iter(_probe_partition(iter([])))).column(0).to_pylist() == [_VERSION]
True
"""

from __future__ import annotations

import contextlib
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from dpcert._version import __version__ as _VERSION
from dpcert.errors import BackendUnavailable
from dpcert.operator import classify

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as ConnectSession

__all__ = ["ProbeResult", "Session", "alive", "cached_probe", "executor_probe"]

#: A Spark session, classic or Spark Connect (two unrelated classes).
Session: TypeAlias = "SparkSession | ConnectSession"

#: What to do about executors that cannot run the Arrow bounding.
REMEDY = ("install dpcert[spark] (same version) in the executors' Python, or point Spark at a "
          "Python that has it (PYSPARK_PYTHON or spark.pyspark.python)")


@dataclass(frozen=True)
class ProbeResult:
    """The executors' answer: ``ok`` when they can run the Arrow bounding, else ``reason``."""

    ok: bool
    reason: str = ""


_CACHE: weakref.WeakKeyDictionary[object, ProbeResult] = weakref.WeakKeyDictionary()


def _probe_partition(batches: Iterator[Any]) -> Iterator[Any]:
    """``mapInArrow`` function run on an executor: imports what the bounding imports."""
    import pyarrow as pa

    import dpcert.backends._spark_arrow
    import dpcert.backends.polars  # noqa: F401  (Polars and NumPy with it)
    from dpcert._version import __version__

    for _ in batches:
        pass
    yield pa.RecordBatch.from_pydict({"version": [__version__]})


def _owner(spark: Session) -> object:
    """What the executors belong to: the ``SparkContext`` (classic) or the session (Connect)."""
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return spark
    return spark.sparkContext


def cached_probe(spark: Session) -> ProbeResult | None:
    """The probe's answer for ``spark`` if it has run, else ``None``."""
    try:
        return _CACHE.get(_owner(spark))
    except TypeError:  # not weak-referenceable: never cached
        return None


def _failure_reason(e: Exception) -> str:
    """Why the probe job failed, from its (data-free) error."""
    text = str(e)
    missing = re.findall(r"No module named '([\w.]+)'", text)
    if missing:
        return f"the executors' Python cannot import {missing[-1].split('.')[0]}"
    cond = getattr(e, "getCondition", None)
    code = cond() if callable(cond) else None
    if code == "PYTHON_VERSION_MISMATCH":
        return "the executors' Python is not the driver's Python version"
    detail = f"{type(e).__name__}, {code}" if code else type(e).__name__
    return f"the probe job failed on the executors ({detail})"


def executor_probe(spark: Session, *, fresh: bool = False) -> ProbeResult:
    """Run (once per context, or again when ``fresh``) the probe job on ``spark``.

    Raises `BackendUnavailable` when Spark itself is out of reach.
    """
    if not fresh:
        got = cached_probe(spark)
        if got is not None:
            return got
    try:
        rows = (spark.range(0, 1, 1, 1).mapInArrow(_probe_partition, "version string")
                .collect())
        version = rows[0]["version"] if rows else None
        result = (ProbeResult(True) if version == _VERSION else ProbeResult(
            False, f"the executors run dpcert {version}, the driver {_VERSION}"))
    except Exception as e:  # the job reads no data: its error may be read
        if classify(e) == "environment: connection lost":
            raise BackendUnavailable(_unreachable(spark)) from e
        result = ProbeResult(False, _failure_reason(e))
    with contextlib.suppress(TypeError):  # not weak-referenceable: never cached
        _CACHE[_owner(spark)] = result
    return result


def _unreachable(spark: Session) -> str:
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return ("the Spark Connect server does not answer: start it, or check the remote= "
                "address and the network; nothing was charged")
    return ("the Spark session's JVM does not answer (stopped or crashed): start a new "
            "SparkSession (Java 17 on JAVA_HOME or PATH); nothing was charged")


def alive(spark: Session) -> None:
    """Raise `BackendUnavailable` unless ``spark`` answers (a call with
    no data: its version)."""
    if (not type(spark).__module__.startswith("pyspark.sql.connect")
            and getattr(spark.sparkContext, "_jsc", None) is None):
        raise BackendUnavailable(_unreachable(spark))
    try:
        str(spark.version)
    except Exception as e:
        raise BackendUnavailable(_unreachable(spark)) from e
