"""What the Laplace and Gaussian mechanisms share: input spaces and lattice allowances.

Float inputs are rounded to the lattice ``2^k·ℤ`` before exact integer noise is added
(`dpcert.samplers.lattice`).  Rounding moves each *differing* coordinate of two neighbouring
inputs by at most ``a_k = 2^k + 2^(k−2)`` further apart (half a step each side, plus one float
spacing when a correctly rounded input lands on a lattice midpoint and ties-to-even rounds away
from the real value; coordinates that agree round identically), so a map over a vector of ``m``
coordinates charges ``+ m·a_k`` in L1 and ``+ √m·a_k`` in L2 (``docs/proofs/lattice.md``).
For float vectors of unknown size the mechanism refuses vectors longer than `MAX_UNSIZED`
and charges for that many coordinates; under L1/L2 output
metrics neighbours have equal length, so the length check reveals nothing private.

**Choice of k** (`mechanism_exponent`).  The whole lattice allowance is kept at most
``(5/4)·2^-ALLOWANCE_BITS`` of the scale: ``2^k ≤ scale·2^-20 / m`` (L1) or ``/ √m`` (L2).
The lattice samplers clamp inputs to ``±2^(k+51)`` — the range on which floats are spaced at most
``2^(k−2)``, so a correctly rounded real input (e.g. an exact sum rounded once to a float) lands
within ``a_k/2`` of its lattice point — so inputs larger than about ``2^31·scale/m`` saturate
there.  That is a signal-to-noise ratio above two billion; pass a smaller ``k`` (paying
``m·a_k``) if you need more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpcert._types import Array, FloatArray
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.maps import BatchMap, Function
from dpcert.core.metrics import AbsoluteDistance, Metric
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch

__all__ = [
    "ALLOWANCE_BITS",
    "MAX_UNSIZED",
    "NoiseSpace",
    "mechanism_exponent",
    "noise_batch",
    "noise_function",
    "noise_space",
]

#: Longest float vector accepted when the domain does not fix the size.
MAX_UNSIZED = 1 << 10
#: The lattice allowance is at most (5/4)·2^-ALLOWANCE_BITS of the noise scale.
ALLOWANCE_BITS = 20


@dataclass(frozen=True)
class NoiseSpace:
    """The kind of input an additive-noise mechanism was built for."""

    vector: bool
    integer: bool
    coordinates: int  # m: coordinates charged for lattice rounding (1 for scalars)
    size_known: bool


def noise_space(who: str, input_domain: Domain, input_metric: Metric,
                vector_metric: type[Metric]) -> NoiseSpace:
    """Classify ``(input_domain, input_metric)``; raise a mismatch error if unsupported."""
    if isinstance(input_domain, AtomDomain):
        element, vector = input_domain, False
        if not isinstance(input_metric, AbsoluteDistance):
            raise MetricMismatch(
                f"{who} on a scalar needs AbsoluteDistance, got {type(input_metric).__name__}"
            )
    elif isinstance(input_domain, VectorDomain):
        element, vector = input_domain.element, True
        if not isinstance(input_metric, vector_metric):
            raise MetricMismatch(
                f"{who} on a vector needs {vector_metric.__name__}, got "
                f"{type(input_metric).__name__}"
            )
    else:
        raise DomainMismatch(f"{who} needs an AtomDomain or VectorDomain, got {input_domain!r}")
    if element.type not in (int, float):
        raise DomainMismatch(f"{who} needs int or float values, got {input_domain!r}")
    if element.nan:
        raise InvalidParameter(f"input_domain={input_domain!r} allows NaN; impute first")
    integer = element.type is int
    size = input_domain.size if isinstance(input_domain, VectorDomain) else 1
    coords = 1 if not vector else (size if size is not None else MAX_UNSIZED)
    return NoiseSpace(vector=vector, integer=integer, coordinates=coords,
                      size_known=size is not None)


def mechanism_exponent(scale: Fraction, space: NoiseSpace, l2: bool) -> int:
    """Default lattice exponent: ``floor(log2 scale) − 20 − ceil(log2 m)`` (L1) or
    ``− ceil(log2 m)/2`` rounded up (L2), so the allowance is ≤ ``(5/4)·2^-20·scale``."""
    from dpcert.samplers import LATTICE_BITS, lattice_exponent

    floor_log2 = lattice_exponent(scale) + LATTICE_BITS
    m_bits = max(space.coordinates - 1, 0).bit_length()  # ceil(log2 m)
    extra = (m_bits + 1) // 2 if l2 else m_bits
    return floor_log2 - ALLOWANCE_BITS - extra


#: ``lattice_noise(values, param, k=k)``: floats rounded to ``2^k·ℤ`` plus noise there.
LatticeNoise = Callable[..., float | FloatArray]


def noise_function(input_domain: Domain, space: NoiseSpace,
                   integer_noise: Callable[[Fraction, int], Array],
                   lattice_noise: LatticeNoise, param: Fraction, k: int
                   ) -> Function:
    """The release function of an additive-noise mechanism.

    ``integer_noise(param, size)`` draws exact integer noise; ``lattice_noise(values, param,
    k=k)`` rounds floats to ``2^k·ℤ`` and adds noise there.  Scalars come back as Python
    ``int``/``float``, vectors as NumPy arrays.
    """
    if space.vector:
        assert isinstance(input_domain, VectorDomain)
        to_array = input_domain.to_array
        if space.integer:
            def vector_int(x: object) -> Array:
                arr = np.asarray(to_array(x), dtype=np.int64)
                return arr + integer_noise(param, arr.size)
            return vector_int

        def vector_float(x: object) -> float | FloatArray:
            arr = np.asarray(to_array(x), dtype=np.float64)
            check_length(arr.size, space)
            return lattice_noise(arr, param, k=k)
        return vector_float
    if space.integer:
        return lambda x: int(x) + int(integer_noise(param, 1)[0])
    return lambda x: float(lattice_noise(float(x), param, k=k))


def noise_batch(input_domain: Domain, space: NoiseSpace,
                integer_noise: Callable[[Fraction, int], Array],
                lattice_noise: LatticeNoise, param: Fraction, k: int
                ) -> BatchMap:
    """``n`` independent releases of `noise_function` on the same input, vectorised:
    shape ``(n,)`` for scalars, ``(n, d)`` for vectors (every coordinate of every release gets
    its own independent noise, exactly as in ``n`` separate calls)."""
    if space.vector:
        assert isinstance(input_domain, VectorDomain)
        to_array = input_domain.to_array

        def vector_batch(x: object, n: int) -> Array:
            if space.integer:
                arr = np.asarray(to_array(x), dtype=np.int64)
                return arr[None, :] + integer_noise(param, n * arr.size).reshape(n, arr.size)
            arr = np.asarray(to_array(x), dtype=np.float64)
            check_length(arr.size, space)
            out = lattice_noise(np.tile(arr, n), param, k=k)
            return np.asarray(out).reshape(n, arr.size)
        return vector_batch
    if space.integer:
        return lambda x, n: int(x) + integer_noise(param, n)
    return lambda x, n: np.asarray(lattice_noise(np.full(n, float(x)), param, k=k))


def check_length(n: int, space: NoiseSpace) -> None:
    """Refuse float vectors longer than the lattice allowance was computed for."""
    if space.vector and not space.integer and not space.size_known and n > MAX_UNSIZED:
        raise InvalidParameter(
            f"len(data)={n} exceeds {MAX_UNSIZED}: give the VectorDomain a size for longer "
            "float vectors"
        )
