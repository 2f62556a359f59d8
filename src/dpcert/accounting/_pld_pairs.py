"""Dominating pairs of the PLD accountant, as privacy loss distributions (PLDs).

A pair (P, Q) is described by the law of its privacy loss L = log dP/dQ under P: finite atoms,
a continuous part given by its Q-density in L (its P-density is e^L times that), and the P-mass
at L = +∞.  `discretise` maps it onto the grid ``h·ℤ`` *pessimistically*: the hockey-stick
curve t ↦ E_P[(1 − e^{t−L})_+] of the result is at least the true one for every real t
(see ``docs/proofs/pld.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpcert._types import Array
from dpcert.core.events import (
    ApproxEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureEvent,
    RandomizedResponseEvent,
)
from dpcert.errors import UnsupportedEvent

__all__ = ["Direction", "Grid", "discretise", "pair_of"]

Array = Array
Density = Callable[[Array], Array]

#: Gauss–Legendre nodes/weights on [0, 1] (5 points: exact for polynomials of degree 9).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(5)
_GL_X = (_GL_X + 1.0) / 2.0
_GL_W = _GL_W / 2.0
#: Standard deviations of the Gaussian loss kept on the grid (tail mass ~1e-33 goes to ∞).
_Z = 12.0
#: Absolute float-error allowance added to the ∞-mass of every discretised pair.
ABS_MARGIN = 1e-14
#: Largest number of grid points or atoms one pair may use.
MAX_POINTS = 20_000_000

Direction = str  # "remove" (P = with the record) or "add"


@dataclass(frozen=True)
class Continuous:
    """A continuous part of a base pair: the Q-density of its loss u on [lo, hi], the P- and
    Q-masses of the part below lo and above hi, and its smoothness scale (for quadrature)."""

    q_density: Density
    lo: float
    hi: float
    p_below: float
    p_above: float
    q_below: float
    q_above: float


@dataclass(frozen=True)
class PairPLD:
    """Atoms (loss, P-mass), P-mass at +∞, and an optional continuous part."""

    loss: Array
    prob: Array
    inf_mass: float
    cont: Continuous | None = None
    q_neg_inf: float = 0.0  # Q-mass where P = 0 (loss −∞)
    mode: str = "none"  # how the continuous part is seen: "none", "remove" or "add"
    rate: float = 1.0
    inf_pad: float = 0.0  # part of inf_mass that is a pessimistic allowance, not true mass


def _phi_gauss(z: Array) -> Array:
    out: Array = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return out


def _sf(z: float) -> float:
    """P(N(0,1) > z), an upper bound widened by the float margin."""
    return 0.5 * math.erfc(z / math.sqrt(2.0)) * (1.0 + 1e-12) + 1e-300


def _gaussian(mu: float) -> PairPLD:
    # L ~ N(mu²/2, mu²) under P, N(-mu²/2, mu²) under Q (Balle & Wang 2018).
    m, s = mu * mu / 2.0, mu
    lo, hi = m - _Z * s, m + _Z * s

    def qd(x: Array) -> Array:
        return _phi_gauss((x + m) / s) / s

    cont = Continuous(qd, lo, hi, p_below=_sf(_Z), p_above=_sf(_Z),
                      q_below=_sf(_Z - mu), q_above=_sf(_Z + mu))
    return PairPLD(np.zeros(0), np.zeros(0), 0.0, cont)


def _laplace(eps0: float) -> PairPLD:
    # P = Lap(0, b), Q = Lap(Δ, b): atoms at ±ε0, continuous part on (−ε0, ε0) with
    # Q-density e^{−(ε0+L)/2}/4.
    def qd(x: Array) -> Array:
        return 0.25 * np.exp(-(eps0 + x) / 2.0)

    cont = Continuous(qd, -eps0, eps0, 0.0, 0.0, 0.0, 0.0)
    loss = np.array([eps0, -eps0])
    prob = np.array([0.5, 0.5 * math.exp(-eps0)])
    return PairPLD(loss, prob, 0.0, cont)


def _atoms(loss: list[float], prob: list[float], inf_mass: float = 0.0) -> PairPLD:
    return PairPLD(np.asarray(loss, dtype=float), np.asarray(prob, dtype=float), inf_mass)


def _rr(p_true: float, p_other: float, eps: float, k: int) -> PairPLD:
    loss, prob = [eps, -eps], [p_true, p_other]
    if k > 2:
        loss.append(0.0)
        prob.append((k - 2) * p_other)
    return _atoms(loss, prob)


def _discrete_laplace(t: float, delta: int) -> PairPLD:
    if delta + 1 > MAX_POINTS:
        raise UnsupportedEvent(f"sensitivity={delta} is too large for the PLD accountant")
    e = math.exp(-1.0 / t)
    c = math.tanh(1.0 / (2.0 * t))
    eps0 = delta / t
    x = np.arange(1, delta, dtype=float)
    loss = np.concatenate([[eps0], (delta - 2.0 * x) / t, [-eps0]])
    prob = np.concatenate([[1.0 / (1.0 + e)], c * np.exp(-x / t),
                           [c * math.exp(-delta / t) / (1.0 - e)]])
    return PairPLD(loss, prob, 0.0)


def _discrete_gaussian(sigma: float, delta: int) -> PairPLD:
    r = math.ceil(15.0 * sigma) + 1
    if 2 * r + delta > MAX_POINTS:
        raise UnsupportedEvent(
            f"sigma={sigma} is too large for the exact discrete-Gaussian PLD (at most "
            f"{MAX_POINTS} atoms); use the ZCDP or RDP accountant"
        )
    x = np.arange(-r, r + delta + 1, dtype=float)
    w = np.exp(-x * x / (2.0 * sigma * sigma))
    z = float(w.sum())
    loss = (delta * delta - 2.0 * x * delta) / (2.0 * sigma * sigma)
    # Mass outside the kept range: Σ_{|x|>r} e^{−x²/2σ²} ≤ 2e^{−r²/2σ²}/(1 − e^{−r/σ²}); put at +∞.
    tail = 2.0 * math.exp(-r * r / (2.0 * sigma * sigma)) / (-math.expm1(-r / sigma**2)) / z
    return PairPLD(loss, w / z, tail * 2.0, inf_pad=tail * 2.0)


def pair_of(event: Event) -> PairPLD:
    """The dominating pair of a base (non-sampled) event, as a PLD; raises if none is known."""
    if isinstance(event, GaussianEvent):
        return _gaussian(float(event.sensitivity / event.sigma))
    if isinstance(event, LaplaceEvent):
        return _laplace(float(event.epsilon))
    if isinstance(event, DiscreteLaplaceEvent):
        return _discrete_laplace(float(event.scale), int(event.sensitivity))
    if isinstance(event, DiscreteGaussianEvent):
        return _discrete_gaussian(float(event.sigma), int(event.sensitivity))
    if isinstance(event, RandomizedResponseEvent):
        pt, po, e = event.probabilities()
        return _rr(pt, po, e, event.categories)
    if isinstance(event, PureEvent):
        e = float(event.epsilon)
        return _rr(1.0 / (1.0 + math.exp(-e)), 1.0 / (1.0 + math.exp(e)), e, 2)
    if isinstance(event, ApproxEvent):
        e, d = float(event.epsilon), float(event.delta)
        if e == 0:
            return _atoms([0.0], [1.0 - d], d)
        return _atoms([e, -e], [(1 - d) / (1.0 + math.exp(-e)), (1 - d) / (1.0 + math.exp(e))], d)
    raise UnsupportedEvent(
        f"the PLD accountant has no dominating pair for {type(event).__name__}"
    )


def _subsample_atoms(pld: PairPLD, q: float, direction: Direction) -> tuple[Array, Array, float]:
    loss, prob = pld.loss, pld.prob
    qmass = prob * np.exp(-loss)
    # Q-mass where P = 0 (loss −∞), e.g. δ for the (ε, δ) pair; widened upwards.
    q_neg = (max(0.0, 1.0 - float(np.sum(qmass))) + 1e-15) if pld.cont is None else pld.q_neg_inf
    if direction == "remove":
        # (qP + (1−q)Q ‖ Q): loss log(1 − q + q e^L), P-mass q·p + (1−q)·p e^{−L}.
        new_loss = np.log1p(q * np.expm1(loss))
        new_prob = q * prob + (1 - q) * qmass
        extra_l, extra_p = [math.log1p(-q)] if q < 1 else [], [(1 - q) * q_neg] if q < 1 else []
        inf = q * pld.inf_mass
    else:
        # (Q ‖ qP + (1−q)Q): loss −log(1 − q + q e^L), P-mass = Q-mass p e^{−L}.
        new_loss = -np.log1p(q * np.expm1(loss))
        new_prob = qmass
        extra_l, extra_p = ([-math.log1p(-q)], [q_neg]) if q < 1 else ([], [])
        inf = 0.0
    return (np.concatenate([new_loss, extra_l]), np.concatenate([new_prob, extra_p]), inf)


def subsample(pld: PairPLD, q: float, direction: Direction) -> PairPLD:
    """The pair of Poisson subsampling with rate ``q`` in one direction (Zhu, Dong & Wang 2022)."""
    if q >= 1.0:
        return pld
    loss, prob, inf = _subsample_atoms(pld, q, direction)
    pad = q * pld.inf_pad if direction == "remove" else 0.0
    return PairPLD(loss, prob, inf, pld.cont, 0.0, direction, q, pad)


@dataclass(frozen=True)
class Grid:
    """P-masses on the grid ``(offset + i)·h`` plus a P-mass at +∞ (an upper bound)."""

    h: float
    offset: int
    prob: Array
    inf_mass: float
    max_abs_loss: float = field(default=0.0)


def _split_atoms(loss: Array, prob: Array, h: float,
                 optimistic: bool = False) -> tuple[Array, Array, Array]:
    """Connect-the-dots split of atoms onto neighbouring grid points (mass preserving); with
    ``optimistic`` every atom goes to the grid point below it (a lower bound)."""
    j = np.floor(loss / h)
    if optimistic:
        return j.astype(np.int64), prob, np.zeros_like(prob)
    u = loss - j * h
    em1 = math.expm1(h)
    right = prob * (-np.expm1(-u)) / (-math.expm1(-h))
    left = prob * (np.exp(-u) + np.expm1(-u) / em1)
    return j.astype(np.int64), np.maximum(left, 0.0), np.maximum(right, 0.0)


def _transform(mode: str, q: float) -> tuple[Callable[[Array], Array], Callable[[Array], Array],
                                              Callable[[Array], Array]]:
    """(T, T⁻¹, P-density factor) mapping the base loss u to the loss y of the seen pair."""
    if mode == "none":
        return (lambda u: u), (lambda y: y), np.exp
    if mode == "remove":
        # (qP + (1−q)Q ‖ Q): y = log(1 − q + q e^u), P-density (1 + q(e^u − 1)) f_Q
        return ((lambda u: np.log1p(q * np.expm1(u))),
                (lambda y: np.log(np.maximum(np.expm1(y) + q, 1e-300) / q)),
                (lambda u: 1.0 + q * np.expm1(u)))
    # (Q ‖ qP + (1−q)Q): y = −log(1 − q + q e^u), P-density f_Q
    return ((lambda u: -np.log1p(q * np.expm1(u))),
            (lambda y: np.log(np.maximum(np.expm1(-y) + q, 1e-300) / q)),
            (lambda u: np.ones_like(u)))


def _discretise_cont(c: Continuous, mode: str, q: float, h: float,
                     optimistic: bool = False) -> tuple[list[Array], list[Array], float, float]:
    """Connect-the-dots masses of a continuous part (integrated in the base variable u)."""
    t, t_inv, pfac = _transform(mode, q)
    ends = t(np.array([c.lo, c.hi]))
    y_lo, y_hi = float(ends.min()), float(ends.max())
    i0, i1 = math.floor(y_lo / h), math.ceil(y_hi / h)
    if i1 - i0 > MAX_POINTS:
        raise UnsupportedEvent(
            f"this event needs {i1 - i0} grid points at value_discretization_interval={h}; "
            "use a coarser interval"
        )
    # Breakpoints in u: a uniform partition plus the preimages of grid points, so that each
    # sub-interval lies inside one grid cell and the density is smooth on it.
    ys = np.arange(i0 + 1, i1) * h
    ys = ys[(ys > y_lo) & (ys < y_hi)]
    us = np.concatenate([np.linspace(c.lo, c.hi, 401), t_inv(ys)])
    us = np.unique(np.clip(us, c.lo, c.hi))
    a, width = us[:-1], np.diff(us)
    nodes = a[:, None] + width[:, None] * _GL_X[None, :]
    pd = c.q_density(nodes) * pfac(nodes)
    y = t(nodes)
    j = np.floor(t(a + width / 2.0) / h)
    frac = -np.expm1(-(y - j[:, None] * h))
    m0 = (pd * _GL_W).sum(axis=1) * width
    dm = (pd * np.clip(frac, 0.0, 1.0) * _GL_W).sum(axis=1) * width
    ratio = math.exp(h) / math.expm1(h)
    ji = j.astype(np.int64)
    if mode == "none":
        below, above = c.p_below, c.p_above
    elif mode == "remove":
        below = q * c.p_below + (1 - q) * c.q_below
        above = q * c.p_above + (1 - q) * c.q_above
    else:
        below, above = c.q_above, c.q_below
    if optimistic:  # mass to the grid point below; below-range mass dropped, above kept finite
        idx = [ji, np.array([math.floor(y_hi / h)])]
        return idx, [m0, np.array([above])], 0.0, max(abs(y_lo), abs(y_hi))
    idx = [ji, ji + 1, np.array([math.ceil(y_lo / h)])]
    val = [m0 - dm * ratio, dm * ratio, np.array([below])]
    return idx, val, above, max(abs(y_lo), abs(y_hi))


def discretise(pld: PairPLD, h: float, optimistic: bool = False) -> Grid:
    """Pessimistic discretisation of a PLD on the grid ``h·ℤ`` (``optimistic``: losses rounded
    down, no float margins — its hockey-stick curve is a lower estimate of the true one)."""
    inf = pld.inf_mass if not optimistic else pld.inf_mass - pld.inf_pad
    parts_idx: list[Array] = []
    parts_val: list[Array] = []
    keep = pld.prob > 0
    loss, prob = pld.loss[keep], pld.prob[keep]
    fin = np.isfinite(loss)
    inf += float(np.sum(prob[~fin & (loss > 0)]))
    loss, prob = loss[fin], prob[fin]
    if loss.size:
        j, left, right = _split_atoms(loss, prob, h, optimistic)
        parts_idx += [j, j + 1]
        parts_val += [left, right]
    max_abs = float(np.max(np.abs(loss))) if loss.size else 0.0
    if pld.cont is not None:
        idx, val, top, m_abs = _discretise_cont(pld.cont, pld.mode, pld.rate, h, optimistic)
        parts_idx += idx
        parts_val += val
        inf += top
        max_abs = max(max_abs, m_abs)
    if not parts_idx:
        return Grid(h, 0, np.zeros(1), min(1.0, inf + ABS_MARGIN), max_abs)
    idx_all = np.concatenate(parts_idx)
    val_all = np.concatenate(parts_val)
    lo = int(idx_all.min())
    out = np.maximum(np.bincount(idx_all - lo, weights=val_all), 0.0)
    nz = np.nonzero(out)[0]
    if nz.size == 0:
        return Grid(h, 0, np.zeros(1), min(1.0, inf + ABS_MARGIN), max_abs)
    out = out[nz[0]: nz[-1] + 1]
    margin = 0.0 if optimistic else ABS_MARGIN * (1.0 + max_abs)
    return Grid(h, lo + int(nz[0]), out, min(1.0, max(0.0, inf) + margin), max_abs)


def event_grid(event: Event, h: float, direction: Direction, optimistic: bool = False) -> Grid:
    """Discretised PLD of a leaf event in one direction (pessimistic, or ``optimistic``)."""
    if isinstance(event, PoissonSampledEvent):
        from dpcert.accounting._dominating import dominating_base

        base = pair_of(dominating_base(event.event))
        return discretise(subsample(base, float(event.rate), direction), h, optimistic)
    return discretise(pair_of(event), h, optimistic)
