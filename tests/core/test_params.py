"""Reading constructor parameters back (``dpcert.core.params``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert.core.params import param_mapping, param_number
from dpcert.errors import InvalidParameter


def test_numbers_come_back_as_python_numbers() -> None:
    assert param_number(np.int64(3), "k") == 3 and type(param_number(np.int64(3), "k")) is int
    assert type(param_number(np.float64(0.5), "x")) is float
    assert param_number("1/2", "level") == Fraction(1, 2)
    m = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=2)
    assert param_number(m.params["scale"], "scale") == 2


@pytest.mark.parametrize("bad", [None, "half", [1], {"a": 1}])
def test_non_numbers_are_refused_by_name(bad: object) -> None:
    with pytest.raises(InvalidParameter, match="scale="):
        param_number(bad, "scale")


def test_mappings_come_back_and_others_are_refused() -> None:
    assert param_mapping({"count": "2"}, "scales") == {"count": "2"}
    with pytest.raises(InvalidParameter, match="scales="):
        param_mapping(["count"], "scales")
