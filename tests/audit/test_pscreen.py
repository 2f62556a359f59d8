"""The pattern screen: atom patterns per block, the discrete screen on (pair, pattern) arms, and
the intersection of the blocks' rays, kept only when fresh draws say it beats its parts."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpcert.audit.kernel.membership import Membership
from dpcert.audit.search.pscreen import pattern_screen
from dpcert.audit.stats.events import AllOf, Coordinate, Event, fit_histogram
from dpcert.audit.stats.features import Composed, Pattern, fit_patterns, refine_pattern

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
    # every rung shares its ray's statistic object (one Composed per pattern and score), so
    # the choice can take a chosen ray's own ladder (checked to fail with a Composed per
    # candidate)
    rungs = [c for c in got if c.ladder]
    assert rungs and all(any(r.event.statistic is c.event.statistic for c in parts)
                         for r in rungs)


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


def answer_tail(seed: int) -> Any:
    """SVT Alg. 3 in miniature: ⊥ (-1000) or the answer, with ⊥ equally likely under both
    inputs; only *how large* the answer is differs (a top sixth 1.5x likelier under x = 0),
    so the plain pattern (⊥ or "a number") sees nothing and the refined one the whole ratio."""
    rng = np.random.default_rng(seed)

    def mech(x: int, n: int) -> Array:
        u = rng.random(n)
        top = rng.random(n) < (0.25 if x == 0 else 1.0 / 6.0)
        ans = np.where(top, 5.0 + rng.random(n), 4.0 * rng.random(n))
        atom = rng.random(n) < 0.5
        return np.column_stack([np.where(atom, -1000.0, ans), u < 0.5]).astype(np.float64)
    return mech


def test_pattern_classes_with_cuts_are_the_column_by_column_rule() -> None:
    # the whole-block computation against the rule written out per element: per-column atoms
    # (in their given order), numbers binned by how many cuts are at or below them, NaN first
    rng = np.random.default_rng(2)
    y = np.where(rng.random((500, 4)) < 0.4, -1000.0, rng.normal(size=(500, 4)))
    y[rng.random((500, 4)) < 0.2] = -2000.0
    y[::50, 1] = np.nan
    p = Pattern((3, 0, 1), ((-1000.0,), (-1000.0, -2000.0), (-2000.0, -1000.0)),
                cuts=(-0.5, 0.0, 0.5))
    want = np.empty((500, 3))
    for k, (j, atoms) in enumerate(zip(p.columns, p.atoms, strict=True)):
        for r in range(500):
            v = y[r, j]
            want[r, k] = (atoms.index(v) if v in atoms
                          else len(atoms) + sum(1 for c in p.cuts if v >= c))
    assert np.array_equal(p(y), want)
    assert np.array_equal(Pattern(p.columns, p.atoms)(y), np.minimum(want, [1, 2, 2]))


def test_refine_pattern_takes_the_most_bins_that_stay_few() -> None:
    rng = np.random.default_rng(4)
    y = np.where(rng.random((4_000, 3)) < 0.7, -1000.0, rng.normal(size=(4_000, 3)))
    plain = Pattern((0, 1, 2), ((-1000.0,),) * 3)
    # up to three numbers a row: 8 bins give far more than 64 rows of classes, 2 bins 27
    refined = refine_pattern(plain, y, 64)
    assert refined is not None and len(refined.cuts) + 1 == 3
    assert np.unique(refined(y), axis=0).shape[0] <= 64
    assert list(refined.cuts) == sorted(refined.cuts)
    one = refine_pattern(Pattern((0,), ((-1000.0,),)), y, 64)
    assert one is not None and len(one.cuts) + 1 == 8          # 9 classes: the most bins
    assert refine_pattern(plain, np.full((100, 3), -1000.0), 64) is None   # no numbers
    assert refine_pattern(plain, y, 4) is None                  # even 2 bins are too many


def test_the_screen_finds_a_ratio_in_the_size_of_the_answer() -> None:
    # the refined pattern is screened beside the plain one and carries the whole ratio
    # (checked to fail without the refinement: the plain pattern's best is ≈ 0)
    mech = answer_tail(6)
    pats = fit_patterns(mech(0, 5_000))
    assert [p.columns for p in pats] == [(0,), (1,)]
    got, drawn = pattern_screen(mech, [(0, 1)], pats[:1], rows=200_000, chunk=50_000,
                                deadline=None, n_estimate=10**6, z=2.0, delta=0.0)
    best = max((c for c in got if not c.ladder), key=lambda c: c.predicted)
    assert isinstance(best.event.statistic, Composed)
    assert best.event.statistic.inner.cuts != ()
    assert best.predicted > 0.25      # ln 1.5 = 0.405 on the top sixth
    assert drawn >= 200_000
