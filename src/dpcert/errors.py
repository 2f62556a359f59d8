"""The exceptions dpcert raises.

Every error derives from `DPCertError`, so ``except DPCertError`` catches anything dpcert
raises on purpose.  Most also derive from the matching builtin (``ValueError`` or ``TypeError``)
so that code written against the standard library keeps working.

Examples
--------
>>> import dpcert as dp
>>> try:
...     dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), scale=-1.0)
... except dp.errors.InvalidParameter as e:
...     print(e)
scale=-1.0 must be > 0
"""

from __future__ import annotations

__all__ = [
    "AuditFailed",
    "BackendUnavailable",
    "BindingMismatch",
    "BudgetExceeded",
    "DPCertError",
    "DomainMismatch",
    "EntropyError",
    "ExecutorEnvironmentWarning",
    "InvalidParameter",
    "MeasureMismatch",
    "MetricMismatch",
    "InadmissibleColumn",
    "OutOfDomain",
    "ReleaseFailed",
    "UnsafeExpression",
    "UnsupportedEvent",
    "UnsupportedSQL",
]


class DPCertError(Exception):
    """Root of every exception raised by dpcert."""


class InvalidParameter(DPCertError, ValueError):
    """A parameter is out of range, of the wrong type, NaN or infinite.

    The message names the argument and the value that was given, e.g. ``scale=-1.0 must be > 0``.
    """


class OutOfDomain(DPCertError, ValueError):
    """A dataset handed to a transformation or measurement is not in its input domain."""


class DomainMismatch(DPCertError, TypeError):
    """Two components were chained whose domains do not agree."""


class InadmissibleColumn(InvalidParameter):
    """A column the plan reads has a type the engine does not admit for its role (privacy unit,
    group key, value, filter); the message names the column, its type and the nearest cast that
    would admit it.  Raised by the admission step, before anything is charged."""


class MetricMismatch(DPCertError, TypeError):
    """Two components were chained whose metrics do not agree."""


class MeasureMismatch(DPCertError, TypeError):
    """Components or budgets were combined that are stated in different privacy measures."""


class BudgetExceeded(DPCertError):
    """A privacy spend was refused because it would exceed the budget that remains."""


class BindingMismatch(DPCertError):
    """A spend was refused because its data source is not the one the curator bound to the
    ledger dataset (another location, another schema, another privacy unit)."""


class AuditFailed(DPCertError):
    """An audit could not finish soundly: a worker process drawing the mechanism failed, did
    not answer, or drew the same outputs as another process (a shared random stream)."""


class EntropyError(DPCertError):
    """The operating system's cryptographic random number generator could not be read."""


class UnsupportedEvent(DPCertError, TypeError):
    """An accountant was handed an event it cannot account for exactly (nothing is guessed)."""


class UnsafeExpression(DPCertError, ValueError):
    """An expression (filter, SQL string, column expression) is not on the engine's allow-list:
    it could read other rows or fail on some values, so its effect is not covered by the
    certificate.  The message names the offending sub-expression."""


class UnsupportedSQL(InvalidParameter):
    """A SQL query uses a clause, function or construct outside dpcert's SQL subset
    (`dpcert.frame.sql`); the message names it.  Raised while parsing, before any charge."""


class ReleaseFailed(DPCertError):
    """A release failed *after* its budget was charged.  The charge stands and is recorded; the
    error carries no message text, cause or context from the data
    (see ``docs/known_limitations.md``).

    ``failure_class`` names what kind of failure it was, by exception type only
    (`dpcert.operator.FailureClass`: ``"environment: out of memory"``, ...); the full cause
    goes to the ``dpcert.operator`` logger, for the data curator."""

    failure_class: str | None = None


class BackendUnavailable(DPCertError, RuntimeError):
    """The engine's environment cannot run a release (no Java, a Spark Connect server out of
    reach, a Spark driver that has stopped); raised before anything is charged, with the
    remedy in the message."""


class ExecutorEnvironmentWarning(UserWarning):
    """Spark's executors cannot run dpcert's Arrow bounding (their Python lacks dpcert, Polars
    or pyarrow, or has another dpcert version); the release falls back to the SQL bounding,
    which keeps the same rows.  Emitted before anything is charged."""
