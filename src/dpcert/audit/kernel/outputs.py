"""Getting samples out of a mechanism, and turning them into numeric arrays.

The auditor talks to mechanisms through one shape of callable, ``f(x, n) -> n outputs`` (a
*vectorised black box*).  `one_at_a_time` adapts a scalar callable ``g(x) -> output`` and
[`measurement_sampler`][dpcert.audit.outputs.measurement_sampler] a dpcert `Measurement`.

Outputs come back as whatever the mechanism returns (floats, ints, bools, strings, ``None``
for ⊥, tuples or rows of a 2-D array); `OutputEncoder` maps them to ``float64`` arrays
of shape ``(n,)`` or ``(n, k)``: numbers stay numbers, ``None`` becomes NaN, anything else
gets a category code.  The code book is *frozen* after the search phase, so on the estimation
batch every value is encoded by a fixed function (values never seen before all get code -1).

Examples
--------
>>> enc = OutputEncoder()
>>> enc.encode(["a", "b", "a"]).tolist()
[0.0, 1.0, 0.0]
>>> enc.freeze(); enc.encode(["b", "c"]).tolist()
[1.0, -1.0]
>>> sample = one_at_a_time(lambda x: x + 1)
>>> sample(1, 3)
[2, 2, 2]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeAlias, TypeVar

import numpy as np

from dpcert._types import Array
from dpcert.core.measurement import Measurement
from dpcert.errors import InvalidParameter

__all__ = ["OutputEncoder", "Outputs", "Sampler", "measurement_sampler", "one_at_a_time"]

X = TypeVar("X")

#: What a sampler returns for ``n`` draws: ``n`` values (numbers, bools, strings, ``None``,
#: rows), or an array with one row per draw.
Outputs: TypeAlias = "Array | Sequence[object]"

#: A vectorised black box: ``f(x, n)`` returns ``n`` independent outputs of the mechanism on x.
#: The auditor only calls it on the inputs of its own pairs, so an input is passed along unread.
Sampler: TypeAlias = Callable[[object, int], Outputs]


def one_at_a_time(function: Callable[[X], object]) -> Callable[[X, int], list[object]]:
    """Adapt a scalar callable ``g(x) -> output`` to the ``f(x, n)`` interface (a Python loop)."""

    def sample(x: X, n: int) -> list[object]:
        return [function(x) for _ in range(n)]

    sample.__name__ = getattr(function, "__name__", "mechanism")
    return sample


def measurement_sampler(measurement: Measurement) -> Sampler:
    """Sample a [`Measurement`][dpcert.core.measurement.Measurement].

    Uses the measurement's own vectorised ``sample(x, n)`` when it has a batch path (same
    parameters and code as a single release, drawn ``n`` times at once); otherwise calls it once
    per draw, through ``measurement(x)`` (domain check included) — the slow path.
    """
    if getattr(measurement, "batch_map", None) is not None:

        def sample(x: object, n: int) -> Outputs:
            out: Outputs = measurement.sample(x, n)
            return out

        sample.__name__ = getattr(measurement, "name", "measurement")
        return sample
    return one_at_a_time(measurement)


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating, bool, np.bool_))


class OutputEncoder:
    """Maps raw outputs to ``float64`` arrays with a code book for non-numeric values."""

    def __init__(self) -> None:
        self._codes: dict[Hashable, int] = {}
        self._frozen = False

    def freeze(self) -> None:
        """Stop adding codes: unseen non-numeric values encode as -1 from now on."""
        self._frozen = True

    def _code(self, v: object) -> float:
        if v is None:
            return float("nan")
        key = v.item() if isinstance(v, np.generic) else v
        try:
            code = self._codes.get(key)
        except TypeError:  # unhashable (a list): use its repr
            key = repr(key)
            code = self._codes.get(key)
        if code is None:
            if self._frozen:
                return -1.0
            code = len(self._codes)
            self._codes[key] = code
        return float(code)

    def _encode_objects(self, arr: Array) -> Array:
        flat = arr.ravel()
        if all(v is None or (_is_number(v) and not isinstance(v, (bool, np.bool_)))
               for v in flat.tolist()):
            out = np.array([np.nan if v is None else float(v) for v in flat.tolist()])
        else:
            out = np.array([self._code(v) for v in flat.tolist()], dtype=np.float64)
        return out.reshape(arr.shape)

    def encode(self, outputs: Outputs, n: int | None = None) -> Array:
        """``outputs`` (``n`` of them) as a float array of shape ``(n,)`` or ``(n, k)``."""
        if isinstance(outputs, np.ndarray) and outputs.dtype.kind in "biuf":
            arr = outputs.astype(np.float64, copy=False)
        else:
            seq = list(outputs) if not isinstance(outputs, np.ndarray) else outputs
            try:
                raw = np.asarray(seq)
            except ValueError:  # ragged rows
                raw = np.empty(len(seq), dtype=object)
                raw[:] = [tuple(v) if isinstance(v, (list, np.ndarray)) else v for v in seq]
            if raw.dtype.kind in "biuf":
                arr = raw.astype(np.float64)
            else:
                arr = self._encode_objects(raw.astype(object))
        if arr.ndim == 0 or arr.ndim > 2:
            raise InvalidParameter(
                f"mechanism outputs must form an array of shape (n,) or (n, k); got {arr.shape}"
            )
        if n is not None and arr.shape[0] != n:
            raise InvalidParameter(
                f"the mechanism returned {arr.shape[0]} outputs when asked for n={n}"
            )
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        return arr
