"""The session's side of the budget ledger: open it without ever creating a dataset, report how
the session's budget differs from the ledger's, and the data-free error after a charge.

Examples
--------
>>> import dpcert as dp, tempfile, os
>>> from dpcert.accounting.ledger import Ledger
>>> from dpcert.frame.ledger import open_ledger
>>> path = os.path.join(tempfile.mkdtemp(), "budget.sqlite")
>>> Ledger(path).create("people", dp.PureDP(1.0))
>>> open_ledger(path, "People", dp.PureDP(1.0))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.InvalidParameter: dataset='People' is not in the ledger ...differs only in case...
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpcert.core.measures import Measure
from dpcert.errors import InvalidParameter, MeasureMismatch, ReleaseFailed

if TYPE_CHECKING:
    from dpcert._types import JSON
    from dpcert.accounting.filters import Amount
    from dpcert.accounting.ledger import Ledger

__all__ = ["BudgetMismatchWarning", "open_ledger", "release_failed"]


class BudgetMismatchWarning(UserWarning):
    """The session's budget differs from what its ledger dataset has (total or remaining)."""


def open_ledger(path: str, dataset: str | None, budget: Measure) -> tuple[Ledger, tuple[str, ...]]:
    """Open the ledger at ``path`` for ``dataset``, which must already exist (exact name), with
    a budget in the same measure as ``budget``.  Returns the ledger and notes on how the
    session's budget differs from the ledger's total and remaining budget."""
    from dpcert.accounting.ledger import Ledger

    if not isinstance(dataset, str) or not dataset:
        raise InvalidParameter(
            f"dataset={dataset!r}: a session with a ledger must name its ledger dataset")
    import os

    if not os.path.exists(path):
        raise InvalidParameter(
            f"ledger={path!r} does not exist. A Session never creates ledgers or datasets: run "
            f"`dpcert budget init {path} {dataset} ...` first")
    led = Ledger(path)
    names = led.datasets()
    if dataset not in names:
        near = [n for n in names if n.casefold() == dataset.casefold()]
        hint = f" ({near[0]!r} differs only in case)" if near else ""
        raise InvalidParameter(
            f"dataset={dataset!r} is not in the ledger {path!r}: it has {names}{hint}. A "
            f"Session never creates a dataset: run `dpcert budget init ... {dataset} ...` or "
            f"Ledger(...).create({dataset!r}, budget) first")
    status = led.status(dataset)
    if status.measure != type(budget).__name__:
        raise MeasureMismatch(
            f"budget={budget!r} is {type(budget).__name__} but the ledger dataset "
            f"{dataset!r} keeps a {status.measure} budget")
    notes = []
    mine = budget.require_value()
    if mine != status.total:
        notes.append(f"the session's budget {budget.describe(mine)} differs from the ledger "
                     f"dataset {dataset!r}'s total {budget.describe(status.total)}")
    if not budget.compare(mine, status.remaining):
        notes.append(f"the ledger dataset {dataset!r} has only "
                     f"{budget.describe(status.remaining)} left of its total; the ledger limit "
                     "applies")
    return led, tuple(notes)


def release_failed(budget: Measure, total: Amount, ledger_info: dict[str, JSON] | None,
                   failure_class: str = "data-independent cause unknown") -> ReleaseFailed:
    """The error for a release that failed after its charge: only public facts in it (what was
    charged and where, and the failure's class from `dpcert.operator.classify`, by
    exception type), nothing from the data; raise it outside any ``except`` block so that it
    has no ``__context__``."""
    where = (f" and to ledger dataset {ledger_info['dataset']!r}" if ledger_info else "")
    err = ReleaseFailed(
        f"the release failed after {budget.describe(total)} was charged to the session{where}; "
        f"the charge stands. Cause: {failure_class}. The full cause is logged to the "
        "'dpcert.operator' logger, for the data curator (docs/known_limitations.md)")
    err.failure_class = failure_class
    err.__cause__ = None
    err.__suppress_context__ = True
    return err
