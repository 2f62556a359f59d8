"""From a plan and a budget to noise: the budget split, sensitivities and noise scales.

Backend-neutral.  Every noisy quantity of a release is a :class:`Component`; the budget is split
evenly across components (``docs/engine.md`` explains why and the alternative).  With contribution
bounds ``G = max_groups`` and ``R = max_rows_per_group``, removing one privacy unit changes at most
``G`` groups, each by at most (proofs in ``docs/proofs/engine.md``):

=====================  ==========================  =======================
component              per-group change            vector over groups
=====================  ==========================  =======================
row count              R                           L1: G·R,   L2: √G·R
distinct units         1                           L1: G,     L2: √G
sum, in lattice units  R·M (M: max |rounded bound|) L1: G·R·M, L2: √G·R·M
quantile utility       R·max(b−a, a) for q = a/b   G selections
=====================  ==========================  =======================

Under ``PureDP``/``ApproxDP`` the noise is discrete Laplace, under ``ZCDP`` discrete Gaussian;
quantiles use permute-and-flip (McKenna & Sheldon 2020), which is ε-DP and hence ε²/2-zCDP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dpcert._numbers import round_up
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP
from dpcert.errors import InvalidParameter, MeasureMismatch
from dpcert.frame.checks import check_bounds_magnitude, check_scale_limit
from dpcert.frame.plan import Count, CountDistinct, Mean, Quantile, QueryPlan, Sum, Variance

__all__ = ["ENGINE_LATTICE_BITS", "Component", "Calibration", "calibrate", "sqrt_up_rational"]

#: Sums are computed in fixed point with unit 2^k ≈ scale·2^-ENGINE_LATTICE_BITS.
ENGINE_LATTICE_BITS = 36


def sqrt_up_rational(x: Fraction, bits: int = 40) -> Fraction:
    """A rational ``s ≥ √x`` within a relative 2^-bits (exact when possible)."""
    if x < 0:
        raise InvalidParameter(f"x={x} must be >= 0")
    if x == 0:
        return Fraction(0)
    n, d = x.numerator, x.denominator
    rn, rd = math.isqrt(n), math.isqrt(d)
    if rn * rn == n and rd * rd == d:
        return Fraction(rn, rd)
    # scale so the integer square root has `bits` significant bits
    shift = max(0, bits - (n.bit_length() - d.bit_length()) // 2 + 2)
    num = n * (1 << (2 * shift))
    r = math.isqrt(num // d)
    s = Fraction(r + 1, 1 << shift)
    while s * s < x:  # pragma: no cover - isqrt rounding guard
        s += Fraction(1, 1 << shift)
    return s


def sqrt_down_rational(x: Fraction, bits: int = 40) -> Fraction:
    """A rational ``0 < s ≤ √x`` within a relative 2^-bits."""
    up = sqrt_up_rational(x, bits)
    if up * up == x:
        return up
    s = x / up  # s·up = x and up ≥ √x  ⇒  s ≤ √x
    return s


@dataclass(frozen=True)
class Component:
    """One noisy measurement of a release.

    ``kind``: ``count``, ``count_distinct``, ``sum``, ``sumsq``, ``quantile`` or ``select``
    (partition selection).  ``unit`` is the fixed-point unit of the value (1 for counts);
    ``scale`` is the noise parameter *in units* (Laplace b or Gaussian σ); ``cost`` the privacy
    loss in the release measure; ``l1``/``l2`` the sensitivities in units used to get it.
    """

    name: str
    aggregate: str
    kind: str
    noise: str
    unit: Fraction
    scale: Fraction
    l1: Fraction
    l2: Fraction
    cost: Any
    bounds: tuple[Fraction, Fraction] | None = None
    epsilon: Fraction | None = None  # for quantile and selection components
    threshold: int | None = None
    level: Fraction | None = None  # quantile level q
    per_group: Fraction | None = None  # sensitivity of one group's value to one unit

    def describe(self, measure: Measure) -> dict[str, Any]:
        """JSON-friendly rendering for the certificate."""
        out: dict[str, Any] = {
            "name": self.name, "aggregate": self.aggregate, "kind": self.kind,
            "mechanism": self.noise, "unit": str(self.unit), "scale_in_units": str(self.scale),
            "scale": round_up(self.scale * self.unit),
            "sensitivity_l1_units": str(self.l1), "sensitivity_l2_units": str(self.l2),
            "d_in": "1 privacy unit", "d_out": measure.to_json(self.cost),
        }
        if self.bounds is not None:
            out["clamp_units"] = [str(b) for b in self.bounds]
        if self.epsilon is not None:
            out["epsilon"] = str(self.epsilon)
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.level is not None:
            out["quantile"] = str(self.level)
        return out


@dataclass(frozen=True)
class Calibration:
    """All components of a release and the total cost."""

    measure: Measure
    components: tuple[Component, ...]
    total: Any

    def by_aggregate(self, name: str) -> list[Component]:
        """Components of the aggregate with output name ``name``."""
        return [c for c in self.components if c.aggregate == name]

    def selection(self) -> Component | None:
        """The partition-selection component, if keys are private."""
        for c in self.components:
            if c.kind == "select":
                return c
        return None


def _round_to_unit(x: float, unit: Fraction) -> Fraction:
    """x rounded to the nearest multiple of unit (exact)."""
    v = Fraction(x) / unit
    return Fraction(round(v)) * unit


def split_budget(budget: Measure, n_components: Fraction | int, private_keys: bool
                 ) -> tuple[Any, Fraction | None]:
    """Budget per unit of weight (each component's share is this times its weight; partition
    selection, when keys are private, has weight 1 and all of δ), and that δ."""
    if isinstance(budget, (ZCDP, PureDP)):
        if private_keys:
            raise InvalidParameter(
                f"budget={type(budget).__name__}(...) cannot pay for private keys (partition "
                "selection needs δ): use ApproxDP(epsilon, delta) or give the public keys"
            )
        return budget.require_value() / n_components, None
    if isinstance(budget, ApproxDP):
        eps, delta = budget.require_value()
        if private_keys:
            if delta == 0:
                raise InvalidParameter("private keys need delta > 0 in the ApproxDP budget")
            return eps / (n_components + 1), delta
        return eps / n_components, None
    raise MeasureMismatch(f"budget={budget!r}: the engine supports PureDP, ApproxDP and ZCDP")


def calibrate(plan: QueryPlan, budget: Measure) -> Calibration:
    """Noise parameters for every component of ``plan`` under ``budget``."""
    weights = sum((a.weight * a.components for a in plan.aggregates), Fraction(0))
    unit_share, delta = split_budget(budget, weights, plan.public_keys is None)
    zc = isinstance(budget, ZCDP)
    G, R = plan.max_groups, plan.max_rows_per_group
    sqrtG = sqrt_up_rational(Fraction(G))

    def additive(name: str, agg: str, kind: str, per_group: Fraction, unit: Fraction,
                 bounds: tuple[Fraction, Fraction] | None, share: Fraction) -> Component:
        l1, l2 = G * per_group, sqrtG * per_group
        if zc:
            sigma = sqrt_up_rational(l2 * l2 / (2 * share))
            cost: Any = l2 * l2 / (2 * sigma * sigma)
            return Component(name, agg, kind, "discrete_gaussian", unit, sigma, l1, l2, cost,
                             bounds)
        b = l1 / share
        cost = share if not isinstance(budget, ApproxDP) else (share, Fraction(0))
        return Component(name, agg, kind, "discrete_laplace", unit, b, l1, l2, cost, bounds)

    def fixed_point(name: str, agg: str, kind: str, lo: float, hi: float,
                    share: Fraction) -> Component:
        if kind == "sum":
            check_bounds_magnitude(agg, (lo, hi))
        mag = Fraction(max(abs(lo), abs(hi))) or Fraction(1)
        # log2 of the noise scale estimate, from exact rationals (no float overflow for any
        # share): G·R·M/s (Laplace) or sqrt(G·R²·M²/(2s)) (Gaussian)
        est2 = (G * R * mag / share) if not zc else (G * R * R * mag * mag / (2 * share))
        log2 = est2.numerator.bit_length() - est2.denominator.bit_length()
        unit = Fraction(2) ** ((log2 if not zc else log2 // 2) - ENGINE_LATTICE_BITS)
        lo_u, hi_u = _round_to_unit(lo, unit) / unit, _round_to_unit(hi, unit) / unit
        m = max(abs(lo_u), abs(hi_u))
        return additive(name, agg, kind, R * m, unit, (lo_u, hi_u), share)

    comps: list[Component] = []
    for a in plan.aggregates:
        n = a.name
        sh = unit_share * a.weight
        if isinstance(a, Count):
            comps.append(additive(n, n, "count", Fraction(R), Fraction(1), None, sh))
        elif isinstance(a, CountDistinct):
            comps.append(additive(n, n, "count_distinct", Fraction(1), Fraction(1), None, sh))
        elif isinstance(a, Sum):
            comps.append(fixed_point(n, n, "sum", *a.bounds, sh))
        elif isinstance(a, Mean):
            comps.append(fixed_point(f"{n}.sum", n, "sum", *a.bounds, sh))
            comps.append(additive(f"{n}.count", n, "count", Fraction(R), Fraction(1), None, sh))
        elif isinstance(a, Variance):
            lo, hi = a.bounds
            sq_lo = 0.0 if lo <= 0 <= hi else min(lo * lo, hi * hi)
            sq_hi = max(lo * lo, hi * hi)
            comps.append(fixed_point(f"{n}.sum", n, "sum", lo, hi, sh))
            comps.append(fixed_point(f"{n}.sumsq", n, "sumsq", sq_lo, sq_hi, sh))
            comps.append(additive(f"{n}.count", n, "count", Fraction(R), Fraction(1), None, sh))
        elif isinstance(a, Quantile):
            for qname, q in zip(a.names(), a.levels, strict=True):
                comps.append(_quantile_component(qname, n, q, sh, zc, budget, G, R))
        else:  # pragma: no cover - plan validation prevents this
            raise InvalidParameter(f"unsupported aggregate {a!r}")
    if delta is not None:
        comps.append(_selection_component(unit_share, delta, G))
    for c in comps:
        if c.kind != "quantile":
            check_scale_limit(c.name, c.scale)
    total = budget.compose([c.cost for c in comps])
    return Calibration(budget, tuple(comps), total)


def _quantile_component(name: str, agg: str, fq: Fraction, share: Any, zc: bool,
                        budget: Measure, G: int, R: int) -> Component:
    a, b = fq.numerator, fq.denominator
    per_group = Fraction(R * max(b - a, a))
    if zc:
        # permute-and-flip is eps-DP, hence eps^2/2-zCDP (Bun & Steinke 2016, Prop. 1.4)
        eps_total = sqrt_down_rational(2 * share)
        cost: Any = eps_total * eps_total / 2
    else:
        eps_total = share
        cost = share if not isinstance(budget, ApproxDP) else (share, Fraction(0))
    eps_group = eps_total / G  # one unit touches at most G groups' selections
    return Component(name, agg, "quantile", "permute_and_flip", Fraction(1),
                     Fraction(0), Fraction(G) * per_group, Fraction(G) * per_group, cost,
                     None, epsilon=eps_group, level=fq, per_group=per_group)


def _selection_component(share: Fraction, delta: Fraction, G: int) -> Component:
    """Keep a key iff distinct units + DLap(G/ε) ≥ τ, with G·P(Z ≥ τ−1) ≤ δ."""
    scale = Fraction(G) / share
    check_scale_limit("partition_selection", scale)
    qf = math.exp(-float(share) / G)
    # smallest t with G q^t / (1+q) <= delta; +1 guards the float evaluation (logs of the
    # exact numerator and denominator: no underflow for tiny delta)
    log_ratio = (math.log(G) - math.log(delta.numerator) + math.log(delta.denominator)
                 - math.log1p(qf))
    t = math.ceil(log_ratio * G / float(share)) + 1
    t = max(t, 0)
    tau = t + 1
    return Component("partition_selection", "keys", "select", "discrete_laplace", Fraction(1),
                     scale, Fraction(G), sqrt_up_rational(Fraction(G)), (share, delta),
                     None, epsilon=share, threshold=tau)
