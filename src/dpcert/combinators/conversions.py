"""Conversions between privacy measures, and composition theorems for (ε, δ)-DP.

All conversions return *upper* bounds.  Where exp/log are needed they are evaluated in binary64
and widened upwards (relative 1e-10 + absolute 1e-12, see `dpcert.accounting._convert`), and
the result is returned as an exact ``Fraction`` at least that large.

* `make_pureDP_to_zCDP`: ε-DP ⇒ (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4), exact; an
  ε-bounded-range measurement (its event is a ``BoundedRangeEvent``: the exponential mechanism)
  ⇒ (ε²/8)-zCDP (Cesar & Rogers 2021, Lemma 3.2).
* `make_pureDP_to_approxDP`: ε-DP ⇒ (ε, 0)-DP (by definition), exact.
* `make_zCDP_to_approxDP`: ρ-zCDP ⇒ (ε, δ)-DP with the tight conversion of Canonne,
  Kamath & Steinke (2020, Cor. 13).
* `make_renyiDP_to_approxDP`: improved RDP conversion (Balle et al. 2020, Thm. 21;
  Asoodeh et al. 2021), minimised over the measure's orders.
* `advanced_composition` / `make_advanced_composition`: Dwork, Rothblum & Vadhan
  (2010): k-fold (ε, δ) is (√(2k ln(1/δ')) ε + kε(e^ε − 1), kδ + δ').
* `optimal_composition_epsilon` / `make_optimal_composition`: the optimal
  homogeneous composition of Kairouz, Oh & Viswanath (2015) in the form of Murtagh & Vadhan
  (2016): k-fold (ε, δ) is (ε', 1 − (1 − δ)^k (1 − δ')) with
  δ' = Σ_l C(k, l) (e^{(k−l)ε} − e^{ε'} e^{lε})_+ / (1 + e^ε)^k.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> m = space >> dp.t.then_count() >> dp.m.then_laplace(2.0)
>>> dp.c.make_pureDP_to_zCDP(m).map(1)
Fraction(1, 8)
>>> e, d = dp.c.advanced_composition(0.1, 0, 100, 1e-6)
>>> round(float(e), 4), d
(6.3082, Fraction(1, 1000000))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from dpcert._directed import exp_up, log_up, up
from dpcert._numbers import Number, as_fraction
from dpcert._types import DistanceLike
from dpcert._validate import check_delta, check_int, check_nonnegative
from dpcert.accounting._convert import rdp_to_epsilon, widen
from dpcert.core.events import BoundedRangeEvent, SelfComposedEvent
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, ApproxDP, PureDP, RenyiDP, pair_loss
from dpcert.core.search import bisect
from dpcert.errors import InvalidParameter, MeasureMismatch
from dpcert.mechanisms.calibration import zcdp_to_approx_epsilon

__all__ = [
    "advanced_composition",
    "make_advanced_composition",
    "make_optimal_composition",
    "make_pureDP_to_approxDP",
    "make_pureDP_to_zCDP",
    "make_renyiDP_to_approxDP",
    "make_zCDP_to_approxDP",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
]


def _need(m: Measurement, kind: type, who: str) -> None:
    if not isinstance(m, Measurement):
        raise InvalidParameter(f"{who}: measurement={m!r} is not a Measurement")
    if not isinstance(m.output_measure, kind):
        raise MeasureMismatch(
            f"{who} needs a {kind.__name__} measurement, got {type(m.output_measure).__name__}"
        )


def _check_delta_open(delta: Number) -> Fraction:
    d = check_delta(delta)
    if d == 0:
        raise InvalidParameter(f"delta={delta!r} must be > 0")
    return d


def make_pureDP_to_zCDP(measurement: Measurement) -> Measurement:
    """View an ε-DP measurement as (ε²/2)-zCDP, or (η²/8)-zCDP if it is η-bounded-range."""
    _need(measurement, PureDP, "make_pureDP_to_zCDP")
    inner = measurement.privacy_map
    event_map = measurement.event_map

    def privacy_map(d: DistanceLike) -> Fraction:
        rho = as_fraction(inner(d), "d_out") ** 2 / 2
        ev = None if event_map is None else event_map(d)
        if isinstance(ev, BoundedRangeEvent):  # two valid bounds: keep the smaller
            rho = min(rho, ev.epsilon**2 / 8)
        elif isinstance(ev, SelfComposedEvent) and isinstance(ev.event, BoundedRangeEvent):
            rho = min(rho, ev.count * ev.event.epsilon**2 / 8)  # zCDP composes additively
        return rho

    return Measurement(
        measurement.input_domain, measurement.input_metric, ZCDP(),
        function=measurement.function,
        privacy_map=privacy_map,
        name=f"zCDP({measurement.name})",
        params={"inner": measurement.describe()},
        event_map=measurement.event_map,
        batch_map=measurement.batch_map,
        children=(measurement,), proof="conversions.md",
    )


def make_pureDP_to_approxDP(measurement: Measurement) -> Measurement:
    """View an ε-DP measurement as (ε, 0)-DP (the definitions coincide at δ = 0); its accounting
    event is kept, so tight accountants and filters still see what it runs.

    Examples
    --------
    >>> import dpcert as dp
    >>> m = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=2)
    >>> dp.c.make_pureDP_to_approxDP(m).map(1)
    (Fraction(1, 2), Fraction(0, 1))
    """
    _need(measurement, PureDP, "make_pureDP_to_approxDP")
    inner = measurement.privacy_map
    return Measurement(
        measurement.input_domain, measurement.input_metric, ApproxDP(),
        function=measurement.function,
        privacy_map=lambda d: (as_fraction(inner(d), "d_out"), Fraction(0)),
        name=f"approxDP({measurement.name})",
        params={"inner": measurement.describe(), "delta": "0"},
        event_map=measurement.event_map,
        accuracy_map=measurement.accuracy_map,
        batch_map=measurement.batch_map,
        children=(measurement,), proof="conversions.md",
    )


def zcdp_epsilon(rho: Fraction, delta: Fraction) -> Fraction:
    """An exact upper bound on ε for ρ-zCDP at δ (CKS20 Cor. 13): the one conversion,
    [`zcdp_to_approx_epsilon`][dpcert.mechanisms.calibration.zcdp_to_approx_epsilon]."""
    return zcdp_to_approx_epsilon(rho, delta)


def make_zCDP_to_approxDP(measurement: Measurement, delta: Number) -> Measurement:
    """View a ρ-zCDP measurement as (ε, δ)-DP at the given ``delta``."""
    _need(measurement, ZCDP, "make_zCDP_to_approxDP")
    dl = _check_delta_open(delta)
    inner = measurement.privacy_map
    return Measurement(
        measurement.input_domain, measurement.input_metric, ApproxDP(),
        function=measurement.function,
        privacy_map=lambda d: (zcdp_epsilon(as_fraction(inner(d), "d_out"), dl), dl),
        name=f"approxDP({measurement.name})",
        params={"inner": measurement.describe(), "delta": str(dl)},
        event_map=measurement.event_map,
        batch_map=measurement.batch_map,
        children=(measurement,), proof="conversions.md",
    )


def make_renyiDP_to_approxDP(measurement: Measurement, delta: Number) -> Measurement:
    """View a Rényi-DP measurement as (ε, δ)-DP at ``delta`` (orders of its measure)."""
    _need(measurement, RenyiDP, "make_renyiDP_to_approxDP")
    dl = _check_delta_open(delta)
    measure = measurement.output_measure
    assert isinstance(measure, RenyiDP)
    orders = measure.orders

    def privacy_map(d: DistanceLike) -> tuple[Fraction, Fraction]:
        curve = measure.validate_distance(measurement.privacy_map(d))
        vals = np.array([float(up(float(curve(a)))) for a in orders])
        return up(rdp_to_epsilon(np.array([float(a) for a in orders]), vals, float(dl))), dl

    return Measurement(
        measurement.input_domain, measurement.input_metric, ApproxDP(),
        function=measurement.function,
        privacy_map=privacy_map,
        name=f"approxDP({measurement.name})",
        params={"inner": measurement.describe(), "delta": str(dl)}, proof="conversions.md",
    )


def _pair(measurement: Measurement, d: DistanceLike) -> tuple[Fraction, Fraction]:
    out = measurement.map(d)
    if isinstance(measurement.output_measure, PureDP):
        return as_fraction(out, "d_out"), Fraction(0)
    return pair_loss(out)


def advanced_composition(epsilon: Number, delta: Number, k: Number,
                         delta_prime: Number) -> tuple[Fraction, Fraction]:
    """(ε', δ_total) for k-fold adaptive composition of (ε, δ)-DP (Dwork, Rothblum & Vadhan 2010).

    ε' = √(2k ln(1/δ')) ε + k ε (e^ε − 1), δ_total = kδ + δ' (both exact upper bounds).
    """
    e = check_nonnegative(epsilon, "epsilon")
    d = check_delta(delta)
    n = check_int(k, "k", minimum=0)
    dp_ = _check_delta_open(delta_prime)
    if n == 0:
        return Fraction(0), Fraction(0)
    root = up(math.sqrt(float(up(2 * n * float(log_up(1 / dp_))))))
    eps = root * e + n * e * (exp_up(e) - 1)
    return eps, min(Fraction(1), n * d + dp_)


def _log_delta_pure(eps: float, k: int, eps_prime: float) -> float:
    """log of Σ_l C(k,l)(e^{(k−l)ε} − e^{ε'+lε})_+ / (1+e^ε)^k (−inf if 0)."""
    ls = np.arange(k + 1, dtype=float)
    gain = (k - 2 * ls) * eps  # loss of the outcome with l "flips"
    sel = gain > eps_prime
    if not sel.any():
        return -math.inf
    ls, gain = ls[sel], gain[sel]
    logc = np.array([math.lgamma(k + 1) - math.lgamma(x + 1) - math.lgamma(k - x + 1) for x in ls])
    terms = logc + (k - ls) * eps + np.log(-np.expm1(eps_prime - gain)) - k * math.log1p(
        math.exp(eps))
    m = float(terms.max())
    return m + math.log(float(np.exp(terms - m).sum()))


def optimal_composition_delta(epsilon: Number, delta: Number, k: Number,
                              epsilon_prime: Number) -> Fraction:
    """δ_total for k-fold (ε, δ)-DP at ε' (Kairouz, Oh & Viswanath 2015), an upper bound."""
    e = float(check_nonnegative(epsilon, "epsilon"))
    d = check_delta(delta)
    n = check_int(k, "k", minimum=0)
    ep = float(check_nonnegative(epsilon_prime, "epsilon_prime"))
    if n == 0:
        return Fraction(0)
    ld = _log_delta_pure(e, n, ep)
    dprime = Fraction(0) if ld == -math.inf else up(math.exp(widen(ld)))
    dprime = min(dprime, Fraction(1))
    return min(Fraction(1), 1 - (1 - d) ** n * (1 - dprime))


def optimal_composition_epsilon(epsilon: Number, delta: Number, k: Number,
                                delta_total: Number) -> Fraction:
    """Smallest ε' (upper bound, by bisection returning the safe end) such that k-fold (ε, δ)-DP
    is (ε', delta_total)-DP by the optimal composition theorem."""
    e = check_nonnegative(epsilon, "epsilon")
    n = check_int(k, "k", minimum=0)
    dt = _check_delta_open(delta_total)
    d = check_delta(delta)
    if 1 - (1 - d) ** n >= dt:
        raise InvalidParameter(
            f"delta_total={delta_total!r} must exceed 1 − (1 − δ)^k = {float(1 - (1 - d) ** n)}"
        )
    lo, hi = Fraction(0), n * e
    if optimal_composition_delta(e, d, n, lo) <= dt:
        return lo
    return bisect(lambda x: optimal_composition_delta(e, d, n, x) <= dt, hi, lo,
                  midpoint=lambda a, b: Fraction(float((a + b) / 2)), steps=60)


#: ``(ε, δ, k, δ') ↦ (ε_total, δ_total)`` of a k-fold composition theorem.
CompositionRule = Callable[[Fraction, Fraction, int, Fraction], tuple[Fraction, Fraction]]


def _homogeneous(measurement: Measurement, k: Number, delta_prime: Number, name: str,
                 rule: CompositionRule) -> Measurement:
    if not isinstance(measurement.output_measure, (PureDP, ApproxDP)):
        raise MeasureMismatch(
            f"{name} needs a PureDP or ApproxDP measurement, got "
            f"{type(measurement.output_measure).__name__}"
        )
    n = check_int(k, "k", minimum=1)
    dp_ = _check_delta_open(delta_prime)
    f = measurement.function

    return Measurement(
        measurement.input_domain, measurement.input_metric, ApproxDP(),
        function=lambda data: [f(data) for _ in range(n)],
        privacy_map=lambda d: rule(*_pair(measurement, d), n, dp_),
        name=f"{name}[{n}]({measurement.name})",
        params={"inner": measurement.describe(), "k": n, "delta_prime": str(dp_)},
        proof="conversions.md",
    )


def make_advanced_composition(measurement: Measurement, k: Number,
                              delta_prime: Number) -> Measurement:
    """Run ``measurement`` k times; privacy by advanced composition (DRV10)."""
    return _homogeneous(measurement, k, delta_prime, "advanced", advanced_composition)


def make_optimal_composition(measurement: Measurement, k: Number,
                             delta_prime: Number) -> Measurement:
    """Run ``measurement`` k times; privacy by optimal homogeneous composition (KOV15):
    δ_total = 1 − (1 − δ)^k (1 − δ') and the smallest ε' it allows."""

    def rule(e: Fraction, d: Fraction, n: int, dp_: Fraction) -> tuple[Fraction, Fraction]:
        total = 1 - (1 - d) ** n * (1 - dp_)
        return optimal_composition_epsilon(e, d, n, total), total

    return _homogeneous(measurement, k, delta_prime, "optimal", rule)
