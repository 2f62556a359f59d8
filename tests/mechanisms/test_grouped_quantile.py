"""make_grouped_quantile: the map, the exact permute-and-flip distribution, bad input."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dpcert.backends.base import GroupedStats, StatSpec
from dpcert.core.frames import GroupDistance, GroupedDomain
from dpcert.errors import DomainMismatch, InvalidParameter
from dpcert.mechanisms.grouped_quantile import make_grouped_quantile

SPEC = StatSpec("h", "at_most", "x", Fraction(0), Fraction(10), candidates=(4, 10))


def test_map() -> None:
    dom = GroupedDomain(("g",), ("h",), None)
    m = make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 4), scale=6)
    assert m.map((1, 2, 3)) == Fraction(2 * 2 * 3 * 3, 6)  # l0·2·l∞·max(a, b−a)/s


def test_two_candidate_distribution_is_permute_and_flip() -> None:
    """cum = [5, 10], n = 10, median: utilities 0 and −10 (gap 10), s = 10: the worse
    candidate wins w.p. e^{-1}/2 = 0.184 exactly; 40 000 groups, 6 s.d. (a plain exponential
    mechanism, e^{-1}/(1+e^{-1}) = 0.269, fails)."""
    k = 40_000
    dom = GroupedDomain(("g",), ("h",), None)
    m = make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 2), scale=10)
    grouped = GroupedStats([(i,) for i in range(k)], {"h": np.tile([5, 10], (k, 1))})
    rate = float(np.mean(m(grouped) == 1))
    p = math.exp(-1) / 2
    assert abs(rate - p) < 6 * math.sqrt(p * (1 - p) / k)


def test_bad_input() -> None:
    dom = GroupedDomain(("g",), ("h",), None)
    with pytest.raises(InvalidParameter, match="at_most"):
        make_grouped_quantile(dom, GroupDistance(), StatSpec("h", "count"), Fraction(1, 2), 1)
    with pytest.raises(DomainMismatch):
        make_grouped_quantile(GroupedDomain(("g",), ("z",), None), GroupDistance(), SPEC,
                              Fraction(1, 2), 1)
    with pytest.raises(InvalidParameter, match="level"):
        make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(3, 2), 1)


def _pf_law(cum: np.ndarray, a: int, b: int, scale: Fraction) -> np.ndarray:
    """Exact permute-and-flip law of one group (McKenna & Sheldon 2020): candidate j's coin
    lands heads w.p. exp(−gap_j/s) (the best one always), the output is a uniform head; summed
    over the 2^c coin outcomes."""
    n = int(cum[-1])
    util = -np.abs(b * cum.astype(np.int64) - a * n)
    p = np.exp(-(util.max() - util) / float(scale))
    out = np.zeros(cum.size)
    for heads in itertools.product((0, 1), repeat=cum.size):
        h = np.array(heads)
        if h.any():
            out += np.prod(np.where(h == 1, p, 1 - p)) * h / h.sum()
    return out


def _one_row_neighbours(cum: list[int]) -> list[list[int]]:
    """``cum`` after one row enters or leaves the bin of any candidate (l∞ = 1)."""
    out = []
    for j in range(len(cum)):
        for sgn in (1, -1):
            new = [x + sgn if i >= j else x for i, x in enumerate(cum)]
            if min(np.diff([0, *new])) >= 0:
                out.append(new)
    return out


@pytest.mark.parametrize(("scale", "level"),
                         [(1, Fraction(1, 2)), (2, Fraction(1, 2)), (4, Fraction(1, 2)),
                          (1, Fraction(1, 4)), (2, Fraction(1, 4))])
def test_joint_law_of_changed_groups_is_covered_and_attained(
        scale: int, level: Fraction, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact-law audit of the map at d = (l0, l0, 1): groups draw independently, so the joint
    log-ratio of the groups' outputs is the sum of the per-group ones.  Over every one-row
    neighbour of every median with bin counts in {0..4}³ (candidates 2, 5, 10) the worst group
    attains 2/s (e.g. cum (0, 4, 8) → (1, 5, 9) at s = 2); ``l0`` such groups changed at once
    attain ``l0·2/s`` = ``map((l0, l0, 1))`` (equality up to 1e-12), so a map for one changed
    group fails at l0 ≥ 2.  The law uses the scale and counts the mechanism hands to its
    sampler (a spy on ``_indices``).  The per-row change is
    ``max(a, b − a)`` = 3 at α = 1/4 (a row entering below a candidate moves ``b·cum − a·n`` by
    b − a), so a map using ``a`` alone is exceeded."""
    import dpcert.mechanisms.grouped_quantile as gq

    spec = StatSpec("h", "at_most", "x", Fraction(0), Fraction(10), candidates=(2, 5, 10))
    dom = GroupedDomain(("g",), ("h",), None)
    m = make_grouped_quantile(dom, GroupDistance(), spec, level, scale=scale)
    seen: list[tuple[np.ndarray, int, int, Fraction]] = []
    real = gq._indices

    def spy(cum: np.ndarray, a: int, b: int, s: Fraction) -> np.ndarray:
        seen.append((np.array(cum), a, b, s))
        return real(cum, a, b, s)

    monkeypatch.setattr(gq, "_indices", spy)
    worst, pair = 0.0, None
    for bins in itertools.product(range(5), repeat=3):
        cum = list(np.cumsum(bins))
        if cum[-1] == 0:
            continue
        for nb in _one_row_neighbours(cum):
            if nb[-1] == 0:
                continue
            seen.clear()
            m(GroupedStats([("x",), ("y",)], {"h": np.array([cum, nb])}))
            (got, a, b, s), = seen
            p, q = _pf_law(got[0], a, b, s), _pf_law(got[1], a, b, s)
            loss = float(np.max(np.abs(np.log(p / q))))
            if loss > worst:
                worst, pair = loss, (cum, nb)
    assert pair is not None and worst <= float(m.map((1, 1, 1))) * (1 + 1e-12)
    assert worst >= float(m.map((1, 1, 1))) * (1 - 1e-12)
    for l0 in (2, 3, 5):  # the worst pair in l0 groups at once, the rest unchanged
        cum, nb = pair
        seen.clear()
        m(GroupedStats([(g,) for g in range(2 * l0 + 1)],
                       {"h": np.array([cum] * l0 + [nb] * l0 + [[1, 2, 3]])}))
        (got, a, b, s), = seen
        joint = sum(float(np.max(np.abs(np.log(_pf_law(got[g], a, b, s)
                                                / _pf_law(got[l0 + g], a, b, s)))))
                    for g in range(l0))
        assert joint <= float(m.map((l0, l0, 1))) * (1 + 1e-12)
        assert joint >= float(m.map((l0, l0, 1))) * (1 - 1e-12)


def _em_law(cum: np.ndarray, a: int, b: int, scale: Fraction) -> np.ndarray:
    """Exact exponential-mechanism law of one group: ``P(j) ∝ exp(−gap_j/s)``."""
    util = -np.abs(b * cum.astype(np.int64) - a * int(cum[-1]))
    w = np.exp(-(util.max() - util) / float(scale))
    return w / w.sum()


def test_exponential_map_is_quadratic_in_units_not_cubic() -> None:
    """ρ(d) = p²·l∞·min(l0·l∞, l1)/(2s²): at the bound map (d, dG, dR, dGR) that is d²·ρ(1)
    (zCDP group privacy); the form ``l0·l∞²`` (no ``l1``) gives d³·ρ(1) and fails."""
    dom = GroupedDomain(("g",), ("h",), None)
    m = make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 4), 6, "exponential")
    G, R = 3, 2
    one = m.map((1, G, R, G * R))
    assert one == Fraction(9 * R * G * R, 2 * 36)
    for d in (2, 3, 5):
        assert m.map((d, d * G, d * R, d * G * R)) == d * d * one
        assert Fraction(9 * d * G * (d * R) ** 2, 72) > d * d * one  # the wrong variant
    pf = make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 4), 6)
    for d in (2, 3, 5):  # permute-and-flip's ε is linear in d
        assert pf.map((d, d * G, d * R, d * G * R)) == d * pf.map((1, G, R, G * R))
    assert m.output_measure.__class__.__name__ == "ZCDP"
    # the same scale in one group: ε²/2 of permute-and-flip is 4× the exponential mechanism's ρ
    assert pf.map((1, 1, 1, 1)) ** 2 / 2 == 4 * m.map((1, 1, 1, 1))
    with pytest.raises(InvalidParameter, match="selection"):
        make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 2), 1, "gumbel")


def test_exponential_law_is_bounded_range_as_the_map_says() -> None:
    """Over every one-row neighbour of every median/quartile with bin counts in {0..4}³, the
    exact law's log-ratio range (the bounded-range parameter η) is at most 2p/s, and some pair
    attains it, so η²/8 = map((1, 1, 1, 1)) is tight; a map charging (p/s)²/8 (the range taken
    as p/s) is exceeded."""
    spec = StatSpec("h", "at_most", "x", Fraction(0), Fraction(10), candidates=(2, 5, 10))
    dom = GroupedDomain(("g",), ("h",), None)
    for level, scale in ((Fraction(1, 2), 2), (Fraction(1, 4), 3)):
        m = make_grouped_quantile(dom, GroupDistance(), spec, level, scale, "exponential")
        a, b = level.numerator, level.denominator
        worst = 0.0
        for bins in itertools.product(range(5), repeat=3):
            cum = np.cumsum(bins)
            for nb in _one_row_neighbours(list(cum)):
                r = np.log(_em_law(cum, a, b, Fraction(scale))
                           / _em_law(np.array(nb), a, b, Fraction(scale)))
                worst = max(worst, float(r.max() - r.min()))
        rho = float(m.map((1, 1, 1, 1)))
        assert worst ** 2 / 8 <= rho * (1 + 1e-12)
        assert worst ** 2 / 8 >= rho * (1 - 1e-12)
        p = max(a, b - a)
        assert worst ** 2 / 8 > (p / scale) ** 2 / 8


def test_two_candidate_distribution_is_the_exponential_mechanism() -> None:
    """cum = [5, 10], median, gap 10, s = 10: the worse candidate wins w.p.
    e^{-1}/(1+e^{-1}) = 0.269 exactly; 40 000 groups, 6 s.d. (permute-and-flip's 0.184 fails)."""
    k = 40_000
    dom = GroupedDomain(("g",), ("h",), None)
    m = make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 2), 10, "exponential")
    grouped = GroupedStats([(i,) for i in range(k)], {"h": np.tile([5, 10], (k, 1))})
    rate = float(np.mean(m(grouped) == 1))
    p = math.exp(-1) / (1 + math.exp(-1))
    assert abs(rate - p) < 6 * math.sqrt(p * (1 - p) / k)
    assert abs(math.exp(-1) / 2 - p) > 6 * math.sqrt(p * (1 - p) / k)


def _pf_law_of_gaps(gaps: np.ndarray, scale: Fraction) -> np.ndarray:
    """Exact permute-and-flip law for integer gaps (a uniform head among the coins)."""
    p = np.exp(-gaps.astype(np.float64) / float(scale))
    out = np.zeros(gaps.size)
    for heads in itertools.product((0, 1), repeat=gaps.size):
        h = np.array(heads)
        if h.any():
            out += np.prod(np.where(h == 1, p, 1 - p)) * h / h.sum()
    return out


@pytest.mark.parametrize(("shift", "level", "selection"),
                         [(0, Fraction(1, 2), "permute_and_flip"),
                          (-3, Fraction(1, 2), "permute_and_flip"),
                          (5, Fraction(1, 4), "permute_and_flip"),
                          (-5, Fraction(3, 4), "exponential")])
def test_cell_utility_map_at_two_rows_is_covered_and_attained(
        shift: int, level: Fraction, selection: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cell utility with a shifted target (``docs/proofs/quantile_interval.md``) at
    ``d = (1, 1, 2, 2)``: two rows enter or leave one group.  Over every cum vector with bin
    counts in {0..3}³ and every two-row neighbour, the exact law's worst log-ratio is at most
    the map (PureDP: ``4p/s``; zCDP: the bounded-range ``η = 4p/s`` gives ``η²/8``, checked
    through η); the exponential mechanism attains it, and permute-and-flip exceeds the one-row
    map (``2p/s``) by more than 10%, so a map that ignores ``l∞`` fails."""
    import dpcert.mechanisms.grouped_quantile as gq

    spec = StatSpec("h", "at_most", "x", Fraction(0), Fraction(10), candidates=(2, 5, 10))
    dom = GroupedDomain(("g",), ("h",), None)
    scale = Fraction(3)
    m = make_grouped_quantile(dom, GroupDistance(), spec, level, scale, selection,  # type: ignore[arg-type]
                              "cell", shift)
    seen: list[np.ndarray] = []
    real = gq._cell_gaps

    def spy(cum: np.ndarray, a: int, b: int, sh: int) -> np.ndarray:
        out = real(cum, a, b, sh)
        seen.append(out)
        return out

    monkeypatch.setattr(gq, "_cell_gaps", spy)
    em = selection == "exponential"
    worst = 0.0
    for bins in itertools.product(range(4), repeat=3):
        cum = list(np.cumsum(bins))
        for one in _one_row_neighbours(cum):
            for two in _one_row_neighbours(one):
                if cum[-1] == 0 or two[-1] == 0:
                    continue
                seen.clear()
                m(GroupedStats([("x",), ("y",)], {"h": np.array([cum, two])}))
                gaps, = seen
                if em:  # bounded range: max_j − min_j of the log-ratio
                    w = np.exp(-gaps.astype(np.float64) / float(scale))
                    r = np.log((w[0] / w[0].sum()) / (w[1] / w[1].sum()))
                    loss = float(r.max() - r.min())
                else:
                    r = np.log(_pf_law_of_gaps(gaps[0], scale) / _pf_law_of_gaps(gaps[1], scale))
                    loss = float(np.max(np.abs(r)))
                worst = max(worst, loss)
    d = (1, 1, 2, 2)
    bound = math.sqrt(8 * float(m.map(d))) if em else float(m.map(d))
    assert worst <= bound * (1 + 1e-12)
    if em:  # the bounded-range parameter is attained exactly
        assert worst >= bound * (1 - 1e-12)
    else:  # permute-and-flip's ratio is below 2Δ/s here, but above the one-row map's
        assert worst > float(m.map((1, 1, 1, 1))) * 1.1


def test_cell_gaps_best_is_zero_and_shift_is_checked() -> None:
    """Every target is inside some cell's scaled rank range (the best gap is 0), ties included;
    a shift with the rank utility, or a non-int shift, is refused."""
    from dpcert.mechanisms.grouped_quantile import _cell_gaps

    rng = np.random.default_rng(5)
    cum = np.cumsum(rng.integers(0, 3, (200, 6)) * (rng.random((200, 6)) < 0.4), axis=1)
    for shift in (-40, -7, 0, 3, 40):
        assert (_cell_gaps(cum, 3, 10, shift).min(axis=1) == 0).all()
    dom = GroupedDomain(("g",), ("h",), None)
    with pytest.raises(InvalidParameter, match="shift"):
        make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 2), 1, shift=2)
    with pytest.raises(InvalidParameter, match="shift"):
        make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 2), 1, utility="cell",
                              shift=1.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="utility"):
        make_grouped_quantile(dom, GroupDistance(), SPEC, Fraction(1, 2), 1,
                              utility="median")  # type: ignore[arg-type]


@pytest.mark.parametrize("selection", ["permute_and_flip", "exponential"])
@pytest.mark.parametrize("d", [(1, 1, 1, 1), (1, 3, 2, 6), (2, 6, 4, 5)])
@pytest.mark.parametrize("level", [Fraction(1, 2), Fraction(9, 10)])
def test_grouped_quantile_scale_inverts_the_map(selection: str, d: tuple[int, int, int, int],
                                               level: Fraction) -> None:
    """The scale from a budget (the compiler's) spends at most the budget at ``d``, exactly
    for permute-and-flip; halving it overspends (so a loose inverse would be caught)."""
    from dpcert.mechanisms.grouped_quantile import grouped_quantile_scale

    budget = Fraction(1, 3)
    dom = GroupedDomain(("g",), ("h",), None)
    s = grouped_quantile_scale(level, d, budget, selection)
    m = make_grouped_quantile(dom, GroupDistance(), SPEC, level, s, selection)
    assert m.map(d) <= budget
    if selection == "permute_and_flip":
        assert m.map(d) == budget
    else:
        assert m.map(d) > budget * Fraction(999, 1000)
    tight = make_grouped_quantile(dom, GroupDistance(), SPEC, level, s / 2,
                                  selection)
    assert tight.map(d) > budget
