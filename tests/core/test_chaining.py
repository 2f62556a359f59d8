"""The OpenDP framework example (acceptance), chaining rules, the first components' contracts."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import dpcert as dp
from dpcert import errors
from dpcert.testing import check_measurement_contract, check_transformation_contract

FLOATS = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())


def framework_example() -> dp.Measurement:
    m = FLOATS >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum() >> dp.m.then_laplace(25.0)
    assert isinstance(m, dp.Measurement)
    return m


def test_framework_example_acceptance() -> None:
    m = framework_example()
    assert 0.48 <= float(m.map(1)) <= 0.4801
    assert m.check(1, 0.49) and not m.check(1, 0.47)
    release = m([12.0, 10.0, 8.0, 7.0])
    assert isinstance(release, float) and math.isfinite(release)
    assert m.output_measure == dp.PureDP()


def test_bad_inputs_raise_the_right_errors() -> None:
    with pytest.raises(dp.errors.InvalidParameter, match="scale") as e:
        dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), scale=-1.0)
    assert isinstance(e.value, ValueError)
    with pytest.raises(dp.errors.OutOfDomain):
        framework_example()([float("nan")])
    with pytest.raises(dp.errors.OutOfDomain):
        framework_example()([float("inf")])
    with pytest.raises(dp.errors.OutOfDomain):
        framework_example()("not a vector")
    ints = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    with pytest.raises(dp.errors.DPCertError) as e2:
        _ = ints >> dp.t.then_clamp(0, 12) >> dp.t.then_sum() >> dp.m.then_laplace(1.0) \
            >> dp.t.then_count()
    assert isinstance(e2.value, TypeError | ValueError)


def test_mismatched_spaces_name_both_sides() -> None:
    clamp = dp.t.make_clamp(*FLOATS, 0.0, 1.0)
    sum_int = dp.t.make_sum(dp.VectorDomain(dp.AtomDomain(int, bounds=(0, 1))),
                            dp.SymmetricDistance())
    with pytest.raises(errors.DomainMismatch, match=r"AtomDomain\(float.*AtomDomain\(int") as e:
        clamp >> sum_int
    assert isinstance(e.value, TypeError)
    lap_l1 = dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), 1.0)
    sum_f = dp.t.make_sum(dp.VectorDomain(dp.AtomDomain(float, bounds=(0.0, 1.0))),
                          dp.ChangeOneDistance())
    with pytest.raises(errors.MetricMismatch, match="ChangeOneDistance"):
        clamp >> sum_f
    assert (clamp >> dp.t.then_sum() >> lap_l1).map(1) > 1
    with pytest.raises(errors.DomainMismatch):
        _ = (dp.AtomDomain(float), "metric") >> dp.t.then_sum()  # type: ignore[operator]
    with pytest.raises(errors.MetricMismatch):
        dp.m.make_laplace(dp.VectorDomain(dp.AtomDomain(float)), dp.L2Distance(), 1.0)


def test_postprocessing_keeps_map() -> None:
    m = framework_example()
    rounded = m >> round
    assert rounded.map(1) == m.map(1)
    assert isinstance(rounded([1.0]), int)
    with pytest.raises(errors.InvalidParameter):
        m >> m  # type: ignore[operator]


def test_contracts_of_first_components() -> None:
    ds = [0, 1, 2, 3, 10]
    for lo, hi, metric in ((0.0, 12.0, dp.SymmetricDistance()), (-5.0, 3.0, dp.ChangeOneDistance()),
                           (0.0, 1.0, dp.InsertDeleteDistance())):
        space = (dp.VectorDomain(dp.AtomDomain(float)), metric)
        check_transformation_contract(dp.t.make_clamp(*space, lo, hi), ds)
        check_transformation_contract(space >> dp.t.then_clamp(lo, hi) >> dp.t.then_sum(), ds)
        check_transformation_contract(dp.t.make_count(*space), ds)
    check_measurement_contract(framework_example(), ds)
    for dom in (dp.AtomDomain(float), dp.AtomDomain(int)):
        for scale in (0.5, 3, Fraction(1, 3), 1e6):
            check_measurement_contract(
                dp.m.make_laplace(dom, dp.AbsoluteDistance(), scale), [0, 1, 2.5, 7])
            check_measurement_contract(
                dp.m.make_gaussian(dom, dp.AbsoluteDistance(), scale), [0, 1, 2.5, 7])


def test_binary_search() -> None:
    pre = FLOATS >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum()
    scale = dp.binary_search(lambda s: (pre >> dp.m.then_laplace(s)).check(1, 1.0))
    assert (pre >> dp.m.then_laplace(scale)).check(1, 1.0)
    assert not (pre >> dp.m.then_laplace(scale * (1 - 1e-9))).check(1, 1.0)
    assert dp.binary_search(lambda n: n * n >= 50, T=int) == 8
    assert dp.binary_search(lambda n: n * n <= 50, (0, 100), T=int) == 7
    with pytest.raises(errors.InvalidParameter):
        dp.binary_search(lambda x: True, (0.0, 1.0))


@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_a_resized_sum_chain_covers_the_outputs_of_real_neighbours(d: int) -> None:
    """Chaining carries each step's map into the next: resize (d_out = d_in) → change-one sum
    (d·(U − L)) → discrete Laplace.  On neighbours d records apart that both stay below the
    size (padding is deterministic), the sums differ by exactly 9d, and the chain's exact law
    (two discrete Laplace laws 9d apart: max log-ratio 9d/s) must be covered by its map."""
    space = (dp.VectorDomain(dp.AtomDomain(int, bounds=(0, 9))), dp.SymmetricDistance())
    t = space >> dp.t.then_resize(8, constant=0) >> dp.t.then_sum()
    x, y = [5, 6], [5, 6] + [9] * d
    gap = abs(int(t(x)) - int(t(y)))
    assert gap == 9 * d
    assert t.map(d) >= gap
    s = 4
    m = t >> dp.m.then_laplace(s)
    grid = list(range(-400, 400))
    worst = max(abs(-abs(v - int(t(x))) + abs(v - int(t(y)))) / s for v in grid)
    assert worst == Fraction(gap, s)
    assert m.map(d) >= worst
