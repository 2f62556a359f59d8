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
from typing import Any

from dpcert.errors import DPCertError, InvalidParameter

__all__ = ["binary_search", "binary_search_param"]


def _safe(pred: Callable[[Any], bool], x: Any) -> bool:
    try:
        return bool(pred(x))
    except DPCertError:
        return False


def binary_search(predicate: Callable[[Any], bool], bounds: tuple[Any, Any] | None = None,
                  *, T: type = float, smallest: bool | None = None) -> Any:
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
    # invariant: the answer lies in [lo, hi]; predicate holds at hi (smallest) or lo (largest)
    while True:
        if T is int:
            if hi - lo <= 1:
                break
            mid = (lo + hi) // 2
        else:
            mid = lo / 2 + hi / 2
            if mid in (lo, hi) or not math.isfinite(mid):
                break
        holds = _safe(predicate, mid)
        if holds == smallest:  # smallest: move hi down; largest: move hi down when it fails
            hi = mid
        else:
            lo = mid
    return hi if smallest else lo


def _find_bounds(predicate: Callable[[Any], bool], T: type) -> tuple[Any, Any]:
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


def binary_search_param(make: Callable[[Any], Any], d_in: Any, d_out: Any, *,
                        T: type = float, bounds: tuple[Any, Any] | None = None) -> Any:
    """The parameter ``p`` at which ``make(p).check(d_in, d_out)`` just holds."""
    return binary_search(lambda p: make(p).check(d_in, d_out), bounds, T=T)
