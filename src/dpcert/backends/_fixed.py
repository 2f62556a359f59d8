"""Engine-independent pieces of the backend contract: the fixed-point value rule's integer bounds,
the validation of statistic specs, and the one order of private keys.

The value rule (`dpcert.backends.base`) maps a float ``v`` to an integer.  Because rounding
half-to-even is monotone, ``round(clamp(v, lo, hi) / 2**e)`` equals
``clamp(round(v / 2**e), round(lo / 2**e), round(hi / 2**e))``; so a backend never needs the
rational bounds as floats: it divides by the power of two (exact in binary floating point, up to
subnormal results, which round to 0 either way), rounds half-to-even, and clamps to the integer
bounds computed here exactly.  Null and NaN map to the lower integer bound.  For ``fixed_sum_sq``
the value is clamped to the float nearest each bound, squared in float64 (IEEE, so every backend
gets the same double), less ``shift`` (a float64 value, so the difference is one IEEE operation),
squared, then rounded and clamped to the rounded bounds of the squares.

Examples
--------
>>> from fractions import Fraction
>>> from dpcert.backends.base import Key, KeyValue, StatSpec
>>> fixed_bounds(StatSpec("s", "fixed_sum", "x", Fraction(-1, 3), Fraction(5, 2), exponent=-2))
(-1, 10)
>>> fixed_bounds(StatSpec("q", "fixed_sum_sq", "x", Fraction(-3), Fraction(2), exponent=0))
(0, 9)
>>> fixed_bounds(StatSpec("q", "fixed_sum_sq", "x", Fraction(0), Fraction(100),
...                       shift=Fraction(50)))
(0, 2500)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from dpcert.backends.base import Key, KeyValue, StatSpec
from dpcert.errors import InvalidParameter

__all__ = ["MAX_FIXED", "check_specs", "fixed_bounds", "private_key_order", "round_half_even"]

#: Largest magnitude of a fixed-point bound: every such integer is exact in float64.
MAX_FIXED = 1 << 53
_MAX_EXPONENT = 1000
_KINDS = ("count", "unit_count", "fixed_sum", "fixed_sum_sq", "at_most")


def round_half_even(q: Fraction) -> int:
    """The integer nearest ``q``, ties to even (exact).

    >>> [round_half_even(Fraction(k, 2)) for k in (-3, -1, 1, 3, 5)]
    [-2, 0, 0, 2, 2]
    """
    return round(q)


def fixed_bounds(spec: StatSpec) -> tuple[int, int]:
    """The integer bounds ``(round(lo / 2**e), round(hi / 2**e))`` of a fixed-point statistic
    (of the squared interval ``(v − shift)²`` for ``fixed_sum_sq``)."""
    if spec.lower is None or spec.upper is None:
        raise InvalidParameter(f"{spec.name}: kind={spec.kind!r} needs lower and upper bounds")
    lo, hi = Fraction(spec.lower), Fraction(spec.upper)
    if lo > hi:
        raise InvalidParameter(f"{spec.name}: lower={lo} > upper={hi}")
    if spec.kind == "fixed_sum_sq":
        lo, hi = lo - spec.shift, hi - spec.shift
        lo, hi = (Fraction(0) if lo <= 0 <= hi else min(lo * lo, hi * hi)), max(lo * lo, hi * hi)
    unit = Fraction(2) ** spec.exponent
    rl, rh = round_half_even(lo / unit), round_half_even(hi / unit)
    if max(abs(rl), abs(rh)) > MAX_FIXED:
        raise InvalidParameter(
            f"{spec.name}: bounds [{spec.lower}, {spec.upper}] at exponent={spec.exponent} give "
            f"fixed-point integers beyond 2**53; use a larger exponent")
    return rl, rh


def check_specs(specs: Sequence[StatSpec], schema: Mapping[str, str]) -> None:
    """Validate statistic specs against a schema mapping (column → logical type)."""
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise InvalidParameter(f"statistic names {names} are not distinct")
    for s in specs:
        if s.kind not in _KINDS:
            raise InvalidParameter(f"{s.name}: kind={s.kind!r} is not one of {_KINDS}")
        if not -_MAX_EXPONENT <= s.exponent <= _MAX_EXPONENT:
            raise InvalidParameter(f"{s.name}: exponent={s.exponent} is outside "
                                   f"[-{_MAX_EXPONENT}, {_MAX_EXPONENT}]")
        if s.shift != 0 and (s.kind != "fixed_sum_sq" or Fraction(float(s.shift)) != s.shift):
            raise InvalidParameter(f"{s.name}: shift={s.shift} must be a float64 value and is "
                                   "for fixed_sum_sq only")
        if s.kind == "count":
            continue
        if s.column is None:
            if s.kind == "unit_count":
                continue
            raise InvalidParameter(f"{s.name}: kind={s.kind!r} needs a column")
        if s.column not in schema:
            raise InvalidParameter(f"{s.name}: unknown column {s.column!r}; the data has "
                                   f"{sorted(schema)}")
        if s.kind == "unit_count":
            continue
        if schema[s.column] not in ("int", "float", "bool"):
            raise InvalidParameter(f"{s.name}: column {s.column!r} has type "
                                   f"{schema[s.column]}, not numeric")
        fixed_bounds(s)
        if s.kind == "at_most":
            c = list(s.candidates)
            if not c or any(not isinstance(x, int) for x in c) or c != sorted(set(c)):
                raise InvalidParameter(f"{s.name}: candidates must be distinct ascending "
                                       f"integers, got {c[:5]}...")


def _key_part(v: KeyValue) -> tuple[int, object]:
    if v is None:
        return (3, 0)
    if isinstance(v, float):
        if math.isnan(v):
            return (2, 0)
        return (1, v + 0.0)
    if isinstance(v, str):
        return (1, v.encode("utf-8"))
    return (1, v)


def private_key_order(keys: Sequence[Key]) -> list[int]:
    """Indices that sort private keys by value (nulls last, NaN above every number, strings by
    UTF-8 bytes): an order that depends on the key values only, the same on every backend.

    >>> private_key_order([("b",), (None,), ("a",)])
    [2, 0, 1]
    """
    return sorted(range(len(keys)), key=lambda i: tuple(_key_part(v) for v in keys[i]))
