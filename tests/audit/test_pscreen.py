"""The pattern screen: atom patterns per block, the discrete screen on (pair, pattern) arms, and
the intersection of the blocks' rays, kept only when fresh draws say it beats its parts."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpcert.audit.events import AllOf, Coordinate, Event, fit_histogram
from dpcert.audit.features import Composed, Pattern, fit_patterns
from dpcert.audit.membership import Membership
from dpcert.audit.pscreen import pattern_screen

Array = np.ndarray[Any, Any]


def two_blocks(seed: int, *, shared: bool = False) -> Any:
    """Randomized response on a bit (columns 0, 1: e^0.405) beside an atom-or-number column
    whose atom share moves with x (e^0.18 / e^0.22).  ``shared``: the atom is decided by the
    same coin as the bit, so the blocks are copies and their intersection is no stronger."""
    rng = np.random.default_rng(seed)

    def mech(x: int, n: int) -> Array:
        keep = rng.random(n) < 0.6
        bit = np.where(keep, x, 1 - x)
        atom = (bit == 0) if shared else (rng.random(n) < 0.5 + 0.1 * x)
        num = np.where(atom, -1000.0, rng.normal(size=n))
        return np.column_stack([bit, bit, num]).astype(np.float64)
    return mech


def test_pattern_classes_atoms_and_everything_else() -> None:
    p = Pattern((0, 1), ((-2000.0, -1000.0), (0.0, 1.0)))
    y = np.array([[-1000.0, -0.0], [-2000.0, 1.0], [3.25, 1.0], [np.nan, 7.0], [np.inf, 0.0]])
    assert p(y).tolist() == [[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [2.0, 2.0], [2.0, 0.0]]


def test_fit_patterns_finds_the_blocks() -> None:
    rng = np.random.default_rng(1)
    n = 4_000
    u = rng.random((n, 4))
    answer = np.where(u < 0.6, -1000.0, np.where(u < 0.8, -2000.0, rng.normal(size=(n, 4))))
    answer[:, 3] = np.where(u[:, 3] < 0.5, -1000.0, -2000.0)   # only atoms seen here
    codes = rng.integers(-1, 2, size=(n, 3)).astype(np.float64)
    plain = rng.normal(size=(n, 2))
    mixed_only = fit_patterns(answer)
    assert [p.columns for p in mixed_only] == [(0, 1, 2, 3)]
    assert mixed_only[0].atoms[0] == (-2000.0, -1000.0)
    assert mixed_only[0].atoms[3] == (-2000.0, -1000.0)   # the atoms of the mixed block
    both = fit_patterns(np.hstack([answer, codes]))
    assert [p.columns for p in both] == [(0, 1, 2, 3), (4, 5, 6)]
    assert both[1].atoms == ((-1.0, 0.0, 1.0),) * 3
    assert [p.columns for p in fit_patterns(np.hstack([codes, plain]))] == [(0, 1, 2)]
    assert fit_patterns(codes) == []          # all discrete: the histogram is the pattern
    assert fit_patterns(plain) == []          # nothing few-valued


def test_intersection_membership_is_the_parts_bits() -> None:
    mech = two_blocks(3)
    a, b = mech(0, 20_000), mech(1, 20_000)
    events = []
    for pat in fit_patterns(a):
        hist = fit_histogram(pat(a), pat(b), 64)
        assert hist is not None
        events.append(Event(Composed(pat, hist), 0.0, np.inf))
    both = Event(AllOf((events[0], events[1], Event(Coordinate(2), -np.inf, 0.5))), 1.0, np.inf)
    y = mech(1, 5_000)
    want = events[0].contains(y) & events[1].contains(y) & (y[:, 2] <= 0.5)
    assert np.array_equal(both.contains(y), want)
    assert np.array_equal(Membership([both, events[0]])(y)[0], want)
    assert 0 < want.sum() < y.shape[0]


def test_independent_blocks_intersect_into_a_stronger_event() -> None:
    mech = two_blocks(5)
    pats = fit_patterns(mech(0, 5_000))
    got, drawn = pattern_screen(mech, [(0, 1), (1, 0)], pats, rows=100_000, chunk=50_000,
                                deadline=None, n_estimate=10**6, z=2.0, delta=0.0)
    joins = [c for c in got if isinstance(c.event.statistic, AllOf)]
    parts = [c for c in got if not c.ladder and not isinstance(c.event.statistic, AllOf)]
    assert joins and drawn > 0
    best = max(joins, key=lambda c: c.predicted)
    # ln 1.5 + ln 1.25 = 0.63 against 0.405 for the bit alone
    assert best.predicted > max(c.predicted for c in parts) + 0.1
    y = mech(0, 1_000)
    want = np.logical_and.reduce([e.contains(y) for e in best.event.statistic.events])
    assert np.array_equal(best.event.contains(y), want)


def test_copies_of_one_block_are_not_intersected() -> None:
    # the atom column repeats the bit: the intersection is one of its parts, so the fresh
    # draws must not keep it (a join assumed, not measured, would be kept here)
    mech = two_blocks(7, shared=True)
    pats = fit_patterns(mech(0, 5_000))
    assert len(pats) == 2
    got, _ = pattern_screen(mech, [(0, 1), (1, 0)], pats, rows=100_000, chunk=50_000,
                            deadline=None, n_estimate=10**6, z=2.0, delta=0.0)
    assert not [c for c in got if isinstance(c.event.statistic, AllOf)]
    assert max(c.predicted for c in got) > 0.3


def test_blocks_are_intersected_where_their_rays_add_up_to_the_most() -> None:
    # pair 0: a strong bit (e^0.62) beside a block with no signal; pair 1: a weaker bit
    # (e^0.405) beside an atom share that moves (e^0.405): the intersection belongs on pair 1
    rng = np.random.default_rng(11)

    def mech(x: tuple[str, int], n: int) -> Array:
        kind, side = x
        keep = rng.random(n) < (0.65 if kind == "A" else 0.6)
        bit = np.where(keep, side, 1 - side)
        share = 0.5 if kind == "A" else (0.4 if side == 0 else 0.6)
        num = np.where(rng.random(n) < share, -1000.0, rng.normal(size=n))
        return np.column_stack([bit, bit, num]).astype(np.float64)

    pats = fit_patterns(mech(("B", 0), 5_000))
    assert len(pats) == 2
    got, _ = pattern_screen(mech, [(("A", 0), ("A", 1)), (("B", 0), ("B", 1))], pats,
                            rows=100_000, chunk=50_000, deadline=None, n_estimate=10**6, z=2.0,
                            delta=0.0)
    joins = [c for c in got if isinstance(c.event.statistic, AllOf)]
    assert joins and {c.pair for c in joins} == {1}
    assert max(c.predicted for c in joins) > 0.7     # ln 1.5 + ln 1.5 = 0.81
