"""Event families, statistics, the classifier, encoders and neighbouring pairs."""

from __future__ import annotations

import numpy as np
import pytest

import dpcert as dp
from dpcert.audit.classifier import fit_logistic
from dpcert.audit.events import (
    Coordinate,
    Event,
    Identity,
    fit_histogram,
    guard_z,
    predicted_bound,
    predicted_one,
    row_hash,
    search_intervals,
)
from dpcert.audit.outputs import OutputEncoder, one_at_a_time
from dpcert.audit.pairs import measurement_pairs, scalar_pairs, statdp_pairs
from dpcert.errors import InvalidParameter


def test_event_descriptions() -> None:
    assert Event(Identity(), -np.inf, 2.0).describe() == "output ≤ 2"
    assert Event(Identity(), 3.0, 3.0).describe() == "output == 3"
    assert Event(Coordinate(1), 0.0, 1.0).describe() == "0 ≤ output[1] ≤ 1"
    y = np.array([[0.0, 0.5], [1.0, 2.0]])
    assert Event(Coordinate(1), 0.0, 1.0).contains(y).tolist() == [True, False]


def test_nan_is_never_in_an_interval_event() -> None:
    e = Event(Identity(), -np.inf, np.inf)
    assert e.contains(np.array([np.nan, 1.0])).tolist() == [False, True]


def test_search_finds_the_separating_ray() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 20_000), rng.normal(3, 1, 20_000)
    found = search_intervals(a, b, n_estimate=20_000, z=3.0, delta=0.0)
    fwd = next(c for c in found if c.forward)   # S likelier under a: the low end
    assert fwd.predicted > 4 and fwd.high < 0.0
    back = next(c for c in found if not c.forward)
    assert back.predicted > 4 and back.low > 3.0


def test_rays_only_restricts_to_thresholds() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 5_000), rng.normal(0, 3, 5_000)   # best event would be a band
    for c in search_intervals(a, b, n_estimate=5_000, z=3.0, delta=0.0, rays_only=True):
        assert np.isinf(c.low) or np.isinf(c.high)


def test_row_hash_and_histogram_score() -> None:
    rows = np.array([[0.0, 1.0], [-0.0, 1.0], [1.0, 0.0]])
    h = row_hash(rows)
    assert h[0] == h[1] != h[2]
    score = fit_histogram(np.array([1.0] * 90 + [0.0] * 10), np.array([1.0] * 10 + [0.0] * 90),
                          max_values=10)
    assert score is not None
    s = score(np.array([1.0, 0.0, 7.0]))
    assert s[0] > 0 > s[1] and s[2] == 0.0
    assert fit_histogram(np.arange(100.0), np.arange(100.0), max_values=10) is None


def test_logistic_learns_the_direction_and_handles_non_finite() -> None:
    rng = np.random.default_rng(2)
    a = rng.normal(0, 1, (4_000, 3))
    b = a + np.array([0.0, 2.0, 0.0])
    a[::7, 2] = np.nan
    model = fit_logistic(a, b)
    assert model.weights[1] < 0 < -model.weights[1]
    assert np.isfinite(model(a)).all()
    assert model.describe() == "logistic score (4 features)"


def test_encoder_codes_non_numeric_outputs_and_freezes() -> None:
    enc = OutputEncoder()
    assert enc.encode([None, 1, 2.5]).tolist()[1:] == [1.0, 2.5]
    assert enc.encode([(1, 2), (3, 4)]).shape == (2, 2)
    assert enc.encode(np.array([True, False])).tolist() == [1.0, 0.0]
    codes = enc.encode(["x", "y", "x"])
    enc.freeze()
    assert enc.encode(["y", "new"]).tolist() == [codes[1], -1.0]
    with pytest.raises(InvalidParameter, match="returned 2 outputs when asked for n=3"):
        enc.encode([1, 2], 3)


def test_one_at_a_time_adapter() -> None:
    assert one_at_a_time(lambda x: x * 2)(3, 4) == [6, 6, 6, 6]


def test_statdp_patterns_are_linf_neighbours() -> None:
    for name, x, y in statdp_pairs(5):
        diff = np.abs(np.subtract(x, y))
        assert diff.max() == 1.0, name
    assert [n for n, _, _ in statdp_pairs(5, adjacency="l1")] == ["one above", "one below"]
    assert scalar_pairs(2.0, 0.5) == [(2.0, 2.5), (2.0, 1.5)]
    with pytest.raises(InvalidParameter, match="adjacency='l2'"):
        statdp_pairs(3, adjacency="l2")  # type: ignore[arg-type]


def test_measurement_pairs_are_at_distance_one() -> None:
    m = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=1)
    assert measurement_pairs(m) == [(0, 1), (0, -1)]
    rr = dp.m.make_randomized_response_bool(1.0)
    assert measurement_pairs(rr) == [(False, True)]
    space = (dp.VectorDomain(dp.AtomDomain(float, bounds=(0.0, 1.0))), dp.SymmetricDistance())
    s = space >> dp.t.then_sum() >> dp.m.then_laplace(1.0)
    for x, y in measurement_pairs(s):
        assert dp.SymmetricDistance().distance(x, y) == 1


def test_predicted_one_and_guard_z() -> None:
    # the scalar form is the array form's element; the guard grows with the events compared
    # and never falls below one standard error
    ka, kb = np.array([120.0, 30.0]), np.array([80.0, 29.0])
    both = predicted_bound(ka, kb, 10_000, 10_000, 10**6, 2.0, 0.0, 1.5)
    assert predicted_one(120, 80, 10_000, 10_000, 10**6, 2.0, 0.0, 1.5) == both[0]
    assert predicted_one(30, 29, 10_000, 10_000, 10**6, 2.0, 0.0, 1.5) == both[1]
    assert guard_z(1) == 1.0 and guard_z(10**6) > guard_z(10**3) > 1.0
    assert guard_z(10**6) == pytest.approx(0.5 * np.sqrt(2 * np.log(2e6)))
