"""``audit``: a lower bound on a mechanism's ε, measured from its samples.

The bound (see ``docs/auditor.md``).  If ``M`` is (ε, δ)-DP then for *every fixed* pair of
neighbours ``x, x'`` and *every fixed* event ``S``,

    P[M(x) ∈ S] ≤ e^ε · P[M(x') ∈ S] + δ,  so  ε ≥ ln((P[M(x) ∈ S] − δ) / P[M(x') ∈ S]).

The auditor works in two phases on independent batches (sample splitting):

1. **Search.**  The search plug-in (``AuditOptions.search``,
   `StandardSearch` by default) draws what it likes from ``M(x)`` and ``M(x')`` of
   each pair, fits statistics and hands back at most ``candidates + ladder`` choices: a pair,
   a fixed event and a direction (`Choice`).  Nothing it
   measured enters the bound.
2. **Estimation.**  A fresh batch of draws is taken from both inputs of each chosen pair
   (`run_estimation`) and each choice is bounded exactly
   (`bound_choices`) at level ``alpha``, the union bound's
   share of ``1 − confidence`` over the ``candidates + ladder`` events it was sized for.  All
   bounds hold together with probability at least ``confidence``, so the largest is a valid
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
from dataclasses import replace
from statistics import NormalDist
from typing import TypeVar, Unpack, cast

import numpy as np

from dpcert._validate import check_int
from dpcert.audit.kernel import bounds
from dpcert.audit.kernel.claims import Claim, resolve_claim
from dpcert.audit.kernel.estimate import POISSON_FAILURE, run_estimation
from dpcert.audit.kernel.outputs import OutputEncoder, Outputs, Sampler, measurement_sampler
from dpcert.audit.kernel.pairs import Adjacency, measurement_pairs, scalar_pairs, statdp_pairs
from dpcert.audit.kernel.parallel import Forking, check_streams
from dpcert.audit.kernel.verdict import AuditResult, Witness, bound_choices, explain
from dpcert.audit.options import AuditKeywords, AuditOptions, with_keywords
from dpcert.audit.search.base import Plan, Progress, Search, SearchTask
from dpcert.audit.search.schedule import SCHEDULE
from dpcert.audit.search.standard import FINALISTS, MIN_SEARCH
from dpcert.core.measurement import Measurement
from dpcert.errors import InvalidParameter

__all__ = ["AuditOptions", "AuditResult", "Progress", "Witness", "audit"]

#: The type of a black box's inputs (the caller's; the auditor passes them along unread).
X = TypeVar("X")

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


def _label(mechanism: object) -> str:
    for attr in ("name", "__name__"):
        v = getattr(mechanism, attr, None)
        if isinstance(v, str):
            return v
    return type(mechanism).__name__


def _resolve_pairs(mechanism: object, pairs: Sequence[tuple[X, X] | list[X]] | None,
                   input_size: int | None, sensitivity: float, adjacency: Adjacency
                   ) -> list[tuple[object, object]]:
    if pairs is not None:
        out: list[tuple[object, object]] = []
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


def _without_mirrors(pairs: list[tuple[object, object]]) -> list[tuple[object, object]]:
    """``pairs`` without the swapped copies ``(x', x)`` of earlier pairs ``(x, x')``: every
    event is searched and estimated in both directions, so a mirror adds nothing but a share of
    the search's time (DP-Sniper's RAPPOR pairs list both orders of two pairs)."""
    kept: list[tuple[object, object]] = []
    for x, xp in pairs:
        if not any(_same(x, b) and _same(xp, a) for a, b in kept):
            kept.append((x, xp))
    return kept


def _same(u: object, v: object) -> bool:
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


def _plan(sampler: Sampler, x: object, enc: OutputEncoder, samples: int | None,
          seconds: float | None, n_pairs: int, t_start: float) -> Plan:
    """Draws per input for the search and estimation phases, from a timing pilot.

    The pilot's outputs are not looked at (only its duration and output width).  A first
    call of `WARM_UP` draws is not timed: it absorbs one-time costs (a measurement's
    first sample builds its sampler's tables, which would time a sub-microsecond draw at
    hundreds of microseconds and shrink the search).  With ``samples`` and no ``seconds``
    nothing is timed, and there is no such call."""
    if seconds is not None or samples is None:
        sampler(x, WARM_UP)
    pilot = PILOT
    t0 = time.perf_counter()
    y = enc.encode(sampler(x, pilot), pilot)
    spent = time.perf_counter() - t0
    per_draw = max(spent / pilot, 1e-9)
    fixed = samples is not None and seconds is None
    if spent < PILOT_FAST and not fixed:
        # a fast vectorised mechanism: 200 draws mostly time the call's own overhead (and any
        # hiccup of a busy machine), which would shrink the search; time 10× more (not with a
        # fixed sample count: how many draws the pilot takes must not depend on the machine,
        # since a mechanism may hold the seeded generator the later draws come from)
        t0 = time.perf_counter()
        enc.encode(sampler(x, 10 * pilot), 10 * pilot)
        per_draw = max(min(per_draw, (time.perf_counter() - t0) / (10 * pilot)), 1e-9)
    width = 1 if y.ndim == 1 else int(y.shape[1])
    cap_search = max(MIN_SEARCH, min(MAX_SEARCH, MAX_SEARCH_VALUES // width))
    if samples is not None and seconds is None:  # fixed
        # No deadline: the chunking must not depend on the machine's speed, because draws
        # alternate between the two inputs chunk by chunk and a seeded audit must give the same
        # result on a busy machine as on a quiet one.
        chunk = max(100, CHUNK_VALUES // width)
        n_est = samples
        n_search = min(max(n_est // 2, MIN_SEARCH), cap_search)
        return Plan(n_search, n_est, chunk, per_draw, None)
    # chunks of at most CHUNK_VALUES values and about CHUNK_SECONDS each (slow mechanisms), so
    # the deadline is checked often enough
    chunk = max(100, min(CHUNK_VALUES // width, int(CHUNK_SECONDS / per_draw)))
    budget = DEFAULT_SECONDS if seconds is None else seconds
    draws = SCHEDULE.planned * budget / per_draw
    # the search sizes its batches from its own measured cost (fixed + per draw) to fill its
    # share of the budget; this is only the most it may take: what the drawing alone allows
    searches = n_pairs if n_pairs <= FINALISTS else FINALISTS + n_pairs / 4
    want = SCHEDULE.planned * SCHEDULE.search * budget / (2 * searches * per_draw)
    n_search = int(min(max(want, MIN_SEARCH), cap_search))
    # the estimation draws both inputs of the chosen pairs; the candidates come from the best
    # pair first (search.choose), so one pair almost always: planning for k pairs made the
    # search plan for a batch k× smaller than the one measured, and so favour larger, weaker
    # events than the estimation could confirm
    want = SCHEDULE.estimation * draws / 2
    n_est = int(max(1_000, min(want, MAX_SAMPLES if samples is None else samples)))
    return Plan(n_search, n_est, chunk, per_draw, t_start + budget)


def audit(mechanism: Measurement | Callable[[X, int], Outputs],
          pairs: Sequence[tuple[X, X] | list[X]] | None = None,
          options: AuditOptions | None = None,
          **keywords: Unpack[AuditKeywords]) -> AuditResult:
    """Measure a lower bound on the privacy loss of ``mechanism`` from its samples.

    Parameters
    ----------
    mechanism
        A `Measurement` (sampled through ``sample(x, n)`` when
        it has a batch path, else once per draw; its claim is ``map(1)`` and its neighbours
        come from its input space; an engine release, ``query.measurement(budget)``, is one),
        or a vectorised black box ``f(x, n)`` returning ``n`` outputs (wrap a scalar ``g(x)``
        with [`one_at_a_time`][dpcert.audit.kernel.outputs.one_at_a_time]).  Outputs may be numbers,
        bools, strings, ``None`` or rows of an ``(n, k)`` array.
    pairs
        Neighbouring inputs ``[(x, x_prime), ...]``; generated when omitted (see
        `dpcert.audit.kernel.pairs`).
    options
        How to audit: `AuditOptions` (claim, samples or seconds,
        confidence, search plug-in, workers, ...).
    **keywords
        The same options as keywords (``claimed=..., samples=...``), each replacing that
        field of ``options``; an unknown keyword raises
        `InvalidParameter` naming it.

    Returns
    -------
    AuditResult
    """
    opts = with_keywords(options, keywords)
    t_start = time.perf_counter()
    confidence = opts.confidence
    if not (isinstance(confidence, (int, float)) and 0.0 < float(confidence) < 1.0):
        raise InvalidParameter(f"confidence={confidence!r} must be in (0, 1)")
    k = check_int(opts.candidates, "candidates", minimum=1)
    rungs = check_int(opts.ladder, "ladder", minimum=0)
    samples = opts.samples
    if samples is not None:
        samples = check_int(samples, "samples", minimum=100)
    seconds = opts.seconds
    if seconds is not None and not (isinstance(seconds, (int, float)) and seconds > 0):
        raise InvalidParameter(f"seconds={seconds!r} must be > 0")
    if not callable(mechanism):
        raise InvalidParameter(f"mechanism={mechanism!r} must be a Measurement or callable")
    procs = check_int(opts.workers, "workers", minimum=1)
    worker_init = opts.worker_init
    if worker_init is not None and not callable(worker_init):
        raise InvalidParameter(f"worker_init={worker_init!r} must be callable or None")
    if not isinstance(opts.search, Search):
        raise InvalidParameter(f"search={opts.search!r} must be a Search plug-in")
    claim: Claim | None = resolve_claim(opts.claimed, mechanism, opts.zcdp_delta)
    # a black box is only called on inputs of ``pair_list``: the caller's pairs or, without
    # them, the generated ones its documentation describes
    sampler = (measurement_sampler(mechanism) if isinstance(mechanism, Measurement)
               else cast(Sampler, mechanism))
    pair_list = _resolve_pairs(mechanism, pairs, opts.input_size, opts.sensitivity,
                               opts.adjacency)
    enc = OutputEncoder()
    # the search runs in this process and plans as for one: what the workers add goes to the
    # estimation
    plan = _plan(sampler, pair_list[0][0], enc, samples, seconds, len(pair_list), t_start)
    if procs > 1:   # fail before the search, not after it
        check_streams(sampler, pair_list[0][0], procs, worker_init, plan.per_draw)
    if opts.search_samples is not None:
        plan = replace(plan, n_search=check_int(opts.search_samples, "search_samples",
                                                minimum=100))
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

    # Phase 1: search (its data never enters the bound); it hands over choices only.
    task = SearchTask(sampler, pair_list, plan, enc, z_search, delta, k, rungs, t_start,
                      opts.progress, Forking(procs, worker_init, enc) if procs > 1 else None)
    outcome = opts.search.search(task)
    enc.freeze()
    chosen = outcome.choices
    if len(chosen) > k + rungs:
        raise InvalidParameter(f"search {opts.search.name!r} chose {len(chosen)} events; the "
                               f"union bound covers {k + rungs}")
    n_target = plan.n_estimate
    if plan.deadline is not None:
        # the deadline, checked between chunks, ends the estimation; this only caps it
        n_target = MAX_SAMPLES if samples is None else samples

    # Phase 2: estimation on fresh draws of every chosen pair, then the bounds.
    tally, n = run_estimation(sampler, pair_list, [(c.pair, c.event) for c in chosen],
                              n_target, plan.chunk, plan.deadline, enc, opts.progress,
                              procs, worker_init)
    drawn = outcome.draws + 2 * n * len({c.pair for c in chosen})
    # insecure-ok: the Poissonized sample sizes of the statistical bound need randomness that is
    # independent of the audited outputs, not secret; it is never privacy noise.
    rng = np.random.default_rng(opts.seed) if use_ratio else None  # insecure-ok
    v = bound_choices(tally, n, chosen, pair_list, delta=delta,
                      claim_epsilon=claim.epsilon if claim is not None and claim.delta > 0
                      else None, alpha=alpha, rng=rng)
    return AuditResult(
        mechanism=opts.name or _label(mechanism),
        epsilon_lower=v.epsilon_lower,
        claimed=claim.measure if claim is not None else None,
        claimed_epsilon=claim.epsilon if claim is not None else None,
        delta=delta,
        violated=bool(claim is not None and v.epsilon_lower > claim.epsilon),
        delta_lower=v.delta_lower,
        witness=v.witness,
        samples=drawn,
        seconds=time.perf_counter() - t_start,
        confidence=float(confidence),
        candidates=len(chosen),
        pairs_searched=outcome.pairs_searched,
        curve=v.curve,
        explanation=explain(v.epsilon_lower, n, samples, z, len(chosen), v.best_counts),
        estimate_draws=n,
    )
