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
                    ``"renyi"`` for other releases when it admits more releases like the
                    first than basic composition does (the default for many small ones): one
                    order α fixed by the first release, ε(Σ cᵢ(α)) at δ must be ≤ ε
                    (Feldman & Zrnic 2021, Thm. 3.1; Balle et al. 2020, Thm. 21).
                    ``"approx"`` (rule ``"basic"``, and under ``"auto"`` when the first
                    release is a declared batch): Σ εᵢ ≤ ε and Σ δᵢ ≤ δ, each release at a
                    point (εᵢ, δᵢ) of its own PLD curve chosen from the past only (Rogers et
                    al. 2016; Whitehouse et al. 2023).
``ApproxDP(ε, 0)``  ``"pure"``.
==================  ========================================================================

The curator chooses the rule per dataset (`CHOICES`: ``"auto"``, ``"basic"``,
``"renyi"``, ``"gdp"``); under ``"auto"`` the choice is a function of the first release, which
is chosen before anything about the dataset has been revealed, so it is a fixed filter for
each analyst strategy.  Proof of every rule: ``docs/proofs/filters.md``.

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
>>> h = PrivacyFilter(dp.ApproxDP(5, 1e-6))
>>> for _ in range(100):          # adaptively chosen Laplace releases at ε = 0.1
...     _ = h.charge(LaplaceEvent(10))
>>> h.rule, h.state.order, round(float(h.spent[0]), 3)
('renyi', 6.4, 4.984)
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal, TypedDict

from dpcert._types import FloatArray
from dpcert.accounting._nesting import flat_leaves
from dpcert.accounting.gdp import gdp_delta, gdp_epsilon, mu_of_pure
from dpcert.core.events import (
    ComposedEvent,
    Event,
    GaussianEvent,
    event_from_distance,
    relation_of,
)
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP, basic_loss
from dpcert.errors import (
    BudgetExceeded,
    InvalidParameter,
    MeasureMismatch,
    MetricMismatch,
    UnsupportedEvent,
)

__all__ = [
    "CHOICES",
    "Amount",
    "FilterState",
    "Point",
    "PrivacyFilter",
    "Quote",
    "Release",
    "Rule",
    "Tally",
    "basic_amount",
    "check_choice",
    "check_relation",
    "choose_rule",
    "history_relation",
    "quote_state",
    "renyi_cost",
    "renyi_epsilon",
    "renyi_order",
    "tally",
]

Amount = Fraction | tuple[Fraction, Fraction]
#: A declared batch with a pure statement spends the δ left only if its PLD ε at that δ saves
#: at least this fraction of its pure ε (else the δ is kept for later releases).
_BATCH_MIN_GAIN = Fraction(1, 100)
#: Largest number of discrete-pair atoms for which a filter asks the PLD accountant (a few
#: tenths of a second of work); larger events -- fixed-point sums, whose sensitivity is about
#: 2**20 lattice units -- are charged their own statement.
_PLD_MAX_ATOMS = 1 << 18
Rule = Literal["pure", "zcdp", "gdp", "renyi", "approx"]
Kind = Literal["PureDP", "ApproxDP", "ZCDP"]


@dataclass(frozen=True)
class Release:
    """One charge as the filter sees it: its event, the amount the caller stated for it (or
    ``None``), and whether it was declared as a batch."""

    event: Event
    amount: Amount | None = None
    batch: bool = False


Point = Amount  # the cost the rule assigned to one release (ε, (ε, δ), ρ, or μ² for "gdp")


class Quote(TypedDict):
    """What a release would cost next, without charging it."""

    #: The amount by basic composition (``None`` when the event has none in the budget's
    #: measure).
    basic: Amount | None
    #: Its cost under the rule.
    tight: Point
    #: Whether it fits what is left.
    fits: bool
    #: The rule that costs it.
    rule: Rule
    #: The spent total after it.
    spent_after: Amount


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
    #: Under "renyi": Σ cᵢ(α) at the filter's order.
    rdp: float | None = None


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


#: The rules a curator may choose for a dataset (``budget init --rule``, ``Session(rule=)``).
CHOICES = ("auto", "basic", "renyi", "gdp")
#: The rule of a ledger dataset created before rules were chosen (schema ≤ 3): ``"gdp"`` when
#: its first release is Gaussian only, else ``"approx"``; kept so its history keeps its rule.
CLASSIC = "classic"


def check_choice(kind: str, total: Amount, choice: object) -> str:
    """Validate a curator's rule ``choice`` for a budget of ``kind`` (``"renyi"`` and ``"gdp"``
    need an ``ApproxDP(ε, δ > 0)`` budget)."""
    if choice not in CHOICES and choice != CLASSIC:
        raise InvalidParameter(f"rule={choice!r} must be one of {list(CHOICES)}")
    approx = kind == "ApproxDP" and isinstance(total, tuple) and total[1] > 0
    if choice in ("renyi", "gdp") and not approx:
        raise InvalidParameter(
            f"rule={choice!r} needs an ApproxDP(ε, δ) budget with δ > 0; a {kind} budget is "
            "kept by summing its releases (rule 'auto' or 'basic')")
    return str(choice)


def _renyi_ok(event: Event) -> bool:
    try:
        _renyi_curve(event, _renyi_orders()[:1])
    except UnsupportedEvent:
        return False
    return True


def choose_rule(kind: str, total: Amount, first: Event | None, choice: str = "auto",
                batch: bool = False) -> Rule:
    """The filter for a budget, given the curator's ``choice`` and the first release's event
    (and whether it is a declared ``batch``; see the module docstring)."""
    if kind == "PureDP":
        return "pure"
    if kind == "ZCDP":
        return "zcdp"
    assert isinstance(total, tuple)
    if total[1] == 0:
        return "pure"
    if choice == "basic":
        return "approx"
    if choice in ("renyi", "gdp"):
        return choice  # type: ignore[return-value]
    if first is not None and _is_gaussian_only(first):
        return "gdp"
    if batch or choice == CLASSIC:
        return "approx"
    if first is None:
        return "renyi"
    return "renyi" if _renyi_ok(first) and _renyi_admits_more(first, total) else "approx"


def _renyi_admits_more(first: Event, total: tuple[Fraction, Fraction]) -> bool:
    """Whether the Rényi filter admits more releases like ``first`` than basic composition of
    its (ε, δ) statement does (a function of the first release only)."""
    import numpy as np

    try:
        e1, d1 = _approx(first)
    except UnsupportedEvent:
        return True
    n_basic = math.inf if e1 == 0 else math.floor(total[0] / e1)
    if d1 > 0:
        n_basic = min(n_basic, math.floor(total[1] / d1))
    order = renyi_order(first, total)
    c1 = renyi_cost(first, order)
    room = float(_renyi_room(np.asarray([order]), float(total[0]), float(total[1]))[0])
    n_renyi = math.inf if c1 == 0 else math.floor(room / c1)
    return bool(n_renyi > n_basic)


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

    Raises `UnsupportedEvent` when the parts have no statement in it
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
    bounded cost (at most `_PLD_MAX_ATOMS` atoms; beyond, the statement is used: sound,
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


def _renyi_orders() -> FloatArray:
    import numpy as np

    from dpcert.accounting.rdp import DEFAULT_ORDERS

    return np.asarray(DEFAULT_ORDERS, dtype=float)


def _renyi_room(orders: FloatArray, eps: float, delta: float) -> FloatArray:
    """B(α): the largest Rényi budget at each order whose (ε, δ) conversion (Balle et al. 2020,
    Thm. 21, or Mironov 2017, Prop. 3, the smaller) is at most ``eps`` at ``delta``."""
    import numpy as np

    a = orders
    improved = np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
    classic = math.log(1.0 / delta) / (a - 1.0)
    return eps - np.minimum(improved, classic)


def _renyi_curve(event: Event, orders: FloatArray) -> FloatArray:
    """Σ k·ε_leaf(α) of a release on ``orders`` (widened up by ``rdp_of``); refuses leaves
    without a Rényi statement."""
    import numpy as np

    from dpcert.accounting.rdp import rdp_of

    total = np.zeros_like(orders)
    for e, k in flat_leaves(event):
        try:
            total = total + k * rdp_of(e, orders)
        except UnsupportedEvent:
            raise UnsupportedEvent(
                f"{e!r} has no Rényi-DP statement; this dataset is kept by the Rényi filter, "
                "which admits releases with a Rényi curve (Laplace, Gaussian, ε-DP, zCDP, "
                "randomized response, Poisson-sampled Gaussians); choose rule='basic' for "
                "(ε, δ) releases"
            ) from None
    return total


def renyi_order(event: Event, total: tuple[Fraction, Fraction]) -> float:
    """The one Rényi order α the ``"renyi"`` filter uses, fixed by the first release: the
    order at which the most releases like it fit, B(α)/c₁(α) largest (ties: the smaller α).

    Examples
    --------
    >>> from dpcert.core.events import LaplaceEvent
    >>> renyi_order(LaplaceEvent(10), (Fraction(5), Fraction(1, 10**6)))
    6.4
    """
    import numpy as np

    orders = _renyi_orders()
    c = _renyi_curve(event, orders)
    room = _renyi_room(orders, float(total[0]), float(total[1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(c > 0, room / c, np.where(room >= 0, np.inf, -np.inf))
    if not np.isfinite(c).any():
        raise UnsupportedEvent(f"{event!r} has an infinite Rényi curve at every order")
    fit = np.where(np.isfinite(c), fit, -np.inf)
    return float(orders[int(np.argmax(fit))])


def renyi_cost(event: Event, order: float) -> float:
    """c(α) of one release at the filter's order (rounded up)."""
    import numpy as np

    return float(_renyi_curve(event, np.asarray([order]))[0])


def renyi_epsilon(spent: float, order: float, delta: float) -> float:
    """ε at ``delta`` of an (α, spent)-RDP interaction (rounded up)."""
    import numpy as np

    from dpcert.accounting._convert import rdp_to_epsilon

    return rdp_to_epsilon(np.asarray([order]), np.asarray([spent]), delta)


def _zero(kind: str) -> Amount:
    return (Fraction(0), Fraction(0)) if kind == "ApproxDP" else Fraction(0)


@dataclass(frozen=True)
class FilterState:
    """The running state of a privacy filter: what it needs to cost the next release and to
    report its totals, without its history (the ledger stores it beside its charges).

    ``rule`` is ``None`` until the first release fixes it; ``sums`` is Σ cᵢ (pure, zcdp) or
    (Σ εᵢ, Σ δᵢ) (approx); ``lower`` the sum of the optimistic PLD estimates (approx); ``acc``
    Σ μᵢ² (gdp) or Σ cᵢ(α) at the fixed ``order`` (renyi); ``basic`` the sum of the releases'
    basic amounts as recorded; ``count`` the number of releases.
    """

    kind: str
    total: Amount
    choice: str = "auto"
    rule: Rule | None = None
    relation: str | None = None
    count: int = 0
    sums: Amount = Fraction(0)
    lower: Fraction = Fraction(0)
    acc: float = 0.0
    order: float | None = None

    @staticmethod
    def start(kind: str, total: Amount, choice: str = "auto",
              relation: str | None = None) -> FilterState:
        """The state of a filter with no release yet."""
        check_choice(kind, total, choice)
        return FilterState(kind, total, choice, None, relation, 0, _zero(kind))

    def step(self, r: Release) -> tuple[Point, FilterState]:
        """The cost of ``r`` under the rule and the state after it (O(1) in the history)."""
        rule = self.rule or choose_rule(self.kind, self.total, r.event, self.choice, r.batch)
        rel = history_relation([r.event], self.relation)
        new = replace(self, rule=rule, relation=rel, count=self.count + 1)
        if rule == "zcdp":
            p: Point = _rho(r.event)
        elif rule == "pure":
            p = _pure(r.event)
        elif rule == "gdp":
            m = _mu2(r.event)
            return Fraction(m), replace(new, acc=self.acc + m)
        elif rule == "renyi":
            assert isinstance(self.total, tuple)
            order = self.order if self.order is not None else renyi_order(r.event, self.total)
            c = renyi_cost(r.event, order)
            return Fraction(c), replace(new, acc=self.acc + c, order=order)
        else:
            assert isinstance(self.total, tuple) and isinstance(self.sums, tuple)
            se, sd = self.sums
            pt = _approx_point(r, self.total[1] - sd)
            return pt, replace(new, sums=(se + pt[0], sd + pt[1]),
                               lower=self.lower + _lower(r, pt))
        assert isinstance(p, Fraction)
        sums = self.sums
        if isinstance(sums, tuple):  # pure rule on ApproxDP(ε, 0)
            return p, replace(new, sums=(sums[0] + p, sums[1]))
        return p, replace(new, sums=sums + p)

    def tally(self, points: tuple[Point, ...] = ()) -> Tally:
        """The totals of the releases so far (``points``: their costs, when the caller kept
        them)."""
        rule = self.rule or choose_rule(self.kind, self.total, None, self.choice)
        total = self.total
        if rule in ("zcdp", "pure"):
            s = self.sums
            if isinstance(total, tuple):
                assert isinstance(s, tuple)
                return Tally(rule, points, s, (total[0] - s[0], total[1]), s[0] <= total[0])
            assert isinstance(s, Fraction)
            return Tally(rule, points, s, total - s, s <= total)
        assert isinstance(total, tuple)
        e_b, d_b = total
        if rule == "gdp":
            mu2 = self.acc * (1 + 1e-12)
            mu = math.sqrt(mu2)
            fits = gdp_delta(mu, float(e_b)) <= float(d_b) * (1 - 1e-12)
            eps = _up(gdp_epsilon(mu, float(d_b))) if mu > 0 else Fraction(0)
            return Tally(rule, points, (eps, d_b), (e_b - eps, d_b), fits, mu2)
        if rule == "renyi":
            if self.order is None or self.count == 0:
                return Tally(rule, points, (Fraction(0), Fraction(0)), total, True)
            eps = _up(renyi_epsilon(self.acc, self.order, float(d_b)))
            return Tally(rule, points, (eps, d_b), (e_b - eps, d_b), eps <= e_b,
                         rdp=self.acc)
        assert isinstance(self.sums, tuple)
        se, sd = self.sums
        return Tally(rule, points, (se, sd), (e_b - se, d_b - sd), se <= e_b and sd <= d_b,
                     spent_lower=self.lower)

    def to_json(self) -> str:
        """The state as canonical JSON (exact fractions as strings, floats by ``repr``)."""
        def amt(a: Amount) -> str | list[str]:
            return [str(a[0]), str(a[1])] if isinstance(a, tuple) else str(a)

        return json.dumps({"kind": self.kind, "total": amt(self.total), "choice": self.choice,
                           "rule": self.rule, "relation": self.relation, "count": self.count,
                           "sums": amt(self.sums), "lower": str(self.lower),
                           "acc": repr(self.acc),
                           "order": None if self.order is None else repr(self.order)},
                          sort_keys=True, separators=(",", ":"))

    @staticmethod
    def from_json(text: str) -> FilterState:
        """Inverse of `to_json`."""
        d = json.loads(text)

        def amt(v: Any) -> Amount:
            return (Fraction(v[0]), Fraction(v[1])) if isinstance(v, list) else Fraction(v)

        return FilterState(d["kind"], amt(d["total"]), d["choice"], d["rule"], d["relation"],
                           int(d["count"]), amt(d["sums"]), Fraction(d["lower"]),
                           float(d["acc"]), None if d["order"] is None else float(d["order"]))


def tally(budget_kind: str, total: Amount, releases: Sequence[Release],
          choice: str = "auto") -> Tally:
    """The cost of ``releases`` (oldest first) against the budget ``total`` in a measure,
    under the rule ``choice`` (see `CHOICES`): the fold of `FilterState.step`.

    Raises `UnsupportedEvent` when a release cannot be accounted under
    the dataset's rule (nothing is charged then: callers tally before committing).
    """
    state = FilterState.start(budget_kind, total, choice)
    points: list[Point] = []
    for r in releases:
        p, state = state.step(r)
        points.append(p)
    return state.tally(tuple(points))


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

    The same rule as the persistent [`Ledger`][dpcert.accounting.ledger.Ledger]; a ``Session``
    without a ledger can hold one.  ``rule`` is the curator's choice (`CHOICES`).
    `charge` raises `BudgetExceeded` (recording nothing) when the
    release does not fit.  Each charge costs O(1) in the history (`FilterState`).
    """

    def __init__(self, budget: Measure, *, relation: str | None = None,
                 rule: str = "auto") -> None:
        self.kind = _kind(budget)
        self.total: Amount = basic_loss(budget.require_value("budget"), "budget")
        if relation not in (None, "add_remove", "replace_one"):
            raise InvalidParameter(
                f"relation={relation!r} must be 'add_remove', 'replace_one' or None")
        self._state = FilterState.start(self.kind, self.total, rule, relation)
        self._releases: list[Release] = []
        self._lock = threading.Lock()

    @property
    def choice(self) -> str:
        """The curator's rule choice (``"auto"`` unless given)."""
        return self._state.choice

    @property
    def relation(self) -> str | None:
        """The neighbouring relation every release must be stated for: declared, else fixed by
        the first release stated for one (``None`` until then)."""
        return self._state.relation

    @property
    def releases(self) -> tuple[Release, ...]:
        """The releases charged so far."""
        return tuple(self._releases)

    @property
    def state(self) -> FilterState:
        """The running state after the releases so far."""
        return self._state

    @property
    def rule(self) -> Rule:
        """The filter in force (``choose_rule`` of the choice and the first release)."""
        return self._state.tally().rule

    def status(self) -> Tally:
        """The current tally (``points`` empty: the state keeps totals only)."""
        return self._state.tally()

    @property
    def spent(self) -> Amount:
        """What the history costs under the rule (exact)."""
        return self.status().spent

    @property
    def remaining(self) -> Amount:
        """What is left under the rule (exact)."""
        return self.status().remaining

    def quote(self, event: Event, amount: Measure | None = None, *,
              batch: bool = False) -> Quote:
        """What ``event`` would cost next, by basic composition and under the rule, without
        charging: ``{"basic": amount or None, "tight": point, "fits": bool, "rule": rule,
        "spent_after": amount}``."""
        r = make_release(self.kind, event, amount, batch)
        check_relation(self.relation, r.event, "this filter")
        return quote_state(self._state, r)

    def charge(self, event: Event, amount: Measure | None = None, *,
               batch: bool = False) -> Tally:
        """Admit ``event`` (and record it) if the filter allows it; returns the new tally."""
        r = make_release(self.kind, event, amount, batch)
        with self._lock:
            check_relation(self.relation, r.event, "this filter")
            point, state = self._state.step(r)
            new = state.tally((point,))
            if not new.fits:
                old = self._state.tally()
                raise BudgetExceeded(
                    f"release {event!r} does not fit: the {new.rule} filter has "
                    f"{describe_amount(self.kind, old.remaining)} left of "
                    f"{describe_amount(self.kind, self.total)}"
                )
            self._releases.append(r)
            self._state = state
        return new

    def __repr__(self) -> str:
        return f"PrivacyFilter({self.kind}, rule={self.rule}, releases={len(self._releases)})"


def quote_state(state: FilterState, r: Release) -> Quote:
    """What release ``r`` would cost after ``state``: basic amount (``None`` without a basic
    statement), its cost under the rule, whether it fits, the rule and the spent total after."""
    point, after = state.step(r)
    t = after.tally((point,))
    try:
        basic: Amount | None = basic_amount(state.kind, r.event)
    except UnsupportedEvent:
        basic = None
    return {"basic": basic, "tight": point, "fits": t.fits, "rule": t.rule,
            "spent_after": t.spent}


def make_release(kind: str, event: Event | None, amount: Measure | None,
                 batch: bool) -> Release:
    """Validate a release: the event (derived from ``amount`` when omitted) and the amount."""
    value: Amount | None = None
    if amount is not None:
        if _kind(amount) != kind:
            raise MeasureMismatch(f"amount={amount!r} is not in the budget's measure {kind}")
        value = basic_loss(amount.require_value("amount"), "amount")
    if event is None:
        if amount is None:
            raise InvalidParameter("give an event, an amount, or both")
        event = event_from_distance(amount, value)
    if not isinstance(event, Event):
        raise InvalidParameter(f"event={event!r} is not an accounting Event")
    if not isinstance(batch, bool):
        raise InvalidParameter(f"batch={batch!r} must be True or False")
    return Release(event, value, batch)
