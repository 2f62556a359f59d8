"""The operator's side of a failed release: which environmental class a failure after the charge
belongs to, and the ``dpcert.operator`` logger that receives its full cause.

A release that fails after its budget was charged raises
`ReleaseFailed`, whose text the analyst sees: it names only the failure's
*class* (`FailureClass`), never the exception's text, which may quote the data.  The full
cause (exception, traceback, Spark's message) goes to the logger named ``dpcert.operator``,
meant for the data curator, who controls logging (``docs/spark.md``, "Failures").  That logger
does not propagate to the root logger and has only a ``NullHandler``: nothing is printed unless
the curator attaches a handler to it, e.g.::

    import logging
    logging.getLogger("dpcert.operator").addHandler(logging.FileHandler("/secure/operator.log"))

The class comes from exception *types* only: the Python classes of the exception and of its
``__cause__``/``__context__`` chain, the Java classes of a Spark (Py4J) exception's cause chain,
and Spark's error condition names (``getCondition()``).  Two structured exceptions are read
further: a Spark stage failure's fixed prefix, which Spark builds before any task's message
(``Job aborted due to stage failure: ... Lost task ... (TID n) (host executor id): X``, where
``X`` is ``ExecutorLostFailure`` or the task exception's Java class name), and a gRPC status
code (an enum).  No other message text is read.

Is the class itself a function of the data?  On an admitted frame the compute path cannot fail
on the data's *values*, so what remains is the environment.  But memory use grows with the
data's *size* (rows per partition, groups per release): whether a release runs out of memory,
and whether an executor is killed for it (``executor lost``), can depend on how large the data
is.  The class is stated anyway (the issue asks for it): an operator needs it to fix the
environment, and it tells the analyst no more than that the release failed in that way.

Examples
--------
>>> classify(MemoryError())
'environment: out of memory'
>>> classify(ModuleNotFoundError("No module named 'polars'"))
'environment: import error'
>>> classify(ValueError("row 17: Bob"))
'data-independent cause unknown'
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Literal, get_args

__all__ = ["FailureClass", "OPERATOR_LOG", "UNKNOWN", "classify", "report_failure"]

#: What a post-charge failure is said to be in :class:`~dpcert.errors.ReleaseFailed`.
FailureClass = Literal["environment: executor lost", "environment: out of memory",
                       "environment: import error", "environment: connection lost",
                       "data-independent cause unknown"]
UNKNOWN: FailureClass = "data-independent cause unknown"
FAILURE_CLASSES: tuple[str, ...] = get_args(FailureClass)

#: The curator's log of failed releases (full causes).  Silent unless a handler is attached.
OPERATOR_LOG = logging.getLogger("dpcert.operator")
OPERATOR_LOG.addHandler(logging.NullHandler())
OPERATOR_LOG.propagate = False

_MEMORY_TYPES = frozenset({"MemoryError", "java.lang.OutOfMemoryError",
                           "org.apache.spark.memory.SparkOutOfMemoryError"})
_MEMORY_CONDITIONS = frozenset({"UNABLE_TO_ACQUIRE_MEMORY", "AGGREGATE_OUT_OF_MEMORY",
                                "POINTER_ARRAY_OUT_OF_MEMORY", "SPILL_OUT_OF_MEMORY"})
_IMPORT_TYPES = frozenset({"ImportError", "ModuleNotFoundError",
                           "java.lang.NoClassDefFoundError", "java.lang.ClassNotFoundException"})
_CONNECTION_TYPES = frozenset({
    "Py4JNetworkError", "ConnectionError", "RetriesExceeded", "SparkConnectGrpcException",
    "java.net.ConnectException", "org.apache.spark.rpc.RpcTimeoutException"})
_LOST_TYPES = frozenset({"org.apache.spark.ExecutorDeadException",
                         "org.apache.spark.shuffle.FetchFailedException",
                         "org.apache.spark.shuffle.MetadataFetchFailedException"})
_CONNECTION_CONDITIONS = frozenset({"RETRIES_EXCEEDED", "JAVA_GATEWAY_EXITED"})
#: Spark's own prefix of a stage failure, up to the failed task's reason (a class name).
_STAGE = re.compile(r"Job aborted due to stage failure: Task \S+ in stage \S+ failed \d+ times?,"
                    r" most recent failure: Lost task \S+ in stage \S+ \(TID \d+\) "
                    r"\([^()]*\): ([\w.$]+)")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def _java_names(exc: BaseException) -> Iterator[str]:
    """Class names (with superclasses) of a Py4J exception's Java throwable and its causes."""
    j = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    try:
        for _ in range(16):
            if j is None:
                return
            c = j.getClass()
            while c is not None:
                yield str(c.getName())
                c = c.getSuperclass()
            j = j.getCause()
    except Exception:  # the JVM is gone: no more names
        return


def _condition(exc: BaseException) -> str | None:
    for attr in ("getCondition", "getErrorClass"):
        f = getattr(exc, attr, None)
        if callable(f):
            try:
                v = f()
            except Exception:
                continue
            return str(v) if v is not None else None
    return None


def _grpc_unavailable(exc: BaseException) -> bool:
    code = getattr(exc, "code", None)
    try:
        value = code() if callable(code) else None
    except Exception:
        return False
    return getattr(value, "name", None) in ("UNAVAILABLE", "DEADLINE_EXCEEDED")


def _stage_reason(exc: BaseException) -> str | None:
    """The failed task's reason class from Spark's fixed stage-failure prefix, if any."""
    j = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    try:
        text = str(j.getMessage()) if j is not None else ""
    except Exception:
        return None
    m = _STAGE.match(text)
    return m.group(1) if m else None


def classify(exc: BaseException) -> FailureClass:
    """The environmental class of ``exc`` (a failure after the charge), by type only."""
    names: set[str] = set()
    conditions: set[str] = set()
    for e in _chain(exc):
        names.update(t.__name__ for t in type(e).__mro__)
        names.update(_java_names(e))
        cond = _condition(e)
        if cond:
            conditions.add(cond)
        reason = _stage_reason(e)
        if reason:
            names.add(reason)
        if _grpc_unavailable(e):
            names.add("ConnectionError")
    if names & _MEMORY_TYPES or conditions & _MEMORY_CONDITIONS:
        return "environment: out of memory"
    if "ExecutorLostFailure" in names or names & _LOST_TYPES:
        return "environment: executor lost"
    if names & _IMPORT_TYPES:
        return "environment: import error"
    if names & _CONNECTION_TYPES or conditions & _CONNECTION_CONDITIONS:
        return "environment: connection lost"
    return UNKNOWN


def report_failure(exc: BaseException, what: str = "a release") -> FailureClass:
    """Classify a failure after the charge and log its full cause to `OPERATOR_LOG`.

    An exception that already carries a class (a backend's
    `ReleaseFailed`, whose cause was logged where it was raised) keeps it.
    """
    known = getattr(exc, "failure_class", None)
    if isinstance(known, str) and known in FAILURE_CLASSES:
        return known  # type: ignore[return-value]
    cls = classify(exc)
    OPERATOR_LOG.error("%s failed after its charge (%s)", what, cls, exc_info=exc)
    return cls
