"""Accounting as data: frozen descriptions of what a release did (its *events*).

An event says which mechanism ran and with which parameters; an accountant
(:mod:`dpcert.accounting`) turns a sequence of events into a privacy guarantee.  The design follows
Google's ``dp_accounting`` event trees; parameters are stored as exact ``Fraction``.

Neighbouring relation.  A base event describes one mechanism on neighbouring inputs at the
distance the event was built for (``Measurement.event(d_in)``).  ``PoissonSampledEvent`` assumes
add/remove neighbours; ``SampledWithoutReplacementEvent`` assumes replace-one neighbours
(fixed-size datasets) and that the inner event was stated for replace-one neighbours.

Examples
--------
>>> from dpcert.core.events import GaussianEvent, SelfComposedEvent
>>> SelfComposedEvent(GaussianEvent(sigma=2.0), 10)
SelfComposedEvent(event=GaussianEvent(sigma=2, sensitivity=1), count=10)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dpcert._validate import check_delta, check_int, check_positive, check_probability
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP, RenyiDP
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
]


def _fmt(x: Fraction) -> str:
    return str(x)


class Event:
    """Base class of accounting events (all subclasses are frozen dataclasses)."""

    def _fields(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        parts = []
        for k, v in self._fields().items():
            parts.append(f"{k}={_fmt(v)}" if isinstance(v, Fraction) else f"{k}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _set(obj: object, **values: Any) -> None:
    for k, v in values.items():
        object.__setattr__(obj, k, v)


@dataclass(frozen=True, repr=False)
class PureEvent(Event):
    """A mechanism known only to be ε-DP (dominated by randomized response with ε)."""

    epsilon: Fraction

    def __init__(self, epsilon: Any) -> None:
        _set(self, epsilon=check_positive(epsilon, "epsilon"))


@dataclass(frozen=True, repr=False)
class ApproxEvent(Event):
    """A mechanism known only to be (ε, δ)-DP (ε may be 0)."""

    epsilon: Fraction
    delta: Fraction

    def __init__(self, epsilon: Any, delta: Any) -> None:
        e = check_positive(epsilon, "epsilon") if epsilon != 0 else Fraction(0)
        _set(self, epsilon=e, delta=check_delta(delta, "delta"))


@dataclass(frozen=True, repr=False)
class ZCDPEvent(Event):
    """A mechanism known only to be ρ-zCDP."""

    rho: Fraction

    def __init__(self, rho: Any) -> None:
        _set(self, rho=check_positive(rho, "rho"))


@dataclass(frozen=True, repr=False)
class LaplaceEvent(Event):
    """Laplace noise of ``scale`` on a query of L1 ``sensitivity`` (ε = sensitivity / scale)."""

    scale: Fraction
    sensitivity: Fraction

    def __init__(self, scale: Any, sensitivity: Any = 1) -> None:
        _set(self, scale=check_positive(scale, "scale"),
             sensitivity=check_positive(sensitivity, "sensitivity"))

    @property
    def epsilon(self) -> Fraction:
        """The pure-DP ε = sensitivity / scale."""
        return self.sensitivity / self.scale


@dataclass(frozen=True, repr=False)
class GaussianEvent(Event):
    """Gaussian noise of standard deviation ``sigma`` on a query of L2 ``sensitivity``."""

    sigma: Fraction
    sensitivity: Fraction

    def __init__(self, sigma: Any, sensitivity: Any = 1) -> None:
        _set(self, sigma=check_positive(sigma, "sigma"),
             sensitivity=check_positive(sensitivity, "sensitivity"))

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

    def __init__(self, scale: Any, sensitivity: Any = 1) -> None:
        s = check_positive(sensitivity, "sensitivity")
        if s.denominator != 1:
            raise InvalidParameter(
                f"sensitivity={sensitivity!r} must be an integer (lattice units)"
            )
        _set(self, scale=check_positive(scale, "scale"), sensitivity=s)

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

    def __init__(self, sigma: Any, sensitivity: Any = 1) -> None:
        s = check_positive(sensitivity, "sensitivity")
        if s.denominator != 1:
            raise InvalidParameter(
                f"sensitivity={sensitivity!r} must be an integer (lattice units)"
            )
        _set(self, sigma=check_positive(sigma, "sigma"), sensitivity=s)

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

    def __init__(self, epsilon: Any = None, categories: Any = 2, probability: Any = None) -> None:
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
        _set(self, epsilon=e, categories=k, probability=p)

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
        for i, e in enumerate(evs):
            if not isinstance(e, Event):
                raise InvalidParameter(f"events[{i}]={e!r} is not an accounting Event")
        _set(self, events=evs)


@dataclass(frozen=True, repr=False)
class SelfComposedEvent(Event):
    """``count`` sequential runs of the same event."""

    event: Event
    count: int

    def __init__(self, event: Event, count: Any) -> None:
        if not isinstance(event, Event):
            raise InvalidParameter(f"event={event!r} is not an accounting Event")
        _set(self, event=event, count=check_int(count, "count", minimum=0))


@dataclass(frozen=True, repr=False)
class PoissonSampledEvent(Event):
    """Run ``event`` on a Poisson subsample: each record kept independently with ``rate``.

    Amplification is for add/remove neighbours.
    """

    event: Event
    rate: Fraction

    def __init__(self, event: Event, rate: Any) -> None:
        if not isinstance(event, Event):
            raise InvalidParameter(f"event={event!r} is not an accounting Event")
        _set(self, event=event, rate=check_probability(rate, "rate", open_low=True))


@dataclass(frozen=True, repr=False)
class SampledWithoutReplacementEvent(Event):
    """Run ``event`` on ``sample_size`` records drawn without replacement from
    ``population_size`` (replace-one neighbours; sampling rate γ = sample_size / population_size).
    """

    event: Event
    sample_size: int
    population_size: int

    def __init__(self, event: Event, sample_size: Any, population_size: Any) -> None:
        if not isinstance(event, Event):
            raise InvalidParameter(f"event={event!r} is not an accounting Event")
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


def event_from_distance(measure: Measure, distance: Any) -> Event:
    """The event of a measurement that states only its privacy loss ``distance`` in ``measure``.

    ``PureDP`` ε → :class:`PureEvent`, ``ApproxDP`` (ε, δ) → :class:`ApproxEvent`, ``ZCDP`` ρ →
    :class:`ZCDPEvent`.  A Rényi curve is not an event any accountant here can use exactly, so
    ``RenyiDP`` raises :class:`~dpcert.errors.UnsupportedEvent`.  A zero loss gives an empty
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
        return ComposedEvent(()) if d == 0 else PureEvent(d)
    if isinstance(measure, ApproxDP):
        e, dl = d
        if dl >= 1:
            raise UnsupportedEvent(f"distance={distance!r}: δ = 1 carries no privacy")
        if e == 0 and dl == 0:
            return ComposedEvent(())
        return ApproxEvent(e, dl)
    if isinstance(measure, ZCDP):
        return ComposedEvent(()) if d == 0 else ZCDPEvent(d)
    if isinstance(measure, RenyiDP):
        raise UnsupportedEvent(
            "a RenyiDP measurement has no accounting event: give it an event_map or convert it "
            "with dpcert.c.make_renyiDP_to_approxDP"
        )
    raise UnsupportedEvent(f"no accounting event for measure {type(measure).__name__}")


class BoundedRangeEvent(PureEvent):
    """An ε-*bounded-range* mechanism: for neighbours, ``sup_c log P(c|x)/P(c|x') − inf_c log
    P(c|x)/P(c|x') ≤ ε`` (Durfee & Rogers 2019).

    It is an ε-DP :class:`PureEvent` (every accountant that takes a ``PureEvent`` may treat it as
    one), and it is also ``ε²/8``-zCDP (Cesar & Rogers 2021, Lemma 3.2; Dong, Durfee & Rogers
    2020 for its optimal composition), which the zCDP accountant and
    :func:`dpcert.c.make_pureDP_to_zCDP` charge instead of ``ε²/2``.  The exponential mechanism
    (and report-noisy-max with Gumbel noise, the same distribution) is ε-bounded-range;
    permute-and-flip and report-noisy-max with Laplace noise are not known to be, and keep
    :class:`PureEvent`.  Proof: ``docs/proofs/exponential.md``.

    Examples
    --------
    >>> BoundedRangeEvent(Fraction(1, 2))
    BoundedRangeEvent(epsilon=1/2)
    >>> isinstance(BoundedRangeEvent(1), PureEvent), BoundedRangeEvent(1) == PureEvent(1)
    (True, False)
    """
