"""Private selection: the exponential mechanism, report-noisy-max and permute-and-flip.

A *scorer* maps a dataset to one score per candidate; ``sensitivity`` is the most any score can
change between neighbouring datasets (``d_in = 1`` under ``input_metric``).  The privacy of all
three mechanisms rests on that bound, which is the caller's claim (dpcert's own scorers, e.g.
`make_quantile`, compute it).  With ``monotonic=True`` the caller also claims
that between neighbours all scores move in the same direction, which halves the noise.

=========================  ==================================================  ===============
constructor                output distribution                                 map
=========================  ==================================================  ===============
``make_exponential``       P(c) ∝ exp(ε·u(c)/(2Δ))  (McSherry & Talwar 2007)   ``ε·d_in``
``make_report_noisy_max``  argmax u(c) + noise; ``noise="exponential"`` is     ``k·ε·d_in``
                           the exponential mechanism (McKenna & Sheldon
                           2020), ``"laplace"`` adds discrete Laplace of
                           scale 2Δ/ε to integer scores (Dwork & Roth 2014,
                           Claim 3.9); top-``k`` by peeling
``make_permute_and_flip``  McKenna & Sheldon 2020; never less accurate than    ``ε·d_in``
                           the exponential mechanism
=========================  ==================================================  ===============

(``monotonic=True`` replaces ``2Δ`` by ``Δ``.)  Sampling is exact (`_selection`).

**Under zCDP.** The exponential mechanism is ε-*bounded-range* (Durfee & Rogers 2019), hence
``ε²/8``-zCDP, not just the ``ε²/2`` of a generic ε-DP mechanism (Cesar & Rogers 2021, Lemma 3.2;
Dong, Durfee & Rogers 2020).  Its event is a `BoundedRangeEvent`, so
`dpcert.c.make_pureDP_to_zCDP` and the zCDP accountant charge ``(ε·d_in)²/8`` (``k`` times
that for top-``k``).  This covers ``make_exponential`` and ``make_report_noisy_max(noise=
"exponential")`` (sampled as the exponential mechanism).  Permute-and-flip and report-noisy-max
with Laplace noise are not known to be bounded-range and are charged ``ε²/2``.
Proofs: ``docs/proofs/exponential.md``.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
>>> cands = ["red", "green", "blue"]
>>> votes = lambda xs: [sum(x == c for x in xs) for c in cands]
>>> m = space >> dp.m.then_exponential(cands, votes, sensitivity=1, epsilon=1.0)
>>> m(["red"] * 30 + ["blue"] * 2) in cands, m.map(1)
(True, Fraction(1, 1))
>>> top2 = space >> dp.m.then_report_noisy_max(cands, votes, 1, 1.0, k=2)
>>> top2.map(1)
Fraction(2, 1)
>>> dp.c.make_pureDP_to_zCDP(m).map(1), dp.c.make_pureDP_to_zCDP(top2).map(1)
(Fraction(1, 8), Fraction(1, 4))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from dpcert._numbers import Number, is_real_number
from dpcert._types import Array
from dpcert._validate import check_int, check_positive
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import PureDP
from dpcert.core.metrics import Metric
from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert.core.events import Event
from dpcert.mechanisms._selection import (
    exponential_index,
    exponential_indices,
    noisy_max_index,
    noisy_max_indices,
    permute_and_flip_indices,
)

__all__ = [
    "make_exponential",
    "make_permute_and_flip",
    "make_report_noisy_max",
    "then_exponential",
    "then_permute_and_flip",
    "then_report_noisy_max",
]

#: Scores as a scorer returns them: one finite number per candidate.
Scores = Sequence[Number] | Array
#: ``scorer(data)`` → scores; ``data`` is a member of the measurement's input domain.
Scorer = Callable[[Any], Scores]


def _check_candidates(candidates: Sequence[object]) -> list[object]:
    if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__len__"):
        raise InvalidParameter(f"candidates={candidates!r} must be a sequence")
    cands = list(candidates)
    if not cands:
        raise InvalidParameter("candidates=[] must not be empty")
    return cands


def exact_scores(raw: Scores, k: int) -> list[Fraction]:
    """A scorer's output as exact Fractions (floats by their exact binary value)."""
    vals = list(raw.tolist() if hasattr(raw, "tolist") else raw)
    if len(vals) != k:
        raise InvalidParameter(f"scorer returned {len(vals)} scores for {k} candidates")
    out = []
    for v in vals:
        if not is_real_number(v) or (isinstance(v, float) and not math.isfinite(v)):
            raise InvalidParameter(f"scorer returned {v!r}: scores must be finite numbers")
        out.append(Fraction(v))
    return out


def gammas_for(scores: list[Fraction], epsilon: Fraction, sensitivity: Fraction,
               monotonic: bool) -> list[Fraction]:
    """``γᵢ = ε·(max u − uᵢ)/(2Δ)`` (``/Δ`` when monotonic), so ``min γ = 0``."""
    top = max(scores)
    factor = epsilon / (sensitivity if monotonic else 2 * sensitivity)
    return [(top - u) * factor for u in scores]


def _integer_scores(scores: list[Fraction]) -> list[int]:
    for u in scores:
        if u.denominator != 1:
            raise InvalidParameter(
                f"noise='laplace' needs integer scores, got {u}; use noise='exponential'"
            )
    return [int(u) for u in scores]


def _pick(cands: list[object], idx: Array) -> Array:
    arr = np.empty(len(cands), dtype=object)
    arr[:] = cands
    out: Array = arr[idx]
    return out


def _linear(eps: Fraction) -> Callable[[int | Fraction], Fraction]:
    return lambda d_in: eps * Fraction(d_in)


def _bounded_range_events(eps: Fraction, rounds: int) -> Callable[[int | Fraction], Event]:
    """Events of ``rounds`` adaptive ε-bounded-range selections at ``d_in`` (scores move by at
    most ``Δ·d_in``, so each round is ``ε·d_in``-bounded-range; ``docs/proofs/exponential.md``)."""
    from dpcert.core.events import BoundedRangeEvent, ComposedEvent, SelfComposedEvent

    def event_map(d_in: int | Fraction) -> Event:
        d = Fraction(d_in)
        if d == 0:
            return ComposedEvent(())
        one = BoundedRangeEvent(eps * d)
        return one if rounds == 1 else SelfComposedEvent(one, rounds)
    return event_map


def _gamma_selection(input_domain: Domain, input_metric: Metric, candidates: Sequence[object],
                     scorer: Scorer, sensitivity: Number, epsilon: Number, monotonic: bool,
                     name: str,
                     draw: Callable[[list[Fraction], int], Array],
                     bounded_range: bool) -> Measurement:
    """A selection measurement whose sampler takes the acceptance exponents ``γ``."""
    cands = _check_candidates(candidates)
    sens = check_positive(sensitivity, "sensitivity")
    eps = check_positive(epsilon, "epsilon")
    k = len(cands)

    def batch(x: object, n: int) -> Array:
        g = gammas_for(exact_scores(scorer(x), k), eps, sens, monotonic)
        return _pick(cands, draw(g, n))

    return Measurement(
        input_domain, input_metric, PureDP(), function=lambda x: batch(x, 1)[0],
        privacy_map=_linear(eps), batch_map=batch, name=name,
        params={"epsilon": eps, "sensitivity": sens, "candidates": k, "monotonic": monotonic},
        event_map=_bounded_range_events(eps, 1) if bounded_range else None, proof="exponential.md",
    )


def make_exponential(input_domain: Domain, input_metric: Metric, candidates: Sequence[object],
                     scorer: Scorer, sensitivity: Number, epsilon: Number, *,
                     monotonic: bool = False) -> Measurement:
    """The exponential mechanism, sampled exactly.

    Parameters
    ----------
    input_domain
        The datasets the scorer reads.
    input_metric
        Their neighbour relation.
    candidates : sequence
        The (public, non-empty) set to select from.
    scorer : callable
        ``scorer(data)`` → one finite score per candidate (higher is better).
    sensitivity : number > 0
        Bound on ``|u(x, c) − u(x', c)|`` for neighbours (``d_in = 1``).
    epsilon : number > 0
    monotonic : bool
        Whether all scores move in the same direction between neighbours.

    Returns
    -------
    Measurement
        Data → one candidate, under PureDP with ``map(d_in) = ε·d_in``.
    """
    return _gamma_selection(input_domain, input_metric, candidates, scorer, sensitivity, epsilon,
                            monotonic, "exponential", exponential_indices, bounded_range=True)


def make_permute_and_flip(input_domain: Domain, input_metric: Metric,
                          candidates: Sequence[object], scorer: Scorer, sensitivity: Number,
                          epsilon: Number, *, monotonic: bool = False) -> Measurement:
    """Permute-and-flip (McKenna & Sheldon 2020), sampled exactly; parameters as
    [`make_exponential`][dpcert.mechanisms.exponential.make_exponential].  ``map(d_in) = ε·d_in``.

    Examples
    --------
    >>> import dpcert as dp
    >>> space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    >>> m = dp.m.make_permute_and_flip(*space, [0, 1], lambda xs: [xs.count(0), xs.count(1)],
    ...                                1, 2.0)
    >>> m([1] * 50) in (0, 1), m.map(2)
    (True, Fraction(4, 1))
    """
    return _gamma_selection(input_domain, input_metric, candidates, scorer, sensitivity, epsilon,
                            monotonic, "permute_and_flip", permute_and_flip_indices,
                            bounded_range=False)


def make_report_noisy_max(input_domain: Domain, input_metric: Metric,
                          candidates: Sequence[object], scorer: Scorer, sensitivity: Number,
                          epsilon: Number, *,
                          noise: Literal["exponential", "laplace"] = "exponential", k: int = 1,
                          monotonic: bool = False) -> Measurement:
    """Report-noisy-max, optionally top-``k`` (by peeling: ``k`` rounds without replacement).

    Parameters not listed below are as for
    [`make_exponential`][dpcert.mechanisms.exponential.make_exponential].

    Parameters
    ----------
    noise : {"exponential", "laplace"}
        ``"exponential"``: the exponential mechanism (sampled exactly; it is report-noisy-max
        with Gumbel noise of scale ``2Δ/ε``, Durfee & Rogers 2019), ε-bounded-range, so
        charged ``k·(ε·d_in)²/8`` under zCDP.  ``"laplace"``: discrete Laplace noise of scale
        ``2Δ/ε`` (``Δ/ε`` if monotonic) added to *integer* scores; ties broken uniformly.
    k : int ≥ 1
        Number of candidates to report (in order of selection); each round costs ε.

    Returns
    -------
    Measurement
        Data → one candidate (``k = 1``) or a list of ``k`` distinct candidates; PureDP with
        ``map(d_in) = k·ε·d_in``.
    """
    cands = _check_candidates(candidates)
    sens = check_positive(sensitivity, "sensitivity")
    eps = check_positive(epsilon, "epsilon")
    kk = check_int(k, "k", minimum=1)
    if kk > len(cands):
        raise InvalidParameter(f"k={k!r} exceeds the number of candidates ({len(cands)})")
    if noise not in ("exponential", "laplace"):
        raise InvalidParameter(f"noise={noise!r} must be 'exponential' or 'laplace'")
    n = len(cands)
    scale = (sens if monotonic else 2 * sens) / eps

    def pick(scores: list[Fraction]) -> int:
        if noise == "exponential":
            return exponential_index(gammas_for(scores, eps, sens, monotonic))
        return noisy_max_index(_integer_scores(scores), scale)

    def batch(x: object, count: int) -> Array:  # one round (k = 1), vectorised over draws
        scores = exact_scores(scorer(x), n)
        if noise == "exponential":
            return _pick(cands, exponential_indices(gammas_for(scores, eps, sens, monotonic),
                                                    count))
        return _pick(cands, noisy_max_indices(_integer_scores(scores), scale, count))

    def function(x: object) -> object:
        scores = exact_scores(scorer(x), n)
        remaining = list(range(n))
        chosen: list[object] = []
        for _ in range(kk):
            j = pick([scores[i] for i in remaining])
            chosen.append(cands[remaining.pop(j)])
        return chosen[0] if kk == 1 else chosen

    return Measurement(
        input_domain, input_metric, PureDP(), function=function,
        privacy_map=_linear(kk * eps),
        batch_map=batch if kk == 1 else None,
        name="report_noisy_max",
        params={"epsilon": eps, "sensitivity": sens, "noise": noise, "k": kk,
                "candidates": n, "monotonic": monotonic,
                "noise_scale": scale if noise == "laplace" else None},
        event_map=_bounded_range_events(eps, kk) if noise == "exponential" else None,
        proof="exponential.md",
    )


def then_exponential(candidates: Sequence[object], scorer: Scorer, sensitivity: Number,
                     epsilon: Number,
                     *, monotonic: bool = False) -> PartialConstructor:
    """Partial form of [`make_exponential`][dpcert.mechanisms.exponential.make_exponential]."""
    return partial(make_exponential, "exponential", candidates, scorer, sensitivity, epsilon,
                   monotonic=monotonic)


def then_permute_and_flip(candidates: Sequence[object], scorer: Scorer, sensitivity: Number,
                          epsilon: Number, *, monotonic: bool = False) -> PartialConstructor:
    """Partial form of `make_permute_and_flip`."""
    return partial(make_permute_and_flip, "permute_and_flip", candidates, scorer, sensitivity,
                   epsilon, monotonic=monotonic)


def then_report_noisy_max(candidates: Sequence[object], scorer: Scorer, sensitivity: Number,
                          epsilon: Number, *,
                          noise: Literal["exponential", "laplace"] = "exponential", k: int = 1,
                          monotonic: bool = False) -> PartialConstructor:
    """Partial form of `make_report_noisy_max`."""
    return partial(make_report_noisy_max, "report_noisy_max", candidates, scorer, sensitivity,
                   epsilon, noise=noise, k=k, monotonic=monotonic)
