"""Privacy measures: the divergences in which a measurement's privacy is stated.

A measure object plays two roles.  Bare (``PureDP()``) it names the measure a
`Measurement` is private under.  With an amount (``PureDP(1.0)``,
``ApproxDP(1.0, 1e-6)``, ``ZCDP(0.5)``) it is also a *budget* or a *claim* in that measure.

Distances in a measure (the ``d_out`` of a privacy map) are exact:

=============  ===========================================================
measure        distance
=============  ===========================================================
``PureDP``     ε, a ``Fraction`` ≥ 0
``ApproxDP``   (ε, δ), a pair of ``Fraction`` with ε ≥ 0 and 0 ≤ δ ≤ 1
``ZCDP``       ρ, a ``Fraction`` ≥ 0 (Bun & Steinke 2016)
``RenyiDP``    a [`RenyiCurve`][dpcert.core.measures.RenyiCurve]: α ↦ ε(α) (Mironov 2017)
=============  ===========================================================

``measure.compare(a, b)`` is True when distance ``a`` is at least as private as ``b`` (a ≤ b),
so ``Measurement.check(d_in, d_out)`` is ``compare(map(d_in), d_out)``.

Examples
--------
>>> import dpcert as dp
>>> dp.PureDP().compare(Fraction(12, 25), Fraction(1, 2))
True
>>> dp.ApproxDP(1.0, 1e-6).value
(Fraction(1, 1), Fraction(1, 1000000))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeAlias, TypeVar

from dpcert._numbers import Number, as_fraction, round_up, show_up
from dpcert._types import JSON, DistanceLike
from dpcert._validate import check_nonnegative
from dpcert.errors import InvalidParameter, MeasureMismatch

__all__ = [
    "DEFAULT_RENYI_ORDERS",
    "ApproxDP",
    "ExactLoss",
    "Loss",
    "Measure",
    "PureDP",
    "RenyiCurve",
    "RenyiDP",
    "ZCDP",
    "basic_loss",
    "pair_loss",
    "scalar_loss",
]

#: Orders on which Rényi curves are compared when nothing else is given.
DEFAULT_RENYI_ORDERS: tuple[Fraction, ...] = tuple(
    Fraction(a) for a in (
        "1.25", "1.5", "1.75", "2", "2.5", "3", "4", "5", "6", "8", "10", "12", "16", "20",
        "24", "32", "48", "64", "128", "256",
    )
)

#: A privacy loss in some measure, as a privacy map states it: ε or ρ, an (ε, δ) pair, or a Rényi
#: curve (each measure's `Measure.validate_distance` accepts its own kind).
Loss: TypeAlias = "DistanceLike | RenyiCurve"
#: A privacy loss in exact form, as `Measure.validate_distance` returns it: ε or ρ (a
#: ``Fraction``), an (ε, δ) pair of ``Fraction``, or a Rényi curve.
ExactLoss: TypeAlias = "Fraction | tuple[Fraction, Fraction] | RenyiCurve"


class Measure:
    """Base class of privacy measures. Subclasses are frozen dataclasses."""

    #: Short human name used in messages and certificates.
    name: str = "measure"

    def validate_distance(self, d: object, name: str = "d_out") -> ExactLoss:
        """Check a distance in this measure and return it in exact form (each subclass states
        its own: a ``Fraction``, a pair of them, a `RenyiCurve`)."""
        raise NotImplementedError

    def compare(self, a: Loss, b: Loss) -> bool:
        """Whether distance ``a`` is at most ``b`` (``a`` promises at least as much privacy)."""
        raise NotImplementedError

    def zero(self) -> ExactLoss:
        """The distance of a mechanism that reveals nothing."""
        raise NotImplementedError

    def compose(self, distances: Sequence[Loss]) -> ExactLoss:
        """The loss of the sequential composition of mechanisms with these distances."""
        raise NotImplementedError

    @property
    def value(self) -> ExactLoss | None:
        """The amount this object carries as a budget or claim (None if bare)."""
        raise NotImplementedError

    def require_value(self, name: str = "budget") -> ExactLoss:
        """The carried amount, raising if this object is a bare measure."""
        v = self.value
        if v is None:
            raise InvalidParameter(f"{name}={self!r} carries no amount; write e.g. PureDP(1.0)")
        return v

    def same_kind(self, other: object) -> bool:
        """Whether ``other`` is the same measure (amounts ignored)."""
        return type(self) is type(other)

    def check_same_kind(self, other: Measure, what: str = "measure") -> None:
        """Raise `MeasureMismatch` unless ``other`` is the same measure."""
        if not self.same_kind(other):
            raise MeasureMismatch(
                f"{what}: expected {type(self).__name__}, got {type(other).__name__}"
            )

    def describe(self, d: object) -> str:
        """A human-readable rendering of a distance, rounded up."""
        raise NotImplementedError

    def to_json(self, d: object) -> dict[str, JSON]:
        """A JSON-friendly rendering of a distance (exact strings and rounded-up floats)."""
        raise NotImplementedError


_V = TypeVar("_V")


def _required(measure: Measure, v: _V | None, name: str) -> _V:
    if v is None:
        raise InvalidParameter(f"{name}={measure!r} carries no amount; write e.g. PureDP(1.0)")
    return v


def scalar_loss(loss: ExactLoss, name: str = "d_out") -> Fraction:
    """``loss`` as an ε or ρ, raising unless it is one (a pure-DP or zCDP distance).

    Examples
    --------
    >>> scalar_loss(Fraction(1, 2))
    Fraction(1, 2)
    """
    if not isinstance(loss, Fraction):
        raise InvalidParameter(f"{name}={loss!r} must be a single epsilon or rho")
    return loss


def pair_loss(loss: ExactLoss, name: str = "d_out") -> tuple[Fraction, Fraction]:
    """``loss`` as an (ε, δ) pair, raising unless it is one (an approximate-DP distance).

    Examples
    --------
    >>> pair_loss((Fraction(1), Fraction(0)))
    (Fraction(1, 1), Fraction(0, 1))
    """
    if not isinstance(loss, tuple):
        raise InvalidParameter(f"{name}={loss!r} must be a pair (epsilon, delta)")
    return loss


def basic_loss(loss: ExactLoss, name: str = "d_out") -> Fraction | tuple[Fraction, Fraction]:
    """``loss`` as an ε, ρ or (ε, δ), raising if it is a Rényi curve (which budgets, filters
    and ledgers do not hold).

    Examples
    --------
    >>> basic_loss(Fraction(1, 2))
    Fraction(1, 2)
    """
    if isinstance(loss, RenyiCurve):
        raise InvalidParameter(f"{name}={loss!r}: a Rényi curve is not an epsilon, rho or pair")
    return loss


def _frac_json(x: Fraction) -> dict[str, JSON]:
    return {"exact": str(x), "float_up": round_up(x)}


class _ScalarMeasure(Measure):
    """A measure whose distances are one non-negative number (ε or ρ) that adds up."""

    _field: str = "epsilon"  # the attribute holding the amount, also its JSON key
    _symbol: str = "ε"

    def _init_amount(self, value: object) -> None:
        if value is not None:
            v = as_fraction(value, self._field)
            if v <= 0:
                raise InvalidParameter(f"{self._field}={value!r} must be > 0")
            object.__setattr__(self, self._field, v)
        else:
            object.__setattr__(self, self._field, None)

    def validate_distance(self, d: object, name: str = "d_out") -> Fraction:
        if isinstance(d, tuple):
            raise InvalidParameter(
                f"{name}={d!r}: {type(self).__name__} distances are a single {self._symbol}"
            )
        return check_nonnegative(d, name)

    def compare(self, a: Loss, b: Loss) -> bool:
        return bool(self.validate_distance(a, "a") <= self.validate_distance(b, "b"))

    def zero(self) -> Fraction:
        return Fraction(0)

    def compose(self, distances: Sequence[Loss]) -> Fraction:
        return sum((self.validate_distance(d) for d in distances), Fraction(0))

    @property
    def value(self) -> Fraction | None:
        v: Fraction | None = getattr(self, self._field)
        return v

    def require_value(self, name: str = "budget") -> Fraction:
        return _required(self, self.value, name)

    def describe(self, d: object) -> str:
        return f"{self._symbol} = {show_up(self.validate_distance(d))}"

    def to_json(self, d: object) -> dict[str, JSON]:
        return {self._field: _frac_json(self.validate_distance(d))}

    def __repr__(self) -> str:
        v = self.value
        return f"{type(self).__name__}()" if v is None else f"{type(self).__name__}({show_up(v)})"


@dataclass(frozen=True, repr=False)
class PureDP(_ScalarMeasure):
    """Pure ε-differential privacy: max divergence.

    ``PureDP(epsilon)`` carries a budget or claim ε (``epsilon`` > 0).
    """

    epsilon: Fraction | None = None
    name = "pure ε-DP"

    def __init__(self, epsilon: Number | None = None) -> None:
        self._init_amount(epsilon)


@dataclass(frozen=True)
class ApproxDP(Measure):
    """Approximate (ε, δ)-differential privacy: hockey-stick divergence ≤ δ at level e^ε."""

    epsilon: Fraction | None = None
    delta: Fraction | None = None
    name = "(ε, δ)-DP"

    def __init__(self, epsilon: Number | None = None, delta: Number | None = None) -> None:
        if (epsilon is None) != (delta is None):
            raise InvalidParameter(
                f"ApproxDP needs both epsilon and delta or neither (epsilon={epsilon!r}, "
                f"delta={delta!r})"
            )
        if epsilon is not None:
            e = as_fraction(epsilon, "epsilon")
            if e <= 0:
                raise InvalidParameter(f"epsilon={epsilon!r} must be > 0")
            dl = as_fraction(delta, "delta")
            if not 0 <= dl < 1:
                raise InvalidParameter(f"delta={delta!r} must be in [0, 1)")
            object.__setattr__(self, "epsilon", e)
            object.__setattr__(self, "delta", dl)
        else:
            object.__setattr__(self, "epsilon", None)
            object.__setattr__(self, "delta", None)

    def validate_distance(self, d: object, name: str = "d_out") -> tuple[Fraction, Fraction]:
        if not (isinstance(d, tuple) and len(d) == 2):
            raise InvalidParameter(f"{name}={d!r}: ApproxDP distances are pairs (epsilon, delta)")
        e = check_nonnegative(d[0], f"{name}.epsilon")
        dl = as_fraction(d[1], f"{name}.delta")
        if not 0 <= dl <= 1:
            raise InvalidParameter(f"{name}.delta={d[1]!r} must be in [0, 1]")
        return e, dl

    def compare(self, a: Loss, b: Loss) -> bool:
        ea, da = self.validate_distance(a, "a")
        eb, db = self.validate_distance(b, "b")
        return bool(ea <= eb and da <= db)

    def zero(self) -> tuple[Fraction, Fraction]:
        return Fraction(0), Fraction(0)

    def compose(self, distances: Sequence[Loss]) -> tuple[Fraction, Fraction]:
        e, d = Fraction(0), Fraction(0)
        for x in distances:
            xe, xd = self.validate_distance(x)
            e += xe
            d += xd
        return e, min(d, Fraction(1))

    @property
    def value(self) -> tuple[Fraction, Fraction] | None:
        if self.epsilon is None or self.delta is None:
            return None
        return self.epsilon, self.delta

    def require_value(self, name: str = "budget") -> tuple[Fraction, Fraction]:
        return _required(self, self.value, name)

    def describe(self, d: object) -> str:
        e, dl = self.validate_distance(d)
        return f"ε = {show_up(e)}, δ = {show_up(dl)}"

    def to_json(self, d: object) -> dict[str, JSON]:
        e, dl = self.validate_distance(d)
        return {"epsilon": _frac_json(e), "delta": _frac_json(dl)}

    def __repr__(self) -> str:
        if self.epsilon is None or self.delta is None:
            return "ApproxDP()"
        return f"ApproxDP({show_up(self.epsilon)}, {show_up(self.delta)})"


@dataclass(frozen=True, repr=False)
class ZCDP(_ScalarMeasure):
    """ρ-zero-concentrated DP (Bun & Steinke 2016): D_α(M(x)‖M(x')) ≤ ρα for every α > 1."""

    rho: Fraction | None = None
    name = "ρ-zCDP"
    _field = "rho"
    _symbol = "ρ"

    def __init__(self, rho: Number | None = None) -> None:
        self._init_amount(rho)


@dataclass(frozen=True)
class RenyiCurve:
    """A Rényi-DP guarantee: order α ↦ ε(α), an upper bound on D_α(M(x)‖M(x')).

    ``function`` takes an exact order (a ``Fraction`` > 1) and returns an exact upper bound.
    Curves add pointwise under composition.
    """

    function: Callable[[Fraction], Fraction]
    label: str = "curve"

    def __call__(self, alpha: Number) -> Fraction:
        a = as_fraction(alpha, "alpha")
        if a <= 1:
            raise InvalidParameter(f"alpha={alpha!r} must be > 1")
        return self.function(a)

    def __add__(self, other: RenyiCurve) -> RenyiCurve:
        f, g = self.function, other.function
        return RenyiCurve(lambda a: f(a) + g(a), f"({self.label} + {other.label})")

    @staticmethod
    def constant_rho(rho: Fraction) -> RenyiCurve:
        """The curve α ↦ ρα of a ρ-zCDP mechanism."""
        return RenyiCurve(lambda a: rho * a, f"{rho}·α")


@dataclass(frozen=True)
class RenyiDP(Measure):
    """Rényi differential privacy (Mironov 2017), distances are `RenyiCurve`.

    Two curves are compared on ``orders`` (by default `DEFAULT_RENYI_ORDERS`); ``budget``
    optionally carries a curve as a claim.
    """

    curve: RenyiCurve | None = None
    orders: tuple[Fraction, ...] = field(default=DEFAULT_RENYI_ORDERS)
    name = "Rényi DP"

    def validate_distance(self, d: object, name: str = "d_out") -> RenyiCurve:
        if not isinstance(d, RenyiCurve):
            raise InvalidParameter(f"{name}={d!r}: RenyiDP distances are RenyiCurve objects")
        return d

    def compare(self, a: Loss, b: Loss) -> bool:
        ca, cb = self.validate_distance(a, "a"), self.validate_distance(b, "b")
        return all(ca(o) <= cb(o) for o in self.orders)

    def zero(self) -> RenyiCurve:
        return RenyiCurve(lambda a: Fraction(0), "0")

    def compose(self, distances: Sequence[Loss]) -> RenyiCurve:
        total = self.zero()
        for d in distances:
            total = total + self.validate_distance(d)
        return total

    @property
    def value(self) -> RenyiCurve | None:
        return self.curve

    def require_value(self, name: str = "budget") -> RenyiCurve:
        return _required(self, self.value, name)

    def describe(self, d: object) -> str:
        c = self.validate_distance(d)
        pts = ", ".join(f"ε({float(o):g}) = {round_up(c(o)):.4g}" for o in self.orders[:6])
        return f"Rényi curve {c.label}: {pts}, ..."

    def to_json(self, d: object) -> dict[str, JSON]:
        c = self.validate_distance(d)
        return {"renyi": {str(o): _frac_json(c(o)) for o in self.orders}}
