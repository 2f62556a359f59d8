"""Exact, vectorised noise samplers fed only by the OS CSPRNG (issue 3).

* `entropy` is the single door to randomness ([`SystemSource`][dpcert.samplers.SystemSource];
  [`InsecureSeededSource`][dpcert.samplers.InsecureSeededSource] for reproducible tests only).
* Integer samplers return ``int64`` arrays, Bernoulli samplers ``bool`` arrays; every one takes
  ``(parameter, size, *, source=None)`` and samples the stated distribution *exactly* (no float
  ``exp``/``log`` decides any output; see docs/proofs/samplers.md).
* `lattice` adds such integer noise to floats on a lattice ``2**k ℤ`` so the
  set of possible outputs does not depend on the input (Mironov 2012).

Examples
--------
>>> from fractions import Fraction
>>> from dpcert.samplers import discrete_laplace, InsecureSeededSource
>>> discrete_laplace(Fraction(3), 4, source=InsecureSeededSource(0)).shape
(4,)
"""

from __future__ import annotations

from dpcert.samplers.coins import bernoulli, bernoulli_exp
from dpcert.samplers.entropy import (
    EntropySource,
    InsecureSeededSource,
    SystemSource,
    default_source,
)
from dpcert.samplers.gaussian import discrete_gaussian
from dpcert.samplers.geom import geometric
from dpcert.samplers.laplace import discrete_laplace
from dpcert.samplers.lattice import (
    LATTICE_BITS,
    lattice_exponent,
    lattice_gaussian,
    lattice_indices,
    lattice_laplace,
    rounding_allowance,
)
from dpcert.samplers.uniform import uniform_below

__all__ = [
    "LATTICE_BITS",
    "EntropySource",
    "InsecureSeededSource",
    "SystemSource",
    "bernoulli",
    "bernoulli_exp",
    "default_source",
    "discrete_gaussian",
    "discrete_laplace",
    "geometric",
    "lattice_exponent",
    "lattice_gaussian",
    "lattice_indices",
    "lattice_laplace",
    "rounding_allowance",
    "uniform_below",
]
