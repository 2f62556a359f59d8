"""``audit``: a lower bound on a mechanism's ε, measured from its samples.

The bound (see ``docs/auditor.md``).  If ``M`` is (ε, δ)-DP then for *every fixed* pair of
neighbours ``x, x'`` and *every fixed* event ``S``,

    P[M(x) ∈ S] ≤ e^ε · P[M(x') ∈ S] + δ,  so  ε ≥ ln((P[M(x) ∈ S] − δ) / P[M(x') ∈ S]).

The auditor works in two phases on independent batches (sample splitting):

1. **Search.**  For each candidate pair it draws a search batch from ``M(x)`` and ``M(x')``,
   fits statistics (identity, empirical log-ratio, logistic regression) on one half and scores
   every interval event of each statistic on the other half (`dpcert.audit.events`).  The
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from dpcert._validate import check_int
from dpcert.audit import bounds
from dpcert.audit.claims import Claim, resolve_claim
from dpcert.audit.estimate import POISSON_FAILURE, poisson_counts, ratio_lower, run_estimation
from dpcert.audit.events import Event
from dpcert.audit.outputs import OutputEncoder, Sampler, measurement_sampler
from dpcert.audit.pairs import Adjacency, measurement_pairs, scalar_pairs, statdp_pairs
from dpcert.audit.parallel import Forking, check_streams
from dpcert.audit.search import FINALISTS, MIN_SEARCH, SEARCH_SHARE, Candidate, choose, run_search
from dpcert.core.measurement import Measurement
from dpcert.errors import InvalidParameter

__all__ = ["AuditResult", "Progress", "Witness", "audit"]

Array = np.ndarray[Any, Any]
#: Called with one line of progress text (the CLI prints it to stderr).
Progress = Callable[[str], None]

#: Most estimation draws per input of each chosen pair when only a time budget is given.
MAX_SAMPLES = 100_000_000
#: Most search draws per input of each pair (unless ``search_samples`` says otherwise).
MAX_SEARCH = 400_000
#: Draws of the timing pilot (their values are not looked at).
PILOT = 200
#: Draws of the untimed call before the pilot.
WARM_UP = 10
#: A pilot faster than this (seconds) is repeated with 10× the draws.
PILOT_FAST = 0.02
#: Planned wall time of one chunk of draws (the deadline is checked between chunks).
CHUNK_SECONDS = 0.25
#: Most output values (draws × coordinates) held per input in the search batch.
MAX_SEARCH_VALUES = 4_000_000
#: Time budget (seconds) used when neither ``samples`` nor ``seconds`` is given.
DEFAULT_SECONDS = 30.0
#: Output values (draws × coordinates) requested from the mechanism in one call.
CHUNK_VALUES = 250_000
#: Share of a time budget planned for drawing (the rest absorbs fitting and counting).
PLANNED_SHARE = 0.8
#: δ values at which the (ε, δ) curve of an audit is reported.
CURVE_DELTAS = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.1)


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

    def to_dict(self) -> dict[str, Any]:
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
    claimed: Any
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

    def to_dict(self) -> dict[str, Any]:
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


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.generic,)):
        return x.item()
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x if isinstance(x, (int, float, str, bool, type(None))) else repr(x)


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


@dataclass
class _Plan:
    n_search: int
    n_estimate: int
    chunk: int
    per_draw: float
    deadline: float | None


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
        return _without_mirrors(out)
    if isinstance(mechanism, Measurement):
        return measurement_pairs(mechanism)
    if input_size is None:
        return scalar_pairs(0.0, sensitivity)
    return [(x, y) for _, x, y in statdp_pairs(input_size, sensitivity, adjacency)]


def _without_mirrors(pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """``pairs`` without the swapped copies ``(x', x)`` of earlier pairs ``(x, x')``: every
    event is searched and estimated in both directions, so a mirror adds nothing but a share of
    the search's time (DP-Sniper's RAPPOR pairs list both orders of two pairs; screening four
    instead of two halved each one's batch and kept the weaker pair on some seeds)."""
    kept: list[tuple[Any, Any]] = []
    for x, xp in pairs:
        if not any(_same(x, b) and _same(xp, a) for a, b in kept):
            kept.append((x, xp))
    return kept


def _same(u: Any, v: Any) -> bool:
    """Whether ``u`` and ``v`` are the same numeric array bit for bit (``0.0`` and ``-0.0``
    differ: a float mechanism may treat them differently); anything else never matches, and
    an input that cannot be read as an array (whatever it raises) is left to the mechanism."""
    try:
        a, b = np.asarray(u), np.asarray(v)
    except Exception:   # a user's object: any failure means "not comparable", never a crash
        return False
    if a.dtype != b.dtype or a.shape != b.shape or a.dtype.kind not in "biuf":
        return False
    return a.tobytes() == b.tobytes()


def _plan(sampler: Sampler, x: Any, enc: OutputEncoder, samples: int | None,
          seconds: float | None, n_pairs: int, t_start: float) -> _Plan:
    """Draws per input for the search and estimation phases, from a timing pilot.

    The pilot's outputs are not looked at (only its duration and output width).  A first
    call of `WARM_UP` draws is not timed: it absorbs one-time costs (a measurement's
    first sample built its sampler's tables in 0.06 s, which timed a 0.13 µs draw at 300 µs
    and planned 1 338 search draws instead of 400 000).  With ``samples`` and no ``seconds``
    nothing is timed, and there is no such call."""
    if seconds is not None or samples is None:
        sampler(x, WARM_UP)
    pilot = PILOT
    t0 = time.perf_counter()
    y = enc.encode(sampler(x, pilot), pilot)
    spent = time.perf_counter() - t0
    per_draw = max(spent / pilot, 1e-9)
    if spent < PILOT_FAST:
        # a fast vectorised mechanism: 200 draws mostly time the call's own overhead (and any
        # hiccup of a loaded machine), which would shrink the search 10-50×; time 10× more
        t0 = time.perf_counter()
        enc.encode(sampler(x, 10 * pilot), 10 * pilot)
        per_draw = max(min(per_draw, (time.perf_counter() - t0) / (10 * pilot)), 1e-9)
    width = 1 if y.ndim == 1 else int(y.shape[1])
    cap_search = max(MIN_SEARCH, min(MAX_SEARCH, MAX_SEARCH_VALUES // width))
    if samples is not None and seconds is None:
        # No deadline: the chunking must not depend on the machine's speed, because draws
        # alternate between the two inputs chunk by chunk and a seeded audit must give the same
        # result on a busy machine as on a quiet one.
        chunk = max(100, CHUNK_VALUES // width)
        n_est = samples
        n_search = min(max(n_est // 2, MIN_SEARCH), cap_search)
        return _Plan(n_search, n_est, chunk, per_draw, None)
    # chunks of at most CHUNK_VALUES values and about CHUNK_SECONDS each (slow mechanisms), so
    # the deadline is checked often enough
    chunk = max(100, min(CHUNK_VALUES // width, int(CHUNK_SECONDS / per_draw)))
    budget = DEFAULT_SECONDS if seconds is None else seconds
    draws = PLANNED_SHARE * budget / per_draw
    # the search sizes its batches from its own measured cost (fixed + per draw) to fill its
    # share of the budget; this is only the most it may take: what the drawing alone allows
    searches = n_pairs if n_pairs <= FINALISTS else FINALISTS + n_pairs / 4
    want = PLANNED_SHARE * SEARCH_SHARE * budget / (2 * searches * per_draw)
    n_search = int(min(max(want, MIN_SEARCH), cap_search))
    # the estimation draws both inputs of the chosen pairs; the candidates come from the best
    # pair first (search.choose), so one pair almost always: planning for k pairs made the
    # search plan for a batch k× smaller than the one measured, and so favour larger, weaker
    # events than the estimation could confirm
    want = (1.0 - SEARCH_SHARE) * draws / 2
    n_est = int(max(1_000, min(want, MAX_SAMPLES if samples is None else samples)))
    return _Plan(n_search, n_est, chunk, per_draw, t_start + budget)


def _explain(eps: float, n: int, samples: int | None, z: float, chosen: list[Candidate],
             best_counts: tuple[int, int] | None) -> str:
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


def audit(mechanism: Any, pairs: Sequence[Any] | None = None, *, claimed: Any = None,
          samples: int | None = None, confidence: float = 0.95, seconds: float | None = None,
          search_samples: int | None = None, input_size: int | None = None,
          sensitivity: float = 1.0, adjacency: Adjacency = "linf", candidates: int = 2,
          ladder: int = 4,
          zcdp_delta: float = 1e-6, name: str | None = None,
          progress: Progress | None = None, seed: int | None = None, workers: int = 1,
          worker_init: Callable[[int], None] | None = None) -> AuditResult:
    """Measure a lower bound on the privacy loss of ``mechanism`` from its samples.

    Parameters
    ----------
    mechanism
        A `Measurement` (sampled through ``sample(x, n)`` when
        it has a batch path, else once per draw; its claim is ``map(1)`` and its neighbours
        come from its input space), or a vectorised black box ``f(x, n)`` returning ``n``
        outputs (wrap a scalar ``g(x)`` with [`one_at_a_time`][dpcert.audit.outputs.one_at_a_time]).
        Outputs may be numbers, bools, strings, ``None`` or rows of an ``(n, k)`` array.
    pairs
        Neighbouring inputs ``[(x, x_prime), ...]``; searched when omitted (see
        `dpcert.audit.pairs`).
    claimed
        The claimed privacy: ``PureDP(ε)``, ``ApproxDP(ε, δ)``, ``ZCDP(ρ)`` (audited as
        (ε, δ)-DP at ``δ = zcdp_delta`` with the tight conversion of Canonne, Kamath &
        Steinke 2020) or a number ε.
    samples
        Estimation draws per input of each chosen pair.  When omitted, the auditor times a
        pilot batch and fits the audit into ``seconds`` (default 30 s), capped at 10⁸.
    confidence
        Probability that ``epsilon_lower`` (and ``delta_lower`` and ``curve``) are valid.
    seconds
        Time budget, checked between chunks of draws (with ``samples`` given, ``samples``
        becomes a cap).
    search_samples
        Search draws per input of each pair (default: a quarter of the planned draws).
    input_size
        For black boxes without ``pairs``: vector length for the StatDP patterns (scalar
        ``0`` vs ``±sensitivity`` when omitted).
    sensitivity
        For black boxes without ``pairs``: how far neighbouring inputs' answers differ.
    adjacency
        For black boxes without ``pairs``: which patterns are neighbours (``"linf"``: every
        answer may move; ``"l1"``: one).
    candidates
        How many (pair, event) candidates go to the estimation phase.
    ladder
        How many smaller rays nested inside the best candidate's event also go to it (on
        the same draws).  The union bound covers ``candidates + ladder`` events.  Pure-DP
        claims only (at δ > 0 small events are swamped by δ).
    name
        Label for the result (defaults to the mechanism's name).
    progress
        Called with a line of text as the audit proceeds (the CLI prints it to stderr).
    seed
        Seeds the auditor's own randomness (the Poisson sample sizes of the ratio bound); by
        default fresh OS entropy.  It must not depend on the mechanism's outputs.
    workers
        Processes drawing the estimation batch (this one and ``workers − 1`` forked ones,
        `dpcert.audit.parallel`): about ``workers``× the draws in the same time on as many
        free cores.  On a time budget, the search's screens (the discrete and pattern
        screens of few-valued outputs, the wide screen of numeric vectors) draw in as many
        processes too.  The processes must draw
        independent outputs: dpcert measurements do (they read the OS CSPRNG); a black box
        holding its own generator needs ``worker_init``.
        Outputs that repeat between processes stop the audit with
        `AuditFailed`.
    worker_init
        Called as ``worker_init(w)`` in each worker process before it draws, with
        ``w = 1 … workers−1`` in the estimation's and ``w = workers … 2·workers−2`` in the
        search's, to give the mechanism's generator a stream of its own for each ``w`` (it
        sets the generator's state
        from fresh OS entropy, or from ``[seed, w]`` for a seeded run; the example in
        `dpcert.audit.parallel` shows one).

    Returns
    -------
    AuditResult
    """
    t_start = time.perf_counter()
    if not (isinstance(confidence, (int, float)) and 0.0 < float(confidence) < 1.0):
        raise InvalidParameter(f"confidence={confidence!r} must be in (0, 1)")
    k = check_int(candidates, "candidates", minimum=1)
    rungs = check_int(ladder, "ladder", minimum=0)
    if samples is not None:
        samples = check_int(samples, "samples", minimum=100)
    if seconds is not None and not (isinstance(seconds, (int, float)) and seconds > 0):
        raise InvalidParameter(f"seconds={seconds!r} must be > 0")
    if not callable(mechanism):
        raise InvalidParameter(f"mechanism={mechanism!r} must be a Measurement or callable")
    procs = check_int(workers, "workers", minimum=1)
    if worker_init is not None and not callable(worker_init):
        raise InvalidParameter(f"worker_init={worker_init!r} must be callable or None")
    claim: Claim | None = resolve_claim(claimed, mechanism, zcdp_delta)
    sampler = (measurement_sampler(mechanism) if isinstance(mechanism, Measurement)
               else mechanism)
    pair_list = _resolve_pairs(mechanism, pairs, input_size, sensitivity, adjacency)
    enc = OutputEncoder()
    # the search runs in this process and plans as for one: it has no use for a guess at what
    # the workers will add (paired runs on SVT1 chose no better with one; docs/auditor.md)
    plan = _plan(sampler, pair_list[0][0], enc, samples, seconds, len(pair_list), t_start)
    if procs > 1:   # fail before the search, not after it
        check_streams(sampler, pair_list[0][0], procs, worker_init, plan.per_draw)
    if search_samples is not None:
        plan.n_search = check_int(search_samples, "search_samples", minimum=100)
    delta = claim.delta if claim is not None else 0.0
    # δ = 0: one Poissonized ratio bound per candidate; else two Clopper–Pearson bounds each
    use_ratio = delta == 0.0
    if not use_ratio:
        rungs = 0   # at δ > 0 small events are swamped by δ, and each costs two bounds
    if use_ratio:
        alpha = bounds.per_bound_alpha(float(confidence) + 2 * POISSON_FAILURE, k + rungs)
        z_search = NormalDist().inv_cdf(1.0 - alpha) / math.sqrt(2.0)
    else:
        alpha = bounds.per_bound_alpha(confidence, 2 * (k + rungs))
        z_search = NormalDist().inv_cdf(1.0 - alpha)
    z = NormalDist().inv_cdf(1.0 - alpha)

    # Phase 1: search (its data never enters the bound).
    found, drawn, searched = run_search(sampler, pair_list, plan, enc, z_search, delta,
                                        progress, t_start,
                                        Forking(procs, worker_init, enc) if procs > 1 else None)
    enc.freeze()
    chosen = choose(found, k, rungs)
    if plan.deadline is not None:
        # the deadline, checked between chunks, ends the estimation; this only caps it
        plan.n_estimate = MAX_SAMPLES if samples is None else samples

    # Phase 2: estimation on fresh draws of every chosen pair.
    tally, n = run_estimation(sampler, pair_list, [(c.pair, c.event) for c in chosen],
                              plan.n_estimate, plan.chunk, plan.deadline, enc, progress,
                              procs, worker_init)
    drawn += 2 * n * len({c.pair for c in chosen})
    # insecure-ok: the Poissonized sample sizes of the statistical bound need randomness that is
    # independent of the audited outputs, not secret; it is never privacy noise.
    poisson = (poisson_counts(tally, n, np.random.default_rng(seed))  # insecure-ok
               if use_ratio else None)
    best: tuple[float, Witness] | None = None
    best_delta: float | None = None
    estimates = []
    for j, c in enumerate(chosen):
        x, xp = pair_list[c.pair]
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
            if claim is not None and claim.delta > 0:
                dl = bounds.delta_lower(p_lo, q_hi, claim.epsilon)
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
    return AuditResult(
        mechanism=name or _label(mechanism),
        epsilon_lower=eps_lower,
        claimed=claim.measure if claim is not None else None,
        claimed_epsilon=claim.epsilon if claim is not None else None,
        delta=delta,
        violated=bool(claim is not None and eps_lower > claim.epsilon),
        delta_lower=best_delta,
        witness=witness,
        samples=drawn,
        seconds=time.perf_counter() - t_start,
        confidence=float(confidence),
        candidates=len(chosen),
        pairs_searched=searched,
        curve=curve,
        explanation=_explain(eps_lower, n, samples, z, chosen, counts_best),
        estimate_draws=n,
    )
