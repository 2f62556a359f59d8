"""Accounting as data: frozen descriptions of what a release did (its *events*).

An event says which mechanism ran and with which parameters; an accountant
(`dpcert.accounting`) turns a sequence of events into a privacy guarantee.  The design follows
Google's ``dp_accounting`` event trees; parameters are stored as exact ``Fraction``.

Neighbouring relation.  A base event describes one mechanism on neighbouring inputs at the
distance the event was built for (``Measurement.event(d_in)``), and says for which neighbours in
``neighbours``: ``"add_remove"`` (one record added or removed: ``SymmetricDistance``,
``InsertDeleteDistance``), ``"replace_one"`` (one record replaced: ``ChangeOneDistance``), or
``None`` when the caller did not state it (hand-built events; each sampling wrapper then takes
the statement to be for the relation it needs, as the caller's assertion).  Nestings are checked
when built, and only those with a proof are accepted (``docs/proofs/amplification.md``):

* ``PoissonSampledEvent`` is an add/remove statement and needs an inner event for add/remove
  neighbours: an inner ``"replace_one"`` event is refused.  The inner event may be a composition
  (one Poisson sample shared by several queries).
* ``SampledWithoutReplacementEvent`` is a replace-one statement and needs an inner event for
  replace-one neighbours; a ``PoissonSampledEvent`` inner is accepted, with its replace-one
  guarantee log((1 − q + q e^ε)/(1 − q + q e^{−ε})) (not its add/remove one); any other
  ``"add_remove"`` inner is refused.
* ``ComposedEvent`` parts must not mix the two relations.

Examples
--------
>>> from dpcert.core.events import GaussianEvent, SelfComposedEvent
>>> SelfComposedEvent(GaussianEvent(sigma=2.0), 10)
SelfComposedEvent(event=GaussianEvent(sigma=2, sensitivity=1), count=10)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from dpcert._numbers import Number
from dpcert._types import DistanceLike
from dpcert._validate import check_delta, check_int, check_positive, check_probability
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP, RenyiDP, pair_loss, scalar_loss
from dpcert.errors import InvalidParameter, UnsupportedEvent

__all__ = [
    "ApproxEvent",
    "BoundedRangeEvent",
    "ComposedEvent",
    "DiscreteGaussianEvent",
    "DiscreteLaplaceEvent",
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "PoissonSampledEvent",
    "PureEvent",
    "RandomizedResponseEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ZCDPEvent",
    "event_from_distance",
    "relation_for_metric",
    "relation_of",
    "with_relation",
]

#: The neighbouring relations an event can be stated for.
Relation = Literal["add_remove", "replace_one"]


def _check_relation(value: object) -> Relation | None:
    if value is None:
        return None
    if value == "add_remove":
        return "add_remove"
    if value == "replace_one":
        return "replace_one"
    raise InvalidParameter(
        f"neighbours={value!r} must be 'add_remove', 'replace_one' or None"
    )


def _fmt(x: Fraction) -> str:
    return str(x)


@dataclass(frozen=True, repr=False)
class Event:
    """Base class of accounting events (all subclasses are frozen dataclasses).

    ``neighbours`` is the neighbouring relation a base event is stated for (see the module
    docstring); wrappers derive theirs ([`relation_of`][dpcert.core.events.relation_of]).
    """

    # Not part of equality: the relation is checked when events nest, never changes a number.
    neighbours: Relation | None = field(default=None, kw_only=True, compare=False)

    def _fields(self) -> dict[str, object]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "neighbours"}
        if self.neighbours is not None:
            out["neighbours"] = self.neighbours
        return out

    def __repr__(self) -> str:
        parts = []
        for k, v in self._fields().items():
            parts.append(f"{k}={_fmt(v)}" if isinstance(v, Fraction) else f"{k}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _set(obj: object, **values: object) -> None:
    for k, v in values.items():
        object.__setattr__(obj, k, v)


@dataclass(frozen=True, repr=False)
class PureEvent(Event):
    """A mechanism known only to be ε-DP (dominated by randomized response with ε)."""

    epsilon: Fraction

    def __init__(self, epsilon: Number, *, neighbours: Relation | None = None) -> None:
        _set(self, epsilon=check_positive(epsilon, "epsilon"),
             neighbours=_check_relation(neighbours))


@dataclass(frozen=True, repr=False)
class ApproxEvent(Event):
    """A mechanism known only to be (ε, δ)-DP (ε may be 0)."""

    epsilon: Fraction
    delta: Fraction

    def __init__(self, epsilon: Number, delta: Number, *,
                 neighbours: Relation | None = None) -> None:
        e = check_positive(epsilon, "epsilon") if epsilon != 0 else Fraction(0)
        _set(self, epsilon=e, delta=check_delta(delta, "delta"),
             neighbours=_check_relation(neighbours))


@dataclass(frozen=True, repr=False)
class ZCDPEvent(Event):
    """A mechanism known only to be ρ-zCDP."""

    rho: Fraction

    def __init__(self, rho: Number, *, neighbours: Relation | None = None) -> None:
        _set(self, rho=check_positive(rho, "rho"), neighbours=_check_relation(neighbours))


@dataclass(frozen=True, repr=False)
class LaplaceEvent(Event):
    """Laplace noise of ``scale`` on a query of L1 ``sensitivity`` (ε = sensitivity / scale)."""

    scale: Fraction
    sensitivity: Fraction

    def __init__(self, scale: Number, sensitivity: Number = 1, *,
                 neighbours: Relation | None = None) -> None:
        _set(self, scale=check_positive(scale, "scale"),
             sensitivity=check_positive(sensitivity, "sensitivity"),
             neighbours=_check_relation(neighbours))

    @property
    def epsilon(self) -> Fraction:
        """The pure-DP ε = sensitivity / scale."""
        return self.sensitivity / self.scale


@dataclass(frozen=True, repr=False)
class GaussianEvent(Event):
    """Gaussian noise of standard deviation ``sigma`` on a query of L2 ``sensitivity``."""

    sigma: Fraction
    sensitivity: Fraction

    def __init__(self, sigma: Number, sensitivity: Number = 1, *,
                 neighbours: Relation | None = None) -> None:
        _set(self, sigma=check_positive(sigma, "sigma"),
             sensitivity=check_positive(sensitivity, "sensitivity"),
             neighbours=_check_relation(neighbours))

    @property
    def rho(self) -> Fraction:
        """The zCDP ρ = sensitivity² / (2 σ²) (Bun & Steinke 2016)."""
        return self.sensitivity**2 / (2 * self.sigma**2)


@dataclass(frozen=True, repr=False)
class DiscreteLaplaceEvent(Event):
    """Discrete Laplace noise, P(x) ∝ exp(−|x|/scale) on the integers.

    ``sensitivity`` is an integer L1 sensitivity in the units of the integer lattice (for lattice
    mechanisms, state scale and sensitivity in lattice units).
    """

    scale: Fraction
    sensitivity: Fraction

    def __init__(self, scale: Number, sensitivity: Number = 1, *,
                 neighbours: Relation | None = None) -> None:
        s = check_positive(sensitivity, "sensitivity")
        if s.denominator != 1:
            raise InvalidParameter(
                f"sensitivity={sensitivity!r} must be an integer (lattice units)"
            )
        _set(self, scale=check_positive(scale, "scale"), sensitivity=s,
             neighbours=_check_relation(neighbours))

    @property
    def epsilon(self) -> Fraction:
        """The pure-DP ε = sensitivity / scale."""
        return self.sensitivity / self.scale


@dataclass(frozen=True, repr=False)
class DiscreteGaussianEvent(Event):
    """Discrete Gaussian noise, P(x) ∝ exp(−x²/(2σ²)) on the integers (Canonne et al. 2020).

    ``sensitivity`` is an integer L2 sensitivity in lattice units (scalar queries).
    """

    sigma: Fraction
    sensitivity: Fraction

    def __init__(self, sigma: Number, sensitivity: Number = 1, *,
                 neighbours: Relation | None = None) -> None:
        s = check_positive(sensitivity, "sensitivity")
        if s.denominator != 1:
            raise InvalidParameter(
                f"sensitivity={sensitivity!r} must be an integer (lattice units)"
            )
        _set(self, sigma=check_positive(sigma, "sigma"), sensitivity=s,
             neighbours=_check_relation(neighbours))

    @property
    def rho(self) -> Fraction:
        """The zCDP ρ = sensitivity² / (2 σ²) (Canonne, Kamath & Steinke 2020, Thm. 14)."""
        return self.sensitivity**2 / (2 * self.sigma**2)


@dataclass(frozen=True, repr=False)
class RandomizedResponseEvent(Event):
    """k-ary randomized response on one value (local DP).

    Give either ``epsilon`` (the truth is reported with probability e^ε / (e^ε + k − 1)) or
    ``probability``, the probability of reporting the truth (``> 1/k``).
    """

    epsilon: Fraction | None
    categories: int
    probability: Fraction | None

    def __init__(self, epsilon: Number | None = None, categories: int = 2,
                 probability: Number | None = None, *, neighbours: Relation | None = None) -> None:
        k = check_int(categories, "categories", minimum=2)
        if (epsilon is None) == (probability is None):
            raise InvalidParameter(
                f"give exactly one of epsilon={epsilon!r} and probability={probability!r}"
            )
        e = None if epsilon is None else check_positive(epsilon, "epsilon")
        p = None
        if probability is not None:
            p = check_probability(probability, "probability", open_high=True)
            if p <= Fraction(1, k):
                raise InvalidParameter(
                    f"probability={probability!r} must be > 1/categories = 1/{k}"
                )
        _set(self, epsilon=e, categories=k, probability=p,
             neighbours=_check_relation(neighbours))

    def probabilities(self) -> tuple[float, float, float]:
        """(P[truth], P[a given other value], ε) as floats, for numerical accountants."""
        import math

        k = self.categories
        if self.probability is not None:
            p = float(self.probability)
            other = (1.0 - p) / (k - 1)
            return p, other, math.log(p / other)
        assert self.epsilon is not None
        e = float(self.epsilon)
        denom = math.exp(e) + k - 1
        return math.exp(e) / denom, 1.0 / denom, e


@dataclass(frozen=True, repr=False)
class ComposedEvent(Event):
    """The sequential (possibly adaptive) composition of several events."""

    events: tuple[Event, ...]

    def __init__(self, events: Iterable[Event]) -> None:
        evs = tuple(events)
        seen: set[str] = set()
        for i, e in enumerate(evs):
            if not isinstance(e, Event):
                raise InvalidParameter(f"events[{i}]={e!r} is not an accounting Event")
            r = relation_of(e)
            if r is not None:
                seen.add(r)
        if len(seen) > 1:
            raise InvalidParameter(
                f"events={evs!r} mix add/remove and replace-one statements; state every part "
                "for the same neighbouring relation"
            )
        _set(self, events=evs)


@dataclass(frozen=True, repr=False)
class SelfComposedEvent(Event):
    """``count`` sequential runs of the same event."""

    event: Event
    count: int

    def __init__(self, event: Event, count: Number) -> None:
        if not isinstance(event, Event):
            raise InvalidParameter(f"event={event!r} is not an accounting Event")
        _set(self, event=event, count=check_int(count, "count", minimum=0))


@dataclass(frozen=True, repr=False)
class PoissonSampledEvent(Event):
    """Run ``event`` on a Poisson subsample: each record kept independently with ``rate``.

    Amplification is for add/remove neighbours, so ``event`` must be stated for add/remove
    neighbours (or unstated); a replace-one event is refused (no proof applies).  ``event`` may
    be a composition: several queries on one shared sample (``PoissonSampled(Composed)``).

    Examples
    --------
    >>> shared = PoissonSampledEvent(ComposedEvent([GaussianEvent(4), GaussianEvent(3)]), 0.01)
    >>> relation_of(shared)
    'add_remove'
    >>> PoissonSampledEvent(LaplaceEvent(1, neighbours="replace_one"), 0.1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: event=LaplaceEvent(...) is stated for replace-one ...
    """

    event: Event
    rate: Fraction

    def __init__(self, event: Event, rate: Number) -> None:
        if not isinstance(event, Event):
            raise InvalidParameter(f"event={event!r} is not an accounting Event")
        if relation_of(event) == "replace_one":
            raise InvalidParameter(
                f"event={event!r} is stated for replace-one neighbours; Poisson subsampling "
                "amplifies add/remove statements only (state the inner event for add/remove)"
            )
        _set(self, event=event, rate=check_probability(rate, "rate", open_low=True))


@dataclass(frozen=True, repr=False)
class SampledWithoutReplacementEvent(Event):
    """Run ``event`` on ``sample_size`` records drawn without replacement from
    ``population_size`` (replace-one neighbours; sampling rate γ = sample_size / population_size).

    ``event`` must be stated for replace-one neighbours (or unstated), or be a
    `PoissonSampledEvent`, whose replace-one guarantee is then used; any other add/remove
    statement is refused.
    """

    event: Event
    sample_size: int
    population_size: int

    def __init__(self, event: Event, sample_size: int, population_size: int) -> None:
        if not isinstance(event, Event):
            raise InvalidParameter(f"event={event!r} is not an accounting Event")
        if relation_of(event) == "add_remove" and not isinstance(event, PoissonSampledEvent):
            raise InvalidParameter(
                f"event={event!r} is stated for add/remove neighbours; sampling without "
                "replacement amplifies replace-one statements only (state the inner event for "
                "replace-one neighbours, e.g. with group privacy at distance 2)"
            )
        m = check_int(sample_size, "sample_size", minimum=1)
        n = check_int(population_size, "population_size", minimum=1)
        if m > n:
            raise InvalidParameter(
                f"sample_size={sample_size!r} must be <= population_size={population_size!r}"
            )
        _set(self, event=event, sample_size=m, population_size=n)

    @property
    def rate(self) -> Fraction:
        """The sampling rate γ = sample_size / population_size."""
        return Fraction(self.sample_size, self.population_size)


def relation_of(event: Event) -> Relation | None:
    """The neighbouring relation ``event`` is a statement for (``None``: unstated).

    Examples
    --------
    >>> relation_of(LaplaceEvent(2))
    >>> relation_of(SampledWithoutReplacementEvent(PoissonSampledEvent(PureEvent(1), 0.1), 10, 100))
    'replace_one'
    """
    if isinstance(event, PoissonSampledEvent):
        return "add_remove"
    if isinstance(event, SampledWithoutReplacementEvent):
        return "replace_one"
    if isinstance(event, SelfComposedEvent):
        return relation_of(event.event)
    if isinstance(event, ComposedEvent):
        for e in event.events:
            r = relation_of(e)
            if r is not None:
                return r
        return None
    return event.neighbours


def relation_for_metric(metric: object, d_in: DistanceLike) -> Relation | None:
    """The relation an event at ``d_in`` under ``metric`` is a neighbour statement for.

    ``SymmetricDistance`` / ``InsertDeleteDistance`` / the engine's ``UnitDistance`` (one
    privacy unit with all its rows added or removed) at 1: add/remove; ``ChangeOneDistance`` at
    1: replace-one; anything else (other distances, other metrics): ``None``.  So an engine
    release's event is an add/remove statement, which sampling without replacement cannot wrap.
    """
    from dpcert.core.frames import UnitDistance
    from dpcert.core.metrics import ChangeOneDistance, InsertDeleteDistance, SymmetricDistance

    if d_in != 1:
        return None
    if isinstance(metric, (SymmetricDistance, InsertDeleteDistance, UnitDistance)):
        return "add_remove"
    if isinstance(metric, ChangeOneDistance):
        return "replace_one"
    return None


def with_relation(event: Event, neighbours: Relation | None) -> Event:
    """``event`` with every unstated base event stated for ``neighbours``.

    Stated parts are kept; a stated part for the other relation raises
    `InvalidParameter`.  Used by ``Measurement.event`` to stamp the relation
    of the measurement's input metric.

    Examples
    --------
    >>> with_relation(LaplaceEvent(2), "replace_one")
    LaplaceEvent(scale=2, sensitivity=1, neighbours='replace_one')
    """
    r = _check_relation(neighbours)
    if r is None:
        return event
    if isinstance(event, ComposedEvent):
        return ComposedEvent([with_relation(e, r) for e in event.events])
    if isinstance(event, SelfComposedEvent):
        return SelfComposedEvent(with_relation(event.event, r), event.count)
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        if relation_of(event) != r:
            raise InvalidParameter(
                f"event={event!r} is a {relation_of(event)} statement, not {r}"
            )
        return event
    if event.neighbours == r:
        return event
    if event.neighbours is not None:
        raise InvalidParameter(f"event={event!r} is stated for {event.neighbours}, not {r}")
    clone = object.__new__(type(event))
    for k, v in event._fields().items():
        object.__setattr__(clone, k, v)
    object.__setattr__(clone, "neighbours", r)
    return clone


def event_from_distance(measure: Measure, distance: object) -> Event:
    """The event of a measurement that states only its privacy loss ``distance`` in ``measure``.

    ``PureDP`` ε → `PureEvent`, ``ApproxDP`` (ε, δ) → `ApproxEvent`, ``ZCDP`` ρ →
    `ZCDPEvent`.  A Rényi curve is not an event any accountant here can use exactly, so
    ``RenyiDP`` raises `UnsupportedEvent`.  A zero loss gives an empty
    composition.

    Examples
    --------
    >>> import dpcert as dp
    >>> event_from_distance(dp.PureDP(), Fraction(1, 2))
    PureEvent(epsilon=1/2)
    >>> event_from_distance(dp.ApproxDP(), (Fraction(1), Fraction(1, 10**6)))
    ApproxEvent(epsilon=1, delta=1/1000000)
    """
    d = measure.validate_distance(distance)
    if isinstance(measure, PureDP):
        return ComposedEvent(()) if d == 0 else PureEvent(scalar_loss(d, "distance"))
    if isinstance(measure, ApproxDP):
        e, dl = pair_loss(d, "distance")
        if dl >= 1:
            raise UnsupportedEvent(f"distance={distance!r}: δ = 1 carries no privacy")
        if e == 0 and dl == 0:
            return ComposedEvent(())
        return ApproxEvent(e, dl)
    if isinstance(measure, ZCDP):
        return ComposedEvent(()) if d == 0 else ZCDPEvent(scalar_loss(d, "distance"))
    if isinstance(measure, RenyiDP):
        raise UnsupportedEvent(
            "a RenyiDP measurement has no accounting event: give it an event_map or convert it "
            "with dpcert.c.make_renyiDP_to_approxDP"
        )
    raise UnsupportedEvent(f"no accounting event for measure {type(measure).__name__}")


class BoundedRangeEvent(PureEvent):
    """An ε-*bounded-range* mechanism: for neighbours, ``sup_c log P(c|x)/P(c|x') − inf_c log
    P(c|x)/P(c|x') ≤ ε`` (Durfee & Rogers 2019).

    It is an ε-DP `PureEvent` (every accountant that takes a ``PureEvent`` may treat it as
    one), and it is also ``ε²/8``-zCDP (Cesar & Rogers 2021, Lemma 3.2; Dong, Durfee & Rogers
    2020 for its optimal composition), which the zCDP accountant and
    `dpcert.c.make_pureDP_to_zCDP` charge instead of ``ε²/2``.  The exponential mechanism
    (and report-noisy-max with Gumbel noise, the same distribution) is ε-bounded-range;
    permute-and-flip and report-noisy-max with Laplace noise are not known to be, and keep
    [`PureEvent`][dpcert.core.events.PureEvent].  Proof: ``docs/proofs/exponential.md``.

    Examples
    --------
    >>> BoundedRangeEvent(Fraction(1, 2))
    BoundedRangeEvent(epsilon=1/2)
    >>> isinstance(BoundedRangeEvent(1), PureEvent), BoundedRangeEvent(1) == PureEvent(1)
    (True, False)
    """
