"""What the Laplace and Gaussian mechanisms share: input spaces and lattice allowances.

Float inputs are rounded to the lattice ``2^k·ℤ`` before exact integer noise is added
(:mod:`dpcert.samplers.lattice`).  Rounding moves each *differing* coordinate of two neighbouring
inputs by at most ``2^k`` further apart (coordinates that agree round identically), so a map over a
vector of ``m`` coordinates charges ``+ m·2^k`` in L1 and ``+ √m·2^k`` in L2
(``docs/proofs/lattice.md``).  For float vectors of unknown size the mechanism refuses vectors
longer than :data:`MAX_UNSIZED` and charges for that many coordinates; under L1/L2 output
metrics neighbours have equal length, so the length check reveals nothing private.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import AbsoluteDistance, Metric
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch

__all__ = ["MAX_UNSIZED", "NoiseSpace", "noise_space", "sqrt_up"]

#: Longest float vector accepted when the domain does not fix the size.
MAX_UNSIZED = 1 << 20


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


def sqrt_up(m: int) -> Fraction:
    """A rational upper bound on √m (exact when m is a perfect square)."""
    r = math.isqrt(m)
    return Fraction(r) if r * r == m else Fraction(r + 1)


def check_length(n: int, space: NoiseSpace) -> None:
    """Refuse float vectors longer than the lattice allowance was computed for."""
    if space.vector and not space.integer and not space.size_known and n > MAX_UNSIZED:
        raise InvalidParameter(
            f"len(data)={n} exceeds {MAX_UNSIZED}: give the VectorDomain a size for longer "
            "float vectors"
        )
