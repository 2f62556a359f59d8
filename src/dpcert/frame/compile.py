"""Compile a query plan into one core [`Measurement`][dpcert.core.measurement.Measurement].

The chain is built only from core constructors, and its privacy map is the only source of what
a release charges (design: ``design/engine-compile.md``; OpenDP and Tumult compile the same way)::

    (FrameDomain, UnitDistance(unit))
      >> frame_filter(plan.filters)                        # row-local, allow-listed
      >> bound_contributions(by, G, R, key)                 # UnitDistance -> GroupDistance
      >> group_by(keys, stats)                              # one backend pass, exact integers
      >> composition([select_stat(s) >> laplace | gaussian for each stat])   # public keys
         | keyed_release(count, parts)                      # private keys: the count selects
      >> to_table                                           # post-processing: means, intervals

Policy (not privacy): the budget is split across the *distinct* noisy statistics in proportion
to the aggregates' weights -- a mean and a count share one noisy row count (issue item 5), and
with private keys the released count is the selection statistic, so no budget goes to a
separate selection.  Fixed-point sums use the unit ``2^e`` with ``2^e ≤ 2^-20 ×`` the noise
scale.  Before returning, the compiled map is checked against the budget (Tumult's self-check):
``budget.compare(m.map(1), budget)``, else `BudgetExceeded`.

Examples
--------
>>> from dpcert.core.measures import PureDP
>>> from dpcert.frame.plan import Count, QueryPlan
>>> plan = QueryPlan((Count(),), group_keys=("g",), public_keys=(("a",), ("b",)))
>>> m = compile_plan(plan, PureDP(1), schema={"g": "str"}, backend=None)
>>> m.map(1), m.params["stats"]
(Fraction(1, 1), ['count'])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from dpcert._types import FloatArray
from dpcert.backends.base import FrameOps, StatSpec
from dpcert.combinators.composition import make_composition
from dpcert.combinators.conversions import make_pureDP_to_approxDP
from dpcert.combinators.keyed import make_keyed_release
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.frames import FrameDomain, UnitDistance
from dpcert.core.measurement import Measurement
from dpcert.core.measures import Measure
from dpcert.core.metrics import L1Distance, L2Distance, Metric, scalar_distance, tuple_distance
from dpcert.core.params import param_number
from dpcert.core.transformation import Transformation
from dpcert.errors import BudgetExceeded, InvalidParameter
from dpcert.frame.admit import Admission, make_admit
from dpcert.frame.autobounds import compile_auto
from dpcert.frame.checks import check_scale_limit
from dpcert.frame.measure_policy import MeasurePolicy, measure_policy
from dpcert.frame.plan import Count, CountDistinct, Mean, Quantile, QueryPlan, Sum, Variance
from dpcert.frame.postprocess import ReleaseTable, mean_interval, variance_interval
from dpcert.frame.quantile_interval import endpoint_margin, endpoint_shift, quantile_columns
from dpcert.mechanisms.gaussian import gaussian_sigma, make_gaussian
from dpcert.mechanisms.grouped_quantile import (
    Selection,
    grouped_quantile_scale,
    make_grouped_quantile,
)
from dpcert.mechanisms.laplace import laplace_scale, make_laplace
from dpcert.mechanisms.threshold import keyed_threshold
from dpcert.transformations.frame import (
    make_bound_contributions,
    make_frame_filter,
    make_group_by,
    make_select_stat,
    per_group_change,
)
from dpcert.transformations.frame.stats import centre_of

if TYPE_CHECKING:
    from dpcert.frame.aliases import EngineFrame, Neighbours
    from dpcert.samplers import EntropySource

__all__ = ["CompiledPrefix", "NoisyStat", "compile_plan", "compile_transformation", "plan_stats"]

#: Fixed-point unit of sums: at most 2^-PRECISION_BITS of the noise scale.
PRECISION_BITS = 20

#: A quantile's selections: (role in ``uses``, side, statistic prefix); with an interval all
#: three share its weight equally (``docs/proofs/quantile_interval.md``).
QUANTILE_ROLES = (("quantile", 0, "quantile"), ("low", -1, "quantile_low"),
                  ("high", 1, "quantile_high"))


@dataclass(frozen=True)
class NoisyStat:
    """One distinct noisy statistic of a plan: kind, column, value bounds and budget weight."""

    name: str
    kind: str
    column: str | None
    bounds: tuple[Fraction, Fraction] | None
    weight: Fraction
    #: quantile components only: the level and the number of grid candidates
    level: Fraction | None = None
    candidates: int = 0
    #: quantile components only: 0 the value, −1/+1 the interval's lower/upper endpoint
    side: int = 0


def _stat(stats: dict[str, NoisyStat], name: str, kind: str, column: str | None,
          bounds: tuple[float, float] | None, weight: Fraction) -> str:
    b = None if bounds is None else (Fraction(bounds[0]), Fraction(bounds[1]))
    old = stats.get(name)
    stats[name] = NoisyStat(name, kind, column, b,
                            weight if old is None else max(old.weight, weight))
    return name


def plan_stats(plan: QueryPlan) -> tuple[dict[str, NoisyStat], dict[str, dict[str, str]]]:
    """The distinct noisy statistics of ``plan`` and, per output, which statistics it reads.

    A row count needed by several aggregates (count, mean, variance) is one statistic, with the
    largest of their weights.  With private keys and no count, a distinct-unit count (or row
    count when rows are units) is added as the selection statistic.
    """
    stats: dict[str, NoisyStat] = {}
    uses: dict[str, dict[str, str]] = {}
    rows_are_units = plan.privacy_unit is None
    for a in plan.aggregates:
        w = Fraction(a.weight)
        if isinstance(a, Count) or (isinstance(a, CountDistinct) and rows_are_units):
            uses[a.name] = {"n": _stat(stats, "count", "count", None, None, w)}
        elif isinstance(a, CountDistinct):
            uses[a.name] = {"n": _stat(stats, "units", "unit_count", plan.privacy_unit, None, w)}
        elif isinstance(a, (Sum, Mean, Variance)):
            key = (f"{a.column}[auto]" if a.bounds is None
                   else f"{a.column}[{a.bounds[0]!r},{a.bounds[1]!r}]")
            u = {"s": _stat(stats, f"sum:{key}", "fixed_sum", a.column, a.bounds, w)}
            if isinstance(a, (Mean, Variance)):
                u["n"] = _stat(stats, "count", "count", None, None, w)
            if isinstance(a, Variance):
                u["q"] = _stat(stats, f"sumsq:{key}", "fixed_sum_sq", a.column, a.bounds, w)
            uses[a.name] = u
        elif isinstance(a, Quantile):
            uses.update(_quantile_stats(stats, a, w))
        else:  # pragma: no cover - plan validation prevents this
            raise InvalidParameter(f"unsupported aggregate {a!r}")
    if plan.public_keys is None and "count" not in stats and "units" not in stats:
        kind = "count" if rows_are_units else "unit_count"
        _stat(stats, "units" if kind == "unit_count" else "count", kind,
              plan.privacy_unit if kind == "unit_count" else None, None, Fraction(1))
    return stats, uses


def _quantile_stats(stats: dict[str, NoisyStat], a: Quantile, w: Fraction
                    ) -> dict[str, dict[str, str]]:
    """The selections of quantile aggregate ``a`` (added to ``stats``) and, per output, which
    it reads: the value, and with an interval its two ends (a third of the weight each)."""
    b = None if a.bounds is None else (Fraction(a.bounds[0]), Fraction(a.bounds[1]))
    roles = QUANTILE_ROLES if a.interval else QUANTILE_ROLES[:1]
    uses: dict[str, dict[str, str]] = {}
    for qname, q in zip(a.names(), a.qs, strict=True):
        uses[qname] = {}
        for role, side, prefix in roles:
            name = f"{prefix}:{qname}"
            stats[name] = NoisyStat(name, "quantile", a.column, b, w / len(roles),
                                    Fraction(repr(q)), a.candidates, side)
            uses[qname][role] = name
    return uses


def _split(budget: Measure, stats: Mapping[str, NoisyStat], private: bool
           ) -> tuple[dict[str, Fraction], Fraction | None]:
    budget.require_value("budget")
    total_w = sum((s.weight for s in stats.values()), Fraction(0))
    total, delta = measure_policy(budget).split(private=private)
    return {n: total * s.weight / total_w for n, s in stats.items()}, delta


def _exponent(s: NoisyStat, share: Fraction, G: int, R: int, zcdp: bool,
              centred: bool = False) -> int:
    """Fixed-point exponent e with 2^e ≈ 2^-PRECISION_BITS × the real noise scale (a centred
    sum's rows move it by half their range, so its exponent does not depend on a shift)."""
    if s.bounds is None:
        return 0
    lo, hi = s.bounds
    mag = max(abs(lo), abs(hi))
    if s.kind == "fixed_sum_sq":
        c = square_shift(s.bounds)
        lo, hi = lo - c, hi - c
        mag = max(lo * lo, hi * hi)
        if centred:
            low = Fraction(0) if lo <= 0 <= hi else min(lo * lo, hi * hi)
            mag = (mag - low) / 2
    elif centred:
        mag = (hi - lo) / 2
    if mag == 0:
        return 0
    scale = (G * R * mag / share) if not zcdp else (
        math.sqrt(G) * R * float(mag) / math.sqrt(2 * float(share)))
    return math.floor(math.log2(float(scale))) - PRECISION_BITS


def _noise(sel: Transformation, share: Fraction, d1: tuple[int, ...], zcdp: bool
           ) -> Measurement:
    sens = Fraction(scalar_distance(sel.map(d1)))
    space = VectorDomain(AtomDomain(int), size=sel.output_domain.size)  # type: ignore[attr-defined]
    if zcdp:
        return make_gaussian(space, L2Distance(), gaussian_sigma(sens, share))
    return make_laplace(space, L1Distance(), laplace_scale(sens, share))


def compile_plan(plan: QueryPlan, budget: Measure, *, schema: Mapping[str, str],
                 backend: FrameOps | None, key: bytes | None = None,
                 alpha: Fraction | float = 0.05, source: EntropySource | None = None,
                 neighbours: Neighbours | None = None,
                 admission: Admission | None = None) -> Measurement:
    """The release of ``plan`` as one Measurement on ``(FrameDomain(schema), UnitDistance)``.

    Parameters
    ----------
    plan : QueryPlan
    budget : PureDP(ε), ApproxDP(ε, δ) or ZCDP(ρ) -- the most the release may cost at one unit
    schema : column → logical type of the data (``backend.schema(data)``)
    backend : FrameOps running the data work (``None`` builds the map only)
    key : 16-byte bounding key, or None for a fresh CSPRNG key per run
    alpha : interval level of the output table
    source : entropy for fresh bounding keys (tests only)
    neighbours : optional ``d_in ↦ [(frame, frame'), ...]`` for auditing (``FrameDomain``)
    admission : the plan admitted on its data (`dpcert.frame.admit.admit_plan`); releases
        always pass one, so code after the charge reads internal names and admitted types only

    Returns
    -------
    Measurement
        Output: a `ReleaseTable` ``{column: list}`` with the
        key columns, then per output name ``<name>``, ``<name>_ci_low``, ``<name>_ci_high``.
        Its ``map(1)`` is what the release costs.  A plan with omitted bounds compiles to the
        adaptive release of `dpcert.frame.autobounds`.
    """
    if plan.is_auto:
        return compile_auto(plan, budget, schema=schema, backend=backend, key=key, alpha=alpha,
                            source=source, neighbours=neighbours, admission=admission,
                            compile_plan=compile_plan)
    pre = compile_transformation(plan, budget, schema=schema, backend=backend, key=key,
                                 source=source, neighbours=neighbours, admission=admission)
    t, specs, stats, shares = pre.transformation, pre.specs, pre.stats, pre.shares
    delta = pre.delta
    private, zcdp, uses = plan.public_keys is None, pre.policy.zcdp, pre.uses
    d1 = tuple_distance(t.map(1))
    gdom, gmet = t.output_domain, t.output_metric
    selected = {n: make_select_stat(gdom, gmet, sp, pre.policy.norm,
                                    "count" if n in pre.centred else None)
                for n, sp in specs.items() if sp.kind != "at_most"}
    noises = {n: _noise(sel, shares[n], d1, zcdp) for n, sel in selected.items()}
    for n, nm in noises.items():  # before any charge: the exact samplers' scale limit
        check_scale_limit(n, Fraction(param_number(nm.params["scale"], "scale")))
    parts: dict[str, Measurement] = {n: sel >> noises[n]  # type: ignore[misc]
                                     for n, sel in selected.items()}
    a = Fraction(alpha)
    for n, s in stats.items():
        if s.kind == "quantile":
            parts[n] = _quantile(gdom, gmet, specs[_grid(s).name], s, shares[n], d1, zcdp, a)
    names = list(parts)
    inner: Measurement
    if private:
        assert delta is not None
        cname = "count" if "count" in specs else "units"
        scale = param_number(noises[cname].params["scale"], "scale")
        c1 = per_group_change(specs[cname], d1)
        tau = keyed_threshold(scale, c1, d1[1], delta)
        inner = make_keyed_release(gdom, gmet, specs[cname], scale, tau,
                                   {n: p for n, p in parts.items() if n != cname})
    else:
        comp = make_composition([parts[n] for n in names])
        inner = make_pureDP_to_approxDP(comp) if pre.policy.approx else comp
    units = {n: Fraction(2) ** sp.exponent for n, sp in specs.items()}
    half = {n: {lvl: float(noises[n].accuracy(a / lvl) * units[n]) for lvl in (1, 2, 3)}
            for n in noises}
    grids = {n: (np.array(specs[_grid(s).name].candidates, dtype=np.float64)
                 * float(units[_grid(s).name])) for n, s in stats.items()
             if s.kind == "quantile"}
    offsets = {n: float(centre_of(specs[n]) * units[n]) for n in pre.centred}
    integral = {n for n, s in stats.items() if s.kind == "quantile" and s.bounds is not None
                and schema.get(s.column or "") == "int"
                and all(b.denominator == 1 for b in s.bounds)}  # clamped rows are integers
    table = _to_table(plan, uses, units, half, names, private, grids, offsets, integral)
    m = t >> inner >> table
    assert isinstance(m, Measurement)
    m = Measurement(m.input_domain, m.input_metric, m.output_measure, m.function,
                    m.privacy_map, name="query", event_map=m.event_map,
                    batch_map=m.batch_map, children=(m,), wiring="chain",
                    params={"plan": plan.describe(), "stats": names,
                            "scales": {n: str(param_number(noises[n].params["scale"], "scale")
                                              * units[n])
                                       for n in noises},
                            "exponents": {n: specs[n].exponent for n in noises},
                            "half_widths": {n: half[n][1] for n in noises},
                            "quantile_margins": {n: str(endpoint_margin(parts[n]))
                                                 for n, s in stats.items()
                                                 if s.kind == "quantile" and s.side},
                            "threshold": inner.params.get("threshold")}, proof="engine.md")
    spent = m.map(1)
    if not budget.compare(spent, budget.require_value("budget")):
        raise BudgetExceeded(  # pragma: no cover - a compiler bug, never expected
            f"compiled plan costs {budget.describe(spent)} > budget {budget!r}")
    return m


@dataclass(frozen=True)
class CompiledPrefix:
    """The data part of a compiled plan: filter >> bound >> group_by, and what it computes."""

    transformation: Transformation
    specs: dict[str, StatSpec]
    stats: dict[str, NoisyStat]
    shares: dict[str, Fraction]
    delta: Fraction | None
    #: what the budget's measure decides (noise, norm, selection)
    policy: MeasurePolicy
    #: per output, the statistics it reads (:func:`plan_stats`, computed once per compile)
    uses: Mapping[str, Mapping[str, str]]
    #: fixed-point sums released centred: ``sum − C·count`` (their mean or variance reads the
    #: row count ``"count"`` anyway; a plain ``Sum`` of the same column keeps the raw sum)
    centred: frozenset[str] = frozenset()


def compile_transformation(plan: QueryPlan, budget: Measure, *, schema: Mapping[str, str],
                           backend: FrameOps | None, key: bytes | None = None,
                           source: EntropySource | None = None,
                           neighbours: Neighbours | None = None,
                           admission: Admission | None = None) -> CompiledPrefix:
    """The transformation prefix of `compile_plan` (same arguments): ``(FrameDomain,
    UnitDistance) → (GroupedDomain, GroupDistance)``, exact integer statistics per group, with
    the StatSpecs (fixed-point exponents) that ``budget`` implies.  With an ``admission``
    (`dpcert.frame.admit.admit_plan`, what every release uses) the chain starts with
    `make_admit` and every later step reads internal names only.
    The neighbour harness (`dpcert.frame.neighbours`) runs exactly this on neighbouring
    tables."""
    if plan.max_groups is None or plan.max_rows_per_group is None or plan.auto_columns:
        raise InvalidParameter("compile_transformation needs every bound: choose them first "
                               "(dpcert.frame.autobounds.concrete_plan)")
    private = plan.public_keys is None
    stats, uses = plan_stats(plan)
    shares, delta = _split(budget, stats, private)
    policy = measure_policy(budget)
    zcdp = policy.zcdp
    by = tuple(plan.group_keys)
    G = plan.max_groups if by else 1
    R = plan.max_rows_per_group
    specs: dict[str, StatSpec] = {}
    centred = _centred(plan, stats, uses)
    for n, s in stats.items():
        if s.kind == "quantile":
            h = _grid(s)
            specs[h.name] = h
            continue
        e = _exponent(s, shares[n], G, R, zcdp, n in centred)
        shift = square_shift(s.bounds) if s.kind == "fixed_sum_sq" and s.bounds else Fraction(0)
        specs[n] = StatSpec(n, s.kind, s.column,  # type: ignore[arg-type]
                            None if s.bounds is None else s.bounds[0],
                            None if s.bounds is None else s.bounds[1], exponent=e,
                            shift=shift)
    domain = FrameDomain(tuple(schema.items()), _schema_reader(backend), neighbours=neighbours)
    metric = UnitDistance(plan.privacy_unit)
    head: Transformation | None = None
    filters: tuple[object, ...] = plan.filters
    public: tuple[tuple[object, ...], ...] | None = plan.public_keys
    if admission is not None:  # from here on: internal names and admitted types only
        head = make_admit(domain, metric, admission)
        domain, metric = head.output_domain, head.output_metric  # type: ignore[assignment]
        specs = {n: _internal_spec(sp, admission) for n, sp in specs.items()}
        by, filters, public = admission.keys, admission.predicates, admission.public_keys
    values = tuple(dict.fromkeys(s.column for s in specs.values()  # what the stats read
                                 if s.column and s.kind in ("fixed_sum", "fixed_sum_sq",
                                                            "at_most")))
    t: Any = make_bound_contributions(domain, metric, by, G, R, backend=backend, key=key,
                                      value_columns=values, source=source)
    if filters:
        if backend is None:
            raise InvalidParameter("filters need a backend to check them (backend=None)")
        t = make_frame_filter(domain, metric, filters, backend=backend) >> t
    if head is not None:
        t = head >> t
    t = t >> make_group_by(t.output_domain, t.output_metric, by, public,
                           list(specs.values()), backend=backend)
    assert isinstance(t, Transformation)
    return CompiledPrefix(t, specs, stats, shares, delta, policy, uses, centred)


def _centred(plan: QueryPlan, stats: Mapping[str, NoisyStat],
             uses: Mapping[str, Mapping[str, str]]) -> frozenset[str]:
    """The fixed-point sums to release centred: those with a row count beside them and no
    plain ``Sum`` reading them (a sum rebuilt as ``centred + C·count`` would carry the count's
    noise)."""
    if "count" not in stats:
        return frozenset()
    raw = {uses[a.name]["s"] for a in plan.aggregates if isinstance(a, Sum)}
    return frozenset(n for n, s in stats.items()
                     if s.kind in ("fixed_sum", "fixed_sum_sq") and n not in raw)


def square_shift(bounds: tuple[Fraction, Fraction]) -> Fraction:
    """The ``shift`` of a variance's sum of squares: the float64 nearest the bounds' midpoint,
    so each row adds ``(x − c)² ≤ ((hi − lo)/2)²`` (up to the rounding of ``c``) whatever the
    bounds' offset from 0.

    >>> square_shift((Fraction(0), Fraction(100)))
    Fraction(50, 1)
    """
    return Fraction(float((bounds[0] + bounds[1]) / 2))


def _internal_spec(spec: StatSpec, admission: Admission) -> StatSpec:
    """``spec`` reading the admitted column (values: the ``float`` column; distinct units: the
    admitted unit)."""
    if spec.column is None:
        return spec
    col = admission.unit if spec.kind == "unit_count" else admission.values[spec.column]
    return replace(spec, column=col)


def _grid(s: NoisyStat) -> StatSpec:
    """The ``at_most`` statistic of a quantile: ``candidates`` equally spaced points of the
    bounds in fixed point (unit 2^e at most 2^-8 of the spacing, so they stay distinct)."""
    assert s.bounds is not None and s.column is not None
    lo, hi = s.bounds
    c = s.candidates
    step = (hi - lo) / (c - 1)
    e = (math.floor(math.log2(float(step))) - 8) if step > 0 else 0
    unit = Fraction(2) ** e
    cands = tuple(round((lo + j * step) / unit) for j in range(c))
    return StatSpec(f"hist:{s.column}[{lo},{hi}]:{c}", "at_most", s.column, lo, hi,
                    exponent=e, candidates=cands)


def _quantile(gdom: Domain, gmet: Metric, hist: StatSpec, s: NoisyStat, share: Fraction,
              d1: tuple[int, ...], zcdp: bool, alpha: Fraction) -> Measurement:
    """One quantile per group at the scale that spends ``share`` at one unit: permute-and-flip
    under ε budgets, the exponential mechanism (bounded range: ε²/8, not ε²/2) under zCDP.
    Cell utility; an interval endpoint (``s.side = ∓1``) targets the rank ``q·n ∓ K/b``
    (`endpoint_shift` at ``alpha/2``)."""
    assert s.level is not None
    sel: Selection = "exponential" if zcdp else "permute_and_flip"
    scale = grouped_quantile_scale(s.level, d1, share, sel)  # type: ignore[arg-type]
    shift = s.side * endpoint_shift(scale, len(hist.candidates), alpha) if s.side else 0
    return make_grouped_quantile(gdom, gmet, hist, s.level, scale, sel, "cell", shift)


def _schema_reader(backend: FrameOps | None) -> Callable[[EngineFrame], Mapping[str, str]]:
    if backend is None:
        return lambda frame: {}
    return backend.schema


def _to_table(plan: QueryPlan, uses: Mapping[str, Mapping[str, str]],
              units: Mapping[str, Fraction], half: Mapping[str, Mapping[int, float]],
              names: list[str], private: bool,
              grids: Mapping[str, FloatArray],
              offsets: Mapping[str, float], integral: frozenset[str] | set[str]
              ) -> Callable[[Any], ReleaseTable]:
    """The post-processing step: noisy integers → estimates and intervals per output (a centred
    sum's per-row offset ``C·2^e`` is added back to the mean or variance it feeds)."""
    by = list(plan.group_keys)
    public = plan.public_keys
    values = tuple(plan.output_names())

    def real(v: npt.ArrayLike, n: str) -> FloatArray:
        arr = np.asarray(v)
        if arr.dtype == object:
            return np.array([float(Fraction(int(x)) * units[n]) for x in arr.tolist()])
        return arr.astype(np.float64) * float(units[n])  # units are powers of two: exact

    def to_table(out: Any) -> ReleaseTable:
        if private:
            keys, noisy = out["keys"], {n: out[n] for n in names}
        else:
            assert public is not None
            keys, noisy = list(public), dict(zip(names, out, strict=True))
        cols: dict[str, list[Any]] = {c: [k[i] for k in keys] for i, c in enumerate(by)}
        for a in plan.aggregates:
            if isinstance(a, Quantile):
                for qname in a.names():
                    u = uses[qname]
                    v, lo, hi = quantile_columns(
                        grids[u["quantile"]], noisy[u["quantile"]], noisy.get(u.get("low", "")),
                        noisy.get(u.get("high", "")), integer=u["quantile"] in integral)
                    cols[qname] = v.tolist()
                    cols[f"{qname}_ci_low"] = lo.tolist()
                    cols[f"{qname}_ci_high"] = hi.tolist()
                continue
            u = uses[a.name]
            if isinstance(a, Mean):
                assert a.bounds is not None  # a compiled plan has every bound
                off = offsets.get(u["s"], 0.0)
                v, lo, hi = mean_interval(real(noisy[u["s"]], u["s"]), real(noisy[u["n"]], u["n"]),
                                          half[u["s"]][2], half[u["n"]][2],
                                          (a.bounds[0] - off, a.bounds[1] - off))
                v, lo, hi = v + off, lo + off, hi + off
            elif isinstance(a, Variance):  # the variance of x − c: Σ(x − c)² is what q sums
                assert a.bounds is not None
                c = float(square_shift((Fraction(a.bounds[0]), Fraction(a.bounds[1]))))
                v, lo, hi = variance_interval(
                    real(noisy[u["s"]], u["s"]), real(noisy[u["q"]], u["q"]),
                    real(noisy[u["n"]], u["n"]), half[u["s"]][3], half[u["q"]][3],
                    half[u["n"]][3], (a.bounds[0] - c, a.bounds[1] - c),
                    shift=(offsets.get(u["s"], 0.0) - c, offsets.get(u["q"], 0.0)))
            else:
                n = u.get("s", u.get("n", ""))
                v = real(noisy[n], n)
                lo, hi = v - half[n][1], v + half[n][1]
            cols[a.name] = v.tolist()
            cols[f"{a.name}_ci_low"] = np.asarray(lo).tolist()
            cols[f"{a.name}_ci_high"] = np.asarray(hi).tolist()
        return ReleaseTable(cols, values=values, private=private)

    to_table.__name__ = "to_table"
    return to_table
