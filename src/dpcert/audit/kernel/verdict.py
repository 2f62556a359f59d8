"""The verdict: from the estimation's counts to a lower bound on ε, its witness and the result.

For each `Choice` ``(pair, S, direction)`` the estimation
counted how often fresh draws of ``M(x)`` and ``M(x')`` fell in ``S``.  At δ = 0 each choice
gives one Poissonized ratio bound (`ratio_lower`); at
δ > 0 an exact Clopper–Pearson lower bound on ``P[M(x) ∈ S]`` and upper bound on
``P[M(x') ∈ S]`` (`dpcert.audit.kernel.bounds`).  Each bound holds with probability
``1 − alpha``; ``alpha`` is the union bound's share of ``1 − confidence`` (computed by the
auditor from the number of choices), so all hold together with probability ``confidence``
and the largest

    ε ≥ ln((P[M(x) ∈ S] − δ) / P[M(x') ∈ S])

over the choices is a valid lower bound, whichever events were chosen.

Examples
--------
>>> import numpy as np
>>> from dpcert.audit.kernel.estimate import Tally
>>> from dpcert.audit.kernel.handoff import Choice
>>> from dpcert.audit.stats.events import Event, Identity
>>> tally = Tally(1)      # 1 000 draws per input: all of M(x)'s in S, none of M(x')'s
>>> tally.chunks[0][0].append(np.packbits(np.ones(1000, dtype=bool)))
>>> tally.chunks[0][1].append(np.packbits(np.zeros(1000, dtype=bool)))
>>> tally.sizes.append(1000)
>>> v = bound_choices(tally, 1000, (Choice(0, Event(Identity(), 1.0, np.inf), True),),
...                   [(1, 0)], delta=1e-6, claim_epsilon=None, alpha=0.025, rng=None)
>>> round(v.epsilon_lower, 2), v.witness.event.describe()
(5.6, 'output ≥ 1')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpcert._types import JSON
from dpcert.audit.kernel import bounds
from dpcert.audit.kernel.estimate import Tally, poisson_counts, ratio_lower
from dpcert.audit.kernel.handoff import Choice
from dpcert.audit.stats.events import Event
from dpcert.core.measures import Measure

__all__ = ["AuditResult", "Verdict", "Witness", "bound_choices", "explain"]

#: δ values at which the (ε, δ) curve of an audit is reported.
CURVE_DELTAS = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.1)


@dataclass(frozen=True, eq=False)
class Witness:
    """The pair and event behind a bound, with the counts and the probability bounds."""

    x: object
    x_prime: object
    event: Event
    count_x: int
    count_x_prime: int
    n: int
    p_x_lower: float
    p_x_prime_upper: float
    n_x_prime: int | None = None
    ratio_lower: float | None = None

    def describe(self) -> str:
        """One line: ``x=…, x'=…, S: …`` and the probability (or ratio) bounds."""
        head = f"x={_short(self.x)}, x'={_short(self.x_prime)}, S: {self.event.describe()}, "
        if self.ratio_lower is not None:
            return head + (f"P[M(x)∈S]/P[M(x')∈S] ≥ {self.ratio_lower:.4g} "
                           f"({self.count_x}/{self.n} vs {self.count_x_prime}/"
                           f"{self.n_x_prime} draws, Poissonized)")
        return head + (f"P[M(x)∈S] ≥ {self.p_x_lower:.4g} ({self.count_x}/{self.n}), "
                       f"P[M(x')∈S] ≤ {self.p_x_prime_upper:.4g} "
                       f"({self.count_x_prime}/{self.n})")

    def to_dict(self) -> dict[str, JSON]:
        """The witness as JSON-ready data."""
        return {"x": _jsonable(self.x), "x_prime": _jsonable(self.x_prime),
                "event": self.event.describe(), "count_x": self.count_x,
                "count_x_prime": self.count_x_prime, "n": self.n,
                "p_x_lower": _finite(self.p_x_lower),
                "p_x_prime_upper": _finite(self.p_x_prime_upper),
                "n_x_prime": self.n if self.n_x_prime is None else self.n_x_prime,
                "ratio_lower": self.ratio_lower}


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
    curve
        ``((δ, ε_lower(δ)), ...)``: lower bounds on ε at several δ from the same estimates
        (valid together with the same confidence), for approximate-DP mechanisms.
    explanation
        Why the bound is what it is when it is 0 (too few draws, what would help), or a note
        when the audit stopped at its deadline; empty otherwise.
    estimate_draws
        Draws per input of each chosen pair in the estimation phase (the ``n`` of the bounds).
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
    curve: tuple[tuple[float, float], ...] = ()
    explanation: str = ""
    estimate_draws: int = 0

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
        if self.witness is not None:
            head += f"\n  witness: {self.witness.describe()}"
        if self.explanation:
            head += f"\n  note: {self.explanation}"
        return head

    def to_dict(self) -> dict[str, JSON]:
        """The result as JSON-ready data (``dpcert audit --json``)."""
        return {"mechanism": self.mechanism, "epsilon_lower": self.epsilon_lower,
                "claimed": None if self.claimed is None else repr(self.claimed),
                "claimed_epsilon": self.claimed_epsilon, "delta": self.delta,
                "verdict": self.verdict, "violated": self.violated,
                "delta_lower": self.delta_lower,
                "witness": None if self.witness is None else self.witness.to_dict(),
                "samples": self.samples, "seconds": self.seconds,
                "confidence": self.confidence, "candidates": self.candidates,
                "pairs_searched": self.pairs_searched,
                "curve": [list(p) for p in self.curve], "explanation": self.explanation,
                "estimate_draws": self.estimate_draws}


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _jsonable(x: object) -> JSON:
    if isinstance(x, np.ndarray):
        rows: JSON = x.tolist()   # a numeric input: nested lists of Python numbers
        return rows
    if isinstance(x, (np.generic,)):
        item: JSON = x.item()
        return item
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x if isinstance(x, (int, float, str, bool, type(None))) else repr(x)


def _short(x: object) -> str:
    if isinstance(x, np.ndarray):
        x = x.tolist()
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def explain(eps: float, n: int, samples: int | None, z: float, chosen: int,
            best_counts: tuple[int, int] | None) -> str:
    """Why the bound is what it is when it is 0 (``chosen`` events were estimated on ``n``
    draws per input; ``z`` is the bounds' normal quantile), or that the time limit cut the
    estimation short."""
    notes = []
    if samples is not None and n < samples:
        notes.append(f"stopped at the time limit after {n:,} of the {samples:,} estimation "
                     "draws per input asked for")
    if eps > 0:
        return "; ".join(notes)
    if not chosen:
        notes.append("no event separated the two inputs' outputs in the search batch")
    else:
        k1, k2 = best_counts if best_counts is not None else (0, 0)
        notes.append(f"the best event was seen {k1:,} vs {k2:,} times in about {n:,} draws "
                     "per input, too close to separate at this confidence")
    resolvable = 2.0 * z / math.sqrt(max(n, 1))
    notes.append(f"with {n:,} draws per input only ε above about {resolvable:.2g} can be "
                 "resolved; 4× the draws (samples=, seconds=) halve that, and pairs of inputs "
                 "further apart or a different adjacency may expose more")
    return "; ".join(notes)


@dataclass(frozen=True, eq=False)
class Verdict:
    """The bounds from one estimation: ε's lower bound, its witness (None when no event gave
    a bound above 0), δ's lower bound at the claimed ε (claims with δ > 0) and the (δ, ε)
    curve."""

    epsilon_lower: float
    witness: Witness | None
    delta_lower: float | None
    curve: tuple[tuple[float, float], ...]
    best_counts: tuple[int, int] | None


def bound_choices(tally: Tally, n: int, choices: Sequence[Choice],
                  pairs: Sequence[tuple[object, object]], *, delta: float,
                  claim_epsilon: float | None, alpha: float,
                  rng: np.random.Generator | None) -> Verdict:  # insecure-ok: not noise
    """The largest lower bound on ε at ``delta`` over ``choices``, from ``n`` fresh draws per
    input counted in ``tally``; each bound at level ``alpha``.  ``rng`` (needed at δ = 0)
    draws the Poissonized sample sizes of the ratio bound; ``claim_epsilon`` (claims with
    δ > 0) asks for a lower bound on δ at that ε too."""
    use_ratio = delta == 0.0
    poisson = (poisson_counts(tally, n, rng)
               if use_ratio and rng is not None else None)
    best: tuple[float, Witness] | None = None
    best_delta: float | None = None
    estimates = []
    for j, c in enumerate(choices):
        x, xp = pairs[c.pair]
        hi_x, lo_x = (x, xp) if c.forward else (xp, x)
        if use_ratio:
            if poisson is None:
                continue
            big, big_p, counts = poisson
            (k1, n1), (k2, n2) = ((counts[j][0], big), (counts[j][1], big_p))
            if not c.forward:
                (k1, n1), (k2, n2) = (k2, n2), (k1, n1)
            eps = ratio_lower(k1, k2, alpha)
            w = Witness(hi_x, lo_x, c.event, k1, k2, n1, math.nan, math.nan, n2,
                        math.exp(eps) if eps > -math.inf else 0.0)
        else:
            ka, kb = tally.count(j, 0, n), tally.count(j, 1, n)
            k1, k2 = (ka, kb) if c.forward else (kb, ka)
            p_lo = bounds.cp_lower(k1, n, alpha)
            q_hi = bounds.cp_upper(k2, n, alpha)
            estimates.append((p_lo, q_hi))
            eps = bounds.epsilon_lower(p_lo, q_hi, delta)
            if claim_epsilon is not None:
                dl = bounds.delta_lower(p_lo, q_hi, claim_epsilon)
                best_delta = dl if best_delta is None else max(best_delta, dl)
            w = Witness(hi_x, lo_x, c.event, k1, k2, n, p_lo, q_hi)
        if best is None or eps > best[0]:
            best = (eps, w)
    eps_lower = 0.0 if best is None or math.isnan(best[0]) else max(0.0, best[0])
    witness = None if best is None or best[0] <= 0.0 else best[1]
    if use_ratio:
        curve: tuple[tuple[float, float], ...] = ((0.0, eps_lower),)
    else:
        curve = tuple((d, max([0.0] + [max(0.0, bounds.epsilon_lower(p, q, d))
                                       for p, q in estimates]))
                      for d in sorted({*CURVE_DELTAS, delta}))
    counts_best = None if best is None else (best[1].count_x, best[1].count_x_prime)
    return Verdict(eps_lower, witness, best_delta, curve, counts_best)
