"""Public key cross products and the group_by forms that use them (issue 44 item 4)."""

from __future__ import annotations

import polars as pl
import pytest

import dpcert as dp
from dpcert import errors
from dpcert.frame.keys import keys_product


def test_keys_product_order_and_size() -> None:
    keys = dp.keys_product({"a": ["x", "y"], "b": range(3)})
    assert keys == [("x", 0), ("x", 1), ("x", 2), ("y", 0), ("y", 1), ("y", 2)]


@pytest.mark.parametrize("bad", [{}, {"a": []}, {"a": "xy"}, {"a": [1, 1]}, ["a"]])
def test_keys_product_refuses_bad_input(bad: object) -> None:
    with pytest.raises(errors.InvalidParameter, match="keys_product"):
        keys_product(bad)  # type: ignore[arg-type]


def _sess() -> dp.Session:
    df = pl.DataFrame({"a": ["x", "y", "x"], "b": [0, 1, 2], "v": [1.0, 2.0, 3.0]})
    return dp.Session(df, budget=dp.PureDP(1.0))


def test_group_by_several_columns_lists_and_mappings_agree() -> None:
    sess = _sess()
    keys = dp.keys_product({"a": ["x", "y"], "b": [0, 1, 2]})
    forms = [sess.query().group_by("a", "b", keys=keys),
             sess.query().group_by(["a", "b"], keys=keys),
             sess.query().group_by(("a",), "b", keys=keys),
             sess.query().group_by(["a", "b"], keys={"a": ["x", "y"], "b": [0, 1, 2]})]
    for q in forms:
        assert q.group_keys == ("a", "b") and q.public_keys == tuple(keys)
    out = forms[1].agg(dp.count()).release(dp.PureDP(1.0)).to_polars()
    assert out.height == 6 and out.columns[:2] == ["a", "b"]


def test_group_by_mapping_must_name_the_columns_in_order() -> None:
    with pytest.raises(errors.InvalidParameter, match="must be the group_by columns"):
        _sess().query().group_by("a", "b", keys={"b": [0], "a": ["x"]})
    with pytest.raises(errors.InvalidParameter, match="non-empty string"):
        _sess().query().group_by(["a", 3], keys=[("x", 1)])  # type: ignore[list-item]
    with pytest.raises(errors.InvalidParameter, match="at least one column"):
        _sess().query().group_by([], keys=[()])
