"""Quantile values and intervals of a release (``docs/proofs/quantile_interval.md``): coverage
at the stated level over many simulated groups (ties, point masses, small groups), a wrong
variant without the rank margin that the same check catches, and values off the grid."""

from __future__ import annotations

import math
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import dpcert as dp
import dpcert.frame.compile as compile_mod
from dpcert.core.trace import trace
from dpcert.errors import InvalidParameter
from dpcert.frame.quantile_interval import JITTER_BITS, endpoint_shift, quantile_columns
from dpcert.samplers import InsecureSeededSource, entropy

PROOF = Path(__file__).resolve().parents[2] / "docs" / "proofs" / "quantile_interval.md"
LEVELS = (0.1, 0.5, 0.9)
GROUPS = 2000
#: Hoeffding: misses are independent given the data, each with P ≤ 0.1; over N = 3·GROUPS
#: (group, level) pairs the miss rate exceeds 0.1 + t with probability ≤ exp(−2Nt²) = 1e-6.
MARGIN = math.sqrt(math.log(1e6) / (2 * len(LEVELS) * GROUPS))


def _groups(seed: int) -> pl.DataFrame:
    """GROUPS simulated groups of 5–400 rows in [0, 1000]: continuous, heavily tied (rounded
    to tens), a point mass between grid points, and a two-point mixture."""
    rng = np.random.default_rng(seed)
    gs, xs = [], []
    for g in range(GROUPS):
        n = int(rng.integers(5, 401))
        kind = g % 4
        if kind == 0:
            x = rng.lognormal(5.5, 0.7, n)
        elif kind == 1:
            x = np.round(rng.normal(500, 150, n), -1)
        elif kind == 2:
            x = np.full(n, 333.3)
        else:
            x = np.where(rng.random(n) < rng.random(), 120.7, 870.1)
        gs.append(np.full(n, g))
        xs.append(np.clip(x, 0, 1000))
    return pl.DataFrame({"g": np.concatenate(gs), "x": np.concatenate(xs)})


def _truth(df: pl.DataFrame) -> dict[float, np.ndarray]:
    """Per level, each group's ``x_(k)``, ``k = max(1, ⌈q·n⌉)`` (exact ranks)."""
    out = {}
    parts = df.sort("g", "x").partition_by("g", maintain_order=True)
    for q in LEVELS:
        lvl = Fraction(str(q))
        out[q] = np.array([p["x"][max(1, math.ceil(lvl * p.height)) - 1] for p in parts])
    return out


def _coverage(monkeypatch: pytest.MonkeyPatch, seed: int) -> tuple[float, pl.DataFrame]:
    monkeypatch.setattr(entropy, "_default", InsecureSeededSource(seed))
    monkeypatch.setattr(entropy, "_default_pid", os.getpid())
    df = _groups(seed)
    sess = dp.Session(df, budget=dp.PureDP(3.0), _source=InsecureSeededSource(seed))
    rel = (sess.query().group_by("g", keys=list(range(GROUPS)))
           .agg(dp.quantile("x", list(LEVELS), bounds=(0, 1000), candidates=257))
           .release(dp.PureDP(3.0), alpha=0.1))
    t = rel.to_polars(tidy=False).sort("g")
    truth = _truth(df)
    hits = []
    for q in LEVELS:
        lo, hi = (t[f"quantile_{q:g}_x_ci_{e}"].to_numpy() for e in ("low", "high"))
        hits.append((lo <= truth[q]) & (truth[q] <= hi))
    return float(np.mean(np.concatenate(hits))), t


def test_interval_coverage_holds_and_the_margin_free_variant_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """90% intervals over 2000 groups × 3 levels cover at least 0.9 − MARGIN (failure
    probability ≤ 1e-6); the wrong variant, endpoints aimed at ``q·n`` with no rank margin
    (``K = 0``), covers far less and fails the same check."""
    covered, _ = _coverage(monkeypatch, 11)
    assert covered >= 0.9 - MARGIN, covered
    monkeypatch.setattr(compile_mod, "endpoint_shift", lambda *a: 0)
    wrong, _ = _coverage(monkeypatch, 12)
    assert wrong < 0.9 - MARGIN, wrong


def test_values_are_off_the_grid_and_inside_their_interval(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A released value is a uniform lattice point of its cell (2^-20 of a step), not a grid
    point; it lies in its interval, whose ends are grid points."""
    grid = np.linspace(0.0, 1000.0, 257)
    idx = np.repeat(np.arange(1, 257), 40)
    v, lo, hi = quantile_columns(grid, idx, idx, idx)
    assert ((grid[idx - 1] <= lo) & (lo <= v) & (v <= hi) & (hi == grid[idx])).all()
    on_grid = np.isin(v, grid).mean()
    assert on_grid < 0.01  # only u = 2^B lands on c_j
    step = grid[1] - grid[0]
    frac = (v - grid[idx - 1]) / step * 2.0**JITTER_BITS
    assert np.allclose(frac, np.round(frac)) and len(np.unique(v)) > 0.99 * v.size
    monkeypatch.setattr(entropy, "_default", InsecureSeededSource(3))
    monkeypatch.setattr(entropy, "_default_pid", os.getpid())
    df = pl.DataFrame({"x": np.linspace(100, 900, 500)})
    rel = (dp.Session(df, budget=dp.PureDP(30.0)).query()
           .agg(dp.median("x", (0, 1000), candidates=9)).release(dp.PureDP(30.0)))
    t = rel.to_polars()
    value, low, high = t["median_x"][0], t["median_x_ci_low"][0], t["median_x_ci_high"][0]
    assert value not in np.linspace(0, 1000, 9) and low <= value <= high
    assert 375 <= low < 500 <= high <= 625  # the cell (375, 500] holds the median


def test_crossed_endpoints_are_ordered_and_no_interval_is_nan() -> None:
    grid = np.array([0.0, 1.0, 2.0, 3.0])
    v, lo, hi = quantile_columns(grid, np.array([1]), np.array([3]), np.array([0]))
    assert lo.tolist() == [0.0] and hi.tolist() == [2.0] and 0.0 <= v[0] <= 2.0
    v, lo, hi = quantile_columns(grid, np.array([0]))
    assert v.tolist() == [0.0] and math.isnan(lo[0]) and math.isnan(hi[0])


def test_shift_formula_and_proof_note_are_tied_to_the_release() -> None:
    """``K = ⌈s·ln(2C/α)⌉`` as the note states; the compiled release's endpoint selections
    carry it, name the note, and the quantile's thirds add up to its share."""
    s, c, a = Fraction(6), 257, Fraction(1, 10)
    k = endpoint_shift(s, c, a)
    assert k == math.ceil(6 * math.log(5140)) and c * math.exp(-k / 6) <= a / 2
    assert c * math.exp(-(k - 1) / 6) > a / 2 * 0.99
    assert "K = ⌈s·ln(2C/α)⌉" in PROOF.read_text(encoding="utf-8")
    q = (dp.Session(pl.DataFrame({"x": [1.0]}), budget=dp.PureDP(3.0)).query()
         .agg(dp.median("x", (0, 1000), candidates=c)))
    m = q.measurement(dp.PureDP(3.0), alpha=0.1)
    steps = [st for st in trace(m, 1) if st.constructor == "grouped_quantile"]
    assert [st.proof for st in steps] == ["grouped_quantile.md"] * 3
    note = PROOF.parent / "grouped_quantile.md"  # whose cell-utility section links this note
    assert "(quantile_interval.md)" in note.read_text(encoding="utf-8")
    shifts = sorted(int(st.params["shift"]) for st in steps)
    scale = Fraction(steps[0].params["scale"])
    assert shifts == [-endpoint_shift(scale, c, a), 0, endpoint_shift(scale, c, a)]
    assert sum(Fraction(str(st.d_out)) for st in steps) == 3


def test_a_shift_too_large_is_refused_before_any_charge() -> None:
    """A budget so small that the endpoints' shift would overflow int64 is refused when the
    release is compiled: nothing is charged; ``interval=False`` releases."""
    sess = dp.Session(pl.DataFrame({"x": [1.0, 2.0]}), budget=dp.PureDP(1.0))
    tiny = dp.PureDP(1e-18)
    with pytest.raises(InvalidParameter, match="interval=False"):
        sess.query().agg(dp.median("x", (0, 10))).release(tiny)
    assert sess.spent == 0
    sess.query().agg(dp.median("x", (0, 10), interval=False)).release(tiny)
    assert sess.spent > 0


def test_an_integer_column_gets_integer_values_and_interval_ends(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Integer column, integer bounds, step 1 (121 candidates on (0, 120)): the cell
    ``(k − 1, k]`` gives the value ``k`` exactly; the ends are integers around the median."""
    monkeypatch.setattr(entropy, "_default", InsecureSeededSource(4))
    monkeypatch.setattr(entropy, "_default_pid", os.getpid())
    df = pl.DataFrame({"age": np.repeat(np.arange(20, 61), 50)})  # median 40
    rel = (dp.Session(df, budget=dp.PureDP(50.0)).query()
           .agg(dp.median("age", (0, 120), candidates=121)).release(dp.PureDP(50.0)))
    t = rel.to_polars()
    v, lo, hi = t["median_age"][0], t["median_age_ci_low"][0], t["median_age_ci_high"][0]
    assert v == 40.0 and lo == int(lo) and hi == int(hi) and 35 <= lo <= 40 <= hi <= 45
    grid = np.arange(0.0, 11.0)
    v2, lo2, hi2 = quantile_columns(grid * 0.5, np.array([3]), np.array([3]), np.array([2]),
                                    integer=True)  # ends 1.0 and 1.0 → [1, 1]
    assert lo2.tolist() == [1.0] and hi2.tolist() == [1.0] and v2.tolist() == [1.0]
