"""Shared fixtures.  ``MemoryFrameOps``: a small in-memory reference backend for tests (frames are
dicts of equal-length lists).

It implements :class:`dpcert.backends.base.FrameOps` plainly (Python loops, small data only) so
the frame constructors can be tested without any engine.  Predicates are triples
``(column, op, literal)`` with ``op`` in an allow-list; anything else is refused.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import settings as hypothesis_settings

from dpcert.backends.base import BoundSpec, GroupedStats, StatSpec

# shared Hypothesis strategies (tests/_strategies.py) are imported as a top-level module
sys.path.insert(0, str(__import__('pathlib').Path(__file__).parent))
from dpcert.errors import InvalidParameter, UnsafeExpression

# Under CI, Hypothesis runs a fixed example sequence (a CI run cannot go red by drawing a rare
# example for the first time); locally it explores at random and keeps failures in .hypothesis.

hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")

Frame = dict[str, list[Any]]
_OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _logical(values: Sequence[Any]) -> str:
    kinds = {type(v) for v in values if v is not None}
    for t, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str")):
        if kinds <= {t} and kinds:
            return name
    return "int" if not kinds else "other"


def _canon(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, float) and v == 0.0:
        return 0.0
    return v


def _rhe(q: Fraction) -> int:
    return round(q)  # Fraction.__round__ rounds half to even


class MemoryFrameOps:
    name = "memory"

    def __init__(self, schema: Mapping[str, str] | None = None) -> None:
        self._schema = dict(schema) if schema else None

    def schema(self, data: Any) -> Mapping[str, str]:
        if self._schema is not None:
            return dict(self._schema)
        return {k: _logical(list(v)) for k, v in data.items()}

    def check_predicates(self, predicates: Sequence[Any],
                         schema: Mapping[str, str]) -> tuple[Any, ...]:
        out = []
        for p in predicates:
            if not (isinstance(p, tuple) and len(p) == 3 and p[1] in _OPS):
                raise UnsafeExpression(f"predicate={p!r} is not on the allow-list")
            if p[0] not in schema:
                raise InvalidParameter(f"predicate={p!r}: unknown column {p[0]!r}")
            out.append(p)
        return tuple(out)

    def filter(self, data: Any, predicates: Sequence[Any]) -> Frame:
        cols = {k: list(v) for k, v in data.items()}
        n = len(next(iter(cols.values()), []))
        keep = [all(cols[c][i] is not None and _OPS[op](cols[c][i], lit)
                    for c, op, lit in predicates) for i in range(n)]
        return {k: [x for x, kp in zip(v, keep, strict=True) if kp] for k, v in cols.items()}

    def keyed_bound(self, data: Any, spec: BoundSpec) -> Frame:
        cols = {k: list(v) for k, v in data.items()}
        n = len(next(iter(cols.values()), []))
        if spec.unit is None:
            return cols

        def h(*parts: Any) -> bytes:
            return hashlib.blake2b(repr(parts).encode(), key=spec.key, digest_size=16).digest()

        rows_of: dict[Any, list[int]] = {}
        for i in range(n):
            rows_of.setdefault(_canon(cols[spec.unit][i]), []).append(i)
        keep: list[int] = []
        for u, rows in rows_of.items():
            groups: dict[Any, list[int]] = {}
            for i in rows:
                groups.setdefault(tuple(_canon(cols[c][i]) for c in spec.by), []).append(i)
            chosen = sorted(groups, key=lambda g: h("g", u, g))[: spec.max_groups]
            for g in chosen:
                ranked = sorted(groups[g], key=lambda i: h(
                    "r", u, g, tuple(_canon(cols[c][i]) for c in spec.value_columns)) + bytes(
                    [0]) + i.to_bytes(8, "big"))
                keep.extend(ranked[: spec.max_rows_per_group])
        keep.sort()
        return {k: [v[i] for i in keep] for k, v in cols.items()}

    def group_stats(self, data: Any, by: Sequence[str], keys: Sequence[tuple[Any, ...]] | None,
                    specs: Sequence[StatSpec]) -> GroupedStats:
        cols = {k: list(v) for k, v in data.items()}
        n = len(next(iter(cols.values()), []))
        gk = [tuple(_canon(cols[c][i]) for c in by) for i in range(n)]
        out_keys = list(keys) if keys is not None else sorted(set(gk), key=repr)
        index = {k: j for j, k in enumerate(out_keys)}
        values: dict[str, np.ndarray[Any, Any]] = {}
        for s in specs:
            shape = (len(out_keys), len(s.candidates)) if s.kind == "at_most" else (len(out_keys),)
            acc = np.zeros(shape, dtype=object)
            seen: set[tuple[Any, Any]] = set()
            for i in range(n):
                j = index.get(gk[i])
                if j is None:
                    continue
                if s.kind == "count":
                    acc[j] += 1
                elif s.kind == "unit_count":
                    u = _canon(cols[str(s.column)][i])
                    if (j, u) not in seen:
                        seen.add((j, u))
                        acc[j] += 1
                else:
                    acc[j] += self._value(s, cols[str(s.column)][i])
            values[s.name] = acc.astype(np.int64)
        return GroupedStats(keys=[tuple(k) for k in out_keys], values=values)

    @staticmethod
    def _value(s: StatSpec, v: Any) -> Any:
        assert s.lower is not None and s.upper is not None
        lo, hi = s.lower, s.upper
        x = lo if v is None or (isinstance(v, float) and math.isnan(v)) else Fraction(v)
        x = min(max(x, lo), hi)
        unit = Fraction(2) ** s.exponent
        if s.kind == "fixed_sum":
            return min(max(_rhe(x / unit), _rhe(lo / unit)), _rhe(hi / unit))
        if s.kind == "fixed_sum_sq":
            x, lo, hi = x - s.shift, lo - s.shift, hi - s.shift
            sq_lo = Fraction(0) if lo <= 0 <= hi else min(lo * lo, hi * hi)
            sq_hi = max(lo * lo, hi * hi)
            return min(max(_rhe(x * x / unit), _rhe(sq_lo / unit)), _rhe(sq_hi / unit))
        # at_most: per candidate, 1 if the fixed-point value is <= the candidate
        xv = _rhe(x / unit)
        return np.array([1 if xv <= c else 0 for c in s.candidates], dtype=object)


@pytest.fixture
def memory_ops() -> MemoryFrameOps:
    """The in-memory reference backend (frames are dicts of lists)."""
    return MemoryFrameOps()
