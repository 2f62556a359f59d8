"""A lazily refined uniform, for the samplers' rare exact paths.

A real ``c`` is handled through *bounds at precision P*: integers ``lo <= c * 2**P <= hi``
(`dpcert._directed.exp_neg_bounds` gives them for ``exp(-x)``).  `LazyUniform` is a
uniform real ``U`` in [0, 1) of which only a binary prefix has been drawn; `lazy_less`
decides ``U < c`` exactly, drawing more bits while the bounds on ``c`` do not separate it from
the prefix.
"""

from __future__ import annotations

from collections.abc import Callable

from dpcert._directed import Bounds
from dpcert.samplers.entropy import EntropySource

__all__ = ["LazyUniform", "lazy_less"]

class LazyUniform:
    """A uniform real U in [0, 1) known through its first ``nbits`` bits (``prefix``).

    Conditional on the prefix, the undrawn bits are fresh and uniform, so U is uniform on
    [prefix / 2**nbits, (prefix + 1) / 2**nbits).
    """

    __slots__ = ("nbits", "prefix", "source")

    def __init__(self, prefix: int, nbits: int, source: EntropySource) -> None:
        self.prefix = prefix
        self.nbits = nbits
        self.source = source

    def extend(self) -> None:
        """Draw 64 more bits of U."""
        self.prefix = (self.prefix << 64) | int(self.source.random_uint64(1)[0])
        self.nbits += 64


def lazy_less(u: LazyUniform, bounds: Callable[[int], Bounds]) -> bool:
    """Decide ``U < c`` exactly, where ``bounds(P)`` brackets ``c * 2**P``.

    Terminates with probability 1 whenever the bounds tighten to ``c`` as ``P`` grows (each
    round is undecided with probability about ``2**-16``).
    """
    while True:
        prec = u.nbits + 16
        lo, hi = bounds(prec)
        a = u.prefix << 16
        if a + (1 << 16) <= lo:
            return True
        if a >= hi:
            return False
        u.extend()
