"""dpcert's keyed row hash: Spark's ``xxhash64`` reproduced bit for bit in vectorised NumPy.

Contribution bounding orders each unit's groups and rows by a keyed hash.  For the Polars and
Spark backends to keep *the same rows* for the same release key, both must compute the same hash.
Polars' ``Expr.hash`` is not stable across versions and Spark has no way to run it without a
Python UDF, so dpcert uses the one hash Spark exposes as a native SQL function and that is
specified by its code: ``xxhash64(c1, ..., cn)`` (XXH64 [1]_ with seed 42, chained over the
columns: each column's hash is the seed of the next; a null column leaves the hash unchanged).

Canonical column encodings (the Spark backend casts to exactly these before hashing):

* integers of every width, booleans and dates → a 64-bit long (dates: days since 1970-01-01),
  hashed with ``hashLong``;
* datetimes → microseconds since 1970-01-01 00:00 as a long, hashed with ``hashLong``: for a
  time-zone-aware column (Polars ``Datetime(tz)``, Spark ``TIMESTAMP``) the instant's UTC
  microseconds (Spark's ``unix_micros``), for a naive one (Polars ``Datetime``, Spark
  ``TIMESTAMP_NTZ``) the wall-clock microseconds (``timestampdiff(MICROSECOND, epoch, c)``).
  Millisecond and second units convert exactly; nanosecond values are truncated to
  microseconds, which only makes hashes *tie* (the bounding breaks ties by exact values), and
  Spark has no nanosecond type to disagree with;
* floats of both widths → a double; ``-0.0`` and ``0.0`` hash alike, every NaN hashes as the one
  canonical NaN (``Double.doubleToLongBits``), then ``hashLong``;
* strings → their UTF-8 bytes, hashed with ``hashUnsafeBytes``;
* anything else is refused (`encoding_of` raises).

The release key (16 CSPRNG bytes) enters as two literal longs placed first in the chain, so the
chain ``xxhash64(k1, k2, c1, ..., cn)`` is keyed.  XXH64 is not a cryptographic PRF: the privacy
proof of bounding needs no randomness at all (a unit's kept rows depend only on its own rows and
the key), the key only keeps the choice unpredictable to someone who does not know it, and the
hash only *orders*: units and groups are always compared by their exact values.

Everything is vectorised: integer and float columns in fixed-size chunks with in-place ``uint64``
arithmetic (it wraps modulo 2**64 as Java's ``long`` does), strings grouped by byte length so that
each group is one ``(n, length)`` byte matrix.

References
----------
.. [1] Y. Collet, "xxHash: extremely fast hash algorithm", XXH64 specification,
   https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md ; Apache Spark
   ``org.apache.spark.sql.catalyst.expressions.XXH64`` and ``HashExpression.computeHash``.

Examples
--------
>>> import numpy as np
>>> int(as_signed(hash_long(np.array([1], dtype=np.uint64), SPARK_SEED))[0])
-7001672635703045582
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from dpcert._types import Array, IntArray
from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    import polars as pl

    from dpcert.backends._polars_types import DType

__all__ = [
    "SPARK_SEED",
    "Encoding",
    "Seed",
    "U64Array",
    "as_signed",
    "encoding_of",
    "hash_bytes",
    "hash_chain",
    "hash_long",
    "hash_series",
    "key_longs",
    "key_seed",
    "signed_order",
]

_M = (1 << 64) - 1
P1 = 0x9E3779B185EBCA87
P2 = 0xC2B2AE3D27D4EB4F
P3 = 0x165667B19E3779F9
P4 = 0x85EBCA77C2B2AE63
P5 = 0x27D4EB2F165667C5
#: The seed of Spark's ``xxhash64`` SQL function.
SPARK_SEED = 42
_CHUNK = 1 << 15  # elements per chunk: the temporaries stay in the CPU cache
_U = np.uint64
_SIGN = _U(1 << 63)
_CANON_NAN = 0x7FF8000000000000

#: How a column is encoded before hashing: as a long, as a double's bits, or as UTF-8 bytes.
Encoding = Literal["long", "double", "bytes"]
#: Hashes and hash states: 64-bit words that wrap modulo 2**64 (Java's ``long`` bits).
U64Array: TypeAlias = npt.NDArray[np.uint64]
#: The state a link of the chain starts from: one seed, or one per element.
Seed: TypeAlias = "int | U64Array"


def _rotl(x: U64Array, r: int, tmp: U64Array) -> None:
    """In place: ``x = rotl64(x, r)`` (``tmp`` is scratch of the same shape)."""
    np.right_shift(x, _U(64 - r), out=tmp)
    np.left_shift(x, _U(r), out=x)
    np.bitwise_or(x, tmp, out=x)


def _fmix(h: U64Array, tmp: U64Array) -> None:
    """In place: XXH64's final avalanche."""
    for shift, prime in ((33, P2), (29, P3)):
        np.right_shift(h, _U(shift), out=tmp)
        np.bitwise_xor(h, tmp, out=h)
        np.multiply(h, _U(prime), out=h)
    np.right_shift(h, _U(32), out=tmp)
    np.bitwise_xor(h, tmp, out=h)


def _round_word(h: U64Array, word: U64Array,
                tmp: U64Array, k: U64Array) -> None:
    """In place: ``h ^= rotl(word * P2, 31) * P1; h = rotl(h, 27) * P1 + P4``."""
    np.multiply(word, _U(P2), out=k)
    _rotl(k, 31, tmp)
    np.multiply(k, _U(P1), out=k)
    np.bitwise_xor(h, k, out=h)
    _rotl(h, 27, tmp)
    np.multiply(h, _U(P1), out=h)
    np.add(h, _U(P4), out=h)


def _seed_array(seed: Seed, n: int) -> U64Array:
    if isinstance(seed, np.ndarray):
        if seed.shape != (n,):
            raise InvalidParameter(f"seed has shape {seed.shape}, expected ({n},)")
        return seed.astype(np.uint64, copy=True)
    return np.full(n, seed & _M, dtype=np.uint64)


def hash_long(x: IntArray | U64Array, seed: Seed) -> U64Array:
    """Spark's ``XXH64.hashLong(x, seed)`` for every element (``x`` viewed as ``uint64``).

    Parameters
    ----------
    x : ndarray of int64 or uint64
        The longs to hash.
    seed : int or ndarray of uint64
        One seed, or one per element (the previous column's hash in a chain).

    Returns
    -------
    ndarray of uint64

    Examples
    --------
    >>> import numpy as np
    >>> h = hash_long(np.array([0, -1], dtype=np.int64), 42)
    >>> [int(v) for v in as_signed(h)]
    [-5252525462095825812, 3858142552250413010]
    """
    xu = np.ascontiguousarray(x).view(np.uint64)
    n = xu.shape[0]
    out = _seed_array(seed, n)
    np.add(out, _U((P5 + 8) & _M), out=out)
    tmp = np.empty(min(n, _CHUNK), dtype=np.uint64)
    k = np.empty_like(tmp)
    for s in range(0, n, _CHUNK):
        e = min(n, s + _CHUNK)
        m = e - s
        h = out[s:e]
        _round_word(h, xu[s:e], tmp[:m], k[:m])
        _fmix(h, tmp[:m])
    return out


def hash_bytes(data: npt.NDArray[np.uint8], offsets: Array,
               seed: Seed) -> U64Array:
    """Spark's ``XXH64.hashUnsafeBytes`` of each string ``data[offsets[i]:offsets[i+1]]``.

    Strings are grouped by byte length; each group is hashed as one ``(n, length)`` matrix, so the
    Python loop runs over the distinct lengths, never over the strings.

    Examples
    --------
    >>> import numpy as np
    >>> data = np.frombuffer("abcé".encode(), dtype=np.uint8)
    >>> [int(v) for v in as_signed(hash_bytes(data, np.array([0, 3, 5]), 42))]
    [1423657621850124518, 2065146811275570100]
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    n = offsets.shape[0] - 1
    seeds = _seed_array(seed, n)
    out = np.empty(n, dtype=np.uint64)
    lengths = np.diff(offsets)
    padded = np.concatenate([np.asarray(data, dtype=np.uint8), np.zeros(40, dtype=np.uint8)])
    for length in np.unique(lengths).tolist():
        idx = np.nonzero(lengths == length)[0]
        for s in range(0, idx.shape[0], _CHUNK):
            part = idx[s:s + _CHUNK]
            out[part] = _hash_fixed_length(padded, offsets[part], int(length), seeds[part])
    return out


def _hash_fixed_length(padded: npt.NDArray[np.uint8], starts: IntArray, length: int,
                       seed: U64Array) -> U64Array:
    """``hashUnsafeBytes`` of ``len(starts)`` strings of the same byte ``length``."""
    m = starts.shape[0]
    n_words = (length + 7) // 8
    mat = padded[starts[:, None] + np.arange(n_words * 8)]  # zero padded past each string's end
    words = np.ascontiguousarray(mat).view("<u8").astype(np.uint64)  # (m, n_words)
    tmp = np.empty(m, dtype=np.uint64)
    k = np.empty(m, dtype=np.uint64)
    pos = 0
    if length >= 32:
        v = [seed + _U((P1 + P2) & _M), seed + _U(P2), seed.copy(), seed - _U(P1)]
        while pos + 32 <= length:
            for j in range(4):
                np.multiply(words[:, pos // 8 + j], _U(P2), out=k)
                np.add(v[j], k, out=v[j])
                _rotl(v[j], 31, tmp)
                np.multiply(v[j], _U(P1), out=v[j])
            pos += 32
        h = np.zeros(m, dtype=np.uint64)
        for j, r in enumerate((1, 7, 12, 18)):
            vj = v[j].copy()
            _rotl(vj, r, tmp)
            np.add(h, vj, out=h)
        for j in range(4):
            np.multiply(v[j], _U(P2), out=v[j])
            _rotl(v[j], 31, tmp)
            np.multiply(v[j], _U(P1), out=v[j])
            np.bitwise_xor(h, v[j], out=h)
            np.multiply(h, _U(P1), out=h)
            np.add(h, _U(P4), out=h)
    else:
        h = seed + _U(P5)
    np.add(h, _U(length), out=h)
    while pos + 8 <= length:
        _round_word(h, words[:, pos // 8], tmp, k)
        pos += 8
    if pos + 4 <= length:
        word = words[:, pos // 8]
        if pos % 8:  # pragma: no cover - pos is a multiple of 8 here
            raise AssertionError(pos)
        np.bitwise_and(word, _U(0xFFFFFFFF), out=k)
        np.multiply(k, _U(P1), out=k)
        np.bitwise_xor(h, k, out=h)
        _rotl(h, 23, tmp)
        np.multiply(h, _U(P2), out=h)
        np.add(h, _U(P3), out=h)
        pos += 4
    while pos < length:
        byte = mat[:, pos].astype(np.uint64)
        np.multiply(byte, _U(P5), out=k)
        np.bitwise_xor(h, k, out=h)
        _rotl(h, 11, tmp)
        np.multiply(h, _U(P1), out=h)
        pos += 1
    _fmix(h, tmp)
    return h


def key_longs(key: bytes) -> tuple[int, int]:
    """The release key as two signed 64-bit longs (little-endian halves of 16 bytes).

    Examples
    --------
    >>> key_longs(bytes(range(16)))
    (506097522914230528, 1084818905618843912)
    """
    if not isinstance(key, bytes) or len(key) != 16:
        raise InvalidParameter(f"key must be 16 bytes, got {type(key).__name__} of length "
                               f"{len(key) if isinstance(key, bytes) else '?'}")
    k1 = int.from_bytes(key[:8], "little", signed=True)
    k2 = int.from_bytes(key[8:], "little", signed=True)
    return k1, k2


def key_seed(key: bytes) -> int:
    """The chain state after the two key longs: ``xxhash64(k1, k2, ...)`` continues from here.

    Examples
    --------
    >>> 0 <= key_seed(bytes(16)) < 2**64
    True
    """
    k1, k2 = key_longs(key)
    h = hash_long(np.array([k1], dtype=np.int64), SPARK_SEED)
    return int(hash_long(np.array([k2], dtype=np.int64), h)[0])


def as_signed(h: U64Array) -> IntArray:
    """The hashes as Spark's signed ``long`` values (a view)."""
    return h.view(np.int64)


def signed_order(h: U64Array) -> U64Array:
    """``uint64`` keys whose unsigned order is the *signed* order of the hashes (Spark's order).

    Examples
    --------
    >>> import numpy as np
    >>> h = np.array([-1, 0, 5], dtype=np.int64).view(np.uint64)
    >>> [int(v) for v in np.argsort(signed_order(h))]
    [0, 1, 2]
    """
    out: U64Array = np.bitwise_xor(h, _SIGN)
    return out


def encoding_of(dtype: DType, column: str) -> Encoding:
    """The canonical encoding of a Polars dtype, or `InvalidParameter` if it has none."""
    import polars as pl

    if dtype.is_integer() or dtype == pl.Boolean or dtype == pl.Date:
        return "long"
    if isinstance(dtype, pl.Datetime):
        return "long"  # microseconds since the epoch (UTC instant if time-zone aware)
    if dtype.is_float():
        return "double"
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        return "bytes"
    raise InvalidParameter(
        f"column {column!r} has type {dtype}: bounding can only key on integer, boolean, date, "
        "datetime, float or string columns")


def canonical_double_bits(v: Array) -> U64Array:
    """Bits of each double with ``-0.0 → 0.0`` and every NaN the canonical NaN (as uint64)."""
    v = np.asarray(v, dtype=np.float64)
    bits = np.where(v == 0.0, 0.0, v).view(np.uint64)
    return np.where(np.isnan(v), _U(_CANON_NAN), bits)


def hash_series(s: pl.Series, seed: Seed) -> U64Array:
    """One link of the chain: Spark's ``computeHash(value, seed)`` for a Polars Series.

    Null values leave the seed unchanged (as in Spark).

    Examples
    --------
    >>> import polars as pl
    >>> h = hash_series(pl.Series([1, None]), SPARK_SEED)
    >>> [int(v) for v in as_signed(h)]
    [-7001672635703045582, 42]
    """
    import polars as pl

    enc = encoding_of(s.dtype, s.name)
    n = s.len()
    if enc == "long":
        if isinstance(s.dtype, pl.Datetime):
            s = s.dt.cast_time_unit("us")  # physical value: UTC microseconds when aware
        if s.dtype == pl.UInt64:
            s = s.reinterpret(signed=True)
        h = hash_long(s.cast(pl.Int64).fill_null(0).to_numpy(), seed)
    elif enc == "double":
        bits = canonical_double_bits(s.cast(pl.Float64).fill_null(0.0).to_numpy())
        h = hash_long(bits, seed)
    else:
        text = s.cast(pl.String).fill_null("")
        lengths = text.str.len_bytes().cast(pl.Int64).to_numpy()
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        joined = text.str.join("").item() if n else ""
        data = np.frombuffer(joined.encode("utf-8"), dtype=np.uint8)
        h = hash_bytes(data, offsets, seed)
    if s.null_count():
        nulls = s.is_null().to_numpy()
        h[nulls] = seed[nulls] if isinstance(seed, np.ndarray) else _U(seed & _M)
    return h


def hash_chain(columns: Iterable[pl.Series], seed: Seed) -> U64Array:
    """Chain `hash_series` over the Series ``columns`` (Spark's multi-argument
    ``xxhash64``); with ``seed = key_seed(key)`` this is ``xxhash64(k1, k2, *columns)``."""
    h: Seed = seed
    for s in columns:
        h = hash_series(s, h)
    if isinstance(h, int):
        raise InvalidParameter("hash_chain needs at least one column")
    return h
