"""Reading a component's constructor parameters back from its ``params`` mapping.

``Transformation.params`` and ``Measurement.params`` hold what a constructor was given, for
certificates and reports, as ``Mapping[str, object]``; code that reads a number or a nested
mapping back checks its kind here.

Examples
--------
>>> import dpcert as dp
>>> m = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=2)
>>> param_number(m.params["scale"], "scale")
Fraction(2, 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from dpcert.errors import InvalidParameter

__all__ = ["param_mapping", "param_number"]


def param_number(v: object, what: str) -> int | float | Fraction:
    """A numeric parameter read back from ``params`` (NumPy scalars as Python numbers, exact
    text such as ``"1/2"`` as a ``Fraction``).

    Examples
    --------
    >>> param_number({"scale": Fraction(1, 2)}["scale"], "scale")
    Fraction(1, 2)
    """
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, (int, float, Fraction)):
        return v
    if isinstance(v, str):  # an exact value recorded as text ("1/2")
        try:
            return Fraction(v)
        except ValueError:
            pass
    raise InvalidParameter(f"{what}={v!r} is not a number")


def param_mapping(v: object, what: str) -> Mapping[str, object]:
    """A parameter that is a mapping (per-statistic scales, half-widths) read back from
    ``params``.

    Examples
    --------
    >>> param_mapping({"scales": {"count": 2}}["scales"], "scales")
    {'count': 2}
    """
    if not isinstance(v, Mapping):
        raise InvalidParameter(f"{what}={v!r} is not a mapping")
    return v
