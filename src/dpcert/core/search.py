"""``binary_search``: the smallest (or largest) parameter that makes a predicate hold.

Typical use: the Laplace scale that makes a chain ``d_out``-private at ``d_in``.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> pre = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum()
>>> scale = dp.binary_search(lambda s: (pre >> dp.m.then_laplace(s)).check(1, 1.0))
>>> 12.0 <= scale <= 12.001
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, TypeVar, overload

from dpcert._types import DistanceLike
from dpcert.errors import DPCertError, InvalidParameter

if TYPE_CHECKING:
    from dpcert.core.measurement import Measurement
    from dpcert.core.transformation import Transformation

__all__ = ["binary_search", "binary_search_param", "bisect", "geometric", "halfway", "int_halfway"]

N = TypeVar("N", int, float, Fraction)


def halfway(a: float, b: float) -> float:
    """The float midpoint ``a/2 + b/2`` (no overflow at the largest floats)."""
    return a / 2 + b / 2


def geometric(a: float, b: float) -> float:
    """The geometric midpoint ``√(a·b)`` of two positive floats (scale searches)."""
    return math.sqrt(a * b)


def int_halfway(a: int, b: int) -> int:
    """The integer midpoint ``⌊(a + b)/2⌋``."""
    return (a + b) // 2


def bisect(holds: Callable[[N], bool], good: N, bad: N, *, midpoint: Callable[[N, N], N],
           steps: int | None = None, close: Callable[[N, N], bool] | None = None) -> N:
    """Narrow ``[good, bad]`` (either order) around the switch of a monotone ``holds``.

    ``holds(good)`` is true and ``holds(bad)`` false (the caller's invariant, not re-checked);
    each step replaces one end by ``midpoint(good, bad)``, so the returned ``good`` is always a
    point where ``holds`` was true (or the caller's ``good``).  The search stops after
    ``steps`` steps, when ``close(good, bad)``, or when the midpoint is an end (the two ends
    are adjacent), whichever comes first.

    Examples
    --------
    >>> bisect(lambda n: n * n >= 50, 100, 0, midpoint=int_halfway)
    8
    >>> round(bisect(lambda x: x * x >= 2.0, 2.0, 1.0, midpoint=halfway), 12)
    1.414213562373
    """
    n = 0
    while (steps is None or n < steps) and (close is None or not close(good, bad)):
        mid = midpoint(good, bad)
        if mid in (good, bad):
            break
        if holds(mid):
            good = mid
        else:
            bad = mid
        n += 1
    return good


def _safe(pred: Callable[[N], bool], x: N) -> bool:
    try:
        return bool(pred(x))
    except DPCertError:
        return False


@overload
def binary_search(predicate: Callable[[int], bool], bounds: tuple[float, float] | None = None,
                  *, T: type[int], smallest: bool | None = None) -> int: ...
@overload
def binary_search(predicate: Callable[[float], bool], bounds: tuple[float, float] | None = None,
                  *, T: type[float] = float, smallest: bool | None = None) -> float: ...
def binary_search(predicate: Callable[..., bool], bounds: tuple[float, float] | None = None,
                  *, T: type = float, smallest: bool | None = None) -> float:
    """Find where a monotone ``predicate`` switches, returning a value at which it *holds*.

    Parameters
    ----------
    predicate
        A monotone function of one parameter (errors raised by dpcert count as False).
    bounds
        ``(lower, upper)`` to search in; found by exponential search from 1 when omitted.
    T
        ``float`` or ``int``.
    smallest
        Search for the smallest passing value (predicate false→true) or the largest
        (true→false); inferred from the bounds when omitted.
    """
    if T not in (float, int):
        raise InvalidParameter(f"T={T!r} must be float or int")
    if bounds is None:
        bounds = _find_bounds(predicate, T)
    lo, hi = (T(bounds[0]), T(bounds[1]))
    if lo > hi:
        raise InvalidParameter(f"bounds reversed: lower={lo!r} > upper={hi!r}")
    plo, phi = _safe(predicate, lo), _safe(predicate, hi)
    if smallest is None:
        if plo == phi:
            raise InvalidParameter(
                f"predicate is {plo} at both bounds {bounds}: nothing to search"
            )
        smallest = phi
    if smallest and not phi:
        raise InvalidParameter(f"predicate fails at upper bound {hi!r}")
    if not smallest and not plo:
        raise InvalidParameter(f"predicate fails at lower bound {lo!r}")
    # the answer lies in [lo, hi]; predicate holds at hi (smallest) or lo (largest)
    good, bad = (hi, lo) if smallest else (lo, hi)
    if T is int:
        return bisect(lambda x: _safe(predicate, x), int(good), int(bad), midpoint=int_halfway)
    return bisect(lambda x: _safe(predicate, x), good, bad, midpoint=halfway,
                  close=lambda g, b: not math.isfinite(halfway(g, b)))


def _find_bounds(predicate: Callable[..., bool], T: type) -> tuple[float, float]:
    start = T(1)
    p0 = _safe(predicate, start)
    for direction in (2, 0.5) if T is float else (2,):
        x = start
        for _ in range(1100 if T is float else 64):
            nxt = x * direction
            if T is int:
                nxt = int(nxt)
            if nxt == x or (T is float and (nxt == 0 or not math.isfinite(nxt))):
                break
            if _safe(predicate, nxt) != p0:
                return (min(x, nxt), max(x, nxt))
            x = nxt
    if T is int:
        x = start
        for _ in range(64):
            nxt = x - (abs(x) or 1)
            if _safe(predicate, nxt) != p0:
                return (nxt, x)
            x = nxt
    raise InvalidParameter("binary_search could not find bounds where the predicate changes")


@overload
def binary_search_param(make: Callable[[int], Transformation | Measurement], d_in: DistanceLike,
                        d_out: DistanceLike, *, T: type[int],
                        bounds: tuple[float, float] | None = None) -> int: ...
@overload
def binary_search_param(make: Callable[[float], Transformation | Measurement],
                        d_in: DistanceLike, d_out: DistanceLike, *, T: type[float] = float,
                        bounds: tuple[float, float] | None = None) -> float: ...
def binary_search_param(make: Callable[..., Transformation | Measurement], d_in: DistanceLike,
                        d_out: DistanceLike, *, T: type[float] = float,
                        bounds: tuple[float, float] | None = None) -> float:
    """The parameter ``p`` at which ``make(p).check(d_in, d_out)`` just holds (an ``int`` when
    ``T=int``)."""
    return binary_search(lambda p: make(p).check(d_in, d_out), bounds, T=T)
