"""Select one integer statistic of the groups as a vector: GroupDistance → L1 or L2
(proof: ``docs/proofs/frame_stats.md``).

With ``d = (u, l0, l∞, l1)`` (units changed, groups changed, most rows changed in one group,
rows changed in all groups), one group's statistic moves by at most ``c`` and one row moves it by
at most ``k``:

================  =====================  ===  =========================================
kind              per-group change ``c``  k    why
================  =====================  ===  =========================================
``count``         ``l∞``                  1    one row moves a row count by 1
``unit_count``    ``min(u, l∞)``          1    a group's distinct units change by at most
                                               the units changed, and by at most its rows
                                               changed
``fixed_sum``     ``l∞·M``                M    each row's integer is in ``[lo, hi]``, ``M``
                                               its largest magnitude
``fixed_sum_sq``  ``l∞·M``                M    the same, for the squared values' integers
================  =====================  ===  =========================================

At most ``l0`` groups move, each by at most ``c``, and all together by at most ``k·l1``, so the
vector moves by ``L1 = min(l0·c, k·l1)`` (for ``unit_count`` also at most ``l0``: ``l0``
bounds the changed (unit, group) pairs, and each moves one distinct count by one) and, as
``‖v‖₂² ≤ max|v_g|·‖v‖₁``, by ``L2 = √(c·L1)`` (a rational upper root within 2^-40).  With
contribution bounding's ``(d, dG, dR, dGR)`` both grow linearly in ``d`` (``l0·c`` alone grows
as ``d²``).  The integer
``make_laplace`` / ``make_gaussian`` then apply unchanged.

Examples
--------
>>> from fractions import Fraction
>>> from dpcert.backends.base import StatSpec
>>> from dpcert.core.frames import GroupDistance, GroupedDomain
>>> dom = GroupedDomain(("g",), ("n", "s"), (("a",), ("b",)))
>>> n = make_select_stat(dom, GroupDistance(), StatSpec("n", "count"), "L1")
>>> n.map((1, 2, 3, 6)), n.map((2, 4, 6, 12)), n.output_domain
(Fraction(6, 1), Fraction(12, 1), VectorDomain(AtomDomain(int), size=2))
>>> s = StatSpec("s", "fixed_sum", "x", Fraction(-1), Fraction(5, 2), exponent=-1)
>>> make_select_stat(dom, GroupDistance(), s, "L2").map((1, 4, 1))
Fraction(10, 1)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

import numpy as np

from dpcert._directed import sqrt_up
from dpcert._types import Array
from dpcert.backends._fixed import fixed_bounds
from dpcert.backends.base import GroupedStats, StatSpec
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.frames import GroupDistance, GroupedDomain
from dpcert.core.metrics import L1Distance, L2Distance, Metric
from dpcert.core.partial import PartialConstructor, partial
from dpcert.core.transformation import Transformation
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch

__all__ = ["centre_of", "centred_values", "fixed_magnitude", "make_select_stat",
           "per_group_change", "per_row_change", "sqrt_up", "stat_sensitivity",
           "then_select_stat"]

Norm = Literal["L1", "L2"]


def fixed_magnitude(spec: StatSpec) -> int:
    """``M``: the largest magnitude of one row's integer under the fixed-point value rule.

    Examples
    --------
    >>> fixed_magnitude(StatSpec("s", "fixed_sum", "x", Fraction(-3), Fraction(2), exponent=0))
    3
    >>> fixed_magnitude(StatSpec("q", "fixed_sum_sq", "x", Fraction(-3), Fraction(2), exponent=1))
    4
    """
    if spec.lower is None or spec.upper is None:
        raise InvalidParameter(f"stat {spec.name!r}: {spec.kind} needs lower and upper bounds")
    if spec.kind in ("fixed_sum", "fixed_sum_sq"):
        rl, rh = fixed_bounds(spec)
        return max(abs(rl), abs(rh))
    raise InvalidParameter(f"stat {spec.name!r}: kind={spec.kind!r} is not a fixed-point sum")


def centre_of(spec: StatSpec) -> int:
    """``C``: the integer centre ``⌊(rl + rh)/2⌋`` of a fixed-point statistic's row integers
    ``[rl, rh]``; a centred sum adds ``v − C`` per row, of magnitude ``⌈(rh − rl)/2⌉``.

    Examples
    --------
    >>> s = StatSpec("s", "fixed_sum", "x", Fraction(0), Fraction(100), exponent=0)
    >>> centre_of(s), per_row_change(s), per_row_change(s, centred=True)
    (50, 100, 50)
    """
    rl, rh = fixed_bounds(spec)
    return (rl + rh) // 2


def centred_values(values: object, counts: object, centre: int) -> Array:
    """``values − centre·counts`` exactly (int64 when it fits, else Python ints)."""
    big: Array = (np.asarray(values).astype(object)
                                 - centre * np.asarray(counts).astype(object))
    if all(abs(int(v)) < 1 << 62 for v in big.tolist()):
        out: Array = big.astype(np.int64)
        return out
    return big


def per_row_change(spec: StatSpec, centred: bool = False) -> int:
    """``k``: how much one row can move one group's statistic (its centred form: ``v − C``)."""
    if spec.kind not in ("fixed_sum", "fixed_sum_sq"):
        return 1
    if centred:
        rl, rh = fixed_bounds(spec)
        c = centre_of(spec)
        return max(rh - c, c - rl)
    return fixed_magnitude(spec)


def per_group_change(spec: StatSpec, d: tuple[int, ...], centred: bool = False) -> int:
    """``c``: how much one group's statistic can move when ``d = (u, l0, l∞, l1)``."""
    u, li = d[0], d[2]
    if spec.kind == "count":
        return li
    if spec.kind == "unit_count":
        return min(u, li)
    if spec.kind in ("fixed_sum", "fixed_sum_sq"):
        return li * per_row_change(spec, centred)
    raise InvalidParameter(
        f"stat {spec.name!r}: kind={spec.kind!r} cannot be selected as a vector (quantile "
        "counts go to make_grouped_quantile)")


def stat_sensitivity(spec: StatSpec, d: tuple[int, ...], norm: Norm,
                     centred: bool = False) -> Fraction:
    """The L1 or L2 change of the statistic's vector at ``d = (u, l0, l∞, l1)`` (module
    docstring): ``min(l0·c, k·l1)``, or ``√(c·min(l0·c, k·l1))``.

    Examples
    --------
    >>> n = StatSpec("n", "count")
    >>> [stat_sensitivity(n, (d, 3 * d, 2 * d, 6 * d), "L1") for d in (1, 2, 3)]
    [Fraction(6, 1), Fraction(12, 1), Fraction(18, 1)]
    >>> stat_sensitivity(n, (2, 8, 4, 16), "L2")  # √(4·min(32, 16)); l0·c² alone gives √128
    Fraction(8, 1)
    """
    c = per_group_change(spec, d, centred)
    total = min(d[1] * c, per_row_change(spec, centred) * d[3])
    if spec.kind == "unit_count":  # a unit moves each of its groups' counts by at most one
        total = min(total, d[1])
    return Fraction(total) if norm == "L1" else sqrt_up(c * total)


def make_select_stat(input_domain: Domain, input_metric: Metric, spec: StatSpec,
                     norm: Norm = "L1", centre_with: str | None = None) -> Transformation:
    """The vector of statistic ``spec.name`` over the groups (in the groups' order), or, with
    ``centre_with``, of the centred sum ``spec.name − C·centre_with`` (`centre_of`).

    Parameters
    ----------
    input_domain : GroupedDomain containing ``spec.name``
    input_metric : GroupDistance
    spec : the statistic's StatSpec (its kind and bounds give the per-group change)
    norm : ``"L1"`` (for Laplace) or ``"L2"`` (for Gaussian)
    centre_with : name of the groups' row ``count`` (over the same rows as the sum), to centre
        a fixed-point sum: each row then adds ``v − C`` (half the range of ``v``) instead of
        ``v``; the mean or variance reads the count anyway, so the centre costs nothing
    """
    if not isinstance(input_domain, GroupedDomain):
        raise DomainMismatch(f"make_select_stat needs a GroupedDomain, got {input_domain!r}")
    if not isinstance(input_metric, GroupDistance):
        raise MetricMismatch(f"make_select_stat needs GroupDistance, got "
                             f"{type(input_metric).__name__}")
    if spec.name not in input_domain.stats:
        raise InvalidParameter(f"stat={spec.name!r} is not one of {list(input_domain.stats)}")
    if norm not in ("L1", "L2"):
        raise InvalidParameter(f"norm={norm!r} must be 'L1' or 'L2'")
    per_group_change(spec, (1, 1, 1, 1))  # validates the kind and bounds now
    centred = centre_with is not None
    if centred and (spec.kind not in ("fixed_sum", "fixed_sum_sq")
                    or centre_with not in input_domain.stats):
        raise InvalidParameter(f"centre_with={centre_with!r}: centring needs a fixed-point sum "
                               f"(stat {spec.name!r} is {spec.kind}) and a count among "
                               f"{list(input_domain.stats)}")
    size = None if input_domain.keys is None else len(input_domain.keys)
    out = VectorDomain(AtomDomain(int), size=size)
    name = spec.name
    centre = centre_of(spec) if centred else 0

    def function(grouped: GroupedStats) -> Array:
        if centre_with is not None:  # centred
            return centred_values(grouped.values[name], grouped.values[centre_with], centre)
        return np.asarray(grouped.values[name], dtype=np.int64)

    def stability_map(d: tuple[int, int, int, int]) -> Fraction:
        return stat_sensitivity(spec, d, norm, centred)

    return Transformation(
        input_domain, input_metric, out, L1Distance() if norm == "L1" else L2Distance(),
        function=function,
        stability_map=stability_map,
        name="select_stat",
        params={"stat": name, "kind": spec.kind, "norm": norm, "centre": centre,
                "magnitude": per_row_change(spec, centred)},
        proof="frame_stats.md",
    )


def then_select_stat(spec: StatSpec, norm: Norm = "L1",
                     centre_with: str | None = None) -> PartialConstructor:
    """Partial form of `make_select_stat`."""
    return partial(make_select_stat, "select_stat", spec, norm, centre_with)
