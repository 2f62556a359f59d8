"""Grouped exact integer statistics in one backend pass: GroupDistance → GroupDistance, ``d ↦ d``
(proof: ``docs/proofs/frame_group_by.md``).

Public keys are cast *strictly* to the key columns' types (a value that does not convert exactly
is refused, never silently turned into null) and must be distinct after the cast; a public key
absent from the data gets 0 in every statistic.  Private keys (``keys=None``) give the groups
present in the data, in an order that depends on the key values only; only a private-keys
combinator (`dpcert.combinators.keyed`) may release them.

Examples
--------
>>> from dpcert.core.frames import FrameDomain, GroupDistance
>>> from dpcert.backends.base import StatSpec
>>> dom = FrameDomain((("pid", "int"), ("g", "str")), dict, bounds=(("g",), 1, 2))
>>> t = make_group_by(dom, GroupDistance(), ("g",), [("a",), ("b",)],
...                   [StatSpec("n", "count")], backend=None)
>>> t.output_domain
GroupedDomain(by=['g'], stats=['n'], 2 public keys)
>>> t.map((1, 1, 2, 2))
(1, 1, 2, 2)
>>> make_group_by(dom, GroupDistance(), ("g",), [("a",), ("a",)], [StatSpec("n", "count")],
...               backend=None)
Traceback (most recent call last):
...
dpcert.errors.InvalidParameter: keys[1]=('a',) repeats keys[0] after the strict cast to ['str']
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import cast

from dpcert.backends.base import FrameOps, GroupedStats, Key, KeyValue, StatSpec
from dpcert.core.domains import Domain
from dpcert.core.frames import FrameDomain, GroupDistance, GroupedDomain
from dpcert.core.metrics import Metric
from dpcert.core.partial import PartialConstructor, partial
from dpcert.core.transformation import Transformation
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch

__all__ = ["cast_key", "make_group_by", "then_group_by"]

#: Logical types whose keys must already be of the Python type (no conversion at all).
_EXACT_TYPES: dict[str, type | tuple[type, ...]] = {
    "str": str, "bool": bool, "date": dt.date}


def cast_key(value: object, logical: str, name: str) -> KeyValue:
    """``value`` as a member of the logical column type, exactly, or InvalidParameter.

    Examples
    --------
    >>> cast_key(3.0, "int", "keys[0][0]"), cast_key(3, "float", "k")
    (3, 3.0)
    >>> cast_key(3.5, "int", "keys[0][0]")
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: keys[0][0]=3.5 does not convert exactly to int
    """
    ok: KeyValue = None
    if logical == "int" and not isinstance(value, bool):
        if isinstance(value, int):
            ok = value
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            ok = int(value)
    elif logical == "float" and not isinstance(value, bool) and isinstance(value, (int, float)):
        f = float(value)
        # a NaN key can never be matched by equality
        ok = f if (isinstance(value, float) or int(f) == value) and not math.isnan(f) else None
    elif logical in ("datetime", "datetime_ntz"):
        # an instant column takes time-zone-aware keys only, a wall-clock column naive ones
        if isinstance(value, dt.datetime) and (value.utcoffset() is None) == (
                logical == "datetime_ntz"):
            ok = value
    elif isinstance(value, _EXACT_TYPES.get(logical, ())) and not (
            logical == "date" and isinstance(value, dt.datetime)):
        ok = cast("KeyValue", value)  # an instance of the logical type's exact classes
    if ok is None:
        raise InvalidParameter(f"{name}={value!r} does not convert exactly to {logical}")
    return ok


def make_group_by(input_domain: Domain, input_metric: Metric, by: Sequence[str],
                  keys: Sequence[object] | None, stats: Sequence[StatSpec], *,
                  backend: FrameOps | None) -> Transformation:
    """Every statistic of ``stats`` per group of ``by`` in one backend pass.

    Parameters
    ----------
    input_domain : FrameDomain bounded by `make_bound_contributions` with the same ``by``
    input_metric : GroupDistance
    by : key columns (``()``: one global group, whose key is ``()``)
    keys : public keys (tuples), or None for private keys
    stats : the exact integer statistics (``dpcert.backends.base.StatSpec``)
    backend : FrameOps (``None`` only to read the map)
    """
    if not isinstance(input_domain, FrameDomain) or input_domain.bounds is None:
        raise DomainMismatch(
            f"make_group_by needs a FrameDomain bounded by make_bound_contributions, got "
            f"{input_domain!r}")
    if not isinstance(input_metric, GroupDistance):
        raise MetricMismatch(f"make_group_by needs GroupDistance, got "
                             f"{type(input_metric).__name__}")
    by_t = tuple(by)
    if input_domain.bounds[0] != by_t:
        raise InvalidParameter(
            f"by={list(by_t)} differs from the bounding's groups {list(input_domain.bounds[0])}")
    cols = input_domain.columns
    specs = tuple(stats)
    names = [s.name for s in specs]
    if not specs or len(set(names)) != len(names):
        raise InvalidParameter(f"stats={names} must be non-empty with distinct names")
    for s in specs:
        if s.column is not None and s.column not in cols:
            raise InvalidParameter(f"stat {s.name!r}: column {s.column!r} is not in the schema")
    public: tuple[Key, ...] | None = None
    if keys is not None:
        types = [cols[c] for c in by_t]
        cast_keys: list[Key] = []
        seen: dict[tuple[object, ...], int] = {}
        for i, k in enumerate(keys):
            kt = tuple(k) if isinstance(k, (tuple, list)) else (k,)
            if len(kt) != len(by_t):
                raise InvalidParameter(f"keys[{i}]={kt!r} must have {len(by_t)} values")
            ck = tuple(cast_key(v, t, f"keys[{i}][{j}]")
                       for j, (v, t) in enumerate(zip(kt, types, strict=True)))
            if ck in seen:
                raise InvalidParameter(
                    f"keys[{i}]={kt!r} repeats keys[{seen[ck]}] after the strict cast to {types}")
            seen[ck] = i
            cast_keys.append(ck)
        public = tuple(cast_keys)
    out = GroupedDomain(by_t, tuple(names), public)

    def function(frame: object) -> GroupedStats:
        if backend is None:
            raise InvalidParameter("make_group_by was built without a backend")
        # no group columns: one group (the key ``()``), which backends compute as keys=None
        keys = None if public is None or not by_t else list(public)
        return backend.group_stats(frame, by_t, keys, specs)

    return Transformation(
        input_domain, input_metric, out, input_metric,
        function=function,
        stability_map=lambda d: d,
        name="group_by",
        params={"by": list(by_t), "keys": "private" if public is None else len(public),
                "stats": [f"{s.name}:{s.kind}" for s in specs]},
        proof="frame_group_by.md",
    )


def then_group_by(by: Sequence[str], keys: Sequence[object] | None,
                  stats: Sequence[StatSpec], *, backend: FrameOps | None) -> PartialConstructor:
    """Partial form of `make_group_by`."""
    return partial(make_group_by, "group_by", by, keys, stats, backend=backend)
