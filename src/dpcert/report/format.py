"""One number format for every human-facing output (reports, console tables).

* integers (counts) with thousands separators: ``28,146``;
* other numbers with 4 significant digits, thousands separators from 10⁴ on, no exponent
  below 10¹⁵: ``31.58``, ``0.004321``, ``1,509,596,607``;
* missing values (``None``, NaN) as an en dash.

Examples
--------
>>> [format_number(v) for v in (28146, 31.5789, 1509596607.2, 0.0043212, float("nan"), None)]
['28,146', '31.58', '1,509,596,607', '0.004321', '–', '–']
>>> format_interval(1.0, 2.5)
'[1, 2.5]'
>>> format_loss({"epsilon": {"exact": "1/5", "float_up": 0.2}, "delta": {"float_up": 0.0}})
'ε = 0.2, δ = 0'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpcert._numbers import Number

__all__ = ["format_interval", "format_loss", "format_number"]

MISSING = "–"


def format_number(v: Number | str | None) -> str:
    """``v`` in dpcert's one human format (see the module docstring)."""
    if v is None:
        return MISSING
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int) or (hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iu"):
        return f"{int(v):,}"
    try:
        x = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(x):
        return MISSING
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x != 0 and abs(x) >= 1e15:
        return f"{x:.4g}"
    if abs(x) >= 1e4:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def format_interval(lo: Number | str | None, hi: Number | str | None) -> str:
    """``[lo, hi]`` in the same format; empty when both ends are missing."""
    a, b = format_number(lo), format_number(hi)
    if a == MISSING and b == MISSING:
        return ""
    return f"[{a}, {b}]"


_SYMBOLS = {"epsilon": "ε", "delta": "δ", "rho": "ρ"}


def format_loss(d_out: Mapping[str, Any] | Number | str | None) -> str:
    """A privacy loss from a certificate (``{"epsilon": {"float_up": ...}, ...}``), rounded up
    values as ``ε = 0.2, δ = 0``."""
    if not isinstance(d_out, Mapping):
        return format_number(d_out)
    parts = []
    for key, sym in _SYMBOLS.items():
        if key in d_out:
            v = d_out[key]
            parts.append(f"{sym} = {format_number(v['float_up'] if isinstance(v, dict) else v)}")
    return ", ".join(parts) if parts else str(d_out)
