"""Cast every element of a vector to another atom type.

Stability (``docs/proofs/row_maps.md``): a cast is applied record by record, so neighbouring
datasets map to neighbouring datasets under every dataset metric: ``d_out = d_in``.  Values that
cannot be cast become NaN (casts to ``float``; impute them next) or ``default`` (other targets),
never an error: an error on one record would reveal that record.

Examples
--------
>>> import dpcert as dp
>>> t = dp.t.make_cast(dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance(), float)
>>> t(["1.5", "x", "2"]).tolist()
[1.5, nan, 2.0]
>>> t.output_domain
VectorDomain(AtomDomain(float, nan=True))
>>> dp.t.make_cast(dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance(), int,
...                default=0)([2.7, -1.2]).tolist()
[2, -1]
"""

from __future__ import annotations

import math

import numpy as np

from dpcert._types import Array
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.transformations._spaces import vector_space

__all__ = ["make_cast", "then_cast"]

_INT64 = 2**63 - 1


def _to_float(v: str | float) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return f if math.isfinite(f) else math.nan


def _to_int(v: str | int | float, default: int) -> int:
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            f = _to_float(v)
            return default if math.isnan(f) else _to_int(f, default)
    if isinstance(v, float):
        return int(v) if math.isfinite(v) and abs(v) < 2**63 else default
    return int(v)


def make_cast(input_domain: Domain, input_metric: Metric, to: type, *,
              default: object = None) -> Transformation:
    """Cast each element to ``to`` (``float``, ``int``, ``str`` or ``bool``).

    Parameters
    ----------
    to : type
        Target atom type.  ``float``: unparseable or infinite values become NaN (the output
        domain allows NaN).  ``int``: floats are truncated toward zero; NaN, infinite, huge or
        unparseable values become ``default`` (required).  ``str``: ``str(v)``.  ``bool``:
        ``bool(v)``.
    """
    vector_space("make_cast", input_domain, input_metric, types=(bool, int, float, str))
    assert isinstance(input_domain, VectorDomain)
    if to not in (float, int, str, bool):
        raise InvalidParameter(f"to={to!r} must be float, int, str or bool")
    if to is int and (default is None or isinstance(default, bool)
                      or not isinstance(default, (int, np.integer))):
        raise InvalidParameter(f"default={default!r} must be an int when casting to int")
    d = int(default) if isinstance(default, (int, np.integer)) else 0  # used when to is int
    src = input_domain.element.type
    to_array = input_domain.to_array
    out_element = AtomDomain(float, nan=True) if to is float else AtomDomain(to)

    def function(x: object) -> Array:
        arr = to_array(x)
        if to is float:
            if src in (bool, int) and arr.dtype != object:
                return arr.astype(np.float64)
            if src is float:
                out = arr.astype(np.float64)
                out[~np.isfinite(out)] = np.nan
                return out
            return np.array([_to_float(v) for v in arr.tolist()], dtype=np.float64)
        if to is int:
            if src is float:
                a = np.asarray(arr, dtype=np.float64)
                ok = np.isfinite(a) & (np.abs(a) < 2.0**63)
                res = np.full(a.size, d, dtype=np.int64)
                res[ok] = np.trunc(a[ok]).astype(np.int64)
                return res
            vals = [_to_int(v, d) for v in arr.tolist()]
            return np.array([v if abs(v) <= _INT64 else d for v in vals], dtype=np.int64)
        if to is bool:
            return np.array([bool(v) for v in arr.tolist()], dtype=np.bool_)
        out_s = np.empty(arr.size, dtype=object)
        out_s[:] = [str(v) for v in arr.tolist()]
        return out_s

    return Transformation(
        input_domain, input_metric, VectorDomain(out_element, size=input_domain.size),
        input_metric, function=function, stability_map=lambda d_in: d_in,
        name="cast", params={"to": to.__name__, "default": default}, proof="row_maps.md",
    )


def then_cast(to: type, *, default: object = None) -> PartialConstructor:
    """Partial form of [`make_cast`][dpcert.transformations.cast.make_cast]."""
    return partial(make_cast, "cast", to, default=default)
