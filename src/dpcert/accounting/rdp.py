"""The Rényi-DP accountant (Mironov 2017): per-order ε(α) add up; (ε, δ) by the improved
conversion of Balle et al. (2020).

Leaf curves (each evaluated in binary64 and widened by a relative 1e-10):

* Gaussian / discrete Gaussian / ``ZCDPEvent``: ε(α) = αρ (Mironov 2017, Prop. 7; Canonne et al.
  2020, Thm. 14).
* Laplace: ε(α) = log(α/(2α−1)·e^{(α−1)ε₀} + (α−1)/(2α−1)·e^{−αε₀})/(α−1) (Mironov 2017, Prop. 6).
* Randomized response, ``PureEvent`` (through randomized response, its dominating pair) and
  discrete Laplace: the exact Rényi divergence of the dominating pair, log E_P[e^{(α−1)L}]/(α−1).
* Poisson-subsampled Gaussian: log A_α/(α−1) with, at integer orders,
  A_α = Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}, and at fractional orders the two-sided
  series of Mironov, Talwar & Zhang (2019, Sec. 3.3) (see `_sampled_gaussian_frac`),
  summed until its terms fall below e^−35, with the omitted alternating tail added back.

Examples
--------
>>> from dpcert.accounting import RDPAccountant, GaussianEvent
>>> acc = RDPAccountant().compose(GaussianEvent(sigma=10), 50)
>>> round(acc.epsilon(1e-6), 3)
3.542
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpcert._numbers import Number
from dpcert._types import Array
from dpcert.accounting._convert import rdp_to_delta, rdp_to_epsilon
from dpcert.accounting._dominating import dominating_base
from dpcert.accounting._pld_pairs import pair_of
from dpcert.accounting.accountant import Accountant, _check_delta_arg, _check_eps_arg
from dpcert.core.events import (
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureEvent,
    RandomizedResponseEvent,
    ZCDPEvent,
)
from dpcert.errors import InvalidParameter, UnsupportedEvent

__all__ = ["DEFAULT_ORDERS", "RDPAccountant", "rdp_of"]

Array = Array

#: Orders used unless others are given (as in common practice: dense near 1, sparse above).
DEFAULT_ORDERS: tuple[float, ...] = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(11, 65)]
    + [128.0, 256.0, 512.0, 1024.0]
)


def _widen(a: Array) -> Array:
    return np.where(np.isfinite(a), a + np.abs(a) * 1e-10 + 1e-14, a)


def _atoms_rdp(event: Event, orders: Array, eps_cap: float) -> Array:
    pld = pair_of(event)
    logp = np.log(pld.prob)
    x = logp[None, :] + (orders[:, None] - 1.0) * pld.loss[None, :]
    m = x.max(axis=1)
    val = (m + np.log(np.exp(x - m[:, None]).sum(axis=1))) / (orders - 1.0)
    out: Array = np.minimum(val, eps_cap)
    return out


#: Series terms of the fractional-order formula are summed until |term| < e^_LOG_STOP, and
#: (after the terms alternate in sign) the omitted tail is bounded by twice the last term.
_LOG_STOP = -35.0
_MAX_TERMS = 100_000


def _log_erfc(x: float) -> float:
    """log(erfc(x)), accurate for large x (asymptotic series beyond x = 25)."""
    if x < 25.0:
        return math.log(math.erfc(x))
    x2 = x * x
    return -x2 - math.log(x) - 0.5 * math.log(math.pi) + math.log1p(-0.5 / x2 + 0.75 / (x2 * x2))


def _log_binom_abs(a: float, k: int) -> float:
    """log |C(a, k)| for real a > 0 and integer k >= 0 (generalised binomial coefficient)."""
    if a == int(a) and k > a:
        return -math.inf
    return math.lgamma(a + 1) - math.lgamma(k + 1) - _lgamma_abs(a - k + 1)


def _lgamma_abs(x: float) -> float:
    return math.lgamma(x)  # math.lgamma returns log|Γ(x)| also for negative non-integers


def _sign_binom(a: float, k: int) -> float:
    """Sign of C(a, k) for real a > 0: (−1)^(k − ⌈a⌉) once k > a."""
    if k <= a:
        return 1.0
    return -1.0 if (k - math.floor(a)) % 2 == 0 else 1.0


def _sampled_gaussian_frac(q: float, sigma: float, a: float) -> float:
    """log A_α for a real order α > 1 (Mironov, Talwar & Zhang 2019, Sec. 3.3).

    With μ0 = N(0, σ²), μ1 = N(1, σ²) and z0 = 1/2 + σ² log(1/q − 1) (where (1 − q)μ0 = qμ1),
    A_α = ∫ μ0 ((1 − q) + q μ1/μ0)^α is split at z0 and each side expanded in the binomial
    series of its smaller ratio (which converges there):
    A_α = Σ_k C(α,k) [(1−q)^{α−k} q^k e^{(k²−k)/2σ²} ½erfc((k − z0)/√2σ)
                     + (1−q)^k q^{α−k} e^{((α−k)²−(α−k))/2σ²} ½erfc((z0 − α + k)/√2σ)].
    """
    z0 = sigma * sigma * math.log(1.0 / q - 1.0) + 0.5
    lq, l1q = math.log(q), math.log1p(-q)
    pos: list[float] = []
    neg: list[float] = []
    last = -math.inf
    for k in range(_MAX_TERMS):
        lb = _log_binom_abs(a, k)
        j = a - k
        s0 = (lb + k * lq + j * l1q + (k * k - k) / (2 * sigma * sigma)
              + math.log(0.5) + _log_erfc((k - z0) / (math.sqrt(2) * sigma)))
        s1 = (lb + j * lq + k * l1q + (j * j - j) / (2 * sigma * sigma)
              + math.log(0.5) + _log_erfc((z0 - j) / (math.sqrt(2) * sigma)))
        term = float(np.logaddexp(s0, s1))
        (pos if _sign_binom(a, k) > 0 else neg).append(term)
        last = term
        if k > a + 2 and term < _LOG_STOP:
            break
    else:
        return math.inf
    lp = float(np.logaddexp.reduce(pos))
    ln_ = float(np.logaddexp.reduce(neg)) if neg else -math.inf
    if not lp > ln_:
        return math.inf
    val = lp + math.log1p(-math.exp(ln_ - lp))
    # Tail allowance (alternating, decreasing tail) and float allowance, both upwards.
    return float(np.logaddexp(val, math.log(2.0) + last)) + 1e-9 * abs(val) + 1e-12


def _sampled_gaussian(q: float, sigma: float, orders: Array) -> Array:
    out = np.full(orders.shape, np.inf)
    for i, a in enumerate(orders):
        if a != int(a):
            if a > 1:
                out[i] = _sampled_gaussian_frac(q, sigma, float(a)) / (a - 1)
            continue
        if a < 2:
            continue
        n = int(a)
        k = np.arange(n + 1, dtype=float)
        logc = (math.lgamma(n + 1) - np.array([math.lgamma(j + 1) for j in range(n + 1)])
                - np.array([math.lgamma(n - j + 1) for j in range(n + 1)]))
        with np.errstate(divide="ignore"):
            terms = (logc + (n - k) * math.log1p(-q) + k * math.log(q)
                     + (k * k - k) / (2.0 * sigma * sigma))
        m = float(terms.max())
        out[i] = (m + math.log(float(np.exp(terms - m).sum()))) / (n - 1)
    return out


def rdp_of(event: Event, orders: Array) -> Array:
    """ε(α) of one leaf on ``orders`` (widened upwards; raises `UnsupportedEvent`)."""
    a = np.asarray(orders, dtype=float)
    if isinstance(event, (GaussianEvent, DiscreteGaussianEvent, ZCDPEvent)):
        return _widen(a * float(event.rho))
    if isinstance(event, LaplaceEvent):
        e0 = float(event.epsilon)
        x1 = np.log(a / (2 * a - 1)) + (a - 1) * e0
        x2 = np.log((a - 1) / (2 * a - 1)) - a * e0
        return _widen(np.minimum(np.logaddexp(x1, x2) / (a - 1), e0))
    if isinstance(event, (RandomizedResponseEvent, PureEvent, DiscreteLaplaceEvent)):
        cap = float(event.epsilon) if not isinstance(event, RandomizedResponseEvent) else (
            event.probabilities()[2])
        return _widen(_atoms_rdp(event, a, cap))
    if isinstance(event, PoissonSampledEvent):
        g = dominating_base(event.event)
        if type(g) is not GaussianEvent:
            raise UnsupportedEvent(f"RDPAccountant cannot account for {event!r}")
        q = float(event.rate)
        if q == 1.0:
            return rdp_of(g, a)
        return _widen(_sampled_gaussian(q, float(g.sigma / g.sensitivity), a))
    raise UnsupportedEvent(f"RDPAccountant cannot account for {event!r}")


@dataclass(frozen=True)
class RDPAccountant(Accountant):
    """Adds Rényi curves on a fixed set of ``orders``."""

    orders: tuple[float, ...] = field(default=DEFAULT_ORDERS)

    def __post_init__(self) -> None:
        if not self.orders or any(not (isinstance(o, (int, float)) and o > 1)
                                  for o in self.orders):
            raise InvalidParameter(f"orders={self.orders!r} must be numbers > 1")

    def _supports_leaf(self, event: Event) -> bool:
        try:
            rdp_of(event, np.array([2.0]))
        except UnsupportedEvent:
            return False
        return True

    @property
    def rdp(self) -> Array:
        """The composed ε(α) on `orders`."""
        a = np.asarray(self.orders, dtype=float)
        total = np.zeros_like(a)
        for e, k in self.merged().items():
            total = total + k * rdp_of(e, a)
        return _widen(total)

    def epsilon(self, delta: Number) -> float:
        """ε at ``delta``: min over orders of the improved conversion (rounded up)."""
        return rdp_to_epsilon(np.asarray(self.orders), self.rdp, _check_delta_arg(delta))

    def delta(self, epsilon: Number) -> float:
        """δ at ``epsilon`` (rounded up)."""
        e = _check_eps_arg(epsilon)
        if not self.entries:
            return 0.0
        return rdp_to_delta(np.asarray(self.orders), self.rdp, e)
