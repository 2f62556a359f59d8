"""Public group keys: the cross product of per-column key lists.

A query grouped by several columns with public keys needs every key *tuple*; listing them by
hand is error-prone, so `keys_product` builds them (``itertools.product`` order: the last
column varies fastest).  Reads no data and costs no privacy: the keys must be public.

Examples
--------
>>> keys_product({"sex": ["f", "m"], "year": [2020, 2021]})
[('f', 2020), ('f', 2021), ('m', 2020), ('m', 2021)]
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert.frame.aliases import KeyValue, PublicKey

__all__ = ["keys_product"]


def keys_product(values: Mapping[str, Sequence[KeyValue]]) -> list[PublicKey]:
    """Every combination of the public values of each column, as key tuples in the column
    order of ``values`` (pass the same columns, in the same order, to ``group_by``).

    Parameters
    ----------
    values
        Column name → its public values (a list, tuple or range; each non-empty, no
        duplicates).

    Returns
    -------
    list of tuple
        ``len(values[c1]) × len(values[c2]) × ...`` key tuples.

    Examples
    --------
    >>> keys_product({"region": ["n", "s"]})
    [('n',), ('s',)]
    >>> keys_product({"a": []})
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: keys_product: values['a']=[] is empty
    """
    if not isinstance(values, Mapping) or not values:
        raise InvalidParameter(f"keys_product: values={values!r} must be a non-empty mapping "
                               "column -> list of public values")
    lists = []
    for col, vals in values.items():
        if isinstance(vals, (str, bytes)) or not isinstance(vals, (Sequence, range)):
            raise InvalidParameter(f"keys_product: values[{col!r}]={vals!r} must be a list")
        if len(vals) == 0:
            raise InvalidParameter(f"keys_product: values[{col!r}]={vals!r} is empty")
        if len(set(vals)) != len(vals):
            raise InvalidParameter(f"keys_product: values[{col!r}]={vals!r} repeats a value")
        lists.append(list(vals))
    return list(itertools.product(*lists))
