"""One quantile per group by permute-and-flip on exact rank counts (proof:
``docs/proofs/grouped_quantile.md``).

Input: grouped ``at_most`` counts ``cum[g, j] = #{rows of g with value ≤ c_j}`` over ascending
candidates whose last one is the upper clamp bound (so ``cum[g, -1] = n_g``).  For the level
``α = a/b`` the integer utility is ``u_j = −|b·cum_j − a·n|`` (0 when ``c_j`` splits the group in
proportion ``α : 1 − α``).  Each group draws an index by permute-and-flip (McKenna & Sheldon,
"Permute-and-Flip: A new mechanism for differentially private selection", NeurIPS 2020) with
acceptance ``exp(−(u* − u_j)/s)``, drawn exactly as a product of ``Bernoulli(exp(−2^i/s))``
coins over the binary digits of the integer gap.

At ``d = (u, l0, l∞)`` one group's utilities move by at most ``Δ(d) = l∞·max(a, b − a)`` (``l∞``
rows enter or leave; each moves ``cum_j`` and ``n`` by one in the same direction), permute-and-
flip at scale ``s`` is ``2Δ/s``-DP per group, and at most ``l0`` groups change:
``ε(d) = l0 · 2 · Δ(d) / s``.

Examples
--------
>>> from fractions import Fraction
>>> import numpy as np
>>> from dpcert.backends.base import GroupedStats, StatSpec
>>> from dpcert.core.frames import GroupDistance, GroupedDomain
>>> spec = StatSpec("h", "at_most", "x", Fraction(0), Fraction(10), candidates=(0, 5, 10))
>>> dom = GroupedDomain(("g",), ("h",), (("a",),))
>>> m = make_grouped_quantile(dom, GroupDistance(), spec, Fraction(1, 2), scale=4)
>>> m.map((1, 1, 1))
Fraction(1, 2)
>>> m(GroupedStats([("a",)], {"h": np.array([[0, 100, 100]])})).tolist()[0] in (0, 1, 2)
True
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from dpcert._validate import check_positive
from dpcert.backends.base import StatSpec
from dpcert.core.domains import Domain
from dpcert.core.frames import GroupDistance, GroupedDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import PureDP
from dpcert.core.metrics import Metric
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch
from dpcert.samplers import bernoulli_exp, uniform_below

__all__ = ["make_grouped_quantile"]


def _indices(cum: np.ndarray[Any, Any], a: int, b: int, scale: Fraction) -> np.ndarray[Any, Any]:
    """One permute-and-flip index per row of ``cum`` (see module docstring)."""
    k, c = cum.shape
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    top = int(np.max(cum)) if cum.size else 0
    if b * top >= 1 << 62:
        raise InvalidParameter(f"level denominator {b} × count {top} overflows int64")
    cum64 = cum.astype(np.int64)
    util = -np.abs(b * cum64 - a * cum64[:, -1:])
    remaining = (util.max(axis=1, keepdims=True) - util).ravel()  # integer gaps >= 0
    accept = np.ones(remaining.size, dtype=bool)
    bit = 0
    while remaining.any():  # exp(−g/s) = Π over set bits i of exp(−2^i/s): exact coins
        idx = np.flatnonzero(((remaining & 1) == 1) & accept)
        if idx.size:
            accept[idx] &= bernoulli_exp(Fraction(1 << bit) / scale, idx.size)
        remaining = remaining >> 1
        bit += 1
    acc = accept.reshape(k, c)
    out = np.empty(k, dtype=np.int64)
    for g in range(k):  # one uniform draw among the accepted candidates per group
        choices = np.flatnonzero(acc[g])
        out[g] = choices[int(uniform_below(choices.size, 1)[0])]
    return out


def make_grouped_quantile(input_domain: Domain, input_metric: Metric, spec: StatSpec,
                          level: Fraction, scale: Any) -> Measurement:
    """Per group, the index of a candidate chosen by permute-and-flip for quantile ``level``.

    Parameters
    ----------
    input_domain : GroupedDomain containing ``spec.name`` (an ``at_most`` statistic)
    input_metric : GroupDistance
    spec : the ``at_most`` StatSpec (ascending candidates, the last at the upper bound)
    level : rational quantile level ``a/b`` in ``[0, 1]``
    scale : permute-and-flip scale ``s > 0`` (acceptance ``exp(−gap/s)``)
    """
    if not isinstance(input_domain, GroupedDomain) or spec.name not in input_domain.stats:
        raise DomainMismatch(f"make_grouped_quantile needs a GroupedDomain with {spec.name!r}, "
                             f"got {input_domain!r}")
    if not isinstance(input_metric, GroupDistance):
        raise MetricMismatch(f"make_grouped_quantile needs GroupDistance, got "
                             f"{type(input_metric).__name__}")
    if spec.kind != "at_most" or len(spec.candidates) < 2:
        raise InvalidParameter(f"spec={spec.name!r} must be an at_most statistic with >= 2 "
                               "candidates")
    q = Fraction(level)
    if not 0 <= q <= 1:
        raise InvalidParameter(f"level={level!r} must be in [0, 1]")
    s = check_positive(scale, "scale")
    a, b = q.numerator, q.denominator
    per_row = max(a, b - a)
    name = spec.name

    def function(grouped: Any) -> np.ndarray[Any, Any]:
        return _indices(np.asarray(grouped.values[name]), a, b, s)

    def batch(grouped: Any, n: int) -> np.ndarray[Any, Any]:
        cum = np.asarray(grouped.values[name])
        k = cum.shape[0]
        return _indices(np.tile(cum, (n, 1)), a, b, s).reshape(n, k)  # n independent draws

    def privacy_map(d: tuple[int, int, int]) -> Fraction:
        return Fraction(d[1] * 2 * d[2] * per_row) / s

    return Measurement(
        input_domain, input_metric, PureDP(),
        function=function,
        privacy_map=privacy_map,
        batch_map=batch,
        name="grouped_quantile",
        params={"stat": name, "level": str(q), "scale": s,
                "candidates": len(spec.candidates)},
        proof="grouped_quantile.md",
    )
