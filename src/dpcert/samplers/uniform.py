"""Exact uniform integers below ``n``."""

from __future__ import annotations

import numpy as np

from dpcert._types import Array
from dpcert._validate import check_int, check_size
from dpcert.samplers.entropy import EntropySource, default_source

__all__ = ["uniform_below"]


def uniform_below(n: object, size: int, *, source: EntropySource | None = None
                  ) -> Array:
    """``size`` independent draws, uniform on ``{0, ..., n - 1}``, exactly.

    A power of two takes the top bits of one word; other ``n <= 2**63`` use rejection
    (a word ``w`` is kept when ``w < 2**64 - (2**64 mod n)``, then ``w mod n`` is uniform).  The
    result is ``int64``; for ``n > 2**63`` it is an ``object`` array of Python ints.

    Examples
    --------
    >>> from dpcert.samplers import InsecureSeededSource
    >>> x = uniform_below(6, 10, source=InsecureSeededSource(0))
    >>> x.dtype, bool(((0 <= x) & (x < 6)).all())
    (dtype('int64'), True)
    >>> uniform_below(2**100, 2).dtype
    dtype('O')
    """
    nn = check_int(n, "n", minimum=1)
    k = check_size(size)
    src = default_source() if source is None else source
    if nn > 2**63:
        return _huge(nn, k, src)
    if nn == 1:
        return np.zeros(k, dtype=np.int64)
    if nn & (nn - 1) == 0:
        bits = nn.bit_length() - 1
        return (src.random_uint64(k) >> np.uint64(64 - bits)).astype(np.int64)
    limit = np.uint64(2**64 - (2**64 % nn))
    out = np.empty(k, dtype=np.int64)
    todo = np.arange(k)
    while todo.size:
        w = src.random_uint64(todo.size)
        ok = w < limit
        out[todo[ok]] = (w[ok] % np.uint64(nn)).astype(np.int64)
        todo = todo[~ok]
    return out


def _huge(n: int, size: int, src: EntropySource) -> Array:
    bits = n.bit_length()
    words = (bits + 63) // 64
    out = np.empty(size, dtype=object)
    for i in range(size):
        while True:
            x = 0
            for w in src.random_uint64(words).tolist():
                x = (x << 64) | int(w)
            x >>= 64 * words - bits
            if x < n:
                out[i] = x
                break
    return out
