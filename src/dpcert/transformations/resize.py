"""Resize a vector to a known size: keep a uniformly random subset, or pad with a constant.

Stability (``docs/proofs/resize.md``).  The output has the public size ``size`` and is measured
under `ChangeOneDistance`.  If the input has ``n ≥ size`` records, a uniformly
random ``size``-subset is kept (never "the first rows", which would bias the result); if
``n < size``, ``size − n`` copies of ``constant`` are added.  For inputs one record apart (added,
removed or changed) the outputs can be *coupled* so that they differ in one record, so
``d_out = d_in``.  Like OpenDP's ``make_resize`` this is a randomized transformation: its
stability holds for that coupling, which is what the privacy proof of any measurement chained
after it needs (the measurement's output distribution is a mixture over coupled pairs).

The random subset is drawn exactly: the records are ordered by independent uniform 62-bit keys
from `dpcert.samplers.uniform_below`, redrawn on the (probability < n²·2⁻⁶²) event of a tie,
which makes the order a uniformly random permutation.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float, bounds=(0.0, 1.0))), dp.SymmetricDistance())
>>> t = space >> dp.t.then_resize(3, constant=0.5)
>>> sorted(t([1.0]).tolist()), t.output_domain, t.map(1)
([0.5, 0.5, 1.0], VectorDomain(AtomDomain(float, bounds=(0.0, 1.0)), size=3), 1)
>>> len(t([0.1, 0.2, 0.3, 0.4, 0.5]))
3
"""

from __future__ import annotations

import numpy as np

from dpcert._types import Array
from dpcert._validate import check_int
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain, VectorDomain
from dpcert.core.metrics import ChangeOneDistance, Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.samplers import uniform_below
from dpcert.transformations._spaces import vector_space

__all__ = ["make_resize", "random_order", "then_resize"]


def random_order(n: int) -> Array:
    """A uniformly random permutation of ``range(n)`` (exact; see module docstring)."""
    while True:
        keys = uniform_below(1 << 62, n)
        order = np.argsort(keys, kind="stable")
        if n < 2 or not np.any(np.diff(keys[order]) == 0):
            return order


def make_resize(input_domain: Domain, input_metric: Metric, size: int,
                constant: bool | int | float | str) -> Transformation:
    """Resize to exactly ``size`` records (random subset, or pad with ``constant``).

    Parameters
    ----------
    input_domain : VectorDomain
    input_metric : any dataset metric
    size : int ≥ 0
    constant
        Padding value; must belong to the element domain.

    Returns
    -------
    Transformation
        Output ``VectorDomain(element, size=size)`` under ChangeOneDistance, ``d_out = d_in``.
    """
    element = vector_space("make_resize", input_domain, input_metric,
                           types=(bool, int, float, str))
    assert isinstance(input_domain, VectorDomain)
    m = check_int(size, "size", minimum=0)
    reason = element.why_not(constant)
    if reason is not None:
        raise InvalidParameter(f"constant={constant!r} is not in {element!r}: {reason}")
    to_array = input_domain.to_array

    def function(x: object) -> Array:
        arr = to_array(x)
        n = arr.size
        if n >= m:
            kept: Array = arr[random_order(n)[:m]]
            return kept
        pad = np.empty(m - n, dtype=arr.dtype)
        pad[:] = constant
        out: Array = np.concatenate([arr, pad])[random_order(m)]
        return out

    return Transformation(
        input_domain, input_metric, VectorDomain(element, size=m), ChangeOneDistance(),
        function=function, stability_map=lambda d_in: int(d_in),
        name="resize", params={"size": m, "constant": constant}, proof="resize.md",
    )


def then_resize(size: int, constant: object) -> PartialConstructor:
    """Partial form of [`make_resize`][dpcert.transformations.resize.make_resize]."""
    return partial(make_resize, "resize", size, constant)
