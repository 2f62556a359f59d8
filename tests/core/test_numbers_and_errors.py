"""Errors, exact numbers and validation helpers."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert import errors
from dpcert._numbers import as_fraction, round_down, round_up
from dpcert._validate import (
    check_bounds,
    check_delta,
    check_int,
    check_positive,
    check_probability,
    check_size,
)


def test_error_hierarchy() -> None:
    for cls in (errors.InvalidParameter, errors.OutOfDomain):
        assert issubclass(cls, errors.DPCertError) and issubclass(cls, ValueError)
    for cls in (errors.DomainMismatch, errors.MetricMismatch, errors.MeasureMismatch):
        assert issubclass(cls, errors.DPCertError) and issubclass(cls, TypeError)
    for cls in (errors.BudgetExceeded, errors.EntropyError):
        assert issubclass(cls, errors.DPCertError)
    assert dp.errors is errors


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.2, Fraction(1, 5)), (0.1, Fraction(1, 10)), (3, Fraction(3)),
     (Fraction(2, 7), Fraction(2, 7)), (Decimal("0.25"), Fraction(1, 4)),
     (np.float64(0.5), Fraction(1, 2)), (np.int32(4), Fraction(4)),
     (1e-300, Fraction(1, 10**300))],
)
def test_as_fraction_reads_decimal(value: object, expected: Fraction) -> None:
    assert as_fraction(value) == expected


def test_five_spends_of_point_two_make_one() -> None:
    assert sum((as_fraction(0.2) for _ in range(5)), Fraction(0)) == 1


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, True, "1.0", None, [1.0]])
def test_as_fraction_rejects(bad: object) -> None:
    with pytest.raises(errors.InvalidParameter, match="epsilon"):
        as_fraction(bad, "epsilon")


def test_round_up_and_down_bracket() -> None:
    for x in (Fraction(1, 3), Fraction(12, 25), Fraction(-2, 3), Fraction(10**30 + 1, 7)):
        assert Fraction(round_up(x)) >= x >= Fraction(round_down(x))
        assert math.nextafter(round_up(x), -math.inf) < x or Fraction(round_up(x)) == x
    assert round_up(Fraction(1, 2)) == 0.5 == round_down(Fraction(1, 2))


def test_check_positive_message_names_argument() -> None:
    with pytest.raises(errors.InvalidParameter, match=r"scale=-1.0 must be > 0"):
        check_positive(-1.0, "scale")
    with pytest.raises(errors.InvalidParameter, match=r"scale=0 must be > 0"):
        check_positive(0, "scale")
    with pytest.raises(errors.InvalidParameter, match=r"scale=nan"):
        check_positive(math.nan, "scale")


def test_other_checks() -> None:
    assert check_delta(1e-6) == Fraction(1, 10**6)
    for bad in (1.0, -0.1, 2):
        with pytest.raises(errors.InvalidParameter, match="delta"):
            check_delta(bad)
    assert check_probability(1, "p") == 1
    with pytest.raises(errors.InvalidParameter, match=r"p=1 must be in \[0, 1\)"):
        check_probability(1, "p", open_high=True)
    assert check_int(np.int64(3), "n") == 3
    for bad in (1.5, True, "3"):
        with pytest.raises(errors.InvalidParameter, match="n="):
            check_int(bad, "n")
    with pytest.raises(errors.InvalidParameter, match="size=-1 must be >= 0"):
        check_size(-1)
    with pytest.raises(errors.InvalidParameter, match="bounds reversed: lower=3 > upper=1"):
        check_bounds(3, 1)
    with pytest.raises(errors.InvalidParameter, match="upper=inf"):
        check_bounds(0.0, math.inf)
