"""The class of a failure after the charge comes from exception types only, and its full cause
goes to the ``dpcert.operator`` logger, never into ``ReleaseFailed`` (issue 37, item 3)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import polars as pl
import pytest

import dpcert as dp
from dpcert import errors
from dpcert.operator import FAILURE_CLASSES, OPERATOR_LOG, classify, report_failure

STAGE = ("Job aborted due to stage failure: Task 0 in stage 3.0 failed 4 times, most recent "
         "failure: Lost task 0.3 in stage 3.0 (TID 7) (10.0.0.5 executor 2): ")


class _JClass:
    def __init__(self, names: list[str]) -> None:
        self.names = names

    def getName(self) -> str:
        return self.names[0]

    def getSuperclass(self) -> _JClass | None:
        return _JClass(self.names[1:]) if len(self.names) > 1 else None


class _JThrowable:
    """A Java throwable as Py4J shows it: class (with superclasses), message, cause."""

    def __init__(self, names: list[str], message: str = "", cause: _JThrowable | None = None
                 ) -> None:
        self.cls, self.message, self.cause = _JClass(names), message, cause

    def getClass(self) -> _JClass:
        return self.cls

    def getMessage(self) -> str:
        return self.message

    def getCause(self) -> _JThrowable | None:
        return self.cause


class Py4JJavaError(Exception):
    def __init__(self, java: Any) -> None:
        super().__init__("An error occurred while calling o42.collectToPython. row=s3cr3t")
        self.java_exception = java


class Py4JNetworkError(Exception):
    pass


class CapturedException(Exception):
    """pyspark's captured exceptions: a condition and the Java origin."""

    def __init__(self, condition: str | None, origin: Any = None, text: str = "") -> None:
        super().__init__(text)
        self.condition, self._origin = condition, origin

    def getCondition(self) -> str | None:
        return self.condition


class _Status:
    def __init__(self, name: str) -> None:
        self.name = name


class RpcError(Exception):
    def __init__(self, status: str) -> None:
        super().__init__("details: row=s3cr3t")
        self.status = status

    def code(self) -> _Status:
        return _Status(self.status)


class _DeadJVM:
    def getClass(self) -> Any:
        raise Py4JNetworkError("gone")


SPARK = "org.apache.spark.SparkException"
THROWABLE = ["java.lang.Exception", "java.lang.Throwable", "java.lang.Object"]


@pytest.mark.parametrize(("exc", "expected"), [
    (MemoryError(), "environment: out of memory"),
    (Py4JJavaError(_JThrowable([SPARK, *THROWABLE], "Job aborted", _JThrowable(
        ["java.lang.OutOfMemoryError", "java.lang.VirtualMachineError", "java.lang.Error"],
        "Java heap space"))), "environment: out of memory"),
    (Py4JJavaError(_JThrowable([SPARK], "x", _JThrowable(
        ["org.apache.spark.memory.SparkOutOfMemoryError", "java.lang.OutOfMemoryError"]))),
     "environment: out of memory"),
    (CapturedException("UNABLE_TO_ACQUIRE_MEMORY"), "environment: out of memory"),
    (Py4JJavaError(_JThrowable([SPARK], STAGE + "ExecutorLostFailure (executor 2 exited "
                                        "caused by one of the running tasks) Reason: killed")),
     "environment: executor lost"),
    (Py4JJavaError(_JThrowable([SPARK], "", _JThrowable(
        ["org.apache.spark.shuffle.FetchFailedException"]))), "environment: executor lost"),
    (ModuleNotFoundError("No module named 'polars'"), "environment: import error"),
    (Py4JNetworkError("Answer from Java side is empty"), "environment: connection lost"),
    (ConnectionRefusedError(), "environment: connection lost"),
    (RpcError("UNAVAILABLE"), "environment: connection lost"),
    (CapturedException("RETRIES_EXCEEDED"), "environment: connection lost"),
    (ValueError("row 17: Bob"), "data-independent cause unknown"),
    (CapturedException("CAST_INVALID_INPUT", text="The value 's3cr3t' ..."),
     "data-independent cause unknown"),
    (RpcError("INVALID_ARGUMENT"), "data-independent cause unknown"),
    (Py4JJavaError(_DeadJVM()), "data-independent cause unknown"),
])
def test_the_class_comes_from_types(exc: BaseException, expected: str) -> None:
    assert classify(exc) == expected
    assert expected in FAILURE_CLASSES


def test_the_class_follows_the_python_chain() -> None:
    try:
        try:
            raise MemoryError
        except MemoryError as inner:
            raise RuntimeError("wrapped: row=s3cr3t") from inner
    except RuntimeError as e:
        assert classify(e) == "environment: out of memory"


@pytest.mark.parametrize("text", [
    # the data quoted in an error message cannot choose the class: only Spark's own prefix,
    # up to the failed task's reason class, is read, and no other message text at all
    STAGE + "org.apache.spark.SparkNumberFormatException: 'ExecutorLostFailure'",
    "The value 'Job aborted due to stage failure: ExecutorLostFailure' cannot be cast",
    "Traceback ... ModuleNotFoundError: No module named 'dpcert' ... java.lang.OutOfMemoryError",
])
def test_data_in_a_message_cannot_choose_the_class(text: str) -> None:
    assert classify(Py4JJavaError(_JThrowable([SPARK], text))) == (
        "data-independent cause unknown")
    assert classify(CapturedException("PYTHON_EXCEPTION", text=text)) == (
        "data-independent cause unknown")
    assert classify(RuntimeError(text)) == "data-independent cause unknown"


@pytest.fixture
def operator_log() -> Iterator[list[logging.LogRecord]]:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    OPERATOR_LOG.addHandler(handler)
    yield records
    OPERATOR_LOG.removeHandler(handler)


def test_the_operator_log_gets_the_full_cause_and_is_silent_by_default(
        operator_log: list[logging.LogRecord]) -> None:
    assert OPERATOR_LOG.name == "dpcert.operator" and not OPERATOR_LOG.propagate
    assert report_failure(ValueError("row 17: Bob")) == "data-independent cause unknown"
    (record,) = operator_log
    assert record.exc_info is not None and "Bob" in str(record.exc_info[1])
    known = errors.ReleaseFailed("Spark failed")
    known.failure_class = "environment: executor lost"  # classified and logged where raised
    assert report_failure(known) == "environment: executor lost" and len(operator_log) == 1


@pytest.mark.parametrize(("exc", "expected"), [
    (MemoryError, "environment: out of memory"),
    (ModuleNotFoundError, "environment: import error"),
    (ValueError, "data-independent cause unknown"),
    (pl.exceptions.PanicException, "data-independent cause unknown"),
])
def test_a_release_failing_after_the_charge_says_its_class(
        monkeypatch: pytest.MonkeyPatch, operator_log: list[logging.LogRecord],
        exc: type[BaseException], expected: str) -> None:
    from dpcert.backends.polars import PolarsBackend

    def boom(*args: Any, **kwargs: Any) -> None:
        raise exc("row 17: Bob has HIV")

    monkeypatch.setattr(PolarsBackend, "group_stats", boom)
    df = pl.DataFrame({"pid": [1, 2, 3], "g": ["a", "b", "a"]})
    sess = dp.Session(df, "pid", budget=dp.PureDP(2))
    q = sess.query().group_by("g", keys=["a", "b"]).agg(dp.count()).bound_contributions(1, 1)
    with pytest.raises(errors.ReleaseFailed) as info:
        q.release(dp.PureDP(1))
    e = info.value
    assert e.failure_class == expected and f"Cause: {expected}." in str(e)
    assert "Bob" not in str(e) and e.__cause__ is None and e.__context__ is None
    assert sess.spent == 1  # the charge stands, once
    assert any("Bob" in str(r.exc_info[1]) for r in operator_log if r.exc_info)
