"""Privacy filters: the rule that decides whether one more release fits a budget, when releases
are chosen adaptively (each may depend on earlier answers), and how much has been spent.

A *release* is one charge: an accounting event fixed before anything from it is revealed — one
query, or a batch of queries declared together (``Session.release_all``, one ``dpcert release``
spec).  Inside a release nothing is adaptive, so its cost is computed by the tightest accountant
(the PLD accountant for (ε, δ) budgets).  *Across* releases the analyst may adapt, and the budget
is kept by a privacy filter with a published proof for fully adaptive composition:

==================  ========================================================================
budget              filter (rule)
==================  ========================================================================
``PureDP(ε)``       ``"pure"``: Σ εᵢ ≤ ε (Rogers, Roth, Ullman & Vadhan 2016)
``ZCDP(ρ)``         ``"zcdp"``: Σ ρᵢ ≤ ρ (Feldman & Zrnic 2021; Whitehouse et al. 2023)
``ApproxDP(ε, δ)``  ``"gdp"`` when the first release is made of Gaussians: Σ μᵢ² ≤ μ², μ the
                    largest with δ_μ(ε) ≤ δ (Smith & Thakurta 2022); ε'-DP releases count
                    with μ = 2Φ⁻¹(e^ε'/(1+e^ε')), other releases are refused.
                    ``"approx"`` otherwise: Σ εᵢ ≤ ε and Σ δᵢ ≤ δ, each release at a point
                    (εᵢ, δᵢ) of its own PLD curve chosen from the past only (Rogers et al.
                    2016; Whitehouse et al. 2023).
``ApproxDP(ε, 0)``  ``"pure"``.
==================  ========================================================================

The ``"gdp"``/``"approx"`` choice is a function of the first release, which is chosen before
anything about the dataset has been revealed, so it is a fixed filter for each analyst
strategy.  Proof of every rule: ``docs/proofs/filters.md``.

Examples
--------
>>> import dpcert as dp
>>> from dpcert.core.events import SelfComposedEvent, LaplaceEvent, GaussianEvent
>>> f = PrivacyFilter(dp.ApproxDP(5, 1e-6))
>>> _ = f.charge(SelfComposedEvent(LaplaceEvent(10), 100), batch=True)  # a declared batch
>>> f.rule, round(float(f.spent[0]), 3)
('approx', 4.693)
>>> g = PrivacyFilter(dp.ApproxDP(5, 1e-6))
>>> for _ in range(100):          # adaptively chosen Gaussians, one at a time
...     _ = g.charge(GaussianEvent(10))
>>> g.rule, round(float(g.spent[0]), 3)
('gdp', 4.887)
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

from dpcert.accounting._nesting import flat_leaves
from dpcert.accounting.gdp import gdp_delta, gdp_epsilon, mu_of_pure
from dpcert.core.events import (
    ComposedEvent,
    Event,
    GaussianEvent,
    event_from_distance,
    relation_of,
)
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP
from dpcert.errors import (
    BudgetExceeded,
    InvalidParameter,
    MeasureMismatch,
    MetricMismatch,
    UnsupportedEvent,
)

__all__ = [
    "Amount",
    "Point",
    "PrivacyFilter",
    "Release",
    "Rule",
    "Tally",
    "basic_amount",
    "check_relation",
    "choose_rule",
    "history_relation",
    "tally",
]

Amount = Fraction | tuple[Fraction, Fraction]
#: A declared batch with a pure statement spends the δ left only if its PLD ε at that δ saves
#: at least this fraction of its pure ε (else the δ is kept for later releases).
_BATCH_MIN_GAIN = Fraction(1, 100)
#: Largest number of discrete-pair atoms for which a filter asks the PLD accountant (about a
#: second of work); larger events are charged their own statement.
_PLD_MAX_ATOMS = 1 << 21
Rule = Literal["pure", "zcdp", "gdp", "approx"]
Kind = Literal["PureDP", "ApproxDP", "ZCDP"]


@dataclass(frozen=True)
class Release:
    """One charge as the filter sees it: its event, the amount the caller stated for it (or
    ``None``), and whether it was declared as a batch."""

    event: Event
    amount: Amount | None = None
    batch: bool = False


Point = Amount  # the cost the rule assigned to one release (ε, (ε, δ), ρ, or μ² for "gdp")


@dataclass(frozen=True)
class Tally:
    """What a history costs under its rule.

    ``spent``/``remaining`` are in the budget's measure (exact; floats from numerical
    accountants enter rounded up).  Under ``"gdp"``, ``spent`` is (ε, δ_budget) with the tight ε
    of the whole history at the budget's δ, and ``remaining`` keeps δ (δ is not consumed);
    ``mu2`` is Σ μᵢ².  ``points`` is each release's cost; ``fits`` whether the filter admits it.
    """

    rule: Rule
    points: tuple[Point, ...]
    spent: Amount
    remaining: Amount
    fits: bool
    mu2: float = 0.0
    #: Under "approx": the sum of the releases' optimistic PLD estimates of ε at their δ
    #: (``PLDAccountant.epsilon_interval``), so ``[spent_lower, spent ε]`` is the interval of
    #: the PLD's discretisation; ``None`` where the total is exact (pure, zCDP, GDP).
    spent_lower: Fraction | None = None


def _kind(budget: Measure) -> Kind:
    for cls, name in ((PureDP, "PureDP"), (ApproxDP, "ApproxDP"), (ZCDP, "ZCDP")):
        if type(budget) is cls:
            return name  # type: ignore[return-value]
    raise MeasureMismatch(
        f"budget={budget!r}: budgets are kept in PureDP, ApproxDP or ZCDP"
    )


def _is_gaussian_only(event: Event) -> bool:
    parts = flat_leaves(event)
    return bool(parts) and all(type(e) is GaussianEvent for e, _ in parts)


def choose_rule(kind: str, total: Amount, first: Event | None) -> Rule:
    """The filter for a budget, given the first release's event (see the module docstring)."""
    if kind == "PureDP":
        return "pure"
    if kind == "ZCDP":
        return "zcdp"
    assert isinstance(total, tuple)
    if total[1] == 0:
        return "pure"
    return "gdp" if first is not None and _is_gaussian_only(first) else "approx"


def _pure(event: Event) -> Fraction:
    from dpcert.accounting.pure import epsilon_of

    return epsilon_of(ComposedEvent([event]))


def _approx(event: Event) -> tuple[Fraction, Fraction]:
    from dpcert.accounting.approx import approx_of

    return approx_of(ComposedEvent([event]))


def _rho(event: Event) -> Fraction:
    from dpcert.accounting.zcdp import rho_of

    return sum((k * rho_of(e) for e, k in flat_leaves(event)), Fraction(0))


def basic_amount(kind: str, event: Event) -> Amount:
    """The cost of ``event`` by basic composition of its parts in a budget's measure.

    Raises :class:`~dpcert.errors.UnsupportedEvent` when the parts have no statement in it
    (e.g. a Gaussian in pure DP).
    """
    if kind == "PureDP":
        return _pure(event)
    if kind == "ZCDP":
        return _rho(event)
    return _approx(event)


@lru_cache(maxsize=4096)
def _pld_epsilon(event: Event, delta: float) -> float:
    from dpcert.accounting.pld import PLDAccountant

    return PLDAccountant().compose(event).epsilon(delta)


@lru_cache(maxsize=4096)
def _pld_lower(event: Event, delta: float) -> float:
    from dpcert.accounting.pld import PLDAccountant

    return PLDAccountant().compose(event).epsilon_interval(delta)[0]


def _lower(r: Release, point: tuple[Fraction, Fraction]) -> Fraction:
    """An optimistic estimate of the release's ε at its δ (at most the point's ε)."""
    e, d = point
    if d == 0 or not _structured(r.event):
        return e
    try:
        lo = _pld_lower(r.event, float(d) * (1 - 1e-12))
    except UnsupportedEvent:
        return e
    return min(e, Fraction(lo)) if math.isfinite(lo) else e


def _structured(event: Event) -> bool:
    """Whether a PLD can beat the event's own statement (bare ε / (ε, δ) events cannot) at a
    bounded cost (at most :data:`_PLD_MAX_ATOMS` atoms; beyond, the statement is used: sound,
    since the PLD is only ever used when it is smaller)."""
    from dpcert.core.events import ApproxEvent, PureEvent

    return _pld_atoms(event) <= _PLD_MAX_ATOMS and any(
        not isinstance(e, (PureEvent, ApproxEvent)) or k > 1 for e, k in flat_leaves(event))


def _pld_atoms(event: Event) -> int:
    """Atoms of the exact discrete pairs the PLD accountant would build for ``event`` (their
    number grows with the sensitivity in lattice units, i.e. with ε at a fixed noise scale)."""
    from dpcert.core.events import (
        DiscreteGaussianEvent,
        DiscreteLaplaceEvent,
        PoissonSampledEvent,
    )

    n = 0
    for e in {e for e, _ in flat_leaves(event)}:  # one grid per distinct leaf (it is cached)
        base = e.event if isinstance(e, PoissonSampledEvent) else e
        if isinstance(base, DiscreteLaplaceEvent):
            n += math.ceil(base.sensitivity) + 1
        elif isinstance(base, DiscreteGaussianEvent):
            n += 2 * math.ceil(15 * base.sigma) + 1 + math.ceil(base.sensitivity)
    return n


def _up(x: float) -> Fraction:
    return Fraction(math.nextafter(x, math.inf)) if math.isfinite(x) else Fraction(10**18)


def _approx_point(r: Release, delta_left: Fraction) -> tuple[Fraction, Fraction]:
    """(εᵢ, δᵢ) of one release under the "approx" filter; uses only the past (``delta_left``)."""
    try:
        base: tuple[Fraction, Fraction] | None = _approx(r.event)
    except UnsupportedEvent:
        base = None
    if isinstance(r.amount, tuple):
        e_a, d_a = r.amount
        best = e_a
        if d_a > 0 and _structured(r.event):
            with contextlib.suppress(UnsupportedEvent):
                best = min(best, _up(_pld_epsilon(r.event, float(d_a) * (1 - 1e-12))))
        if base is not None and base[1] <= d_a:
            best = min(best, base[0])
        if r.batch and d_a == 0 and delta_left > 0 and _structured(r.event):
            with contextlib.suppress(UnsupportedEvent):  # a declared batch may use δ left
                e = _up(_pld_epsilon(r.event, float(delta_left) * (1 - 1e-12)))
                if e < best * (1 - _BATCH_MIN_GAIN):
                    return e, delta_left
        return best, d_a
    pure_ok = base is not None and base[1] == 0
    if pure_ok and not r.batch:
        assert base is not None
        return base
    if delta_left > 0 and _structured(r.event):
        try:
            e = _up(_pld_epsilon(r.event, float(delta_left) * (1 - 1e-12)))
            if base is None or e < base[0] * (1 - _BATCH_MIN_GAIN):
                return e, delta_left
        except UnsupportedEvent:
            pass
    if base is not None:
        return base
    raise UnsupportedEvent(
        f"no (ε, δ) point for {r.event!r} with δ = {float(delta_left):.3g} left; state an "
        "amount for it or keep δ for it"
    )


def _mu2(event: Event) -> float:
    """Σ μᵢ² of a release under the "gdp" filter (rounded up); refuses non-GDP parts."""
    total = 0.0
    for e, k in flat_leaves(event):
        if type(e) is GaussianEvent:
            total += k * float(e.sensitivity / e.sigma) ** 2 * (1 + 1e-12)
            continue
        try:
            eps = _pure(e)
        except UnsupportedEvent:
            raise UnsupportedEvent(
                f"{e!r} has no Gaussian-DP statement; this dataset is kept by the Gaussian-DP "
                "filter (chosen by its first release), which admits Gaussians and ε-DP releases"
            ) from None
        total += k * mu_of_pure(float(eps)) ** 2
    return total * (1 + 1e-12)


def tally(budget_kind: str, total: Amount, releases: Sequence[Release]) -> Tally:
    """The cost of ``releases`` (oldest first) against the budget ``total`` in a measure.

    Raises :class:`~dpcert.errors.UnsupportedEvent` when a release cannot be accounted under
    the dataset's rule (nothing is charged then: callers tally before committing).
    """
    rule = choose_rule(budget_kind, total, releases[0].event if releases else None)
    if rule == "zcdp":
        assert isinstance(total, Fraction)
        pts_z = tuple(_rho(r.event) for r in releases)
        spent_z = sum(pts_z, Fraction(0))
        return Tally(rule, pts_z, spent_z, total - spent_z, spent_z <= total)
    if rule == "pure":
        pts_p = tuple(_pure(r.event) for r in releases)
        spent_p = sum(pts_p, Fraction(0))
        if isinstance(total, tuple):
            spent_t = (spent_p, Fraction(0))
            return Tally(rule, pts_p, spent_t, (total[0] - spent_p, total[1]),
                         spent_p <= total[0])
        return Tally(rule, pts_p, spent_p, total - spent_p, spent_p <= total)
    assert isinstance(total, tuple)
    e_b, d_b = total
    if rule == "gdp":
        mus = [_mu2(r.event) for r in releases]
        mu2 = sum(mus) * (1 + 1e-12)
        mu = math.sqrt(mu2)
        fits = gdp_delta(mu, float(e_b)) <= float(d_b) * (1 - 1e-12)
        eps = _up(gdp_epsilon(mu, float(d_b))) if mu > 0 else Fraction(0)
        return Tally(rule, tuple(Fraction(m) for m in mus), (eps, d_b), (e_b - eps, d_b), fits,
                     mu2)
    pts: list[tuple[Fraction, Fraction]] = []
    se, sd = Fraction(0), Fraction(0)
    for r in releases:
        p = _approx_point(r, d_b - sd)
        pts.append(p)
        se, sd = se + p[0], sd + p[1]
    lower = sum((_lower(r, p) for r, p in zip(releases, pts, strict=True)), Fraction(0))
    return Tally(rule, tuple(pts), (se, sd), (e_b - se, d_b - sd), se <= e_b and sd <= d_b,
                 spent_lower=lower)


_RELATION_TEXT = {"add_remove": "add/remove-one", "replace_one": "replace-one"}


def history_relation(events: Sequence[Event], declared: str | None = None) -> str | None:
    """The one neighbouring relation a filter's releases are stated for: ``declared`` when
    given, else that of the first release stated for one, else ``None`` (not fixed yet).

    Examples
    --------
    >>> from dpcert.core.events import LaplaceEvent, PureEvent
    >>> history_relation([PureEvent(1), LaplaceEvent(2, neighbours="replace_one")])
    'replace_one'
    """
    if declared is not None:
        return declared
    for e in events:
        r = relation_of(e)
        if r is not None:
            return r
    return None


def check_relation(relation: str | None, event: Event, where: str) -> None:
    """Refuse ``event`` when it is stated for another neighbouring relation than ``relation``
    (a filter keeps one relation: ``docs/proofs/filters.md``).  An unstated event is the
    caller's statement for the filter's relation and is admitted.

    Examples
    --------
    >>> from dpcert.core.events import LaplaceEvent
    >>> check_relation("add_remove", LaplaceEvent(2, neighbours="replace_one"),
    ...                "filter")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpcert.errors.MetricMismatch: event=LaplaceEvent(...) is stated for replace-one ...
    """
    r = relation_of(event)
    if relation is not None and r is not None and r != relation:
        raise MetricMismatch(
            f"event={event!r} is stated for {_RELATION_TEXT[r]} neighbours, but {where} is "
            f"kept for {_RELATION_TEXT[relation]} neighbours; nothing was charged")


def describe_amount(kind: str, a: Amount) -> str:
    """``ε = …``, ``ε = …, δ = …`` or ``ρ = …`` (rounded up)."""
    from dpcert._numbers import show_up

    if isinstance(a, tuple):
        return f"ε = {show_up(a[0])}, δ = {show_up(a[1])}"
    return f"{'ρ' if kind == 'ZCDP' else 'ε'} = {show_up(a)}"


class PrivacyFilter:
    """An in-memory privacy filter over adaptively chosen releases (thread-safe, mutable).

    The same rule as the persistent :class:`~dpcert.accounting.ledger.Ledger`; a ``Session``
    without a ledger can hold one.  :meth:`charge` raises
    :class:`~dpcert.errors.BudgetExceeded` (recording nothing) when the release does not fit.
    """

    def __init__(self, budget: Measure, *, relation: str | None = None) -> None:
        self.kind = _kind(budget)
        self.total: Amount = budget.require_value("budget")
        if relation not in (None, "add_remove", "replace_one"):
            raise InvalidParameter(
                f"relation={relation!r} must be 'add_remove', 'replace_one' or None")
        self._declared = relation
        self._releases: list[Release] = []
        self._lock = threading.Lock()

    @property
    def relation(self) -> str | None:
        """The neighbouring relation every release must be stated for: declared, else fixed by
        the first release stated for one (``None`` until then)."""
        return history_relation([r.event for r in self._releases], self._declared)

    @property
    def releases(self) -> tuple[Release, ...]:
        """The releases charged so far."""
        return tuple(self._releases)

    @property
    def rule(self) -> Rule:
        """The filter in force (``choose_rule`` of the first release)."""
        first = self._releases[0].event if self._releases else None
        return choose_rule(self.kind, self.total, first)

    def status(self) -> Tally:
        """The current tally."""
        return tally(self.kind, self.total, self._releases)

    @property
    def spent(self) -> Amount:
        """What the history costs under the rule (exact)."""
        return self.status().spent

    @property
    def remaining(self) -> Amount:
        """What is left under the rule (exact)."""
        return self.status().remaining

    def quote(self, event: Event, amount: Measure | None = None, *,
              batch: bool = False) -> dict[str, Any]:
        """What ``event`` would cost next, by basic composition and under the rule, without
        charging: ``{"basic": amount or None, "tight": point, "fits": bool, "rule": rule}``."""
        r = make_release(self.kind, event, amount, batch)
        check_relation(self.relation, r.event, "this filter")
        new = tally(self.kind, self.total, [*self._releases, r])
        try:
            basic: Amount | None = basic_amount(self.kind, event)
        except UnsupportedEvent:
            basic = None
        return {"basic": basic, "tight": new.points[-1], "fits": new.fits, "rule": new.rule}

    def charge(self, event: Event, amount: Measure | None = None, *,
               batch: bool = False) -> Tally:
        """Admit ``event`` (and record it) if the filter allows it; returns the new tally."""
        r = make_release(self.kind, event, amount, batch)
        with self._lock:
            check_relation(self.relation, r.event, "this filter")
            new = tally(self.kind, self.total, [*self._releases, r])
            if not new.fits:
                old = tally(self.kind, self.total, self._releases)
                raise BudgetExceeded(
                    f"release {event!r} does not fit: the {new.rule} filter has "
                    f"{describe_amount(self.kind, old.remaining)} left of "
                    f"{describe_amount(self.kind, self.total)}"
                )
            self._releases.append(r)
        return new

    def __repr__(self) -> str:
        return f"PrivacyFilter({self.kind}, rule={self.rule}, releases={len(self._releases)})"


def make_release(kind: str, event: Event | None, amount: Measure | None,
                 batch: bool) -> Release:
    """Validate a release: the event (derived from ``amount`` when omitted) and the amount."""
    value: Amount | None = None
    if amount is not None:
        if _kind(amount) != kind:
            raise MeasureMismatch(f"amount={amount!r} is not in the budget's measure {kind}")
        value = amount.require_value("amount")
    if event is None:
        if amount is None:
            raise InvalidParameter("give an event, an amount, or both")
        event = event_from_distance(amount, value)
    if not isinstance(event, Event):
        raise InvalidParameter(f"event={event!r} is not an accounting Event")
    if not isinstance(batch, bool):
        raise InvalidParameter(f"batch={batch!r} must be True or False")
    return Release(event, value, batch)
