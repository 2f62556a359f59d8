"""Split a dataset into a fixed list of parts by a public key function.

``make_partition(input_domain, SymmetricDistance(), by, keys)`` maps a vector to the list
``[records whose key is keys[0], records whose key is keys[1], …]``; records whose key is not in
``keys`` are dropped.  The list of keys is public and fixed in advance, so the partition is
data-independent (McSherry 2009, parallel composition).

Stability (``docs/proofs/composition.md``): adding or removing one record changes exactly one part
by one record (or none).  For inputs d_in apart under ``SymmetricDistance`` the outputs are
``(l0, l1, l∞) = (min(d_in, parts), d_in, d_in)`` apart under `PartitionDistance`: at most
l0 parts change, by l1 records in total and by at most l∞ in any one part.

Examples
--------
>>> import numpy as np, dpcert as dp
>>> from dpcert.transformations.partition import make_partition
>>> space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
>>> t = make_partition(*space, by=lambda x: x % 3, keys=[0, 1, 2])
>>> [p.tolist() for p in t([1, 2, 3, 4, 5, 6])]
[[3, 6], [1, 4], [2, 5]]
>>> t.map(1)
(1, 1, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from dpcert._types import Array, DistanceLike
from dpcert._validate import check_int
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain, VectorDomain
from dpcert.core.metrics import Metric, SymmetricDistance
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.transformations._spaces import vector_space

__all__ = ["PartitionDistance", "PartitionDomain", "make_partition", "then_partition"]


@dataclass(frozen=True)
class PartitionDomain(Domain):
    """Lists of exactly ``parts`` datasets, each a member of ``inner``."""

    inner: VectorDomain
    parts: int

    def why_not(self, x: object) -> str | None:
        if not isinstance(x, (list, tuple)):
            return f"{type(x).__name__} is not a list of parts"
        if len(x) != self.parts:
            return f"has {len(x)} parts, not {self.parts}"
        for i, part in enumerate(x):
            r = self.inner.why_not(part)
            if r is not None:
                return f"part {i}: {r}"
        return None

    def __repr__(self) -> str:
        return f"PartitionDomain({self.inner!r}, parts={self.parts})"


@dataclass(frozen=True)
class PartitionDistance(Metric):
    """Distance between lists of datasets: ``(l0, l1, l∞)`` = (parts that differ, total
    symmetric distance, largest symmetric distance of one part).  A bare integer ``k`` as a
    bound means ``(k, k, k)``."""

    def distance(self, a: Any, b: Any) -> tuple[int, int, int]:  # type: ignore[override]
        if len(a) != len(b):
            raise InvalidParameter(
                f"partitions have different numbers of parts: {len(a)}, {len(b)}"
            )
        ds = [SymmetricDistance().distance(u, v) for u, v in zip(a, b, strict=True)]
        return sum(1 for d in ds if d), sum(ds), max(ds, default=0)

    def compare(self, a: Any, b: Any) -> bool:
        """Componentwise: every one of (l0, l1, l∞) of ``a`` is at most that of ``b``."""
        return all(x <= y for x, y in zip(a, b, strict=True))

    @staticmethod
    def inner_metric() -> type[Metric]:
        """The metric each part is compared with."""
        return SymmetricDistance

    def validate_d_in(self, d: DistanceLike, name: str = "d_in") -> tuple[int, int, int]:
        if isinstance(d, tuple):
            if len(d) != 3:
                raise InvalidParameter(f"{name}={d!r} must be (l0, l1, linf)")
            l0, l1, li = (check_int(v, f"{name}[{i}]", minimum=0) for i, v in enumerate(d))
            return l0, l1, li
        k = check_int(d, name, minimum=0)
        return k, k, k


def make_partition(input_domain: Domain, input_metric: Metric,
                   by: Callable[[Array], npt.ArrayLike],
                   keys: Sequence[Hashable]) -> Transformation:
    """Partition a vector by the public ``keys`` of a vectorised key function ``by``.

    Parameters
    ----------
    by
        Maps the whole data array to an array of keys (vectorised, e.g. ``lambda x: x % 3``).
    keys
        The public, data-independent list of keys; one part per key, in this order.
    """
    vector_space("make_partition", input_domain, input_metric,
                 types=(bool, int, float, str), metrics=(SymmetricDistance,))
    assert isinstance(input_domain, VectorDomain)
    ks = list(keys)
    if not ks:
        raise InvalidParameter("keys=[] must name at least one part")
    if len(set(ks)) != len(ks):
        raise InvalidParameter(f"keys={ks!r} must be distinct")
    if not callable(by):
        raise InvalidParameter(f"by={by!r} must be callable")
    inner = VectorDomain(input_domain.element)
    n = len(ks)

    def function(data: object) -> list[Array]:
        arr = input_domain.to_array(data)
        labels = np.asarray(by(arr))
        if labels.shape != arr.shape:
            raise InvalidParameter(
                f"by returned shape {labels.shape}, expected one key per record {arr.shape}"
            )
        return [arr[labels == k] for k in ks]

    def stability(d_in: int | Fraction) -> tuple[int, int, int]:
        d = int(d_in)
        return min(d, n), d, d

    return Transformation(
        input_domain, input_metric, PartitionDomain(inner, n), PartitionDistance(),
        function=function,
        stability_map=stability,
        name="partition",
        params={"keys": [repr(k) for k in ks]}, proof="composition.md",
    )


def then_partition(by: Callable[[Array], npt.ArrayLike],
                   keys: Sequence[Hashable]) -> PartialConstructor:
    """Partial form of [`make_partition`][dpcert.transformations.partition.make_partition]."""
    return partial(make_partition, "partition", by=by, keys=keys)
