"""The discrete screen: large batches of counts find the pair with a strong rare event; events
are re-scored on held-out counts; integer rows are counted exactly."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpcert.audit.search.candidates import Candidate
from dpcert.audit.search.dscreen import _Counts, _distinct, _rays, _rescore, discrete_screen
from dpcert.audit.search.intervals import predicted_bound
from dpcert.audit.stats.events import Event, HistogramScore, row_hash


def pairs_mechanism(seed: int) -> tuple[Any, list[tuple[Any, Any]]]:
    """Four pairs whose best event is large and weak (P 0.2, ratio e^0.04) and one whose best
    event is rare and strong (P 0.006, ratio e^0.1)."""
    rng = np.random.default_rng(seed)
    law = {"weak": 0.2, "strong": 0.006}
    ratio = {"weak": 0.04, "strong": 0.1}

    def mech(x: tuple[str, int], n: int) -> np.ndarray:
        kind, side = x
        p = law[kind] * (1.0 if side == 0 else math.exp(-ratio[kind]))
        return (rng.random(n) < p).astype(np.float64)

    pl = [(("weak", 0), ("weak", 1))] * 4 + [(("strong", 0), ("strong", 1))]
    return mech, pl


def best_pair(found: list[Any]) -> int:
    return int(max((c for c in found if not c.ladder), key=lambda c: c.predicted).pair)


def test_large_count_batches_find_the_strong_rare_event() -> None:
    mech, pl = pairs_mechanism(5)
    found, drawn = discrete_screen(mech, pl, rows=600_000, chunk=100_000, deadline=None,
                                   n_estimate=40_000_000, z=2.2, delta=0.0)
    assert best_pair(found) == 4
    top = max((c for c in found if not c.ladder), key=lambda c: c.predicted)
    assert top.forward and 0.03 < top.predicted < 0.1
    # every pair, then the better half (3) with twice as many more, then the two best again
    # (fixed events) with 4×
    assert drawn == 5 * 600_000 + 3 * 2 * 600_000 + 2 * 4 * 600_000
    # search-sized batches (3·10^4, then 1.2·10^5 draws) see the rare event at about one
    # standard error and rank a weak pair first: the reason for this screen
    mech, pl = pairs_mechanism(5)
    small, _ = discrete_screen(mech, pl, rows=30_000, chunk=10_000, deadline=None,
                               n_estimate=40_000_000, z=2.2, delta=0.0)
    assert best_pair(small) != 4


def counts(rows: dict[float, int]) -> _Counts:
    c = _Counts()
    c.add(np.repeat(np.array(list(rows), dtype=np.float64), list(rows.values())))
    return c


def test_events_are_scored_on_the_held_out_counts() -> None:
    # the fit counts show output 1 three times likelier under x; the held-out counts show no
    # difference: the candidate's prediction must be the held-out one (no evidence)
    fa, fb = counts({0.0: 9_000, 1.0: 3_000}), counts({0.0: 11_000, 1.0: 1_000})
    ha, hb = counts({0.0: 5_000, 1.0: 1_000}), counts({0.0: 5_000, 1.0: 1_000})
    got = _rays(fa, fb, ha, hb, 0, n_estimate=10_000_000, z=2.2, delta=0.0)
    main = [c for c in got if not c.ladder]
    assert main and all(c.predicted < 0.0 for c in main)
    # the same fit with held-out counts that agree: a clearly positive prediction
    ha2, hb2 = counts({0.0: 4_500, 1.0: 1_500}), counts({0.0: 5_500, 1.0: 500})
    got2 = _rays(fa, fb, ha2, hb2, 0, n_estimate=10_000_000, z=2.2, delta=0.0)
    assert max(c.predicted for c in got2 if not c.ladder) > 0.8


def test_the_deadline_is_kept_and_every_pair_is_ranked(monkeypatch: Any) -> None:
    # a fake clock (no wall time asserted): every call of the mechanism takes 0.01 s
    from dpcert.audit.search import dscreen

    clock = [0.0]
    monkeypatch.setattr(dscreen.time, "perf_counter", lambda: clock[0])
    mech, pl = pairs_mechanism(1)

    def slow(x: Any, n: int) -> np.ndarray:
        clock[0] += 0.01
        return mech(x, n)

    out: list[Any] = []
    found, _ = discrete_screen(slow, pl, rows=10**9, chunk=50_000, deadline=0.6,
                               n_estimate=1_000_000, z=2.2, delta=0.0, eliminated=out)
    assert 0.5 <= clock[0] <= 0.6 + 0.02   # at most one chunk (two calls) past the deadline
    # every pair ranked: the FINAL best returned, the others' candidates set aside
    assert len({c.pair for c in found}) == 2
    assert {c.pair for c in found} | {c.pair for c in out} == set(range(5))
    assert not {c.pair for c in found} & {c.pair for c in out}


def test_only_the_finalists_candidates_are_returned() -> None:
    # a pair out after the first round keeps the prediction of its few counts, never shrunk
    # by later rounds: beside the finalists it would win by luck (SVT1 seed 3: 0.071 on 10^4
    # held-out draws over the finalists' 0.063); checked to fail when they are returned
    mech, pl = pairs_mechanism(2)
    out: list[Any] = []
    found, _ = discrete_screen(mech, pl, rows=100_000, chunk=50_000, deadline=None,
                               n_estimate=10**7, z=2.2, delta=0.0, eliminated=out)
    assert len({c.pair for c in found}) == 2 and len({c.pair for c in out}) == 3
    again, _ = discrete_screen(*pairs_mechanism(2), rows=100_000, chunk=50_000, deadline=None,
                               n_estimate=10**7, z=2.2, delta=0.0)
    assert {c.pair for c in again} == {c.pair for c in found}


def test_integer_rows_are_counted_as_the_row_hash_counts_them() -> None:
    rng = np.random.default_rng(0)
    for y in [rng.integers(-1, 2, (10_000, 10)).astype(float),        # the bincount route
              np.where(rng.random((5_000, 3)) < 0.5, -0.0, 1.0),        # −0.0 is 0.0
              rng.integers(0, 5, 1_000).astype(float),                   # 1-D
              np.array([[0.5, 1.0]] * 10),                               # not integers
              np.array([[np.nan, 1.0], [np.nan, 1.0], [2.0, 1.0]])]:     # NaN
        keys, counts = _distinct(y)
        want_keys, want_counts = np.unique(row_hash(y), return_counts=True)
        assert np.array_equal(keys, want_keys) and np.array_equal(counts, want_counts)


def test_an_audit_on_a_clock_screens_few_valued_mechanisms_only(monkeypatch: Any) -> None:
    from dpcert.audit.auditor import audit
    from dpcert.audit.search import standard as search

    calls: list[int] = []
    real = search.discrete_screen

    def spy(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(search, "discrete_screen", spy)
    mech, pl = pairs_mechanism(2)
    noise = np.random.default_rng(4)

    def three(x: Any, n: int) -> np.ndarray:  # three output values (two are too few for it)
        return mech(x, n) + (noise.random(n) < 0.3)

    r = audit(three, pl, claimed=0.2, seconds=2.0, seed=2)
    assert calls == [1] and r.epsilon_lower > 0.0
    rng = np.random.default_rng(3)

    def laplace(x: float, n: int) -> np.ndarray:
        return float(x) + np.rint(rng.laplace(0.0, 1.0, n) * 2**20) / 2**20

    audit(laplace, [(0.0, 1.0), (0.0, -1.0)], claimed=1.0, seconds=1.0, seed=3)
    assert calls == [1]   # continuous outputs: the search as before


def test_fixed_events_are_rescored_on_the_pooled_counts_as_estimation_would_count_them() -> None:
    """_rescore's event counts equal Event.contains on the very output rows (both directions,
    a band, outputs never seen in the fit scoring 0), pooled over all count batches."""
    rng = np.random.default_rng(8)
    stat = HistogramScore(np.sort(row_hash(np.array([0.0, 1.0, 2.0, 3.0]))),
                          np.array([0.7, -0.2, 0.0, 1.5]))
    ya = [rng.integers(0, 5, 3_000).astype(float) for _ in range(3)]   # 4.0: never scored
    yb = [rng.integers(0, 5, 2_000).astype(float) for _ in range(2)]
    a, b = [_Counts() for _ in ya], [_Counts() for _ in yb]
    for c, y in zip(a + b, ya + yb, strict=True):
        c.add(y)
    cands = [Candidate(0, Event(stat, 0.5, math.inf), True, 0.0),
             Candidate(0, Event(stat, -math.inf, -0.1), False, 0.0),
             Candidate(0, Event(stat, -0.1, 0.8), True, 0.0, True)]
    got = _rescore(cands, a, b, n_estimate=10**6, z=2.2, delta=0.0)
    A, B = np.concatenate(ya), np.concatenate(yb)
    for c, g in zip(cands, got, strict=True):
        k1 = float(c.event.contains(A if c.forward else B).sum())
        k2 = float(c.event.contains(B if c.forward else A).sum())
        n1, n2 = (A.size, B.size) if c.forward else (B.size, A.size)
        want = predicted_bound(np.array([k1]), np.array([k2]), n1, n2, 10**6, 2.2, 0.0, 0.5)
        assert g.event is c.event and g.ladder == c.ladder and g.pair == c.pair
        assert g.predicted == float(want[0])
        assert math.isfinite(g.predicted) or k1 == 0


def test_the_third_round_rescores_the_two_best_pairs_without_reselecting(monkeypatch: Any
                                                                          ) -> None:
    from dpcert.audit.search import dscreen

    seen: list[tuple[set[int], int, int]] = []
    real = dscreen._rescore

    def spy(cands: list[Any], a: list[_Counts], b: list[_Counts], **kw: Any) -> Any:
        seen.append(({c.pair for c in cands}, sum(c.n for c in a), len(cands)))
        return real(cands, a, b, **kw)

    monkeypatch.setattr(dscreen, "_rescore", spy)
    mech, pl = pairs_mechanism(5)
    found, _ = discrete_screen(mech, pl, rows=300_000, chunk=100_000, deadline=None,
                               n_estimate=40_000_000, z=2.2, delta=0.0)
    assert len(seen) == 2 and all(len(p) == 1 for p, _, _ in seen)
    # the held-out thirds of both halving rounds (10^5 + 2·10^5, pooled) and the whole
    # last-round batch (1.2·10^6)
    assert all(1_200_000 + 290_000 < n < 1_200_000 + 310_000 for _, n, _ in seen)
    for pairs, _, k in seen:
        (i,) = pairs
        assert k == len([c for c in found if c.pair == i])  # every event of it, none new
    assert best_pair(found) == 4


def test_halving_keeps_the_better_half_down_to_the_final_pairs() -> None:
    from dpcert.audit.search.dscreen import FINAL, halving_rounds

    for arms in range(1, 40):
        n, r = arms, 0
        while n > FINAL:       # what the rounds keep: the better half, rounded up
            n, r = max(FINAL, -(-n // 2)), r + 1
        assert halving_rounds(arms) == max(1, r)


def test_hope_ranks_a_thinly_seen_strong_event_by_what_it_could_give() -> None:
    from dpcert.audit.search.dscreen import _hope

    ev = Event(HistogramScore(np.zeros(1, np.uint64), np.zeros(1)), 0.0, math.inf)
    strong = Candidate(0, ev, True, 0.01, support=40, held=4_000, against=25)
    assert _hope(strong, 10**7, 2.2, 0.0) > 0.3 > strong.predicted
    # too few hits, or no more for x than for x': its prediction, and nothing for a rung
    for sup, ag in [(5.0, 0.0), (30.0, 30.0)]:
        c = Candidate(0, ev, True, 0.02, support=sup, held=4_000, against=ag)
        assert _hope(c, 10**7, 2.2, 0.0) == 0.02
        rung = Candidate(0, ev, True, 0.02, True, support=sup, held=4_000, against=ag)
        assert _hope(rung, 10**7, 2.2, 0.0) == -math.inf


def rare_mechanism(seed: int) -> tuple[Any, list[tuple[Any, Any]]]:
    """Ten pairs whose best event is large and weak (P 0.2, ratio e^0.04) and, last, one whose
    best event is rare and strong (P 0.004, ratio e^0.12)."""
    rng = np.random.default_rng(seed)

    def mech(x: tuple[float, float, int], n: int) -> np.ndarray:
        p, ratio, side = x
        return (rng.random(n) < p * (1.0 if side == 0 else math.exp(-ratio))).astype(float)

    weak = ((0.2, 0.04, 0), (0.2, 0.04, 1))
    return mech, [weak] * 10 + [((0.004, 0.12, 0), (0.004, 0.12, 1))]


def test_a_rare_strong_pair_survives_the_first_round(monkeypatch: Any) -> None:
    # first-round batches of 5·10^4 see the rare event ~65 times in the held-out third:
    # ranked by its pessimistic prediction it falls behind the weak pairs (0 of these 10
    # seeds go on), ranked by what it could give it goes on (8 of 10; seeded, so fixed)
    from dpcert.audit.search import dscreen

    def survived(seed: int) -> bool:
        rounds: list[int] = []
        real = dscreen._draw

        def spy(sampler: Any, x: Any, xp: Any, **kw: Any) -> Any:
            if x[0] == 0.004:
                rounds.append(1)
            return real(sampler, x, xp, **kw)

        monkeypatch.setattr(dscreen, "_draw", spy)
        mech, pl = rare_mechanism(seed)
        discrete_screen(mech, pl, rows=50_000, chunk=50_000, deadline=None,
                        n_estimate=10**7, z=2.2, delta=0.0)
        return len(rounds) > 1

    assert sum(survived(s) for s in range(10)) >= 7


def test_the_ladder_holds_nested_rays_and_one_wider_ray() -> None:
    # eight output values whose likelihood ratio falls as they grow more common: the best
    # ray {score ≥ t} holds the four rarest; its ladder has the three rays inside it and the
    # one a level wider
    vals = {0.0: (10, 5), 1.0: (20, 12), 2.0: (50, 35), 3.0: (200, 150), 4.0: (1_000, 800),
            5.0: (3_000, 2_700), 6.0: (5_000, 5_000), 7.0: (8_000, 9_000)}
    fa = counts({v: a for v, (a, _) in vals.items()})
    fb = counts({v: b for v, (_, b) in vals.items()})
    ha = counts({v: a // 2 for v, (a, _) in vals.items()})
    hb = counts({v: b // 2 for v, (_, b) in vals.items()})
    got = _rays(fa, fb, ha, hb, 0, n_estimate=10**6, z=2.2, delta=0.0)
    main = max((c for c in got if not c.ladder), key=lambda c: c.predicted)
    rungs = [c for c in got if c.ladder]
    assert main.forward and all(c.forward for c in rungs)
    assert sum(c.event.low > main.event.low for c in rungs) == 3     # inside
    wider = [c for c in rungs if c.event.low < main.event.low]
    assert len(wider) == 1
    # one level wider: no score lies strictly between the two thresholds
    scores = main.event.statistic.scores
    assert not ((scores > wider[0].event.low) & (scores < main.event.low)).any()
