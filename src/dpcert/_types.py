"""Named types for arrays, used in signatures instead of spelling ``np.ndarray[...]`` each time.

``FloatArray`` / ``IntArray`` / ``BoolArray`` say the dtype; ``Array`` is an array whose dtype is
the caller's (a column of a frame, the input of a generic post-processing step).  Real privacy
parameters are `dpcert._numbers.Number`.

Examples
--------
>>> import numpy as np
>>> x: FloatArray = np.zeros(3)
>>> x.dtype
dtype('float64')
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from dpcert._numbers import Number

__all__ = ["JSON", "Array", "BoolArray", "DistanceLike", "FloatArray", "IntArray"]

#: An array of binary64 floats.
FloatArray: TypeAlias = npt.NDArray[np.float64]
#: An array of 64-bit integers.
IntArray: TypeAlias = npt.NDArray[np.int64]
#: An array of booleans.
BoolArray: TypeAlias = npt.NDArray[np.bool_]
#: An array of any shape whose dtype the caller chooses.
Array: TypeAlias = np.ndarray[Any, Any]
#: A distance between inputs or a privacy amount as users give it, before a metric or a measure
#: validates it: a number (ε, ρ, a count of changed records) or a tuple of them ((ε, δ); a group
#: distance's (l0, l∞, l1)).  (:data:`dpcert.core.metrics.Distance` is a validated scalar.)
DistanceLike: TypeAlias = "Number | tuple[Number, ...]"
#: A JSON value as `json.loads` returns it or `json.dumps` accepts it (plan files, reports, audit
#: records).
JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"
