"""One quantile per group by permute-and-flip or the exponential mechanism on exact rank counts
(proof: ``docs/proofs/grouped_quantile.md``).

Input: grouped ``at_most`` counts ``cum[g, j] = #{rows of g with value ≤ c_j}`` over ascending
candidates whose last one is the upper clamp bound (so ``cum[g, -1] = n_g``).  For the level
``α = a/b`` the integer utility is ``u_j = −|b·cum_j − a·n|`` (0 when ``c_j`` splits the group in
proportion ``α : 1 − α``).  Each group draws an index by permute-and-flip (McKenna & Sheldon,
"Permute-and-Flip: A new mechanism for differentially private selection", NeurIPS 2020) with
acceptance ``exp(−(u* − u_j)/s)``, drawn exactly as a product of ``Bernoulli(exp(−2^i/s))``
coins over the binary digits of the integer gap.

At ``d = (u, l0, l∞, l1)`` a group where ``r`` rows enter or leave has utilities moving by at
most ``r·p``, ``p = max(a, b − a)`` (each row moves ``cum_j`` and ``n`` by one in the same
direction); ``r ≤ l∞``, at most ``l0`` groups change and their ``r`` sum to at most ``l1``.

* ``selection="permute_and_flip"`` (PureDP): at scale ``s`` a group is ``2rp/s``-DP, so
  ``ε(d) = 2·p·min(l0·l∞, l1) / s``.
* ``selection="exponential"`` (zCDP): each group draws ``j`` with probability
  ``∝ exp(−gap_j/s)`` (exactly: a uniform candidate accepted with an exact
  ``Bernoulli(exp(−gap/s))`` coin, retried until one is accepted).  That is ``2rp/s``-bounded-
  range, hence ``(2rp/s)²/8``-zCDP (Cesar & Rogers 2021, Lemma 3.2), and zCDP adds over the
  groups: ``ρ(d) = p²·Σ r_g² / (2s²) ≤ p²·l∞·min(l0·l∞, l1) / (2s²)``.  For the same scale this
  is 4× less than the ``ε²/2`` of permute-and-flip in one group (and ``4·l0``× less for ``l0``).

With ``utility="cell"`` each candidate ``c_j`` stands for its cell ``(c_{j−1}, c_j]`` (the first
for ``{c_0}``), which holds the ranks ``(cum_{j−1}, cum_j]``; the utility is minus the distance
from the target ``A = a·n + shift`` to the cell's scaled rank range,
``u_j = −max(0, b·cum_{j−1} − A, A − b·cum_j)``, with the first cell open below and the last open
above.  The cells tile every target, so the best utility is always 0 (no plateau of bad cells
can outscore it, whatever the ties); a public integer ``shift`` moves the target by ``shift/b``
rows, which is how the release's interval endpoints are drawn (proof:
``docs/proofs/quantile_interval.md``).  The map is the same: each row moves every argument of the
``max`` by at most ``p``.

Examples
--------
>>> from fractions import Fraction
>>> import numpy as np
>>> from dpcert.backends.base import GroupedStats, StatSpec
>>> from dpcert.core.frames import GroupDistance, GroupedDomain
>>> spec = StatSpec("h", "at_most", "x", Fraction(0), Fraction(10), candidates=(0, 5, 10))
>>> dom = GroupedDomain(("g",), ("h",), (("a",),))
>>> m = make_grouped_quantile(dom, GroupDistance(), spec, Fraction(1, 2), scale=4)
>>> m.map((1, 1, 1, 1)), m.map((2, 2, 2, 2))
(Fraction(1, 2), Fraction(1, 1))
>>> em = make_grouped_quantile(dom, GroupDistance(), spec, Fraction(1, 2), 4, "exponential")
>>> em.map((1, 1, 1, 1)), em.map((2, 2, 2, 2))
(Fraction(1, 32), Fraction(1, 8))
>>> m(GroupedStats([("a",)], {"h": np.array([[0, 100, 100]])})).tolist()[0] in (0, 1, 2)
True
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

import numpy as np

from dpcert._directed import sqrt_up
from dpcert._numbers import Number
from dpcert._types import Array
from dpcert._validate import check_positive
from dpcert.backends.base import GroupedStats, StatSpec
from dpcert.core.domains import Domain
from dpcert.core.frames import GroupDistance, GroupedDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, PureDP
from dpcert.core.metrics import Metric
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch
from dpcert.samplers import bernoulli_exp, uniform_below

__all__ = ["Selection", "Utility", "grouped_quantile_scale", "make_grouped_quantile"]

#: How each group's candidate is drawn from its rank utilities.
Selection = Literal["permute_and_flip", "exponential"]
#: Which rank utility scores the candidates (module docstring).
Utility = Literal["rank", "cell"]


def _gaps(cum: Array, a: int, b: int) -> Array:
    """Per group and candidate, the integer gap ``max u − u_j ≥ 0`` of the rank utilities."""
    top = int(np.max(cum)) if cum.size else 0
    if b * top >= 1 << 62:
        raise InvalidParameter(f"level denominator {b} × count {top} overflows int64")
    cum64 = cum.astype(np.int64)
    util = -np.abs(b * cum64 - a * cum64[:, -1:])
    out: Array = util.max(axis=1, keepdims=True) - util
    return out


def _cell_gaps(cum: Array, a: int, b: int, shift: int) -> Array:
    """Per group and cell, ``max(0, b·cum_{j−1} − A, A − b·cum_j)`` with ``A = a·n + shift``
    (the first cell open below, the last open above): the gap to the best cell, which is 0."""
    top = int(np.max(cum)) if cum.size else 0
    if b * top + abs(shift) >= 1 << 62:
        raise InvalidParameter(f"level denominator {b} × count {top} + shift {shift} "
                               "overflows int64")
    cum64 = cum.astype(np.int64)
    target = a * cum64[:, -1:] + shift
    below = np.maximum(b * cum64[:, :-1] - target, 0)  # cells 1.. : b·cum_{j−1} − A
    above = np.maximum(target - b * cum64[:, :-1], 0)  # cells ..C−2 : A − b·cum_j
    out = np.zeros(cum64.shape, dtype=np.int64)
    out[:, 1:] = below
    out[:, :-1] = np.maximum(out[:, :-1], above)
    return out


def _bit_coins(gaps: Array, scale: Fraction) -> Array:
    """Independent exact ``Bernoulli(exp(−gap/scale))`` coins for integer gaps: the product of
    ``Bernoulli(exp(−2^i/scale))`` coins over the set bits ``i`` of each gap."""
    remaining = gaps.astype(np.int64).copy()
    accept = np.ones(remaining.size, dtype=bool)
    bit = 0
    while remaining.any():
        idx = np.flatnonzero(((remaining & 1) == 1) & accept)
        if idx.size:
            accept[idx] &= bernoulli_exp(Fraction(1 << bit) / scale, idx.size)
        remaining = remaining >> 1
        bit += 1
    return accept


def _em_indices(cum: Array, a: int, b: int, scale: Fraction,
                gaps: Array | None = None) -> Array:
    """One exponential-mechanism index per row of ``cum``: ``P(j) ∝ exp(−gap_j/scale)``, by
    rejection: a uniform candidate accepted with an exact coin, retried until accepted
    (``gaps``: precomputed gaps, default the rank utility's)."""
    gaps = _gaps(cum, a, b) if gaps is None else gaps
    k, c = gaps.shape
    out = np.empty(k, dtype=np.int64)
    pending = np.arange(k)
    t = max(4, min(max(64, 2 * c), (1 << 16) // max(k, 1)))
    while pending.size:
        p = pending.size
        idx = uniform_below(c, p * t).reshape(p, t)
        coins = _bit_coins(gaps[pending[:, None], idx].ravel(), scale).reshape(p, t)
        done = coins.any(axis=1)
        first = coins.argmax(axis=1)
        out[pending[done]] = idx[done, first[done]]
        pending = pending[~done]
    return out


def _indices(cum: Array, a: int, b: int, scale: Fraction,
             gaps: Array | None = None) -> Array:
    """One permute-and-flip index per row of ``cum`` (see module docstring; ``gaps`` as for
    `_em_indices`)."""
    k, c = cum.shape
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    gap = _gaps(cum, a, b) if gaps is None else gaps
    acc = _bit_coins(gap.ravel(), scale).reshape(k, c)
    out = np.empty(k, dtype=np.int64)
    for g in range(k):  # one uniform draw among the accepted candidates per group
        choices = np.flatnonzero(acc[g])
        out[g] = choices[int(uniform_below(choices.size, 1)[0])]
    return out


def grouped_quantile_scale(level: Fraction, d: tuple[int, int, int, int], budget: Fraction,
                           selection: Selection) -> Fraction:
    """The scale at which `make_grouped_quantile` costs at most ``budget`` at the grouped
    distance ``d = (u, l0, l∞, l1)`` (its maps inverted; ``p = max(a, b − a)`` for
    ``level = a/b``, ``rows = min(l0·l∞, l1)``): permute-and-flip ``2·p·rows/ε``, the
    exponential mechanism under zCDP ``p·√(l∞·rows/(2ρ))`` rounded up.

    >>> from fractions import Fraction
    >>> grouped_quantile_scale(Fraction(1, 2), (1, 1, 1, 1), Fraction(1), "permute_and_flip")
    Fraction(2, 1)
    """
    per_row = max(level.numerator, level.denominator - level.numerator)
    rows = min(d[1] * d[2], d[3])
    if selection == "exponential":
        return per_row * sqrt_up(Fraction(d[2] * rows) / (2 * budget))
    return Fraction(2 * per_row * rows) / budget


def make_grouped_quantile(input_domain: Domain, input_metric: Metric, spec: StatSpec,
                          level: Fraction, scale: Number,
                          selection: Selection = "permute_and_flip", utility: Utility = "rank",
                          shift: int = 0) -> Measurement:
    """Per group, the index of a candidate chosen for quantile ``level`` by permute-and-flip
    (PureDP) or the exponential mechanism (zCDP, for zCDP budgets: 4× less ρ at one scale).

    Parameters
    ----------
    input_domain : GroupedDomain containing ``spec.name`` (an ``at_most`` statistic)
    input_metric : GroupDistance
    spec : the ``at_most`` StatSpec (ascending candidates, the last at the upper bound)
    level : rational quantile level ``a/b`` in ``[0, 1]``
    scale : scale ``s > 0`` (acceptance ``exp(−gap/s)``, or weights ``exp(−gap/s)``)
    selection : ``"permute_and_flip"`` or ``"exponential"``
    utility : ``"rank"`` (``−|b·cum_j − a·n|``) or ``"cell"`` (the distance from ``a·n + shift``
        to the cell's rank range; module docstring)
    shift : integer moving the cell utility's target by ``shift/b`` rows (``"cell"`` only)
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
    if selection not in ("permute_and_flip", "exponential"):
        raise InvalidParameter(f"selection={selection!r} must be 'permute_and_flip' or "
                               "'exponential'")
    if utility not in ("rank", "cell"):
        raise InvalidParameter(f"utility={utility!r} must be 'rank' or 'cell'")
    if not isinstance(shift, int) or isinstance(shift, bool) or (shift and utility == "rank"):
        raise InvalidParameter(f"shift={shift!r} must be an int, and 0 with utility='rank'")
    a, b = q.numerator, q.denominator
    per_row = max(a, b - a)
    name = spec.name

    em = selection == "exponential"

    def draw(cum: Array, a: int, b: int, s: Fraction) -> Array:
        gaps = _cell_gaps(cum, a, b, shift) if utility == "cell" else None
        if gaps is None:  # the rank utility: the samplers compute its gaps
            return _em_indices(cum, a, b, s) if em else _indices(cum, a, b, s)
        return _em_indices(cum, a, b, s, gaps) if em else _indices(cum, a, b, s, gaps)

    def function(grouped: GroupedStats) -> Array:
        return draw(np.asarray(grouped.values[name]), a, b, s)

    def batch(grouped: GroupedStats, n: int) -> Array:
        cum = np.asarray(grouped.values[name])
        k = cum.shape[0]
        return draw(np.tile(cum, (n, 1)), a, b, s).reshape(n, k)  # n independent draws

    def pure_map(d: tuple[int, int, int, int]) -> Fraction:
        return Fraction(2 * per_row * min(d[1] * d[2], d[3])) / s

    def zcdp_map(d: tuple[int, int, int, int]) -> Fraction:
        return Fraction(per_row * per_row * d[2] * min(d[1] * d[2], d[3])) / (2 * s * s)

    return Measurement(
        input_domain, input_metric, ZCDP() if em else PureDP(),
        function=function,
        privacy_map=zcdp_map if em else pure_map,
        batch_map=batch,
        name="grouped_quantile",
        params={"stat": name, "level": str(q), "scale": s, "selection": selection,
                "candidates": len(spec.candidates), "utility": utility, "shift": shift},
        proof="grouped_quantile.md",
    )
