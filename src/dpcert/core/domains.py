"""Domains: the sets of values a transformation or measurement accepts and produces.

A domain answers ``member(x)``.  Calling a component on data outside its input domain raises
`OutOfDomain` before any computation, so the assumptions that privacy proofs
rely on (finite values, bounds, sizes) are always checked, not hoped for.

Examples
--------
>>> import dpcert as dp
>>> d = dp.VectorDomain(dp.AtomDomain(float, bounds=(0.0, 12.0)))
>>> d.member([1.0, 12.0]), d.member([13.0]), d.member([float("nan")])
(True, False, False)
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from dpcert._types import Array
from dpcert._validate import check_bounds, check_int
from dpcert.errors import InvalidParameter, OutOfDomain

__all__ = ["AtomDomain", "Domain", "SupportsColumns", "TableDomain", "VectorDomain"]


@runtime_checkable
class SupportsColumns(Protocol):
    """A table whose columns are read by name: a mapping ``{name: vector}`` or a dataframe."""

    def __getitem__(self, name: str, /) -> object: ...


def _object_array(x: object) -> Array:
    if not isinstance(x, Collection):
        raise TypeError(f"object of type {type(x).__name__!r} has no len()")
    arr = np.empty(len(x), dtype=object)
    arr[:] = list(x)
    return arr

_ATOM_TYPES: tuple[type, ...] = (bool, int, float, str)


class Domain:
    """Base class of domains."""

    def member(self, x: object) -> bool:
        """Whether ``x`` belongs to this domain."""
        return self.why_not(x) is None

    def why_not(self, x: object) -> str | None:
        """None if ``x`` is a member, else a short reason it is not."""
        raise NotImplementedError

    def check_member(self, x: object, name: str = "data") -> None:
        """Raise `OutOfDomain` (with the reason) unless ``x`` is a member."""
        reason = self.why_not(x)
        if reason is not None:
            raise OutOfDomain(f"{name} is not in {self!r}: {reason}")


@dataclass(frozen=True)
class AtomDomain(Domain):
    """Single values of one type: ``bool``, ``int``, ``float`` or ``str``.

    Parameters
    ----------
    type : type
        The carrier type.
    bounds : tuple, optional
        Closed bounds ``(lower, upper)`` for numeric types.
    nan : bool
        Whether NaN is allowed (floats only).  Infinite values are never members of a float
        domain, since no privacy proof here covers them.
    """

    type: type
    bounds: tuple[float, float] | None = None
    nan: bool = False

    def __post_init__(self) -> None:
        if self.type not in _ATOM_TYPES:
            raise InvalidParameter(
                f"type={self.type!r} must be one of bool, int, float, str"
            )
        if self.bounds is not None:
            if self.type not in (int, float):
                raise InvalidParameter(f"bounds={self.bounds!r} only apply to int or float")
            if not (isinstance(self.bounds, tuple) and len(self.bounds) == 2):
                raise InvalidParameter(f"bounds={self.bounds!r} must be a pair (lower, upper)")
            lo, hi = check_bounds(*self.bounds)
            if self.type is int and not all(
                isinstance(b, (int, np.integer)) and not isinstance(b, bool) for b in (lo, hi)
            ):
                raise InvalidParameter(f"bounds={self.bounds!r} of an int domain must be ints")
            cast = float if self.type is float else int
            object.__setattr__(self, "bounds", (cast(lo), cast(hi)))
        if self.nan and self.type is not float:
            raise InvalidParameter(f"nan={self.nan!r} only applies to float domains")

    def why_not(self, x: object) -> str | None:
        if self.type is float:
            if not isinstance(x, (float, np.floating)):
                return f"{x!r} is not a float"
            f = float(x)
            if math.isnan(f):
                return None if self.nan else "NaN is not allowed"
            if math.isinf(f):
                return f"{x!r} is not finite"
        elif self.type is int:
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
                return f"{x!r} is not an int"
        elif self.type is bool:
            if not isinstance(x, (bool, np.bool_)):
                return f"{x!r} is not a bool"
        elif not isinstance(x, str):
            return f"{x!r} is not a str"
        if (self.bounds is not None and not isinstance(x, str)  # bounds: int and float only
                and not self.bounds[0] <= x <= self.bounds[1]):
            return f"{x!r} is outside bounds {self.bounds}"
        return None

    def check_array(self, arr: Array) -> str | None:
        """Vectorised membership of every element of a NumPy array (None when all are members)."""
        if self.type is float:
            if arr.dtype.kind != "f":
                return f"elements have dtype {arr.dtype}, not float"
            if arr.size == 0:
                return None
            if not self.nan and np.isnan(arr).any():
                return "NaN is not allowed"
            if np.isinf(arr).any():
                return "infinite values are not allowed"
        elif self.type is int:
            if arr.dtype.kind not in "iu":
                if arr.dtype.kind == "O" and all(
                    isinstance(v, int) and not isinstance(v, bool) for v in arr.tolist()
                ):
                    pass
                else:
                    return f"elements have dtype {arr.dtype}, not int"
        elif self.type is bool:
            if arr.dtype.kind != "b":
                return f"elements have dtype {arr.dtype}, not bool"
        elif arr.dtype.kind not in "UO" or not all(isinstance(v, str) for v in arr.tolist()):
            return "elements are not all str"
        if self.bounds is not None and arr.size:
            finite = arr[~np.isnan(arr)] if arr.dtype.kind == "f" else arr
            if finite.size and (finite.min() < self.bounds[0] or finite.max() > self.bounds[1]):
                return f"some elements are outside bounds {self.bounds}"
        return None

    @property
    def numeric(self) -> bool:
        """Whether the carrier type is int or float."""
        return self.type in (int, float)

    def __repr__(self) -> str:
        parts = [self.type.__name__]
        if self.bounds is not None:
            parts.append(f"bounds={self.bounds}")
        if self.nan:
            parts.append("nan=True")
        return f"AtomDomain({', '.join(parts)})"


@dataclass(frozen=True)
class VectorDomain(Domain):
    """Vectors (lists, tuples or 1-D NumPy arrays) whose elements lie in ``element``.

    ``size``, when given, is the known length (bounded DP / change-one neighbours).
    """

    element: AtomDomain
    size: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.element, AtomDomain):
            raise InvalidParameter(f"element={self.element!r} must be an AtomDomain")
        if self.size is not None:
            object.__setattr__(self, "size", check_int(self.size, "size", minimum=0))

    def to_array(self, x: object) -> Array:
        """``x`` (an array, or a sequence of elements) as a 1-D NumPy array of the element type
        (no membership check)."""
        if isinstance(x, np.ndarray):
            return x
        t = self.element.type
        if t is str:
            return _object_array(x)
        if t is int:
            try:
                return np.asarray(x, dtype=np.int64)
            except (OverflowError, TypeError, ValueError):
                return _object_array(x)
        dtype = np.float64 if t is float else np.bool_
        return np.asarray(x, dtype=dtype)

    def why_not(self, x: object) -> str | None:
        if isinstance(x, np.ndarray):
            if x.ndim != 1:
                return f"array has {x.ndim} dimensions, not 1"
            arr = x
        elif isinstance(x, (list, tuple)):
            for v in x:
                r = self.element.why_not(v)
                if r is not None:
                    return r
            arr = None
        else:
            return f"{type(x).__name__} is not a vector (list, tuple or 1-D ndarray)"
        if self.size is not None and len(x) != self.size:
            return f"length {len(x)} != size {self.size}"
        if arr is not None:
            return self.element.check_array(arr)
        return None

    def __repr__(self) -> str:
        s = f", size={self.size}" if self.size is not None else ""
        return f"VectorDomain({self.element!r}{s})"


@dataclass(frozen=True)
class TableDomain(Domain):
    """Tables: named columns of equal length, each a vector in its ``AtomDomain``.

    Members are mappings ``{name: vector}`` or dataframes (anything with ``.columns`` whose
    columns convert with ``.to_numpy()``, e.g. Polars or pandas).  Extra columns are allowed;
    declared ones must be present.  Rows are the records, so dataset metrics count rows.

    Examples
    --------
    >>> import dpcert as dp
    >>> t = dp.TableDomain({"age": dp.AtomDomain(int), "income": dp.AtomDomain(float)})
    >>> t.member({"age": [30, 41], "income": [1.0, 2.5]})
    True
    >>> t.why_not({"age": [30], "income": [1.0, 2.5]})
    'columns have different lengths'
    """

    columns: tuple[tuple[str, AtomDomain], ...]

    def __init__(self, columns: Mapping[str, AtomDomain] | Iterable[tuple[str, AtomDomain]]
                 ) -> None:
        items = tuple(columns.items()) if isinstance(columns, dict) else tuple(columns)
        if not items:
            raise InvalidParameter("columns={} is empty: declare at least one column")
        for name, dom in items:
            if not isinstance(name, str) or not name:
                raise InvalidParameter(f"column name {name!r} must be a non-empty string")
            if not isinstance(dom, AtomDomain):
                raise InvalidParameter(f"columns[{name!r}]={dom!r} must be an AtomDomain")
        object.__setattr__(self, "columns", items)

    def column(self, name: str) -> AtomDomain:
        """The domain of one column (raises if it is not declared)."""
        for n, dom in self.columns:
            if n == name:
                return dom
        raise InvalidParameter(
            f"unknown column {name!r}; the table has {[n for n, _ in self.columns]}"
        )

    def get(self, table: object, name: str) -> Array:
        """Column ``name`` of a member (a `SupportsColumns`) as a 1-D NumPy array."""
        if not isinstance(table, SupportsColumns):
            raise TypeError(f"{type(table).__name__!r} object is not subscriptable")
        col = table[name]
        if hasattr(col, "to_numpy"):
            col = col.to_numpy()
        return VectorDomain(self.column(name)).to_array(col)

    def why_not(self, x: object) -> str | None:
        names = list(x.keys()) if isinstance(x, dict) else list(getattr(x, "columns", []))
        if not isinstance(x, dict) and not hasattr(x, "columns"):
            return f"{type(x).__name__} is not a table (a dict of columns or a dataframe)"
        length = None
        for name, dom in self.columns:
            if name not in names:
                return f"column {name!r} is missing"
            arr = self.get(x, name)
            reason = VectorDomain(dom).why_not(arr)
            if reason is not None:
                return f"column {name!r}: {reason}"
            if length is not None and len(arr) != length:
                return "columns have different lengths"
            length = len(arr)
        return None

    def __repr__(self) -> str:
        cols = ", ".join(f"{n}: {d!r}" for n, d in self.columns)
        return f"TableDomain({{{cols}}})"

