"""Limits shared by the integer samplers (a leaf module: it imports no sampler).

Every sampler that takes a scale (or sigma) checks it here, so outputs stay far inside int64.
"""

from __future__ import annotations

from fractions import Fraction

from dpcert._validate import check_positive
from dpcert.errors import InvalidParameter

__all__ = ["MAX_SCALE", "check_scale"]

#: Largest scale (or sigma) the integer samplers accept: outputs must stay far inside int64.
MAX_SCALE = Fraction(2**52)


def check_scale(value: object, name: str) -> Fraction:
    """A positive rational scale no larger than `MAX_SCALE`.

    Examples
    --------
    >>> check_scale(3, "scale")
    Fraction(3, 1)
    >>> check_scale(2**53, "sigma")
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: sigma=9007199254740992 must be <= 2**52
    """
    s = check_positive(value, name)
    if s > MAX_SCALE:
        raise InvalidParameter(f"{name}={value!r} must be <= 2**52")
    return s
