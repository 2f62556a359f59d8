"""What the SQL-tree backends share (`dpcert.backends._sql_ops`): predicate methods over
checked trees refuse anything `check_predicates` did not return; canonical keys."""

from __future__ import annotations

import pytest

from dpcert.backends._sql_ops import SqlTreeOps, canon_key
from dpcert.backends.spark_expr import CheckedPredicate, parse_sql
from dpcert.errors import InvalidParameter

OPS = SqlTreeOps()


def test_checked_trees_are_read_and_renamed() -> None:
    p = CheckedPredicate(parse_sql("x > 1 AND y IS NULL"))
    assert OPS.predicate_columns([p]) == ("x", "y")
    (q,) = OPS.rename_predicates([p], {"x": "c0", "y": "c1"}, {})
    assert OPS.predicate_columns([q]) == ("c0", "c1")


@pytest.mark.parametrize("bad", ["x > 1", 3, ("col", "x")])
def test_unchecked_predicates_are_refused(bad: object) -> None:
    with pytest.raises(InvalidParameter, match="was not checked by check_predicates"):
        OPS.predicate_columns([bad])
    with pytest.raises(InvalidParameter, match="was not checked by check_predicates"):
        OPS.rename_predicates([bad], {"x": "c0"}, {})


def test_canon_key_merges_signed_zeros_and_nans() -> None:
    assert canon_key((-0.0, float("nan"), "a", None)) == (0.0, ("nan",), "a", None)
    assert canon_key((float("nan"),)) == canon_key((-float("nan"),))
