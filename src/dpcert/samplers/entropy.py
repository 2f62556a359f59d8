"""The single door to randomness: uniform 64-bit words from the operating system's CSPRNG.

Every random bit dpcert uses comes through an `EntropySource`.  The default,
`SystemSource`, reads ``os.getrandom`` (or ``os.urandom``) in large blocks and hands the
bytes out as NumPy ``uint64`` words; it never falls back to a weaker generator and raises
`EntropyError` when the OS cannot deliver.  `InsecureSeededSource`
is a deterministic generator for reproducible *tests only*; its name says so.

Examples
--------
>>> src = InsecureSeededSource(7)
>>> words = src.random_uint64(3)
>>> words.dtype, words.shape
(dtype('uint64'), (3,))
>>> bool((InsecureSeededSource(7).random_uint64(3) == words).all())
True
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod

import numpy as np
import numpy.typing as npt

from dpcert.errors import EntropyError, InvalidParameter

__all__ = ["EntropySource", "InsecureSeededSource", "SystemSource", "default_source"]

U64 = npt.NDArray[np.uint64]

#: Bytes read from the OS per refill of the :class:`SystemSource` buffer.
_BLOCK_BYTES = 1 << 20


class EntropySource(ABC):
    """Something that produces independent, uniformly distributed 64-bit words."""

    @abstractmethod
    def random_uint64(self, n: int) -> U64:
        """Return ``n`` independent uniform words as a fresh ``uint64`` array."""

    def random_uint32(self, n: int) -> npt.NDArray[np.uint32]:
        """``n`` independent uniform 32-bit words (half a 64-bit word each)."""
        words = self.random_uint64((n + 1) // 2)
        return words.view(np.uint32)[:n]

    def random_uint16(self, n: int) -> npt.NDArray[np.uint16]:
        """``n`` independent uniform 16-bit words (a quarter of a 64-bit word each)."""
        words = self.random_uint64((n + 3) // 4)
        return words.view(np.uint16)[:n]


def _read_os(nbytes: int) -> bytes:
    try:
        if hasattr(os, "getrandom"):
            chunks = []
            left = nbytes
            while left > 0:
                got = os.getrandom(min(left, 1 << 25))
                if not got:
                    raise OSError("getrandom returned no bytes")
                chunks.append(got)
                left -= len(got)
            data = b"".join(chunks)
        else:  # pragma: no cover - non-Linux platforms
            data = os.urandom(nbytes)
    except (OSError, NotImplementedError) as e:
        raise EntropyError(f"the OS CSPRNG could not be read ({nbytes} bytes): {e}") from e
    if len(data) != nbytes:
        raise EntropyError(f"the OS CSPRNG returned {len(data)} bytes, wanted {nbytes}")
    return data


class SystemSource(EntropySource):
    """Words from the OS CSPRNG (``getrandom``/``urandom``), read in 1 MiB blocks.

    Thread-safe.  The buffer is dropped in a child process after ``os.fork`` so that parent and
    child never hand out the same bytes.  Large requests bypass the buffer.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._buf: U64 = np.empty(0, dtype=np.uint64)
        self._pos = 0

    def random_uint64(self, n: int) -> U64:
        if n < 0:
            raise InvalidParameter(f"n={n!r} must be >= 0")
        with self._lock:
            if os.getpid() != self._pid:  # forked: never reuse the parent's bytes
                self._pid = os.getpid()
                self._buf = np.empty(0, dtype=np.uint64)
                self._pos = 0
            avail = self._buf.size - self._pos
            if n <= avail:
                out = self._buf[self._pos:self._pos + n].copy()
                self._pos += n
                return out
            if 8 * n >= _BLOCK_BYTES:
                return np.frombuffer(_read_os(8 * n), dtype=np.uint64).copy()
            head = self._buf[self._pos:]
            self._buf = np.frombuffer(_read_os(_BLOCK_BYTES), dtype=np.uint64)
            need = n - head.size
            out = np.concatenate([head, self._buf[:need]])
            self._pos = need
            return out


class InsecureSeededSource(EntropySource):
    """A deterministic, seeded generator (NumPy PCG64) — for reproducible tests ONLY.

    Never use it to release data: anyone who knows the seed knows the noise.
    """

    def __init__(self, seed: int) -> None:
        self._gen = np.random.Generator(np.random.PCG64(seed))

    def random_uint64(self, n: int) -> U64:
        if n < 0:
            raise InvalidParameter(f"n={n!r} must be >= 0")
        return np.asarray(self._gen.bit_generator.random_raw(n), dtype=np.uint64)


_default: SystemSource | None = None
_default_pid = -1
_default_lock = threading.Lock()


def default_source() -> SystemSource:
    """The process-wide `SystemSource` (re-created in a child after ``os.fork``)."""
    global _default, _default_pid
    pid = os.getpid()
    with _default_lock:
        if _default is None or _default_pid != pid:
            _default = SystemSource()
            _default_pid = pid
        return _default
