"""The Spark backend: `FrameOps` on pyspark DataFrames.

Runs on classic ``pyspark.sql.DataFrame`` and on Spark Connect DataFrames alike: no RDD, no
``SparkContext``, no Python function per row.  Filters and grouped statistics are Spark SQL
expressions; only the per-group integer statistics (K rows) are collected.

Contribution bounding keeps the rows of the rule of `dpcert.backends.polars`, in one of two
ways (``SparkBackend(bounding=...)``, or the session setting ``spark.dpcert.bounding``):

* ``"arrow"`` (default): one shuffle of ``(u, g, v)`` by the unit, then
  `dpcert.backends._spark_arrow.ArrowBound` on each partition with ``mapInArrow``: the
  partition's Arrow batches go through `dpcert.backends.polars.keep_mask`, the Polars
  backend's own NumPy code (one packed-key sort), so both backends keep the same rows by
  construction.  No JVM sort at all; the executors need dpcert (``pip install dpcert[spark]``
  brings Polars and pyarrow) and hold one partition at a time in memory.  Before the charge,
  `SparkBackend.probe_environment` runs a tiny job on no data
  (`dpcert.backends._spark_probe`, once per context); executors that cannot run the
  Arrow bounding get the SQL one instead, with an
  `ExecutorEnvironmentWarning`.
* ``"sql"``: Spark SQL only (nothing of dpcert on the executors), with Spark's own ``xxhash64``
  (bit-identical to `dpcert.backends._hash`): one shuffle by the unit and *one* exact sort
  by ``(h(u), u, h(u,g), g, h(u,g,v), v)`` (groups and values ascending, nulls last), read by
  three window functions, all partitioned by the unit (``h(u)`` first, a function of ``u``)::

    pair_rank  = dense_rank()  over (partition by h(u), u  order by h(u,g), g)
    pair_start = rank()        over (partition by h(u), u  order by h(u,g), g)
    row        = row_number()  over (partition by h(u), u  order by h(u,g), g, h(u,g,v), v)
    keep       = pair_rank <= max_groups and row - pair_start < max_rows_per_group

  ``row - pair_start`` is the row's place in its ``(u, g)`` pair (``rank`` is the unit place of
  the pair's first row).  With no window partitioned by a group column, a later filter on the
  group (public keys) cannot be pushed between the windows, which would cost a second sort.
  Before the shuffle, each map task radix-sorts its rows by one packed long (top bits of
  ``h(u)``, then of ``h(u,g)``): a speed hint only, so that the reduce side's exact sort merges
  nearly sorted runs (an always-true ``spark_partition_id() >= 0`` filter keeps the optimizer
  from dropping it).  The hashes are computed after the shuffle, so only ``(u, g, v)`` cross
  it.  (Aggregating ``(unit, group)`` pairs first and joining back the pairs over ``R`` rows
  was measured slower: the pair table is as large as the data and the join adds two shuffles.)

On 10⁷ rows (``benchmarks/bench_spark.py``, local[2]) the Arrow way is 1.2–1.5× faster than
the SQL way and needs half the memory: Spark's sort of 10⁷ rows costs more than shipping them
to Python as Arrow and sorting one packed ``uint64`` key per row with NumPy.

Fixed-point values use ``rint`` (``Math.rint``: half to even, exact; the ``bround`` function goes
through ``BigDecimal``, about three times slower here) and are summed as two ``try_sum`` of
longs, exact below 2**33 rows per group (``decimal(38,0)`` beyond).  Datetime keys are hashed
and grouped as microseconds since the epoch (`dpcert.backends._hash`).

Examples
--------
>>> SparkBackend().name
'spark'
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeGuard, TypeVar

import numpy as np

from dpcert._types import Array, IntArray
from dpcert.backends import _hash
from dpcert.backends._fixed import check_specs, fixed_bounds, private_key_order
from dpcert.backends._sql_ops import SqlTreeOps, canon_key, public_keys
from dpcert.backends.admission import (
    AdmittedColumn,
    AdmittedType,
    Role,
    internal_name,
    refuse,
)
from dpcert.backends.base import BoundSpec, GroupedStats, Key, StatSpec
from dpcert.errors import (
    BackendUnavailable,
    ExecutorEnvironmentWarning,
    InvalidParameter,
    ReleaseFailed,
)
from dpcert.operator import OPERATOR_LOG, UNKNOWN, FailureClass, classify

if TYPE_CHECKING:
    from pyspark.sql import Column, Window
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql.types import DataType

    from dpcert.backends._spark_functions import SparkFunctions
    from dpcert.backends._spark_probe import Session
    from dpcert.backends.spark_expr import CheckedPredicate

__all__ = ["SparkBackend", "local_session", "read_table"]

_T = TypeVar("_T")

#: Fixed-point sums run as two ``try_sum`` of longs: ``v >> 30`` (``|.| <= 2**23``) and
#: ``v & (2**30 - 1)``; both are exact for groups below 2**33 rows, beyond which ``try_sum``
#: gives null and the group's sums are recomputed as ``decimal(38,0)``.
_SPLIT = 30
_LOW = (1 << _SPLIT) - 1
#: Bits of h(u, g) in the map-side sort hint (the rest: the top bits of h(u)).
_HINT_BITS = 24
#: Ways to bound contributions (:class:`SparkBackend`) and the session setting that picks one.
BOUNDINGS = ("arrow", "sql")
BOUNDING_CONF = "spark.dpcert.bounding"
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_US = dt.timedelta(microseconds=1)

_TYPES = {"ByteType": "int", "ShortType": "int", "IntegerType": "int", "LongType": "int",
          "FloatType": "float", "DoubleType": "float", "StringType": "str",
          "VarcharType": "str", "CharType": "str", "BooleanType": "bool", "DateType": "date",
          "TimestampType": "datetime", "TimestampNTZType": "datetime"}


def local_session(master: str = "local[2]", remote: bool = False, **conf: str) -> Session:
    """A Spark session on this machine with quiet, loopback-only settings; its Python workers
    run this interpreter.

    ``remote=True`` starts Spark Connect in-process (``SparkSession.builder.remote(master)``).
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers (the Arrow bounding) run this interpreter, which has dpcert
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    tmp = tempfile.mkdtemp(prefix="dpcert-spark-")
    if not remote:  # a local Connect server serves on an ephemeral loopback port
        conf = {"spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.connect.grpc.binding.port": "0", **conf}
    settings = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                "spark.sql.shuffle.partitions": "4", "spark.local.dir": tmp,
                "spark.sql.warehouse.dir": os.path.join(tmp, "warehouse"), **conf}
    builder = SparkSession.builder.remote(master) if remote else SparkSession.builder.master(master)
    for k, v in settings.items():
        builder = builder.config(k, v)
    with warnings.catch_warnings():  # Connect re-applies static settings to the started server
        warnings.filterwarnings("ignore", message="Failed to set spark", category=UserWarning)
        return _started(builder.getOrCreate)


def read_table(path: str, *, master: str | None = None, remote: str | None = None
               ) -> SparkFrame:
    """A lazy Spark DataFrame of a ``.parquet`` (file or directory) or ``.csv`` path, on the
    active session, a new one at ``master`` (e.g. ``yarn``, ``local[4]``) or a Spark Connect
    ``remote`` (``sc://host:15002``).  Reads no rows except CSV schema inference."""
    from pyspark.sql import SparkSession

    spark: Session
    if remote is not None:
        spark = _started(SparkSession.builder.remote(remote).getOrCreate)
    elif master is not None and master.startswith("local"):
        spark = local_session(master)
    elif master is not None:
        spark = _started(SparkSession.builder.master(master).getOrCreate)
    else:
        spark = _started(SparkSession.builder.getOrCreate)
    if path.endswith(".csv"):
        return _started(lambda: spark.read.csv(path, header=True, inferSchema=True))
    if path.endswith(".parquet") or os.path.isdir(path):
        return _started(lambda: spark.read.parquet(path))
    raise InvalidParameter(f"path={path!r}: expected a .csv or .parquet path")


#: Spark types a value column may have (read as double).
_NUMERIC_TYPES = frozenset({"ByteType", "ShortType", "IntegerType", "LongType", "FloatType",
                            "DoubleType", "DecimalType"})


def _started(start: Callable[[], _T]) -> _T:
    """``start()`` (a session or a first read); Java and Spark Connect problems become
    `BackendUnavailable`, naming the remedy (nothing is charged yet)."""
    try:
        return start()
    except Exception as e:
        cond = getattr(e, "getCondition", None)
        if callable(cond) and cond() == "JAVA_GATEWAY_EXITED":
            raise BackendUnavailable(
                "Spark could not start its JVM: it needs Java 17, found through JAVA_HOME "
                f"(now {os.environ.get('JAVA_HOME')!r}) or `java` on PATH; install it or fix "
                "JAVA_HOME. Nothing was charged") from e
        if classify(e) == "environment: connection lost":
            raise BackendUnavailable(
                "Spark does not answer (a Spark Connect server out of reach, or a JVM that "
                "stopped): start it or check the remote= address. Nothing was charged") from e
        raise


def _logical(dtype: DataType) -> str:
    return _TYPES.get(type(dtype).__name__, "other")


def _kinds(data: SparkFrame) -> dict[str, str]:
    """Column → logical type, with naive timestamps (``TIMESTAMP_NTZ``) as ``datetime_ntz``."""
    return {f.name: "datetime_ntz" if type(f.dataType).__name__ == "TimestampNTZType"
            else _logical(f.dataType) for f in data.schema.fields}


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _run(what: str, thunk: Callable[[], _T], spark: Session | None = None) -> _T:
    """Run a Spark action; a failure becomes `ReleaseFailed` with no data in it: the
    exception's class, Spark's error condition and the failure's class
    (`dpcert.operator.classify`), never its message.  The full cause goes to the
    ``dpcert.operator`` logger.  An error thrown in an executor's Python (``PYTHON_EXCEPTION``:
    its text is a traceback that may quote data) counts as an import error only if a fresh
    probe of ``spark``'s executors, a job on no data, fails too."""
    try:
        return thunk()
    except Exception as e:  # Py4JJavaError, SparkConnectGrpcException, AnalysisException ...
        cond = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
        code = cond() if callable(cond) else None
        cls: FailureClass = classify(e)
        if cls == UNKNOWN and code == "PYTHON_EXCEPTION" and spark is not None:
            cls = _reprobe(spark)
        OPERATOR_LOG.error("Spark failed while computing %s (%s)", what, cls, exc_info=e)
        err = ReleaseFailed(f"Spark failed while computing {what}: {type(e).__name__}"
                            f"{f' ({code})' if code else ''}; {cls}")
        err.failure_class = cls
    raise err  # outside the handler: no context


def _reprobe(spark: Session) -> FailureClass:
    """``"environment: import error"`` if the executors fail a fresh (data-free) probe."""
    from dpcert.backends._spark_probe import executor_probe

    try:
        ok = executor_probe(spark, fresh=True).ok
    except Exception:
        return "environment: connection lost"
    return UNKNOWN if ok else "environment: import error"


class SparkBackend(SqlTreeOps):
    """`FrameOps` for pyspark DataFrames (classic or Connect).

    Parameters
    ----------
    bounding
        ``"arrow"`` (one shuffle by the unit, then the Polars backend's NumPy rule on each
        partition's Arrow batches; executors need dpcert) or ``"sql"`` (Spark SQL window
        functions only; nothing of dpcert on the executors).  ``None``: the session setting
        ``spark.dpcert.bounding``, else ``"arrow"``.  Both keep exactly the same rows.
    """

    name = "spark"

    def __init__(self, bounding: str | None = None) -> None:
        if bounding is not None and bounding not in BOUNDINGS:
            raise InvalidParameter(f"bounding={bounding!r} must be one of {list(BOUNDINGS)}")
        self.bounding = bounding

    def _choice(self, frame: SparkFrame) -> str | None:
        """The bounding asked for (the argument, else ``spark.dpcert.bounding``), or ``None``."""
        if self.bounding is not None:
            return self.bounding
        try:
            mode = frame.sparkSession.conf.get(BOUNDING_CONF, None)
        except Exception:  # a session that cannot answer: the default
            mode = None
        if mode is not None and mode not in BOUNDINGS:
            raise InvalidParameter(f"{BOUNDING_CONF}={mode!r} must be one of {list(BOUNDINGS)}")
        return None if mode is None else str(mode)

    def _bounding(self, frame: SparkFrame, *, announce: bool = False) -> str:
        """The bounding that runs: the one asked for, else ``"arrow"`` if the executors can
        run it (`executor_probe`, once per context), else
        ``"sql"`` with an `ExecutorEnvironmentWarning` (when the probe
        runs here, or when ``announce``)."""
        from dpcert.backends._spark_probe import REMEDY, cached_probe, executor_probe

        choice = self._choice(frame)
        if choice is not None:
            return choice
        fresh = cached_probe(frame.sparkSession) is None
        probe = executor_probe(frame.sparkSession)
        if probe.ok:
            return "arrow"
        if fresh or announce:
            warnings.warn(f"{probe.reason}: dpcert bounds contributions with Spark SQL instead "
                          f"(same rows, slower). To use the Arrow bounding, {REMEDY}; to "
                          f"silence this, set {BOUNDING_CONF}=sql", ExecutorEnvironmentWarning,
                          stacklevel=3)
        return "sql"

    def probe_environment(self, data: object) -> None:
        """Before the charge: check that Spark answers and pick the bounding
        (`_bounding`, warning if it falls back to SQL).  An Arrow bounding asked for
        explicitly on executors that cannot run it is refused
        (`BackendUnavailable`); so is a Spark that does not answer."""
        from dpcert.backends._spark_probe import REMEDY, alive, executor_probe

        frame = _check_frame(data)
        alive(frame.sparkSession)
        if self._choice(frame) == "arrow":
            probe = executor_probe(frame.sparkSession)
            if not probe.ok:
                raise BackendUnavailable(f"bounding='arrow' was asked for, but {probe.reason}: "
                                         f"{REMEDY}, or use {BOUNDING_CONF}=sql; nothing was "
                                         "charged")
            return
        self._bounding(frame, announce=True)

    def schema(self, data: object) -> Mapping[str, str]:
        """Column name → logical type (reads no rows); also checks the bounding setting, so a
        bad ``spark.dpcert.bounding`` is refused before anything is charged."""
        frame = _check_frame(data)
        fields = _started(lambda: frame.schema.fields)
        self._choice(frame)
        return {f.name: _logical(f.dataType) for f in fields}

    def native_schema(self, data: object) -> Mapping[str, DataType]:
        """Column name → Spark data type (reads no rows)."""
        frame = _check_frame(data)
        return {f.name: f.dataType for f in frame.schema.fields}

    def admitted_type(self, column: str, dtype: object, role: Role) -> AdmittedType:
        """The internal type of a column in a role (`dpcert.backends.admission`)."""
        from pyspark.sql.types import DataType

        if not isinstance(dtype, DataType):
            raise InvalidParameter(f"column {column!r}: dtype={dtype!r} is not a Spark data type")
        kind = type(dtype).__name__
        if role == "value":
            if kind in _NUMERIC_TYPES:
                return "float"
            raise refuse(column, dtype.simpleString(), role, "to double")
        if kind in _TYPES and kind != "TimestampNTZType":
            return _TYPES[kind]  # type: ignore[return-value]
        if kind == "TimestampNTZType":
            return "datetime_ntz"
        cast = {"DecimalType": "to double or to string", "BinaryType": "to string: hex(...)",
                "NullType": "to the type the column should have: every value is null"}.get(
            kind, "to bigint, double, string, boolean, date or timestamp")
        raise refuse(column, dtype.simpleString(), role, cast)

    def admit(self, data: object, columns: Sequence[AdmittedColumn]) -> SparkFrame:
        """The admitted frame: exactly ``columns``, renamed and cast (total casts only)."""
        frame = _check_frame(data)
        F, _ = _api(frame)
        target = {"int": "bigint", "float": "double", "str": "string"}
        if not columns:  # a plan that reads no column still counts rows
            return frame.select(F.lit(0).cast("bigint").alias(internal_name(0)))
        return frame.select([
            (F.col(_q(c.user)).cast(target[c.type]) if c.type in target
             else F.col(_q(c.user))).alias(c.internal) for c in columns])

    def check_predicates(self, predicates: Sequence[object],
                         schema: Mapping[str, str]) -> tuple[CheckedPredicate, ...]:
        """Each predicate through `dpcert.backends.spark_expr`: a checked tree, rebuilt as
        a Column of the data's flavour (classic or Connect) by `filter`."""
        from dpcert.backends.spark_expr import check_spark_predicate

        return tuple(check_spark_predicate(p, schema) for p in predicates)

    def filter(self, data: object, predicates: Sequence[object]) -> SparkFrame:
        """Rows on which every (already checked) predicate is true."""
        from dpcert.backends.spark_expr import CheckedPredicate

        frame = _check_frame(data)
        F, _ = _api(frame)
        for p in predicates:
            if not isinstance(p, CheckedPredicate):
                raise InvalidParameter(f"filter: a predicate of type {type(p).__name__} was not "
                                       "checked by check_predicates")
            frame = frame.filter(p.column(F))
        return frame

    def keyed_bound(self, data: object, spec: BoundSpec) -> SparkFrame:
        """The bounded rows (a lazy DataFrame with the unit, group and value columns)."""
        frame = _check_frame(data)
        F, Window = _api(frame)
        schema = _kinds(frame)
        keys = ([spec.unit] if spec.unit else []) + list(spec.by)
        cols = list(dict.fromkeys([*keys, *spec.value_columns]))
        for c in cols:
            if c not in schema:
                raise InvalidParameter(f"unknown column {c!r}; the data has {sorted(schema)}")
        for c in keys:
            if schema[c] not in ("int", "bool", "date", "datetime", "datetime_ntz", "float",
                                 "str"):
                raise InvalidParameter(f"column {c!r} has type {schema[c]}: bounding can only "
                                       "key on integer, boolean, date, datetime, float or "
                                       "string columns")
        for c in spec.value_columns:
            if schema[c] not in ("int", "float", "bool"):
                raise InvalidParameter(f"value column {c!r} has type {schema[c]}, not numeric")
        if spec.max_groups < 1 or spec.max_rows_per_group < 1:
            raise InvalidParameter(f"max_groups={spec.max_groups} and max_rows_per_group="
                                   f"{spec.max_rows_per_group} must be >= 1")
        df = frame.select([_canonical(F, c, schema[c]) if c in keys else F.col(_q(c))
                          for c in cols])
        if spec.unit is None:
            return df
        unit = F.col(_q(spec.unit))
        if self._bounding(frame) == "arrow":  # whole units per partition, then keep_mask
            from dpcert.backends._spark_arrow import ArrowBound

            return df.repartition(unit).mapInArrow(ArrowBound(spec), df.schema)
        k1, k2 = (F.lit(k).cast("bigint") for k in _hash.key_longs(spec.key))
        enc = {c: _encoded(F, c, schema[c]) for c in cols}
        hu = F.xxhash64(k1, k2, enc[spec.unit])
        hp = F.xxhash64(k1, k2, *(enc[c] for c in keys))
        hr = F.xxhash64(k1, k2, *(enc[c] for c in keys), *(enc[c] for c in spec.value_columns))
        # Map side, a speed hint only: a radix sort on one packed long (top bits of h(u), then
        # of h(u,g)) makes every map output block a run in nearly the windows' order, so the
        # reduce side's sort only merges runs.  Nothing depends on it: the windows sort
        # exactly.  The always-true non-deterministic filter keeps Spark's optimizer from
        # dropping this sort (EliminateSorts), and only (u, g, v) cross the shuffle.
        hint = (hu.bitwiseAND(F.lit(-(1 << _HINT_BITS)))
                .bitwiseOR(F.shiftrightunsigned(hp, 64 - _HINT_BITS)
                           .bitwiseXOR(F.lit(1 << (_HINT_BITS - 1)))))
        hinted = df.sortWithinPartitions(hint).filter(F.spark_partition_id() >= 0)
        if schema[spec.unit] == "float":  # Spark wraps a float window key in a NaN/-0.0
            # normaliser that no repartition by the column matches: shuffle by h(u) instead
            shuffled = hinted.withColumn("#hu", hu).repartition(F.col("`#hu`"))
        else:
            shuffled = hinted.repartition(unit)
        # every window is partitioned by the unit alone (with h(u), a function of it, first
        # as the sort's cheap prefix): one sort serves all three, and a later filter on a
        # group column (public keys) cannot be pushed between the windows (two sorts)
        by_keys = [F.col(_q(c)).asc_nulls_last() for c in spec.by]
        val_keys = [F.col(_q(c)).asc_nulls_last() for c in spec.value_columns]
        part = [F.col("`#hu`"), unit]
        w_pair = Window.partitionBy(*part).orderBy(F.col("`#hp`"), *by_keys)
        w_row = Window.partitionBy(*part).orderBy(F.col("`#hp`"), *by_keys, F.col("`#hr`"),
                                                  *val_keys)
        # the row's place in its pair: its place in the unit minus that of the pair's first row
        if schema[spec.unit] != "float":
            shuffled = shuffled.withColumn("#hu", hu)
        ranked = shuffled.withColumns({"#hp": hp, "#hr": hr}).withColumns({
            "#g": F.dense_rank().over(w_pair), "#f": F.rank().over(w_pair),
            "#r": F.row_number().over(w_row)})
        keep = ((F.col("`#g`") <= spec.max_groups)
                & (F.col("`#r`") - F.col("`#f`") < spec.max_rows_per_group))
        return ranked.filter(keep).select([F.col(_q(c)) for c in cols])

    def group_stats(self, data: object, by: Sequence[str], keys: Sequence[Key] | None,
                    specs: Sequence[StatSpec]) -> GroupedStats:
        """Exact integer statistics per group; only the K grouped rows are collected."""
        frame = _check_frame(data)
        F, _ = _api(frame)
        schema = _kinds(frame)
        by = list(by)
        for c in by:
            if c not in schema:
                raise InvalidParameter(f"unknown group column {c!r}; the data has "
                                       f"{sorted(schema)}")
        check_specs(specs, {c: t.removesuffix("_ntz") for c, t in schema.items()})
        if keys is not None and not by:
            raise InvalidParameter("keys: public keys need group columns (by)")
        public = public_keys(keys, by, schema) if keys is not None else None
        enc_public = ([_encode_key(k, by, schema) for k in public] if public is not None
                      else None)
        df = frame.select(*[_group_col(F, c, schema[c]) for c in by],
                         *[F.col(_q(c)) for c in schema if c not in by])
        if enc_public is not None:  # groups outside the public keys never reach the driver
            df = df.filter(_key_filter(F, enc_public, by))
        aggs, split = [F.count(F.lit(1)).alias("#n")], []
        for i, s in enumerate(specs):
            if s.kind == "count" or (s.kind == "unit_count" and s.column is None):
                aggs.append(F.count(F.lit(1)).alias(f"#{i}"))
            elif s.kind == "unit_count":
                assert s.column is not None
                u = _canonical(F, s.column, schema[s.column])
                aggs.append((F.count_distinct(u) + F.max(F.when(u.isNull(), 1).otherwise(0)))
                            .alias(f"#{i}"))
            elif s.kind in ("fixed_sum", "fixed_sum_sq"):
                split.append(i)
                aggs += [F.try_sum(F.shiftright(F.col(f"`#{i}v`"), _SPLIT)).alias(f"#{i}h"),
                         F.try_sum(F.col(f"`#{i}v`").bitwiseAND(F.lit(_LOW)))
                         .alias(f"#{i}l")]
        fixed = (df.withColumns({f"#{i}v": _fixed_point(F, specs[i]) for i in split}) if split
                 else df)  # (Spark Connect refuses an empty withColumns)
        grouped = fixed.groupBy(*[F.col(_q(c)) for c in by]).agg(*aggs)
        rows = _run("grouped statistics", lambda: grouped.collect(), frame.sparkSession)
        found = {canon_key(tuple(r[c] for c in by)): r for r in rows}
        key_list: list[Key]
        enc_list: list[Key]
        if public is not None and enc_public is not None:
            key_list, enc_list = public, enc_public
        else:  # datetime keys come back as microseconds: decoded, then sorted by value
            raw = [tuple(r[c] for c in by) for r in rows]
            dec = [_decode_key(t, by, schema) for t in raw]
            order = private_key_order(dec) if by else [0]
            if by:
                key_list, enc_list = [dec[i] for i in order], [raw[i] for i in order]
            else:
                key_list, enc_list = [()], [()]
        at_keys = [found.get(canon_key(t)) for t in enc_list]
        values: dict[str, Array] = {}
        for i, s in enumerate(specs):
            if s.kind == "at_most":
                values[s.name] = _at_most(F, df, by, enc_list, s)
                continue
            if i in split:
                parts = [(r[f"#{i}h"], r[f"#{i}l"]) if r is not None else (0, 0)
                         for r in at_keys]
                if any(h is None or lo is None for h, lo in parts):  # a long sum overflowed
                    ints = _decimal_sums(F, df, by, enc_list, s)
                else:
                    ints = [(int(h) << _SPLIT) + int(lo) for h, lo in parts]
            else:
                ints = [int(r[f"#{i}"]) if r is not None else 0 for r in at_keys]
            fits = all(-(2**62) < v < 2**62 for v in ints)
            values[s.name] = (np.asarray(ints, dtype=np.int64) if fits
                              else np.asarray(ints, dtype=object))
        return GroupedStats(list(key_list), values)


def _api(data: SparkFrame) -> tuple[SparkFunctions, type[Window]]:
    """``(functions, Window)`` of the DataFrame's flavour, Spark Connect or classic: one process
    may hold both, and a Column of one flavour does not work on the other's DataFrames."""
    if type(data).__module__.startswith("pyspark.sql.connect"):
        from pyspark.sql.connect import functions as cf
        from pyspark.sql.connect.window import Window as CW

        return cf, CW
    from pyspark.sql import Window, functions

    return functions, Window


def _is_frame(data: object) -> TypeGuard[SparkFrame]:
    """Is ``data`` a pyspark DataFrame, classic or Connect (both subclass
    ``pyspark.sql.DataFrame``)?  Decided by its class, without importing pyspark."""
    mod = type(data).__module__
    return mod.startswith("pyspark.sql") and type(data).__name__ == "DataFrame"


def _check_frame(data: object) -> SparkFrame:
    if not _is_frame(data):
        raise InvalidParameter(f"data of type {type(data).__name__} is not a pyspark DataFrame")
    return data


def _canonical(F: SparkFunctions, col: str, logical: str) -> Column:
    """A key column with ``-0.0 → 0.0`` and every NaN the one literal NaN (Spark's grouping and
    windows already normalise NaN; this keeps every plan, e.g. a hash repartition, exact)."""
    c = F.col(_q(col))
    if logical == "float":
        return (F.when(F.isnan(c), F.lit(float("nan")).cast("double"))
                .when(c == 0, F.lit(0.0).cast("double"))
                .otherwise(c.cast("double")).alias(col))
    return c.alias(col)


def _encoded(F: SparkFunctions, col: str, logical: str) -> Column:
    """The canonical hash encoding of `dpcert.backends._hash` as a Spark expression."""
    c = F.col(_q(col))
    if logical in ("int", "bool"):
        return c.cast("bigint")
    if logical == "date":
        return F.unix_date(c).cast("bigint")
    if logical == "datetime":  # an instant: its UTC microseconds
        return F.unix_micros(c)
    if logical == "datetime_ntz":  # wall-clock microseconds, no time zone involved
        return F.timestamp_diff("MICROSECOND", F.expr("TIMESTAMP_NTZ'1970-01-01 00:00:00'"), c)
    if logical == "float":
        return c.cast("double")
    return c


def _group_col(F: SparkFunctions, col: str, logical: str) -> Column:
    """A group column as grouped and collected: datetimes as their microseconds (decoded on the
    driver, so the driver's time zone never enters), other keys canonical."""
    if logical in ("datetime", "datetime_ntz"):
        return _encoded(F, col, logical).alias(col)
    return _canonical(F, col, logical)


def _encode_key(key: Key, by: list[str], kinds: Mapping[str, str]) -> Key:
    """A (checked) public key with datetimes as microseconds, as `_group_col` has them."""
    out = []
    for v, c in zip(key, by, strict=True):
        if isinstance(v, dt.datetime) and kinds[c] == "datetime":
            v = (v - _EPOCH_UTC) // _US
        elif isinstance(v, dt.datetime) and kinds[c] == "datetime_ntz":
            v = (v - _EPOCH) // _US
        out.append(v)
    return tuple(out)


def _decode_key(key: Key, by: list[str], kinds: Mapping[str, str]) -> Key:
    """Inverse of `_encode_key`: aware UTC datetimes (``TIMESTAMP``), naive ones
    (``TIMESTAMP_NTZ``)."""
    out = []
    for v, c in zip(key, by, strict=True):
        if isinstance(v, int) and kinds[c] == "datetime":  # microseconds, as Spark returns them
            v = _EPOCH_UTC + v * _US
        elif isinstance(v, int) and kinds[c] == "datetime_ntz":
            v = _EPOCH + v * _US
        out.append(v)
    return tuple(out)


def _fixed_point(F: SparkFunctions, spec: StatSpec) -> Column:
    """The value rule of `dpcert.backends.base` as a Spark ``bigint`` expression."""
    assert spec.column is not None and spec.lower is not None and spec.upper is not None
    rl, rh = fixed_bounds(spec)
    v = F.col(_q(spec.column)).cast("double")
    w = v
    if spec.kind == "fixed_sum_sq":
        w = F.least(F.greatest(v, F.lit(float(spec.lower))), F.lit(float(spec.upper)))
        if spec.shift:
            w = w - F.lit(float(spec.shift))
        w = w * w
    r = F.rint(w / F.lit(float(2.0 ** spec.exponent)))  # Math.rint: half to even, exact
    r = F.least(F.greatest(r, F.lit(float(rl))), F.lit(float(rh)))
    return F.when(v.isNull() | F.isnan(v), F.lit(rl)).otherwise(r).cast("bigint")


def _decimal_sums(F: SparkFunctions, df: SparkFrame, by: list[str], key_list: list[Key],
                  spec: StatSpec) -> list[int]:
    """The fixed-point sum of ``spec`` per group as ``decimal(38,0)`` (no overflow below
    10**38 rows · 2**53): the fallback when a group's two-long sum overflowed."""
    grouped = df.groupBy(*[F.col(_q(c)) for c in by]).agg(
        F.sum(_fixed_point(F, spec).cast("decimal(38,0)")).alias("#s"))
    rows = _run("exact sums", lambda: grouped.collect(), df.sparkSession)
    found = {canon_key(tuple(r[c] for c in by)): r["#s"] for r in rows}
    return [int(found.get(canon_key(k)) or 0) for k in key_list]


def _key_filter(F: SparkFunctions, keys: list[Key], by: list[str]) -> Column:
    """Rows whose (canonical) key is one of ``keys``: ``isin`` for one column, else a balanced
    OR of null-safe equalities (NaN equals NaN in Spark)."""
    if not keys:
        return F.lit(False)
    if len(by) == 1:
        c = F.col(_q(by[0]))
        plain = [k[0] for k in keys if k[0] is not None and k[0] == k[0]]
        cond = c.isin(plain) if plain else F.lit(False)
        if any(k[0] is None for k in keys):
            cond = cond | c.isNull()
        if any(isinstance(k[0], float) and k[0] != k[0] for k in keys):
            cond = cond | F.isnan(c)
        return cond

    def tree(lo: int, hi: int) -> Column:
        if hi - lo == 1:
            cond = F.lit(True)
            for v, name in zip(keys[lo], by, strict=True):
                cond = cond & F.col(_q(name)).eqNullSafe(F.lit(v))
            return cond
        mid = (lo + hi) // 2
        return tree(lo, mid) | tree(mid, hi)

    return tree(0, len(keys))


def _bin_expr(F: SparkFunctions, fp: Column, cand: list[int], lo: int, hi: int) -> Column:
    """Number of candidates below ``fp`` among ``cand[lo:hi]`` plus ``lo`` (a balanced CASE)."""
    if lo == hi:
        return F.lit(lo)
    mid = (lo + hi) // 2  # fp <= cand[mid]: at most mid candidates below
    return F.when(fp <= cand[mid], _bin_expr(F, fp, cand, lo, mid)).otherwise(
        _bin_expr(F, fp, cand, mid + 1, hi))


def _at_most(F: SparkFunctions, df: SparkFrame, by: list[str], key_list: list[Key],
             spec: StatSpec) -> IntArray:
    """Per group and candidate ``c``: rows whose fixed-point value is ≤ ``c``; shape (K, C)."""
    cand = list(spec.candidates)
    b = _bin_expr(F, _fixed_point(F, spec), cand, 0, len(cand))
    grouped = df.groupBy(*[F.col(_q(c)) for c in by], b.alias("#b")).agg(
        F.count(F.lit(1)).alias("#c"))
    rows = _run("quantile counts", lambda: grouped.collect(), df.sparkSession)
    index = {canon_key(k): i for i, k in enumerate(key_list)}
    hist = np.zeros((len(key_list), len(cand) + 1), dtype=np.int64)
    for r in rows:
        i = index.get(canon_key(tuple(r[c] for c in by)))
        if i is not None:
            hist[i, int(r["#b"])] += int(r["#c"])
    return np.cumsum(hist, axis=1)[:, :len(cand)]
