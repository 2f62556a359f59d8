"""Releases whose bounds are chosen privately: omitted ``bounds=`` and contribution bounds.

A plan with ``bounds=None`` on a value aggregate, or ``max_groups``/``max_rows_per_group`` of
``None`` (``bound_contributions()`` without arguments), compiles to one measurement that spends
``plan.auto_share`` of the budget choosing them and the rest on the release with the chosen
values (adaptive composition; proof: ``docs/proofs/frame_autobounds.md``).  Each choice is the
exponential mechanism on a rank score (`make_edge_rank`)
over one number per privacy unit (`dpcert.transformations.frame.profile`), so one unit
moves each score by at most one whatever its number of rows:

1. ``max_groups``: a bound with about ``k`` units having more groups, from each unit's number
   of groups; ``max_rows_per_group`` likewise from each unit's largest number of rows in one
   group (candidates: `count_candidates`);
2. value bounds of a column, over a signed geometric grid (four candidates per doubling,
   ±2^-20 to ±2^64, and 0): first the median of the units' largest values (the anchor, a fifth
   of the column's share), then the lower bound with about ``k`` units whose smallest value
   lies below it and the upper bound with about ``k`` units whose largest value lies above it
   (two fifths each) -- the approximate-bounds idea of Google's library (Wilson et al.,
   PoPETs 2020) with a rank score in place of a noisy histogram;
3. the release itself (`compile_plan`) with the chosen values and
   the remaining budget.

Every bound choice also weighs a candidate by its distance beyond the anchor (0 for
contribution bounds, the released median for value bounds) to the power ``−PRIOR`` (a base
measure fixed before the choice reads the data,
`dpcert.mechanisms.edge_rank.prior_exponents`): the noise a bound costs
grows with that distance, so the choice trades it against the units left beyond, and
candidates far beyond the data (the grid reaches 2^64) weigh almost nothing.  ``k =
TARGET_K = 4``: a bound leaves a few units beyond it -- the clipping bias, which Amin et al.
(ICML 2019) trade against noise.  ``benchmarks/autobounds_limit.py`` computes the expected
error of these choices exactly on the benchmark's tables and others.

Budget: ``auto_share`` of ε (of ρ under zCDP, each choice then converted from ε-DP; δ all goes
to the release) is split over the chosen quantities (``G``, ``R``, one set of three choices per
column) in proportion to ``ln`` of their numbers of candidates (a choice among ``C`` misses by
about ``ln(C)/ε`` units); with public keys ``G`` has at most as many candidates as keys, and
with one key it is 1 without a choice.  The map at ``d`` units composes the selections' own
maps with the release's budget by group privacy (every release compiled for chosen values
costs at most its budget at one unit: ``compile_plan`` checks it).

Examples
--------
>>> from dpcert.core.measures import PureDP
>>> from dpcert.frame.plan import Count, Sum, QueryPlan
>>> plan = QueryPlan((Count(), Sum("x", None)), ("g",), (("a",),), "u", None, None)
>>> quantities(plan)
['max_groups', 'max_rows_per_group', 'bounds:x']
>>> shares, main = split_auto(plan, PureDP(1))
>>> {q: round(float(v), 4) for q, v in shares.items()}, main
({'max_groups': 0.0, 'max_rows_per_group': 0.1169, 'bounds:x': 0.1831}, PureDP(0.7))
>>> from dpcert.frame.compile import compile_plan
>>> m = compile_plan(plan, PureDP(1), schema={"g": "str", "u": "int", "x": "float"},
...                  backend=None)
>>> m.map(1), [c.name for c in m.children[-1].children]
(Fraction(1, 1), ['select(max_rows_per_group)', 'select(bounds:x, median)', \
'select(bounds:x, lower)', 'select(bounds:x, upper)', 'release(chosen bounds)'])
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from dpcert.backends.base import FrameOps
from dpcert.combinators.conversions import make_pureDP_to_zCDP
from dpcert.combinators.group import group_privacy_map
from dpcert.core.frames import FrameDomain, UnitDistance
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP, pair_loss, scalar_loss
from dpcert.core.transformation import Transformation
from dpcert.errors import BackendUnavailable, InvalidParameter
from dpcert.frame.admit import Admission, make_admit
from dpcert.frame.plan import Aggregate, QueryPlan
from dpcert.frame.postprocess import ReleaseTable
from dpcert.mechanisms.edge_rank import Side, make_edge_rank
from dpcert.transformations.frame import make_frame_filter
from dpcert.transformations.frame.profile import (
    COUNT_CAP,
    count_candidates,
    make_unit_extremes,
    make_unit_profile,
    value_candidates,
)

__all__ = ["COLUMN_PARTS", "PRIOR", "TARGET_K", "SelectionStep", "candidates_of", "compile_auto",
           "concrete_plan", "fixed_choices", "order_bounds", "quantities", "selection_epsilon",
           "selection_steps", "split_auto"]

#: Units each choice aims to leave beyond its bound: the bias–variance optimum leaves a few
#: (Amin et al. 2019); the prior, not ``k``, keeps the bound near the data.
TARGET_K = 4
#: The prior's ``γ``: a candidate twice as far beyond the anchor weighs ``2^−γ`` as much (the
#: noise a bound costs grows with it).  Chosen with ``benchmarks/autobounds_limit.py``.
PRIOR = Fraction(4)
#: A value column's selection budget: the median (the prior's anchor), the lower bound, the
#: upper bound.
COLUMN_PARTS = {"anchor": Fraction(1, 5), "lower": Fraction(2, 5), "upper": Fraction(2, 5)}


def quantities(plan: QueryPlan) -> list[str]:
    """What ``plan`` leaves to choose: ``max_groups``, ``max_rows_per_group``, then
    ``bounds:<column>`` per value column without bounds."""
    return [*plan.auto_contributions, *(f"bounds:{c}" for c in plan.auto_columns)]


def candidates_of(plan: QueryPlan, q: str) -> tuple[float, ...]:
    """The candidates of quantity ``q``: contribution bounds on `count_candidates` (with
    public keys ``max_groups`` stops at their number: a unit cannot use more), values on
    `value_candidates`."""
    if q == "max_groups" and plan.public_keys is not None:
        return count_candidates(max(1, len(plan.public_keys)))
    if q in ("max_groups", "max_rows_per_group"):
        return count_candidates()
    return value_candidates()


def _weight(candidates: int) -> Fraction:
    """``ln(C)`` as a rational (0 for one candidate): an exponential-mechanism choice among
    ``C`` candidates misses by about ``ln(C)/ε`` units, so the shares follow it."""
    return Fraction(math.log(candidates)).limit_denominator(1 << 20) if candidates > 1 else \
        Fraction(0)


def split_auto(plan: QueryPlan, budget: Measure) -> tuple[dict[str, Fraction], Measure]:
    """The budget of each chosen quantity (ε, or ρ under zCDP; ``auto_share`` of the budget
    split in proportion to ``ln`` of each one's number of candidates, 0 for a quantity with a
    single candidate) and what is left for the release."""
    weights = {q: _weight(len(candidates_of(plan, q))) for q in quantities(plan)}
    total_w = sum(weights.values(), Fraction(0))
    part = plan.auto_share if total_w else Fraction(0)
    value = budget.require_value("budget")
    if isinstance(budget, ApproxDP):
        eps, delta = pair_loss(value, "budget")
        main: Measure = ApproxDP(eps - eps * part, delta)
        sel = eps * part
    elif isinstance(budget, (PureDP, ZCDP)):
        sel = scalar_loss(value, "budget") * part
        main = type(budget)(scalar_loss(value, "budget") - sel)
    else:
        raise InvalidParameter(f"budget={budget!r}: the engine supports PureDP, ApproxDP, ZCDP")
    return {q: sel * w / total_w if total_w else Fraction(0) for q, w in weights.items()}, main


def selection_epsilon(share: Fraction, zcdp: bool) -> Fraction:
    """The ε of one exponential-mechanism choice spending ``share``: ``share`` itself, or under
    zCDP the largest ``ε ≤ √(2ρ)`` on a 2^-40 grid (so ``ε²/2 ≤ ρ``)."""
    if not zcdp:
        return share
    scale = 1 << 40
    return Fraction(math.isqrt(math.floor(2 * share * scale * scale)), scale)


def order_bounds(lo: float, hi: float, candidates: Sequence[float]) -> tuple[float, float]:
    """``(lo, hi)`` with ``lo < hi``: when the choices cross or meet, the wider of the two
    candidates around them.

    >>> order_bounds(4.0, 2.0, (1.0, 2.0, 4.0, 8.0)), order_bounds(8.0, 8.0, (1.0, 2.0, 8.0))
    ((2.0, 4.0), (2.0, 8.0))
    """
    if lo < hi:
        return lo, hi
    lo, hi = hi, lo
    if lo == hi:
        i = list(candidates).index(lo)
        return (lo, candidates[i + 1]) if i + 1 < len(candidates) else (candidates[i - 1], lo)
    return lo, hi


def concrete_plan(plan: QueryPlan, chosen: Mapping[str, Any]) -> QueryPlan:
    """``plan`` with the chosen values: ``chosen["max_groups"]``, ``["max_rows_per_group"]`` and
    ``["bounds"][column]``."""
    bounds = chosen.get("bounds", {})

    def fill(a: Aggregate) -> Aggregate:
        if getattr(a, "bounds", 0) is None:
            return replace(a, bounds=tuple(bounds[a.column]))  # type: ignore[call-arg,attr-defined]
        return a

    return replace(plan, aggregates=tuple(fill(a) for a in plan.aggregates),
                   max_groups=chosen.get("max_groups", plan.max_groups),
                   max_rows_per_group=chosen.get("max_rows_per_group",
                                                 plan.max_rows_per_group))


def _stand_in(dom: Any, met: Any, measure: Measure, at_one: Any, params: dict[str, Any]
              ) -> Measurement:
    """The certificate step of the release built on the chosen values: its map is group
    privacy of its budget at one unit (``compile_plan`` checks every such release)."""
    def not_run(_: Any) -> Any:  # pragma: no cover - the parent builds and runs the release
        raise InvalidParameter("the release on chosen bounds runs inside its query only")

    return Measurement(dom, met, measure, function=not_run,
                       privacy_map=lambda d: (at_one if d == 1 else
                                              group_privacy_map(measure, at_one, int(d))),
                       name="release(chosen bounds)", params=params,
                       proof="frame_autobounds.md")


def _prefix(plan: QueryPlan, schema: Mapping[str, str], backend: FrameOps | None,
            neighbours: Any, admission: Admission | None
            ) -> tuple[Transformation | None, Any, Any, tuple[str, ...], dict[str, str]]:
    """admit >> filter (as in the release), the space after it, the group columns and the
    value columns under the names it gives them."""
    domain: Any = FrameDomain(tuple(schema.items()), _schema_reader(backend),
                              neighbours=neighbours)
    metric: Any = UnitDistance(plan.privacy_unit)
    pre: Any = None
    by, filters = tuple(plan.group_keys), tuple(plan.filters)
    values = {c: c for c in plan.auto_columns}
    if admission is not None:
        pre = make_admit(domain, metric, admission)
        domain, metric = pre.output_domain, pre.output_metric
        by, filters, values = admission.keys, admission.predicates, dict(admission.values)
    if filters:
        if backend is None:
            raise InvalidParameter("filters need a backend to check them (backend=None)")
        f = make_frame_filter(domain, metric, filters, backend=backend)
        pre = f if pre is None else pre >> f
    return pre, domain, metric, by, values


@dataclass(frozen=True)
class SelectionStep:
    """One choice: the 1-stable transformation to one number per unit, and the
    exponential-mechanism parameters on it."""

    name: str
    transformation: Transformation
    candidates: tuple[Any, ...]
    side: Side
    epsilon: Fraction
    k: int
    #: The step whose released value anchors the prior (``None``: anchored at 0).
    anchor: str | None = None
    prior: Fraction = PRIOR

    def measurement(self, zcdp: bool, anchor: float = 0.0) -> Measurement:
        """``transformation >> make_edge_rank`` with the prior anchored at ``anchor``
        (converted to zCDP under a ρ budget); the map does not depend on ``anchor``."""
        t = self.transformation
        em = make_edge_rank(t.output_domain, t.output_metric, self.candidates, self.k,
                            self.side, self.epsilon, prior=self.prior, anchor=anchor)
        m: Any = t >> em
        if zcdp:
            m = make_pureDP_to_zCDP(m)
        label = (self.name.replace(":lower", ", lower").replace(":upper", ", upper")
                 .replace(":anchor", ", median"))
        return Measurement(m.input_domain, m.input_metric, m.output_measure, m.function,
                           m.privacy_map, name=f"select({label})", children=(m,),
                           wiring="shared", params={"k": self.k, "side": self.side,
                                                    "candidates": len(self.candidates),
                                                    "epsilon": str(self.epsilon),
                                                    "prior": str(self.prior),
                                                    "anchor": self.anchor or 0},
                           proof="frame_autobounds.md")


def selection_steps(plan: QueryPlan, budget: Measure, *, schema: Mapping[str, str],
                    backend: FrameOps | None, neighbours: Any = None,
                    admission: Admission | None = None
                    ) -> tuple[Transformation | None, list[SelectionStep]]:
    """``admit >> filter`` as in the release (``None`` when there is neither), and the choices
    of ``plan`` after it in order (``max_groups``, ``max_rows_per_group``, then per column
    ``bounds:<c>:anchor`` (the median), ``:lower`` and ``:upper``, both anchored at the
    median).  The neighbour harness runs exactly these."""
    shares, _ = split_auto(plan, budget)
    zcdp = isinstance(budget, ZCDP)
    pre, domain, metric, by, values = _prefix(plan, schema, backend, neighbours, admission)

    def step(name: str, t: Transformation, cands: tuple[Any, ...], side: Side,
             part: Fraction, anchor: str | None = None) -> SelectionStep:
        eps = selection_epsilon(part, zcdp)
        return SelectionStep(name, t, cands, side, eps, TARGET_K, anchor,
                             PRIOR if side != "middle" else Fraction(0))

    out: list[SelectionStep] = []
    for q, what in (("max_groups", "groups"), ("max_rows_per_group", "rows")):
        cands = candidates_of(plan, q)
        if q in plan.auto_contributions and len(cands) > 1:  # else fixed (`fixed_choices`)
            t = make_unit_profile(domain, metric, by, what,  # type: ignore[arg-type]
                                  backend=backend)
            out.append(step(q, t, cands, "upper", shares[q]))
    for c in plan.auto_columns:
        share = shares[f"bounds:{c}"]
        for side, which in (("middle", "max"), ("lower", "min"), ("upper", "max")):
            t = make_unit_extremes(domain, metric, values[c], which,  # type: ignore[arg-type]
                                   backend=backend)
            part = COLUMN_PARTS["anchor" if side == "middle" else side]
            name = f"bounds:{c}:{'anchor' if side == 'middle' else side}"
            out.append(step(name, t, value_candidates(), side,  # type: ignore[arg-type]
                            share * part, None if side == "middle" else f"bounds:{c}:anchor"))
    return pre, out


def fixed_choices(plan: QueryPlan) -> dict[str, int]:
    """Omitted contribution bounds with a single candidate (``max_groups`` with one public
    key): set without a choice or budget."""
    return {q: int(candidates_of(plan, q)[0]) for q in plan.auto_contributions
            if len(candidates_of(plan, q)) == 1}


def _schema_reader(backend: FrameOps | None) -> Any:
    return (lambda frame: {}) if backend is None else backend.schema


def compile_auto(plan: QueryPlan, budget: Measure, *, schema: Mapping[str, str],
                 backend: FrameOps | None, key: bytes | None = None, alpha: Any = 0.05,
                 source: Any = None, neighbours: Any = None,
                 admission: Admission | None = None, compile_plan: Any) -> Measurement:
    """The release of a plan with omitted bounds (arguments as
    `compile_plan`, which passes itself as ``compile_plan``):
    the choices, then the release."""
    if backend is not None and not hasattr(backend, "unit_profile"):
        raise BackendUnavailable(
            f"bounds chosen privately need the Polars backend; the {backend.name} backend "
            "cannot run them: give bounds= on every aggregate and bound_contributions(G, R)")
    shares, main = split_auto(plan, budget)
    share = sum(shares.values(), Fraction(0))
    zcdp = isinstance(budget, ZCDP)
    pre, steps = selection_steps(plan, budget, schema=schema, backend=backend,
                                 neighbours=neighbours, admission=admission)
    fixed = fixed_choices(plan)
    if not steps:  # nothing left to choose: the release with the fixed values
        plain: Measurement = compile_plan(concrete_plan(plan, fixed), budget, schema=schema,
                                          backend=backend, key=key, alpha=alpha, source=source,
                                          neighbours=neighbours, admission=admission)
        return plain
    sels = {s.name: s.measurement(zcdp) for s in steps}
    grid = value_candidates()
    # before any charge: the release compiles (limits, memory) at both ends of every choice
    for n, b in ((1, (0.0, 2.0**-20)), (COUNT_CAP, (-(2.0**64), 2.0**64))):
        ends: dict[str, Any] = {"bounds": {c: b for c in plan.auto_columns},
                                **{q: n for q in plan.auto_contributions}}
        compile_plan(concrete_plan(plan, ends), main, schema=schema, backend=backend,
                     key=key, alpha=alpha, admission=admission)
    dom, met = steps[0].transformation.input_domain, steps[0].transformation.input_metric
    parts = [*sels.values(),
             _stand_in(dom, met, type(budget)(), main.require_value("budget"),
                       {"budget": repr(main), "built": "compile_plan with the chosen values"})]

    def inner_map(d: Any) -> Any:
        losses = [p.map(d) for p in parts]
        if isinstance(budget, ApproxDP):
            losses = [x if isinstance(x, tuple) else (scalar_loss(x), Fraction(0))
                      for x in losses]
        return budget.compose(losses)

    def function(frame: Any) -> ReleaseTable:
        seen = frame if pre is None else pre(frame)  # what the choices read
        out: dict[str, Any] = {}
        for s in steps:  # in order: an anchor is released before the bounds it anchors
            m = sels[s.name] if s.anchor is None else s.measurement(zcdp, float(out[s.anchor]))
            out[s.name] = m(seen)
        chosen: dict[str, Any] = {q: int(out[q]) if q in out else fixed[q]
                                  for q in plan.auto_contributions}
        chosen["bounds"] = {
            c: order_bounds(float(out[f"bounds:{c}:lower"]), float(out[f"bounds:{c}:upper"]),
                            grid)
            for c in plan.auto_columns}
        release = compile_plan(concrete_plan(plan, chosen), main, schema=schema,
                               backend=backend, key=key, alpha=alpha, source=source,
                               neighbours=neighbours, admission=admission)
        table = release(frame)
        assert isinstance(table, ReleaseTable)
        table.chosen = chosen  # type: ignore[attr-defined]
        return table

    inner = Measurement(dom, met, type(budget)(), function=function, privacy_map=inner_map,
                        name="choose bounds, then release", children=tuple(parts),
                        wiring="shared", proof="frame_autobounds.md",
                        params={"auto": quantities(plan), "auto_share": str(plan.auto_share),
                                "selection_budget": str(share), "release_budget": repr(main)})
    head: tuple[Any, ...] = () if pre is None else (pre,)
    return Measurement(head[0].input_domain if head else dom,
                       head[0].input_metric if head else met, type(budget)(),
                       function=function,
                       privacy_map=lambda d: inner.map(pre.map(d) if pre is not None else d),
                       name="query", children=(*head, inner), wiring="chain",
                       params={"plan": plan.describe(), "auto": quantities(plan),
                               "auto_share": str(plan.auto_share),
                               "selection_budget": str(share), "release_budget": repr(main),
                               "stats": [], "scales": {}, "half_widths": {},
                               "threshold": None},
                       proof="frame_autobounds.md")
