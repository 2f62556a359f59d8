"""The self-audit registry: one target per dpcert mechanism, built lazily by name.

Each `Target` names the constructor in `dpcert.mechanisms` it audits; when that
constructor does not exist in this build the target is reported as *not available* (not a
failure).  The claim is always the real measurement's ``map(1)``.  Sampling is either

* ``local``: the measurement is built on a ``VectorDomain`` of independent records (Laplace,
  Gaussian, randomized response) and called once on ``n`` copies of the input, which yields
  ``n`` independent draws of the scalar mechanism with the *same parameters*; the claim is the
  scalar measurement's ``map(1)`` (same constructor, ``AtomDomain``), or
* ``per call``: the measurement is called once per draw (selection mechanisms, SVT, quantile,
  histogram, partition selection), which is slower, so these get fewer samples.

Examples
--------
>>> [t.name for t in TARGETS][:3]
['laplace (int)', 'laplace (float)', 'gaussian (int, zCDP)']
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcert.audit import AuditOptions, AuditResult, audit
from dpcert.audit.kernel.outputs import Sampler, measurement_sampler
from dpcert.core.domains import AtomDomain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import Measure
from dpcert.core.metrics import (
    AbsoluteDistance,
    L1Distance,
    L2Distance,
    SymmetricDistance,
)

__all__ = ["TARGETS", "Built", "Target", "TargetReport", "run_target"]

#: A mechanism constructor of dpcert, found by name (each target knows its own arguments).
Make = Callable[..., Measurement]


@dataclass(frozen=True, eq=False)
class Built:
    """A ready-to-audit target: sampler, neighbouring inputs, and the measurement whose
    ``map(1)`` is the claim."""

    sampler: Sampler
    pairs: Sequence[tuple[object, object]]
    claim_from: Measurement
    sampling: str


@dataclass(frozen=True, eq=False)
class Target:
    """A mechanism of dpcert to audit: the constructor's name and how to build it."""

    name: str
    constructor: str
    build: Callable[[Make], Built]

    @property
    def forkable(self) -> bool:
        """Whether the target can be sampled in a forked worker: not the engine's, whose
        Polars queries hang in a child forked after Polars started its thread pool."""
        return not self.constructor.startswith("dpcert.frame")


@dataclass(frozen=True, eq=False)
class TargetReport:
    """The outcome for one target: ``status`` is ok / VIOLATION / not available / error."""

    name: str
    status: str
    result: AuditResult | None
    sampling: str
    note: str
    seconds: float
    built: Built | None = None


def _local(vector: Measurement, scalar: Measurement, pairs: Sequence[tuple[object, object]],
           dtype: type) -> Built:
    from dpcert.mechanisms._additive import MAX_UNSIZED

    def one(x: object, n: int) -> Any:   # what the vector measurement returns
        if dtype is object:
            return vector([x] * n)
        return vector(np.full(n, x, dtype=dtype))

    def sample(x: object, n: int) -> Any:
        # unsized float vectors are capped at MAX_UNSIZED coordinates per call
        parts = [one(x, min(MAX_UNSIZED, n - i)) for i in range(0, n, MAX_UNSIZED)]
        return np.concatenate(parts) if parts else one(x, 0)

    return Built(sample, pairs, scalar, "local: one call on n copies")


def _per_call(m: Measurement, pairs: Sequence[tuple[object, object]]) -> Built:
    how = "batched: Measurement.sample" if m.batch_map is not None else "per call"
    return Built(measurement_sampler(m), pairs, m, how)


V, A = VectorDomain, AtomDomain


def _laplace_int(make: Make) -> Built:
    return _local(make(V(A(int)), L1Distance(), scale=2), make(A(int), AbsoluteDistance(), scale=2),
                  [(0, 1)], np.int64)


def _laplace_float(make: Make) -> Built:
    return _local(make(V(A(float)), L1Distance(), scale=1.0),
                  make(A(float), AbsoluteDistance(), scale=1.0), [(0.0, 1.0)], np.float64)


def _gaussian_int(make: Make) -> Built:
    return _local(make(V(A(int)), L2Distance(), scale=2), make(A(int), AbsoluteDistance(), scale=2),
                  [(0, 1)], np.int64)


def _rr_bool(make: Make) -> Built:
    return _local(make(1.0, input_domain=V(A(bool))), make(1.0), [(False, True)], np.bool_)


def _rr_k(make: Make) -> Built:
    cats = ["a", "b", "c", "d"]
    return _local(make(cats, 1.0, input_domain=V(A(str))), make(cats, 1.0), [("a", "b")], object)


def _rappor(make: Make) -> Built:
    return _per_call(make(8, 2.0), [(0, 1)])


def _rappor_bloom(make: Make) -> Built:
    from dpcert.mechanisms.rappor_bloom import RapporBloomParams

    # "v0" and "v5" set disjoint bits of a 4-bit filter (one cohort): the worst-case pair
    return _per_call(make(RapporBloomParams(num_bits=4, num_cohorts=1)), [("v0", "v5")])


_CANDS = ["red", "green", "blue"]


def _votes(xs: Sequence[str]) -> list[int]:
    return [sum(1 for x in xs if x == c) for c in _CANDS]


_VOTE_PAIRS = [(["red", "green"], ["red", "green", "red"]),
               (["red", "green"], ["red", "green", "green"])]


def _selection(**kw: str) -> Callable[[Make], Built]:
    def build(make: Make) -> Built:
        m = make(V(A(str)), SymmetricDistance(), _CANDS, _votes, 1, 1.0, **kw)
        return _per_call(m, _VOTE_PAIRS)
    return build


def _svt(make: Make) -> Built:
    queries = [lambda xs, t=t: sum(1 for x in xs if x >= t) for t in (3, 2, 1)]
    m = make(V(A(int)), SymmetricDistance(), queries, threshold=2, epsilon=1.0)
    base = [1, 2, 3]
    return _per_call(m, [(base, [*base, 3]), (base, [1, 2])])


def _quantile(make: Make) -> Built:
    cands = [0.0, 1.0, 2.0, 3.0, 4.0]
    m = make(V(A(float)), SymmetricDistance(), cands, 0.5, 1.0)
    base = [0.0, 1.0, 2.0, 3.0]
    return _per_call(m, [(base, [*base, 4.0]), (base, [*base, 0.0])])


def _histogram(make: Make) -> Built:
    m = make(V(A(str)), SymmetricDistance(), ["a", "b", "c"], scale=1)
    return _per_call(m, [(["a", "b"], ["a", "b", "a"])])


def _partition(make: Make) -> Built:
    m = make(V(A(str)), SymmetricDistance(), 1.0, 1e-3)
    base = ["a"] * 12
    return _per_call(m, [(base, [*base, "b"])])


def _gaussian_approx(make: Make) -> Built:
    m = make(A(int), AbsoluteDistance(), 2, 1e-5)
    return _per_call(m, [(0, 1)])


def _continual(method: str, noise: str) -> Callable[[Make], Built]:
    """Running sums over 4 steps; neighbours move one unit's count at the first or last step
    (the first step enters every running sum, the last only one)."""
    def build(make: Make) -> Built:
        m = make(V(A(int), size=4), L1Distance(), 2, method=method, noise=noise)
        base = [1, 0, 2, 1]
        return _per_call(m, [(base, [2, 0, 2, 1]), (base, [1, 0, 2, 2])])
    return build


def _engine(kind: str) -> Callable[[Make], Built]:
    """A compiled engine release (``Query.measurement``) on a small frame; neighbours add or
    remove one privacy unit with adversarial rows (the frame domain's own pairs)."""
    def build(compile_plan: Callable[..., object]) -> Built:
        import polars as pl

        from dpcert.audit.kernel.pairs import measurement_pairs
        from dpcert.core.measures import ApproxDP, PureDP
        from dpcert.frame import aggregates as agg
        from dpcert.frame.session import Session

        del compile_plan  # the query compiles itself; the name only marks availability
        df = pl.DataFrame({"pid": [1, 1, 2, 3, 4, 5, 6], "g": ["a", "b", "a", "b", "a", "a", "b"],
                           "x": [1.0, 2.0, 3.0, 4.0, 5.0, 0.5, 2.5]})
        sess = Session(df, "pid", budget=ApproxDP(10, 1e-3))
        q = sess.query()
        if kind == "public":
            q = (q.group_by("g", keys=["a", "b"]).agg(agg.count(), agg.sum("x", (0, 5)))
                 .bound_contributions(2, 2))
            m = q.measurement(PureDP(1))
        elif kind == "private":
            q = q.group_by("g", keys="private").agg(agg.count()).bound_contributions(1, 1)
            m = q.measurement(ApproxDP(1, 1e-3))
        else:
            q = q.agg(agg.quantile("x", 0.5, bounds=(0, 5))).bound_contributions(1, 1)
            m = q.measurement(PureDP(1))
        return _per_call(m, measurement_pairs(m))
    return build


TARGETS: tuple[Target, ...] = (
    Target("laplace (int)", "make_laplace", _laplace_int),
    Target("laplace (float)", "make_laplace", _laplace_float),
    Target("gaussian (int, zCDP)", "make_gaussian", _gaussian_int),
    Target("gaussian (ε, δ)", "make_gaussian_approx", _gaussian_approx),
    Target("randomized response (bool)", "make_randomized_response_bool", _rr_bool),
    Target("randomized response (k=4)", "make_randomized_response", _rr_k),
    Target("rappor", "make_rappor", _rappor),
    Target("rappor (bloom filters)", "make_rappor_bloom", _rappor_bloom),
    Target("exponential", "make_exponential", _selection()),
    Target("report noisy max (exp)", "make_report_noisy_max", _selection()),
    Target("report noisy max (laplace)", "make_report_noisy_max", _selection(noise="laplace")),
    Target("permute and flip", "make_permute_and_flip", _selection()),
    Target("sparse vector", "make_sparse_vector", _svt),
    Target("quantile", "make_quantile", _quantile),
    Target("histogram", "make_histogram", _histogram),
    Target("partition selection", "make_partition_selection", _partition),
    Target("continual sum (tree, laplace)", "make_continual_sum", _continual("tree", "laplace")),
    Target("continual sum (factorization, gaussian)", "make_continual_sum",
           _continual("factorization", "gaussian")),
    Target("continual sum (streaming, laplace)", "make_continual_sum",
           _continual("streaming", "laplace")),
    Target("engine: grouped count + sum, public keys, bounding",
           "dpcert.frame.compile:compile_plan", _engine("public")),
    Target("engine: count with private keys", "dpcert.frame.compile:compile_plan",
           _engine("private")),
    Target("engine: median", "dpcert.frame.compile:compile_plan", _engine("quantile")),
)
"""Every dpcert mechanism the self-audit covers (the lead reviews this list)."""


def run_target(target: Target, *, seconds: float, confidence: float = 0.95,
               workers: int = 1) -> TargetReport:
    """Build and audit one target within about ``seconds``: the estimation drawn by
    ``workers`` processes where the target is `forkable` (every target samples
    through the OS CSPRNG, so no ``worker_init``), else by this one."""
    import dpcert.mechanisms as mechanisms

    t0 = time.perf_counter()
    if ":" in target.constructor:  # module:attribute (the engine needs the frame extra)
        module, _, attr = target.constructor.partition(":")
        try:
            make = getattr(importlib.import_module(module), attr, None)
        except ImportError:
            make = None
        where = target.constructor
    else:
        make = getattr(mechanisms, target.constructor, None)
        where = f"dpcert.mechanisms.{target.constructor}"
    if make is None:
        return TargetReport(target.name, "not available", None, "-",
                            f"{where} does not exist", 0.0)
    try:
        built = target.build(make)
    except Exception as e:  # a constructor whose signature changed: reported, not hidden
        return TargetReport(target.name, "error", None, "-",
                            f"building failed: {type(e).__name__}: {e}",
                            time.perf_counter() - t0)
    options = AuditOptions(claimed=_claim_of(built.claim_from), seconds=seconds,
                           confidence=confidence, name=target.name,
                           workers=workers if target.forkable else 1)
    result = audit(built.sampler, list(built.pairs), options)
    status = "VIOLATION" if result.violated else "ok"
    return TargetReport(target.name, status, result, built.sampling, "",
                        time.perf_counter() - t0, built)


def _claim_of(m: Measurement) -> Measure:
    from dpcert.core.measures import ZCDP, ApproxDP, PureDP, pair_loss, scalar_loss

    d = m.map(1)
    measure = m.output_measure
    if isinstance(measure, PureDP):
        return PureDP(scalar_loss(d))
    if isinstance(measure, ApproxDP):
        return ApproxDP(*pair_loss(d))
    if isinstance(measure, ZCDP):
        return ZCDP(scalar_loss(d))
    return measure
