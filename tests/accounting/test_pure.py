"""``dpcert.accounting.pure``: replace-one ε of a Poisson-subsampled ε-DP event and k-fold
composition, against 40-digit references (Balle, Barthe & Gaboardi 2018, Thm 9 / Table 1;
docs/proofs/amplification.md)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

import dpcert as dp
from dpcert.accounting import LaplaceEvent, PoissonSampledEvent, PureAccountant, PureEvent
from dpcert.accounting.ledger import Ledger
from dpcert.accounting.pure import epsilon_of, poisson_replace_one_epsilon
from dpcert.core.events import ComposedEvent, SampledWithoutReplacementEvent, SelfComposedEvent
from dpcert.mechanisms.randomized_response import rr_truth_probability

mpmath.mp.dps = 40


def ref_replace_one(eps: float, q: float) -> float:
    e, r = mpmath.mpf(eps), mpmath.mpf(q)
    return float(mpmath.log((1 - r + r * mpmath.exp(e)) / (1 - r + r * mpmath.exp(-e))))


@pytest.mark.parametrize("eps", [Fraction(1, 10), Fraction(1), Fraction(3)])
def test_unsampled_replace_one_is_twice_epsilon(eps: Fraction) -> None:
    """At rate 1 a replacement is a removal then an addition: exactly 2ε (group of 2)."""
    assert poisson_replace_one_epsilon(PoissonSampledEvent(PureEvent(eps), 1)) == 2 * eps


@pytest.mark.parametrize(("eps", "q"), [(1.0, 0.1), (0.5, 0.01), (3.0, 0.5), (1.0, 0.999999)])
def test_replace_one_matches_the_closed_form_rounded_up(eps: float, q: float) -> None:
    event = PoissonSampledEvent(PureEvent(eps), q)
    exact = poisson_replace_one_epsilon(event)
    with mpmath.workdps(150):  # the bound is rigorous to ~2^-200: compare at 500 bits
        e = mpmath.mpf(eps)
        r = mpmath.mpf(event.rate.numerator) / event.rate.denominator  # the decimal rate, exact
        true = mpmath.log((1 - r + r * mpmath.exp(e)) / (1 - r + r * mpmath.exp(-e)))
        assert true <= mpmath.mpf(exact.numerator) / exact.denominator
    got, ref = float(exact), ref_replace_one(eps, q)
    assert got <= ref * (1 + 1e-9) + 1e-15
    assert got <= 2 * eps  # never worse than the unsampled group bound


def test_k_fold_pure_events_add_up() -> None:
    assert epsilon_of(SelfComposedEvent(PureEvent(Fraction(1, 3)), 6)) == 2
    assert epsilon_of(ComposedEvent([PureEvent(Fraction(1, 4)),
                                     SelfComposedEvent(PureEvent(Fraction(1, 8)), 4)])) == \
        Fraction(3, 4)


# --- second routes (issue 20, item 4): the exact output law of a real mechanism ---------------


def _dlap(y: np.ndarray, centre: int, s: float) -> np.ndarray:
    """Unnormalised discrete Laplace PMF (every component shares the normaliser)."""
    out: np.ndarray = np.exp(-np.abs(y - centre) / s)
    return out


def _sampled_histogram_law(data: list[int], m: int, s: float, y1: np.ndarray,
                           y2: np.ndarray) -> np.ndarray:
    """Output law of: draw m of the records without replacement, count bins 0 and 1, add
    independent discrete Laplace(s) noise to each count -- by enumerating every m-subset."""
    out = np.zeros(np.broadcast(y1, y2).shape)
    subsets = list(itertools.combinations(range(len(data)), m))
    for sub in subsets:
        c1 = sum(data[i] for i in sub)
        out += _dlap(y1, m - c1, s) * _dlap(y2, c1, s)
    return out / len(subsets)


@pytest.mark.parametrize(("s", "m", "n"), [(1.0, 3, 3), (1.0, 2, 5), (2.0, 1, 4)])
def test_replace_one_epsilon_covers_a_sampled_histograms_exact_law(s: float, m: int,
                                                                   n: int) -> None:
    """A two-bin Laplace histogram is (1/s)-DP for add/remove (one count moves by 1) and moves
    two counts under replace-one.  Run on m of n records drawn without replacement, its exact
    replace-one loss, max_y |log P(y)/P'(y)| over both outputs, is computed from the mixture
    over all m-subsets; the accountant's ε for the same release (a rate-1 "Poisson sample" of
    the add/remove event, then sampling without replacement) must cover it, and be attained
    (one record in bin 1 moved to bin 0: log(1 + γ(e^{2/s} − 1)), Balle et al. 2018, Thm 9)."""
    x = [1] + [0] * (n - 1)       # the changed record is in bin 1, every other in bin 0
    x2 = [0] * n                  # ... and moved to bin 0
    grid = np.arange(-40 * s, 40 * s + n + 1)
    y1, y2 = np.meshgrid(grid, grid, indexing="ij")
    p = _sampled_histogram_law(x, m, s, y1, y2)
    p2 = _sampled_histogram_law(x2, m, s, y1, y2)
    exact = float(np.max(np.abs(np.log(p) - np.log(p2))))
    event = SampledWithoutReplacementEvent(PoissonSampledEvent(LaplaceEvent(s), 1), m, n)
    got = PureAccountant().compose(event).epsilon()
    assert got >= exact * (1 - 1e-12), (exact, got)
    assert got <= exact * (1 + 1e-9) + 1e-12  # tight here
    assert exact == pytest.approx(math.log1p(m / n * math.expm1(2 / s)), rel=1e-9)


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("eps", [Fraction(1, 2), Fraction(2)])
def test_k_fold_epsilon_covers_the_exact_law_of_randomized_response_at_distance_d(
        d: int, eps: Fraction, tmp_path: Path) -> None:
    """Vector randomized response at Hamming distance d is d independent RR steps -- its event
    is ``SelfComposedEvent(RR, d)``.  Its exact loss is read from the product law: over all 2^d
    outputs on the changed coordinates, max log P(y)/P'(y) = d·log(p/(1 − p)) with p the
    mechanism's (dyadic) truth probability.  The accountant, and a pure-DP ledger charged with
    the event (its filter prices a nested composition with :func:`epsilon_of`), must cover it."""
    rr = dp.m.make_randomized_response_bool(
        eps, input_domain=dp.VectorDomain(dp.AtomDomain(bool)))
    p = float(rr_truth_probability(eps))
    x = (True,) * d
    worst = 0.0
    for y in itertools.product((True, False), repeat=d):
        px = math.prod(p if yi == xi else 1 - p for yi, xi in zip(y, x, strict=True))
        px2 = math.prod(p if yi != xi else 1 - p for yi, xi in zip(y, x, strict=True))
        worst = max(worst, math.log(px / px2))
    assert worst == pytest.approx(d * math.log(p / (1 - p)), rel=1e-12)
    event = rr.event(d)
    assert isinstance(event, SelfComposedEvent)
    got = PureAccountant().compose(event).epsilon()
    assert got >= worst * (1 - 1e-12), (worst, got)
    assert got <= d * float(eps) * (1 + 1e-12)
    led = Ledger(str(tmp_path / "l.sqlite"))
    led.create("d", dp.PureDP(10))
    led.charge("d", event)
    spent = led.status("d").spent
    assert float(spent) >= worst * (1 - 1e-12), (worst, spent)
    assert spent <= d * eps
