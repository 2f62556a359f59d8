"""Event families, statistics, the classifier, encoders and neighbouring pairs."""

from __future__ import annotations

import numpy as np
import pytest

import dpcert as dp
from dpcert.audit.kernel.outputs import OutputEncoder, one_at_a_time
from dpcert.audit.kernel.pairs import measurement_pairs, scalar_pairs, statdp_pairs
from dpcert.audit.search.intervals import guard_z, predicted_bound, predicted_one, search_intervals
from dpcert.audit.stats.classifier import fit_logistic
from dpcert.audit.stats.events import Coordinate, Event, Identity, fit_histogram, row_hash
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


def _intervals_by_matrix(sa: np.ndarray, sb: np.ndarray, rays_only: bool
                         ) -> list[tuple[float, float, bool, float]]:
    """search_intervals' rule on the whole |grid|² matrix of intervals (the reference)."""
    from dpcert.audit.search.intervals import RAY_TOLERANCE, _grid
    grid = _grid(np.concatenate([sa, sb]))

    def counts(s: np.ndarray) -> np.ndarray:
        ss = np.sort(s)
        c = (np.searchsorted(ss, grid, side="right")[None, :]
             - np.searchsorted(ss, grid, side="left")[:, None])
        return np.maximum(np.triu(c), 0).astype(float)

    ca, cb = counts(sa), counts(sb)
    valid = np.triu(np.ones_like(ca, dtype=bool))
    if rays_only:
        ray = np.zeros_like(valid)
        ray[0, :] = ray[:, -1] = True
        valid &= ray
    zs = guard_z(int(valid.sum()))
    out = []
    for fwd, (k1, n1, k2, n2) in ((True, (ca, sa.size, cb, sb.size)),
                                  (False, (cb, sb.size, ca, sa.size))):
        score = np.where(valid, predicted_bound(k1, k2, n1, n2, 10**6, 2.0, 0.0, zs), -np.inf)
        i, j = np.unravel_index(int(np.argmax(score)), score.shape)
        best = float(score[i, j])
        for ii, jj in ((0, j), (i, grid.size - 1)):
            if score[ii, jj] >= best - RAY_TOLERANCE:
                i, j = ii, jj
                break
        out.append((float(grid[i]), float(grid[j]), fwd, best))
    return out


@pytest.mark.parametrize("rays_only", [False, True])
def test_search_scores_exactly_the_intervals_of_the_grid(rays_only: bool) -> None:
    # only the valid cells are scored (a list of cells, not the matrix): the choice, ties and
    # the ray preference included, is the matrix rule's on continuous, discrete, atom-mixed
    # and constant statistics
    rng = np.random.default_rng(5)
    cases = [(rng.laplace(0, 1, 3000), rng.laplace(0.3, 1, 2500)),
             (rng.integers(0, 5, 800).astype(float), rng.integers(0, 6, 900).astype(float)),
             (np.where(rng.random(4000) < 0.3, -1000.0, rng.normal(size=4000)),
              np.where(rng.random(4000) < 0.25, -1000.0, rng.normal(size=4000))),
             (rng.integers(0, 2, 500).astype(float), np.zeros(500)),
             (np.zeros(300), np.zeros(300))]
    for sa, sb in cases:
        got = [(c.low, c.high, c.forward, c.predicted)
               for c in search_intervals(sa, sb, n_estimate=10**6, z=2.0, delta=0.0,
                                         rays_only=rays_only)]
        assert got == _intervals_by_matrix(sa, sb, rays_only)
