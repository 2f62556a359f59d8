"""``audit``: a lower bound on a mechanism's ε, measured from its samples.

The bound (see ``docs/auditor.md``).  If ``M`` is (ε, δ)-DP then for *every fixed* pair of
neighbours ``x, x'`` and *every fixed* event ``S``,

    P[M(x) ∈ S] ≤ e^ε · P[M(x') ∈ S] + δ,  so  ε ≥ ln((P[M(x) ∈ S] − δ) / P[M(x') ∈ S]).

The auditor works in two phases on independent batches (sample splitting):

1. **Search.**  For each candidate pair it draws a search batch from ``M(x)`` and ``M(x')``,
   fits statistics (identity, empirical log-ratio, logistic regression) on one half and scores
   every interval event of each statistic on the other half (:mod:`dpcert.audit.events`).  The
   ``candidates`` best (pair, event, direction) triples are kept.  Nothing measured here enters
   the bound.
2. **Estimation.**  The chosen events are now fixed.  A fresh batch of ``samples`` draws is taken
   from both inputs of each chosen pair; for each candidate the exact Clopper–Pearson lower bound
   on ``P[M(x) ∈ S]`` and upper bound on ``P[M(x') ∈ S]`` are computed at level
   ``(1 − confidence) / (2 · candidates)`` each.  By the union bound all of them hold together
   with probability at least ``confidence``, so the largest ``ln((p_lo − δ) / q_hi)`` is a valid
   lower bound on ε at the claimed δ — however the search went.

Examples
--------
>>> import dpcert as dp
>>> def constant(x, n):   # a mechanism that ignores its input is 0-DP
...     return [0] * n
>>> r = audit(constant, claimed=dp.PureDP(0.1), samples=2_000)
>>> r.epsilon_lower, r.violated
(0.0, False)
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from dpcert._validate import check_int
from dpcert.audit import bounds
from dpcert.audit.claims import Claim, resolve_claim
from dpcert.audit.classifier import fit_logistic
from dpcert.audit.events import Coordinate, Event, Identity, fit_histogram, search_intervals
from dpcert.audit.outputs import OutputEncoder, Sampler, measurement_sampler
from dpcert.audit.pairs import Adjacency, measurement_pairs, scalar_pairs, statdp_pairs
from dpcert.core.measurement import Measurement
from dpcert.core.measures import Measure
from dpcert.errors import InvalidParameter

__all__ = ["AuditResult", "Witness", "audit"]

Array = np.ndarray[Any, Any]

#: Most estimation draws per input when only a time budget is given.
MAX_SAMPLES = 1_000_000
#: Most search draws per input of each pair (unless ``search_samples`` says otherwise).
MAX_SEARCH = 400_000
#: Time budget (seconds) used when neither ``samples`` nor ``seconds`` is given.
DEFAULT_SECONDS = 30.0
#: Largest number of draws requested from the mechanism in one call.
CHUNK = 250_000
#: Discrete statistics are fitted when training saw at most this many distinct outputs.
MAX_DISCRETE_VALUES = 20_000
#: Multi-dimensional outputs with at most this many coordinates also get per-coordinate events.
MAX_COORDINATES = 32


@dataclass(frozen=True, eq=False)
class Witness:
    """The pair and event behind a bound, with the counts and the probability bounds."""

    x: Any
    x_prime: Any
    event: Event
    count_x: int
    count_x_prime: int
    n: int
    p_x_lower: float
    p_x_prime_upper: float

    def describe(self) -> str:
        """One line: ``x=…, x'=…, S: …, P[M(x)∈S] ≥ …, P[M(x')∈S] ≤ …``."""
        return (f"x={_short(self.x)}, x'={_short(self.x_prime)}, S: {self.event.describe()}, "
                f"P[M(x)∈S] ≥ {self.p_x_lower:.4g} ({self.count_x}/{self.n}), "
                f"P[M(x')∈S] ≤ {self.p_x_prime_upper:.4g} ({self.count_x_prime}/{self.n})")


@dataclass(frozen=True, eq=False)
class AuditResult:
    """What an audit found.

    Attributes
    ----------
    mechanism
        A label for the audited mechanism.
    epsilon_lower
        A lower bound, valid with probability ``confidence``, on the smallest ε for which the
        mechanism is (ε, ``delta``)-DP on the audited pairs (rounded down; 0 if nothing found).
    claimed, claimed_epsilon, delta
        The claim (a measure object), the ε it implies and the δ at which ε is bounded
        (0 for pure DP; for zCDP the stated ``zcdp_delta``).
    violated
        ``epsilon_lower > claimed_epsilon``: the claim is refuted at the stated confidence.
    delta_lower
        For claims with δ > 0: a lower bound on δ at ``claimed_epsilon`` (None otherwise).
    witness
        The pair and event giving the bound (None when no event separated the outputs).
    samples, seconds, candidates, pairs_searched
        Total draws, wall time, events estimated (the union bound's size) and pairs searched.
    """

    mechanism: str
    epsilon_lower: float
    claimed: Measure | None
    claimed_epsilon: float | None
    delta: float
    violated: bool
    delta_lower: float | None
    witness: Witness | None
    samples: int
    seconds: float
    confidence: float
    candidates: int
    pairs_searched: int

    @property
    def verdict(self) -> str:
        """``"VIOLATION"``, ``"ok"`` or ``"no claim"``."""
        if self.claimed_epsilon is None:
            return "no claim"
        return "VIOLATION" if self.violated else "ok"

    def __str__(self) -> str:
        claim = "" if self.claimed_epsilon is None else f" (claimed {self.claimed_epsilon:.4g})"
        at = f" at δ={self.delta:.3g}" if self.delta > 0 else ""
        head = (f"{self.mechanism}: ε ≥ {self.epsilon_lower:.4f}{at}{claim} → {self.verdict}; "
                f"{self.samples:,} samples, {self.seconds:.1f} s, "
                f"confidence {self.confidence:g}")
        return head if self.witness is None else f"{head}\n  witness: {self.witness.describe()}"


@dataclass(frozen=True, eq=False)
class _Candidate:
    pair: int
    event: Event
    forward: bool
    predicted: float


def _short(x: Any) -> str:
    if isinstance(x, np.ndarray):
        x = x.tolist()
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _label(mechanism: Any) -> str:
    for attr in ("name", "__name__"):
        v = getattr(mechanism, attr, None)
        if isinstance(v, str):
            return v
    return type(mechanism).__name__


def _draw(sampler: Sampler, x: Any, n: int, enc: OutputEncoder) -> Array:
    parts = []
    left = n
    while left > 0:
        m = min(left, CHUNK)
        parts.append(enc.encode(sampler(x, m), m))
        left -= m
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _count(sampler: Sampler, x: Any, n: int, enc: OutputEncoder, events: list[Event]
           ) -> list[int]:
    counts = [0] * len(events)
    left = n
    while left > 0:
        m = min(left, CHUNK)
        y = enc.encode(sampler(x, m), m)
        for i, e in enumerate(events):
            counts[i] += int(np.count_nonzero(e.contains(y)))
        left -= m
    return counts


def _search_pair(a: Array, b: Array, pair: int, *, n_estimate: int, z: float, delta: float
                 ) -> list[_Candidate]:
    out: list[_Candidate] = []

    def add(stat: Any, sa: Array, sb: Array, rays_only: bool = False) -> None:
        for c in search_intervals(sa, sb, n_estimate=n_estimate, z=z, delta=delta,
                                  rays_only=rays_only):
            out.append(_Candidate(pair, Event(stat, c.low, c.high), c.forward, c.predicted))

    if a.ndim == 1:
        ident = Identity()
        add(ident, ident(a), ident(b))
    elif a.shape[1] <= MAX_COORDINATES:
        for j in range(a.shape[1]):
            coord = Coordinate(j)
            add(coord, coord(a), coord(b))
    half_a, half_b = a.shape[0] // 2, b.shape[0] // 2
    ta, tb, va, vb = a[:half_a], b[:half_b], a[half_a:], b[half_b:]
    hist = fit_histogram(ta, tb, MAX_DISCRETE_VALUES)
    if hist is not None and (a.ndim == 2 or hist.keys.size > 2):
        add(hist, hist(va), hist(vb), rays_only=True)
    if a.ndim == 2 and (hist is None or hist.keys.size > 2):
        model = fit_logistic(ta, tb)
        add(model, model(va), model(vb), rays_only=True)
    return out


def _resolve_pairs(mechanism: Any, pairs: Sequence[Any] | None, input_size: int | None,
                   sensitivity: float, adjacency: Adjacency) -> list[tuple[Any, Any]]:
    if pairs is not None:
        out = []
        for i, p in enumerate(pairs):
            if not (isinstance(p, (tuple, list)) and len(p) == 2):
                raise InvalidParameter(f"pairs[{i}]={p!r} must be a pair (x, x_prime)")
            out.append((p[0], p[1]))
        if not out:
            raise InvalidParameter("pairs=[] must hold at least one pair")
        return out
    if isinstance(mechanism, Measurement):
        return measurement_pairs(mechanism)
    if input_size is None:
        return scalar_pairs(0.0, sensitivity)
    return [(x, y) for _, x, y in statdp_pairs(input_size, sensitivity, adjacency)]


def _plan(sampler: Sampler, x: Any, samples: int | None, seconds: float | None,
          n_pairs: int, k: int) -> tuple[int, int]:
    """Draws per input for the estimation phase and for the search phase."""
    if samples is not None and seconds is None:
        n_est = samples
    else:
        budget = DEFAULT_SECONDS if seconds is None else seconds
        pilot = 500
        t0 = time.perf_counter()
        OutputEncoder().encode(sampler(x, pilot), pilot)
        per_draw = max((time.perf_counter() - t0) / pilot, 1e-9)
        # draws = 2·P·n_search + 2·K'·n_est with n_search = n_est / 5; keep 30 % slack for
        # the search's own work.
        draws = 0.7 * budget / per_draw
        n_est = int(draws / (0.4 * n_pairs + 2 * min(k, n_pairs)))
        n_est = min(n_est, MAX_SAMPLES if samples is None else samples)
        n_est = max(n_est, 1_000)
    n_search = min(max(n_est // 5, 1_000), MAX_SEARCH)
    return n_est, n_search


def audit(mechanism: Any, pairs: Sequence[Any] | None = None, *, claimed: Any = None,
          samples: int | None = None, confidence: float = 0.95, seconds: float | None = None,
          search_samples: int | None = None, input_size: int | None = None,
          sensitivity: float = 1.0, adjacency: Adjacency = "linf", candidates: int = 4,
          zcdp_delta: float = 1e-6, name: str | None = None) -> AuditResult:
    """Measure a lower bound on the privacy loss of ``mechanism`` from its samples.

    Parameters
    ----------
    mechanism
        A :class:`~dpcert.core.measurement.Measurement` (called once per draw; its claim is
        ``map(1)`` and its neighbours come from its input space), or a vectorised black box
        ``f(x, n)`` returning ``n`` outputs (wrap a scalar ``g(x)`` with
        :func:`~dpcert.audit.outputs.one_at_a_time`).  Outputs may be numbers, bools, strings,
        ``None`` or rows of an ``(n, k)`` array.
    pairs
        Neighbouring inputs ``[(x, x_prime), ...]``; searched when omitted (see
        :mod:`dpcert.audit.pairs`).
    claimed
        The claimed privacy: ``PureDP(ε)``, ``ApproxDP(ε, δ)``, ``ZCDP(ρ)`` (audited as
        (ε, δ)-DP at ``δ = zcdp_delta`` with ε = ρ + 2√(ρ ln(1/δ))) or a number ε.
    samples
        Estimation draws per input of each chosen pair.  When omitted, the auditor times a
        pilot batch and fits the audit into ``seconds`` (default 30 s), capped at 10⁶.
    confidence
        Probability that ``epsilon_lower`` (and ``delta_lower``) are valid bounds.
    seconds
        Time budget (with ``samples`` given, ``samples`` becomes a cap).
    search_samples
        Search draws per input of each pair (default ``samples // 5``).
    input_size, sensitivity, adjacency
        For black boxes without ``pairs``: vector length for the StatDP patterns (scalar
        ``0`` vs ``±sensitivity`` when omitted) and which patterns are neighbours.
    candidates
        How many (pair, event) candidates go to the estimation phase (the union bound's size).
    name
        Label for the result (defaults to the mechanism's name).

    Returns
    -------
    AuditResult
    """
    t_start = time.perf_counter()
    if not (isinstance(confidence, (int, float)) and 0.0 < float(confidence) < 1.0):
        raise InvalidParameter(f"confidence={confidence!r} must be in (0, 1)")
    k = check_int(candidates, "candidates", minimum=1)
    if samples is not None:
        samples = check_int(samples, "samples", minimum=100)
    if seconds is not None and not (isinstance(seconds, (int, float)) and seconds > 0):
        raise InvalidParameter(f"seconds={seconds!r} must be > 0")
    if not callable(mechanism):
        raise InvalidParameter(f"mechanism={mechanism!r} must be a Measurement or callable")
    claim: Claim | None = resolve_claim(claimed, mechanism, zcdp_delta)
    sampler = (measurement_sampler(mechanism) if isinstance(mechanism, Measurement)
               else mechanism)
    pair_list = _resolve_pairs(mechanism, pairs, input_size, sensitivity, adjacency)
    n_est, n_search = _plan(sampler, pair_list[0][0], samples, seconds, len(pair_list), k)
    if search_samples is not None:
        n_search = check_int(search_samples, "search_samples", minimum=100)
    delta = claim.delta if claim is not None else 0.0
    alpha = bounds.per_bound_alpha(confidence, 2 * k)
    z = NormalDist().inv_cdf(1.0 - alpha)
    enc = OutputEncoder()
    drawn = 0

    # Phase 1: search (its data never enters the bound).
    found: list[_Candidate] = []
    for i, (x, xp) in enumerate(pair_list):
        a, b = _draw(sampler, x, n_search, enc), _draw(sampler, xp, n_search, enc)
        drawn += 2 * n_search
        if a.shape[1:] != b.shape[1:]:
            raise InvalidParameter(
                f"outputs on x={_short(x)} and x'={_short(xp)} have different shapes "
                f"{a.shape[1:]} and {b.shape[1:]}"
            )
        found += _search_pair(a, b, i, n_estimate=n_est, z=z, delta=delta)
    enc.freeze()
    found.sort(key=lambda c: c.predicted, reverse=True)
    chosen = found[:k]

    # Phase 2: estimation on fresh draws, one batch per chosen pair.
    best: tuple[float, Witness] | None = None
    best_delta: float | None = None
    for i in sorted({c.pair for c in chosen}):
        mine = [c for c in chosen if c.pair == i]
        x, xp = pair_list[i]
        ev = [c.event for c in mine]
        ca = _count(sampler, x, n_est, enc, ev)
        cb = _count(sampler, xp, n_est, enc, ev)
        drawn += 2 * n_est
        for c, ka, kb in zip(mine, ca, cb, strict=True):
            hi_x, lo_x = (x, xp) if c.forward else (xp, x)
            k1, k2 = (ka, kb) if c.forward else (kb, ka)
            p_lo = bounds.cp_lower(k1, n_est, alpha)
            q_hi = bounds.cp_upper(k2, n_est, alpha)
            eps = bounds.epsilon_lower(p_lo, q_hi, delta)
            if claim is not None and claim.delta > 0:
                dl = bounds.delta_lower(p_lo, q_hi, claim.epsilon)
                best_delta = dl if best_delta is None else max(best_delta, dl)
            w = Witness(hi_x, lo_x, c.event, k1, k2, n_est, p_lo, q_hi)
            if best is None or eps > best[0]:
                best = (eps, w)

    eps_lower = 0.0 if best is None else max(0.0, best[0])
    witness = None if best is None or best[0] <= 0.0 else best[1]
    violated = claim is not None and eps_lower > claim.epsilon
    return AuditResult(
        mechanism=name or _label(mechanism),
        epsilon_lower=eps_lower if not math.isnan(eps_lower) else 0.0,
        claimed=claim.measure if claim is not None else None,
        claimed_epsilon=claim.epsilon if claim is not None else None,
        delta=delta,
        violated=bool(violated),
        delta_lower=best_delta,
        witness=witness,
        samples=drawn,
        seconds=time.perf_counter() - t_start,
        confidence=float(confidence),
        candidates=len(chosen),
        pairs_searched=len(pair_list),
    )
