"""Neighbouring inputs to audit on.

* Scalar inputs: ``x0`` against ``x0 ± Δ``.
* Vector inputs (query answers, each of sensitivity Δ): the patterns of StatDP (Ding, Wang,
  Wang, Zhang & Kifer, *CCS 2018*, §4.4) around ``[1, ..., 1]``: one above, one below, one above
  rest below, one below rest above, half-half, all above, all below and X-shape.  They are
  neighbours when each answer may move by Δ independently (ℓ∞, e.g. counting queries, as in
  SVT and report-noisy-max), and their mirrors with the odd answer last; with
  ``adjacency="l1"`` (histograms) only the one-coordinate
  patterns are used.
* [`Measurement`][dpcert.core.measurement.Measurement]: pairs at distance 1 under its input metric,
  built from its input domain (bounds, sizes, element type) and checked with
  ``input_metric.distance``.

Both orders of a pair are covered by the auditor, which tries each event in both directions.

Examples
--------
>>> [name for name, _, _ in statdp_pairs(4)][:3]
['one above', 'one below', 'one above rest below']
>>> statdp_pairs(4)[0][1:]
([1.0, 1.0, 1.0, 1.0], [2.0, 1.0, 1.0, 1.0])
>>> scalar_pairs(0.0)
[(0.0, 1.0), (0.0, -1.0)]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from dpcert._validate import check_int, check_positive
from dpcert.core.domains import AtomDomain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.metrics import (
    AbsoluteDistance,
    ChangeOneDistance,
    DiscreteDistance,
    HammingDistance,
    InsertDeleteDistance,
    L1Distance,
    L2Distance,
    SymmetricDistance,
)
from dpcert.errors import InvalidParameter

__all__ = ["Adjacency", "measurement_pairs", "scalar_pairs", "statdp_pairs"]

Adjacency = Literal["linf", "l1"]
Pair = tuple[object, object]


def scalar_pairs(x0: float = 0.0, sensitivity: float = 1.0) -> list[Pair]:
    """``(x0, x0 + Δ)`` and ``(x0, x0 − Δ)``."""
    d = float(check_positive(sensitivity, "sensitivity"))
    x0 = float(x0)
    return [(x0, x0 + d), (x0, x0 - d)]


def statdp_pairs(size: int, sensitivity: float = 1.0, adjacency: Adjacency = "linf"
                 ) -> list[tuple[str, list[float], list[float]]]:
    """StatDP's neighbouring query-answer vectors of length ``size`` (step Δ)."""
    k = check_int(size, "input_size", minimum=1)
    d = float(check_positive(sensitivity, "sensitivity"))
    if adjacency not in ("linf", "l1"):
        raise InvalidParameter(f"adjacency={adjacency!r} must be 'linf' or 'l1'")
    one = [1.0] * k
    half = k // 2 if k > 1 else 1

    def v(*parts: tuple[float, int]) -> list[float]:
        out: list[float] = []
        for value, count in parts:
            out += [1.0 + value * d] * count
        return out[:k] + [1.0] * (k - len(out[:k]))

    pats: list[tuple[str, list[float], list[float]]] = [
        ("one above", one, v((1, 1), (0, k - 1))),
        ("one below", one, v((-1, 1), (0, k - 1))),
    ]
    if adjacency == "linf" and k > 1:
        pats += [
            ("one above rest below", one, v((1, 1), (-1, k - 1))),
            ("one below rest above", one, v((-1, 1), (1, k - 1))),
            ("half-half", one, v((-1, half), (1, k - half))),
            ("all above", one, v((1, k))),
            ("all below", one, v((-1, k))),
            ("x-shape", v((0, half), (-1, k - half)), v((-1, half), (0, k - half))),
            # mirrors: the odd answer last.  Order matters to sequential mechanisms (SVT):
            # the tightest event there is "⊥ on the first k−1 answers, ⊤ on the last", which
            # needs the first k−1 answers moved one way and the last the other way.
            ("rest below last above", one, v((-1, k - 1), (1, 1))),
            ("rest above last below", one, v((1, k - 1), (-1, 1))),
            ("half-half mirrored", one, v((1, half), (-1, k - half))),
        ]
    elif adjacency == "linf":
        pass
    return pats


def _element_values(element: AtomDomain, params: Mapping[str, Any]) -> list[object]:
    """Two or three distinct representative values of an element domain."""
    t = element.type
    if t is bool:
        return [False, True]
    if t is str:
        cats = None
        for key in ("categories", "values", "support"):
            if key in params:
                cats = list(params[key])
                break
        if not cats or len(cats) < 2:
            raise InvalidParameter(
                f"cannot build neighbouring inputs for {element!r} without categories; "
                "pass pairs=[(x, x_prime), ...]"
            )
        return cats[:2]
    if element.bounds is not None:
        lo, hi = element.bounds
        vals: list[object] = [lo, hi]
        if t is int and hi - lo >= 2:
            vals.append(lo + 1)
        return vals
    return [t(0), t(1)]


def measurement_pairs(measurement: Measurement, d_in: int = 1) -> list[Pair]:
    """Pairs of inputs of ``measurement`` at distance at most ``d_in`` (default 1).

    Raises `InvalidParameter` when the input space is not one this
    generator understands (pass explicit pairs then).
    """
    dom, met = measurement.input_domain, measurement.input_metric
    params = getattr(measurement, "params", {})
    pairs: list[Pair] = []
    make = getattr(dom, "neighbour_pairs", None)
    if callable(make):  # a domain that builds its own neighbours (FrameDomain: add/remove a unit)
        pairs = list(make(met, d_in))
    elif isinstance(dom, AtomDomain):
        vals = _element_values(dom, params)
        if isinstance(met, AbsoluteDistance):
            x0 = vals[0] if dom.bounds is not None else dom.type(0)
            step = dom.type(d_in)
            pairs = [(x0, x0 + step), (x0, x0 - step)]
        elif isinstance(met, DiscreteDistance):
            pairs = [(vals[0], vals[1])] + ([(vals[0], vals[2])] if len(vals) > 2 else [])
    elif isinstance(dom, VectorDomain):
        el = dom.element
        vals = _element_values(el, params)
        lo, hi = vals[0], vals[1]
        size = dom.size if dom.size is not None else 4
        if isinstance(met, (L1Distance, L2Distance)):
            zero = el.type(0) if el.bounds is None else lo
            base = [zero] * size
            up = list(base)
            up[0] = base[0] + el.type(d_in)
            pairs = [(base, up)]
        elif isinstance(met, (SymmetricDistance, InsertDeleteDistance)):
            base = ([lo, hi] * size)[:size] if dom.size is None else [lo] * size
            pairs = [(base, [*base, hi]), (base, [*base, lo]), (base, base[:-1])]
            if el.bounds is None and el.type in (int, float):
                # unbounded values: a far-away record exposes the clamp bounds hidden inside
                big = el.type(10**6)
                pairs += [(base, [*base, big]), (base, [*base, -big])]
            if dom.size is not None:
                pairs = []
        elif isinstance(met, (ChangeOneDistance, HammingDistance)):
            a = [lo] * size
            b = [hi] * size
            pairs = [(a, [hi, *a[1:]]), (b, [lo, *b[1:]])]
        elif isinstance(met, DiscreteDistance):
            pairs = [([lo] * size, [hi] * size)]
    pairs = [(x, y) for x, y in pairs
             if dom.member(x) and dom.member(y) and 0 < met.distance(x, y) <= d_in]
    if not pairs:
        raise InvalidParameter(
            f"cannot build neighbouring inputs for {dom!r} under {type(met).__name__}; "
            "pass pairs=[(x, x_prime), ...]"
        )
    return pairs
