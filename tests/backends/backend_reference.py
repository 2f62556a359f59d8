"""Reference implementations for the backend tests: an independent pure-Python reference of Spark's
``xxhash64`` (written from the XXH64 specification, scalar, no NumPy) and a reference of the
keyed bounding rule (a plain loop over units, for tiny frames)."""

from __future__ import annotations

import math
import struct
from collections import defaultdict
from typing import Any

M = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & M


def _fmix(h: int) -> int:
    h ^= h >> 33
    h = h * P2 & M
    h ^= h >> 29
    h = h * P3 & M
    return h ^ (h >> 32)


def _round(h: int, w: int) -> int:
    h ^= _rotl(w * P2 & M, 31) * P1 & M
    return (_rotl(h, 27) * P1 + P4) & M


def ref_long(x: int, seed: int) -> int:
    return _fmix(_round((seed + P5 + 8) & M, x & M))


def ref_bytes(b: bytes, seed: int) -> int:
    n, i = len(b), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed & M, (seed - P1) & M]
        while i + 32 <= n:
            for j in range(4):
                w = int.from_bytes(b[i + 8 * j:i + 8 * j + 8], "little")
                v[j] = _rotl((v[j] + w * P2) & M, 31) * P1 & M
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M
        for j in range(4):
            h ^= _rotl(v[j] * P2 & M, 31) * P1 & M
            h = (h * P1 + P4) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h = _round(h, int.from_bytes(b[i:i + 8], "little"))
        i += 8
    if i + 4 <= n:
        h ^= int.from_bytes(b[i:i + 4], "little") * P1 & M
        h = (_rotl(h, 23) * P2 + P3) & M
        i += 4
    while i < n:
        h ^= b[i] * P5 & M
        h = _rotl(h, 11) * P1 & M
        i += 1
    return _fmix(h)


def ref_value(v: Any, seed: int) -> int:
    """Spark's computeHash of one canonical value (None skipped)."""
    if v is None:
        return seed
    if isinstance(v, bool):
        return ref_long(int(v), seed)
    if isinstance(v, int):
        return ref_long(v, seed)
    if isinstance(v, float):
        if math.isnan(v):
            return ref_long(0x7FF8000000000000, seed)
        return ref_long(struct.unpack("<q", struct.pack("<d", v + 0.0))[0], seed)
    if isinstance(v, str):
        return ref_bytes(v.encode("utf-8"), seed)
    raise TypeError(type(v))


def ref_chain(values: Any, seed: int) -> int:
    for v in values:
        seed = ref_value(v, seed)
    return seed


def signed(h: int) -> int:
    return h - (1 << 64) if h >> 63 else h


def canon(v: Any) -> Any:
    if isinstance(v, float):
        return ("nan",) if math.isnan(v) else v + 0.0
    return v


def _sort_part(v: Any) -> tuple[int, Any]:
    if v is None:
        return (3, 0)
    if isinstance(v, float) and math.isnan(v):
        return (2, 0)
    if isinstance(v, str):
        return (1, v.encode())
    return (1, v + 0.0 if isinstance(v, float) else v)


def ref_bound(rows: list[dict[str, Any]], unit: str, by: tuple[str, ...], vals: tuple[str, ...],
              G: int, R: int, seed: int) -> list[tuple[Any, ...]]:
    """The bounding rule, unit by unit; returns the kept rows as sorted (unit, by, vals) tuples
    (canonical values) so that frames can be compared as multisets."""
    units: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        units[canon(r[unit])].append(r)
    kept: list[tuple[Any, ...]] = []
    for urows in units.values():
        pairs: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        for r in urows:
            pairs[tuple(canon(r[c]) for c in by)].append(r)
        def pkey(item: Any) -> Any:
            r0 = item[1][0]
            h = signed(ref_chain([r0[unit], *(r0[c] for c in by)], seed))
            return (h, tuple(_sort_part(r0[c]) for c in by))
        for _, prow in sorted(pairs.items(), key=pkey)[:G]:
            def rkey(r: dict[str, Any]) -> Any:
                h = signed(ref_chain([r[unit], *(r[c] for c in by), *(r[c] for c in vals)], seed))
                return (h, tuple(_sort_part(r[c]) for c in vals))
            for r in sorted(prow, key=rkey)[:R]:
                kept.append(tuple(canon(r[c]) for c in (unit, *by, *vals)))
    return sorted(kept, key=lambda t: tuple(_sort_part(v) if not isinstance(v, tuple) else (2, 0)
                                            for v in t))
