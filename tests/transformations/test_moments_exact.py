"""Exact sums of squares never overflow, whatever the magnitudes."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from dpcert.transformations._moments import exact_sum_and_squares


def test_int_squares_do_not_overflow_int64() -> None:
    a = np.full(10, 2**31 - 1, dtype=np.int64)  # each square < 2^62, their sum is not
    s, sq = exact_sum_and_squares(a)
    assert s == 10 * (2**31 - 1) and sq == 10 * (2**31 - 1) ** 2


def test_float_squares_are_exact() -> None:
    x = np.array([0.1, 1e-300, 3e200, -7.25])
    s, sq = exact_sum_and_squares(x)
    assert s == sum((Fraction(v) for v in x.tolist()), Fraction(0))
    assert sq == sum((Fraction(v) ** 2 for v in x.tolist()), Fraction(0))
