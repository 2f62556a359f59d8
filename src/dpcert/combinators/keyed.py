"""Release grouped statistics with *private* keys: the released noisy count is the selection
statistic (proof: ``docs/proofs/keyed_release.md``).

A key is released, with every part's noisy value, iff its noisy count ``n + Z ≥ τ``,
``Z ~ DLap(b)``.  There is no separate selection measurement and no separate selection budget:
the count's noise does both jobs, as in OpenDP's thresholded Laplace (Wilson et al., "Differentially
Private SQL with Bounded User Contribution", PoPETs 2020; Desfontaines, Voss, Gipson & Mandayam,
"Differentially private partition selection", PoPETs 2022).

Privacy at ``d = (u, l0, l∞, l1)``: the parts restricted to keys present in both neighbours are
``ε(d) = Σ parts' maps``-DP; a key present on one side only has count at most
``c = per_group_change(count, d)`` there, and at most ``l0`` such keys exist, so some is released
with probability at most ``δ(d) = l0 · P(Z ≥ τ − c)``; the release is ``(ε(d), δ(d))``-DP.
`dpcert.mechanisms.threshold.keyed_threshold` picks τ for a target δ.

Examples
--------
>>> from fractions import Fraction
>>> from dpcert.backends.base import StatSpec
>>> from dpcert.core.frames import GroupDistance, GroupedDomain
>>> dom = GroupedDomain(("g",), ("n",), None)
>>> m = make_keyed_release(dom, GroupDistance(), StatSpec("n", "count"), scale=2, threshold=28)
>>> eps, delta = m.map((1, 1, 1))
>>> eps, delta < Fraction(1, 10**6)
(Fraction(1, 2), True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

from dpcert._numbers import Number
from dpcert._types import Array
from dpcert._validate import check_int, check_positive
from dpcert.backends.base import GroupedStats, StatSpec
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.frames import GroupDistance, GroupedDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ApproxDP, PureDP
from dpcert.core.metrics import L1Distance, Metric
from dpcert.errors import DomainMismatch, InvalidParameter, MeasureMismatch, MetricMismatch
from dpcert.mechanisms.laplace import make_laplace
from dpcert.mechanisms.threshold import laplace_tail
from dpcert.transformations.frame.stats import make_select_stat, per_group_change

__all__ = ["KeyedRelease", "make_keyed_release"]

#: Output: the released keys and, per part, the noisy values of those keys (same order).
KeyedRelease = dict[str, list[object] | Array]


def make_keyed_release(input_domain: Domain, input_metric: Metric, count: StatSpec,
                       scale: Number, threshold: int,
                       parts: Mapping[str, Measurement] | None = None) -> Measurement:
    """Noisy ``count`` per present key; release the keys whose noisy count is ``≥ threshold``
    together with every part's noisy values for them.

    Parameters
    ----------
    input_domain : GroupedDomain with private keys (``keys=None``)
    input_metric : GroupDistance
    count : StatSpec of kind ``count`` or ``unit_count`` (the selection statistic)
    scale : discrete Laplace scale of the count's noise
    threshold : int τ
    parts : name → PureDP measurement on the same space, returning one value per group in the
        groups' order (e.g. ``select_stat >> laplace``); released only for kept keys

    Returns
    -------
    Measurement
        ApproxDP; output ``{"keys": [...], count.name: ndarray, **{name: ndarray}}``.
    """
    if not isinstance(input_domain, GroupedDomain) or input_domain.keys is not None:
        raise DomainMismatch(
            f"make_keyed_release needs a GroupedDomain with private keys, got {input_domain!r}")
    if not isinstance(input_metric, GroupDistance):
        raise MetricMismatch(f"make_keyed_release needs GroupDistance, got "
                             f"{type(input_metric).__name__}")
    if count.kind not in ("count", "unit_count"):
        raise InvalidParameter(f"count={count.name!r} has kind {count.kind!r}; the selection "
                               "statistic must be a count or unit_count")
    b = check_positive(scale, "scale")
    tau = check_int(threshold, "threshold", minimum=1)
    others = dict(parts or {})
    if count.name in others:
        raise InvalidParameter(f"parts has a part named {count.name!r}, the count's name")
    for name, m in others.items():
        if not isinstance(m, Measurement) or not isinstance(m.output_measure, PureDP):
            raise MeasureMismatch(f"parts[{name!r}] must be a PureDP Measurement")
        if m.input_domain != input_domain or m.input_metric != input_metric:
            raise DomainMismatch(f"parts[{name!r}] is on another space: {m!r}")
    selector = make_select_stat(input_domain, input_metric, count, "L1") >> make_laplace(
        VectorDomain(AtomDomain(int)), L1Distance(), b)
    assert isinstance(selector, Measurement)
    named = {count.name: selector, **others}

    def release(draws: Mapping[str, object], keys: Sequence[object]) -> KeyedRelease:
        keep = np.asarray(draws[count.name]) >= tau
        out: KeyedRelease = {"keys": [k for k, kp in zip(keys, keep, strict=True) if kp]}
        for name, v in draws.items():
            out[name] = np.asarray(v)[keep]
        return out

    def function(grouped: GroupedStats) -> KeyedRelease:
        return release({n: m.function(grouped) for n, m in named.items()}, list(grouped.keys))

    def batch(grouped: GroupedStats, n: int) -> list[KeyedRelease]:
        draws = {name: m.sample(grouped, n) for name, m in named.items()}
        keys = list(grouped.keys)
        return [release({name: d[i] for name, d in draws.items()}, keys) for i in range(n)]

    def privacy_map(d: tuple[int, int, int]) -> tuple[Fraction, Fraction]:
        if d[0] == 0:
            return Fraction(0), Fraction(0)
        eps = PureDP().compose([m.map(d) for m in named.values()])
        c = per_group_change(count, d)
        delta = min(Fraction(1), d[1] * laplace_tail(b, tau - c))
        return Fraction(eps), delta

    return Measurement(
        input_domain, input_metric, ApproxDP(),
        function=function,
        privacy_map=privacy_map,
        name="keyed_release",
        params={"count": count.name, "scale": b, "threshold": tau, "parts": list(named)},
        batch_map=batch,
        children=tuple(named.values()), wiring="shared", proof="keyed_release.md",
    )
