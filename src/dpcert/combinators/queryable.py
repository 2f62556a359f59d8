"""Adaptive composition: a privacy filter / odometer that charges before it runs.

A `Queryable` holds the data privately.  Each measurement submitted is first *charged*
(its loss at ``d_in`` in the queryable's measure is added to what has been spent) and only then
run; a filter with a ``budget`` refuses, before running anything, a query whose charge would make
the total exceed the budget, raising `BudgetExceeded` naming what remains.
Queries may be chosen adaptively from earlier answers.  A filter with a ``PureDP``,
``ApproxDP`` or ``ZCDP`` budget keeps it with `dpcert.accounting.PrivacyFilter` over the
queries' accounting events (``Measurement.event``): Σε, Σρ, or for (ε, δ) the Gaussian-DP filter
(Smith & Thakurta 2022) when the first query is a Gaussian and otherwise the (ε, δ) filter with
each query at a point of its own PLD curve (Rogers, Roth, Ullman & Vadhan 2016; Whitehouse,
Ramdas, Rogers & Wu 2023) — ``docs/proofs/filters.md``; ``spent`` is then the filter's tight
total, and a query that composes several mechanisms (``make_composition``) is a declared batch,
charged by the PLD.  A Rényi-DP filter adds curves (Feldman & Zrnic 2021).  Without a budget it
is an *odometer*: it runs everything and reports the running total, which is then a statement
about what was spent, not a guarantee fixed in advance.  Proof: ``docs/proofs/composition.md``.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> count = space >> dp.t.then_count() >> dp.m.then_laplace(4.0)
>>> filt = dp.c.make_filter(*space, budget=dp.PureDP(0.5))
>>> q = filt([1.0, 2.0, 3.0])
>>> _ = q(count); _ = q(count)
>>> q.spent, q.remaining
(Fraction(1, 2), Fraction(0, 1))
>>> q(count)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.BudgetExceeded: query 'count >> laplace' costs ... only ε = 0.0 remains of ε = 0.5
"""

from __future__ import annotations

import threading
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcert._types import DistanceLike
from dpcert.accounting._nesting import flat_leaves
from dpcert.core.domains import Domain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import (
    ZCDP,
    ApproxDP,
    ExactLoss,
    Loss,
    Measure,
    PureDP,
    RenyiDP,
    pair_loss,
    scalar_loss,
)
from dpcert.core.metrics import ExactDistance, Metric

if TYPE_CHECKING:
    from dpcert.accounting.filters import PrivacyFilter
from dpcert.errors import (
    BudgetExceeded,
    DomainMismatch,
    InvalidParameter,
    MeasureMismatch,
    MetricMismatch,
)

__all__ = ["Queryable", "make_filter", "make_odometer"]


def _with_amount(measure: Measure, value: object) -> Measure:
    """``measure`` carrying ``value`` (``PureDP(ε)``, ``ApproxDP(ε, δ)``, ``ZCDP(ρ)``)."""
    if isinstance(value, tuple):
        return ApproxDP(*value)
    return type(measure)(value)  # type: ignore[call-arg]


class Queryable:
    """Data behind a privacy filter (mutable: it records what was spent; thread-safe)."""

    def __init__(self, data: object, input_domain: Domain, input_metric: Metric, measure: Measure,
                 d_in: DistanceLike = 1, budget: Loss | None = None) -> None:
        input_domain.check_member(data)
        self._data = data
        self.input_domain = input_domain
        self.input_metric = input_metric
        self.measure = measure
        self.d_in = input_metric.validate_d_in(d_in)
        self.budget = None if budget is None else measure.validate_distance(budget, "budget")
        self._spent = measure.zero()
        self._lock = threading.Lock()
        self.log: list[tuple[str, Loss]] = []
        self._filter: PrivacyFilter | None = None
        if self.budget is not None and type(measure) in (PureDP, ApproxDP, ZCDP):
            from dpcert.accounting.filters import PrivacyFilter

            b = self.budget
            self._filter = PrivacyFilter(_with_amount(measure, b))

    @property
    def spent(self) -> ExactLoss:
        """Total charged so far (exact; by the privacy filter when there is one)."""
        if self._filter is not None:
            return self._filter.spent
        return self._spent

    @property
    def remaining(self) -> Fraction | tuple[Fraction, Fraction] | None:
        """What is left of the budget (None for an odometer; not defined for Rényi curves)."""
        if self.budget is None or isinstance(self.measure, RenyiDP):
            return None
        if self._filter is not None:
            return self._filter.remaining
        b, s = self.budget, self._spent
        if isinstance(b, tuple):
            s_e, s_d = pair_loss(s, "spent")
            return b[0] - s_e, b[1] - s_d
        return scalar_loss(b, "budget") - scalar_loss(s, "spent")

    def __call__(self, measurement: Measurement) -> object:
        """Charge ``measurement`` at ``d_in``, then run it on the data and return its output."""
        return self.submit(measurement)

    def submit(self, measurement: Measurement) -> object:
        """Same as calling the queryable."""
        if not isinstance(measurement, Measurement):
            raise InvalidParameter(f"measurement={measurement!r} is not a Measurement")
        if measurement.input_domain != self.input_domain:
            raise DomainMismatch(
                f"query {measurement.name!r} has input domain {measurement.input_domain!r}, the "
                f"queryable holds {self.input_domain!r}"
            )
        if measurement.input_metric != self.input_metric:
            raise MetricMismatch(
                f"query {measurement.name!r} has input metric "
                f"{type(measurement.input_metric).__name__}, the queryable uses "
                f"{type(self.input_metric).__name__}"
            )
        if not self.measure.same_kind(measurement.output_measure):
            raise MeasureMismatch(
                f"query {measurement.name!r} is private under {measurement.output_measure!r}, "
                f"the queryable accounts in {self.measure!r}"
            )
        cost = measurement.map(self.d_in)
        if self._filter is not None:
            amount = None
            if cost != self.measure.zero():
                amount = _with_amount(self.measure, cost)
            event = measurement.event(self.d_in)
            with self._lock:
                try:  # charge before running; a composition of several parts is a batch
                    self._filter.charge(event, amount, batch=len(flat_leaves(event)) > 1)
                except BudgetExceeded:
                    left = self.measure.describe(self._filter.remaining)
                    raise BudgetExceeded(
                        f"query {measurement.name!r} costs {self.measure.describe(cost)} but only "
                        f"{left} remains of {self.measure.describe(self.budget)}"
                    ) from None
                self._spent = self.measure.compose([self._spent, cost])
                self.log.append((measurement.name, cost))
            return measurement.function(self._data)
        with self._lock:
            new = self.measure.compose([self._spent, cost])
            if self.budget is not None and not self.measure.compare(new, self.budget):
                rest = self.remaining
                left_s = "a Rényi curve" if rest is None else self.measure.describe(rest)
                raise BudgetExceeded(
                    f"query {measurement.name!r} costs {self.measure.describe(cost)} but only "
                    f"{left_s} remains of {self.measure.describe(self.budget)}"
                )
            self._spent = new  # charge before running: a crash now loses budget, not privacy
            self.log.append((measurement.name, cost))
        return measurement.function(self._data)

    def __repr__(self) -> str:
        kind = "odometer" if self.budget is None else "filter"
        return f"Queryable({kind}, spent={self.measure.describe(self._spent)})"


def make_filter(input_domain: Domain, input_metric: Metric, budget: Measure,
                d_in: DistanceLike = 1) -> Measurement:
    """A measurement whose output is a `Queryable` that never spends more than ``budget``
    for inputs ``d_in`` apart.

    ``budget`` carries an amount (``PureDP(1.0)``, ``ApproxDP(1.0, 1e-6)``, ``ZCDP(0.5)``).
    """
    if not isinstance(budget, Measure):
        raise InvalidParameter(f"budget={budget!r} must be a measure with an amount")
    value = budget.require_value("budget")
    measure = type(budget)()
    d_in0 = input_metric.validate_d_in(d_in)

    def privacy_map(d: ExactDistance) -> ExactLoss:
        if not input_metric.compare(d, d_in0):
            raise InvalidParameter(
                f"d_in={d!r} exceeds the d_in={d_in0!r} this filter charges queries at"
            )
        return value

    def function(data: object) -> Queryable:
        return Queryable(data, input_domain, input_metric, measure, d_in0, value)

    return Measurement(
        input_domain, input_metric, measure,
        function=function,
        privacy_map=privacy_map,
        name="filter",
        params={"budget": repr(budget), "d_in": d_in0}, proof="composition.md",
    )


def make_odometer(data: object, input_domain: Domain, input_metric: Metric, measure: Measure,
                  d_in: DistanceLike = 1) -> Queryable:
    """A `Queryable` without a budget that records what it spends (an odometer)."""
    return Queryable(data, input_domain, input_metric, type(measure)(), d_in, None)
