"""Local randomizers: binary randomized response, k-ary randomized response and basic RAPPOR.

Each takes one record (input metric `DiscreteDistance`: the value may change) or,
with ``input_domain=VectorDomain(...)``, a vector of records each randomized independently
(input metric `HammingDistance`; the map is ``ε·d_in``).  All sampling is exact:
rational probabilities drawn with [`dpcert.samplers.bernoulli`][dpcert.samplers.bernoulli] and
[`dpcert.samplers.uniform_below`][dpcert.samplers.uniform_below], no float ``random()`` comparisons.

Exact rationals, stated ε.  The ideal probabilities involve ``e^ε``.  dpcert states the map as
the (rational) ε you asked for and samples with dyadic rationals (denominator ``2^48``) that are
*at least as private*: for binary RR the truth probability is rounded **down** below
``e^ε/(1+e^ε)``; for k-RR the probability of each other category is rounded **up** above
``1/(e^ε+k−1)``; for RAPPOR the flip probability is rounded **up** above ``1/(1+e^{ε/2})``.  The
likelihood ratios are then at most ``e^ε`` exactly (``docs/proofs/randomized_response.md``), and
the distributions differ from the ideal by at most ``2^-47`` per probability.

The Lecture 18 notes' "Random Mechanism 1" (toss a coin: heads → the truth; tails → toss
again, report the second coin) reports the truth with probability 3/4, so its ε is
``ln(3/4 / 1/4) = ln 3``; it is ``make_randomized_response_bool(ln 3)``:

>>> import math
>>> import dpcert as dp
>>> coin_flip = dp.m.make_randomized_response_bool(math.log(3))
>>> coin_flip.params["p_truth"]          # exactly the coin-flip scheme's 3/4
Fraction(3, 4)
>>> round(float(coin_flip.map(1)), 12)   # = ln 3
1.098612288668
>>> dp.m.make_randomized_response(["a", "b", "c"], 1.0).map(1)
Fraction(1, 1)
>>> len(dp.m.make_rappor(8, 2.0)(3))
8
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, SupportsInt, TypeAlias, cast

import numpy as np

from dpcert._directed import exp_bounds, exp_lower
from dpcert._numbers import Number
from dpcert._types import Array, BoolArray
from dpcert._validate import check_int, check_positive
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import PureDP
from dpcert.core.metrics import DiscreteDistance, HammingDistance, Metric
from dpcert.errors import DomainMismatch, InvalidParameter, OutOfDomain
from dpcert.samplers import bernoulli, uniform_below

if TYPE_CHECKING:
    from dpcert.core.events import Event

__all__ = [
    "RR_DENOMINATOR_BITS",
    "make_randomized_response",
    "make_randomized_response_bool",
    "make_rappor",
]

#: Sampling probabilities are dyadic rationals with this many bits after the point.
RR_DENOMINATOR_BITS = 48
_DEN = 1 << RR_DENOMINATOR_BITS


#: A value randomized response reports: categories are all of one of these types.
Category: TypeAlias = bool | int | float | str

def _floor_dyadic(x: Fraction) -> Fraction:
    return Fraction(math.floor(x * _DEN), _DEN)


def _ceil_dyadic(x: Fraction) -> Fraction:
    return Fraction(math.ceil(x * _DEN), _DEN)


def _local_space(input_domain: Domain | None, atom: AtomDomain,
                 who: str) -> tuple[Domain, Metric, bool]:
    """(domain, metric, is_vector) for one record or a vector of records of ``atom``."""
    if input_domain is None or input_domain == atom:
        return atom, DiscreteDistance(), False
    if isinstance(input_domain, VectorDomain):
        if input_domain.element != atom:
            raise DomainMismatch(
                f"{who}: input_domain={input_domain!r} must have elements {atom!r}"
            )
        return input_domain, HammingDistance(), True
    raise DomainMismatch(
        f"{who}: input_domain={input_domain!r} must be {atom!r} or a VectorDomain of it"
    )


def _linear_map(epsilon: Fraction) -> Callable[[int | Fraction], Fraction]:
    def privacy_map(d_in: int | Fraction) -> Fraction:
        return epsilon * Fraction(d_in)
    return privacy_map


def _rr_event_map(epsilon: Fraction, per_record: int = 1) -> Callable[[int | Fraction], Event]:
    """Accounting event: ``per_record·d_in`` randomized-response steps of level ``epsilon``."""
    def event_map(d_in: int | Fraction) -> Event:
        from dpcert.core.events import RandomizedResponseEvent, SelfComposedEvent

        count = int(d_in) * per_record
        ev = RandomizedResponseEvent(epsilon=epsilon)
        return ev if count == 1 else SelfComposedEvent(ev, count)
    return event_map


def rr_truth_probability(epsilon: Fraction) -> Fraction:
    """The dyadic truth probability of binary RR: the largest ``k/2^48 ≤ e^ε/(1+e^ε)``."""
    _, e_neg_hi = exp_bounds(-epsilon)
    return _floor_dyadic(1 / (1 + e_neg_hi))


def make_randomized_response_bool(epsilon: Number, *,
                                  input_domain: Domain | None = None) -> Measurement:
    """Binary randomized response: report the truth w.p. ``e^ε/(1+e^ε)``, else its negation.

    Warner (1965); the Lecture 18 notes' "Random Mechanism 2".

    Parameters
    ----------
    epsilon : number > 0
        The privacy parameter (a float means its decimal).
    input_domain : AtomDomain(bool) or VectorDomain(AtomDomain(bool)), optional
        One bool (default) or a vector of bools randomized independently.

    Returns
    -------
    Measurement
        ``bool → bool`` (or bool array) under [`PureDP`][dpcert.PureDP] with ``map(d_in) = ε·d_in``.

    Examples
    --------
    >>> import dpcert as dp
    >>> rr = dp.m.make_randomized_response_bool(1.0)
    >>> rr(True) in (True, False), rr.map(1)
    (True, Fraction(1, 1))
    >>> v = dp.m.make_randomized_response_bool(
    ...     1.0, input_domain=dp.VectorDomain(dp.AtomDomain(bool)))
    >>> v([True, False, True]).shape
    (3,)
    """
    eps = check_positive(epsilon, "epsilon")
    domain, metric, vector = _local_space(
        input_domain, AtomDomain(bool), "make_randomized_response_bool")
    p_truth = rr_truth_probability(eps)
    p_flip = 1 - p_truth

    if vector:
        assert isinstance(domain, VectorDomain)
        to_array = domain.to_array

        def function(x: object) -> BoolArray | bool:
            arr = np.asarray(to_array(x), dtype=np.bool_)
            return arr ^ bernoulli(p_flip, arr.size)
    else:
        def function(x: object) -> BoolArray | bool:
            return bool(x) ^ bool(bernoulli(p_flip, 1)[0])

    return Measurement(
        domain, metric, PureDP(), function=function, privacy_map=_linear_map(eps),
        name="randomized_response_bool",
        params={"epsilon": eps, "p_truth": p_truth},
        event_map=_rr_event_map(eps), proof="randomized_response.md",
    )


def krr_other_probability(epsilon: Fraction, k: int) -> Fraction:
    """k-RR's probability of each *other* category: the smallest ``j/2^48 ≥ 1/(e^ε+k−1)``."""
    e_lo = exp_lower(epsilon)
    return min(_ceil_dyadic(1 / (e_lo + k - 1)), Fraction(1, k))


def _categories(categories: Sequence[Category]) -> tuple[list[Category], AtomDomain]:
    if isinstance(categories, (str, bytes)) or not isinstance(categories, (Sequence, np.ndarray)):
        raise InvalidParameter(f"categories={categories!r} must be a sequence of values")
    cats = [c.item() if isinstance(c, np.generic) else c for c in categories]
    if len(cats) < 2:
        raise InvalidParameter(f"categories={categories!r} must have at least 2 values")
    types = {type(c) for c in cats}
    if len(types) != 1 or next(iter(types)) not in (bool, int, float, str):
        raise InvalidParameter(
            f"categories={categories!r} must all be of one type: bool, int, float or str"
        )
    if len(set(cats)) != len(cats):
        raise InvalidParameter(f"categories={categories!r} has duplicates")
    if any(isinstance(c, float) and not math.isfinite(c) for c in cats):
        raise InvalidParameter(f"categories={categories!r} must be finite")
    return cats, AtomDomain(next(iter(types)))


def _index_of(values: Array, lookup: dict[Category, int],
              cats: list[Category]) -> Array:
    """Vectorised category → index (OutOfDomain naming a value outside ``categories``)."""
    uniq, inverse = np.unique(values, return_inverse=True)
    idx = np.empty(len(uniq), dtype=np.int64)
    for j, u in enumerate(uniq.tolist()):
        if u not in lookup:
            raise OutOfDomain(f"value {u!r} is not one of categories={cats!r}")
        idx[j] = lookup[u]
    return idx[inverse.reshape(-1)]


def make_randomized_response(categories: Sequence[Category], epsilon: Number, *,
                             input_domain: Domain | None = None) -> Measurement:
    """k-ary randomized response over known ``categories`` (the DP-proofs post's, corrected).

    With ``k = len(categories)``: report the true category w.p. ``e^ε/(e^ε+k−1)`` and each other
    category w.p. ``1/(e^ε+k−1)`` (Kairouz, Oh & Viswanath 2014; Wang et al. 2017 "direct
    encoding").  Sampled as the "Introduction to differential privacy proofs" post intended:
    with probability ``k·q`` replace the value by a uniform category (which may be the truth),
    else keep it.  The post's sketch used an undefined ``k`` and ``random.choice`` on a set (a
    ``TypeError``; sets are unordered) and a float ``random()``; here ``k = len(categories)``,
    categories are an ordered list, and both draws are exact.

    Parameters
    ----------
    categories : sequence
        Distinct values of one type (``bool``, ``int``, ``float`` or ``str``), at least two.
    epsilon : number > 0
    input_domain : VectorDomain, optional
        Pass ``VectorDomain(AtomDomain(type))`` to randomize a vector of records.

    Returns
    -------
    Measurement
        One category → one category (or an array of them) under PureDP, ``map(d_in) = ε·d_in``.

    Examples
    --------
    >>> import dpcert as dp
    >>> m = dp.m.make_randomized_response(["a", "b", "c"], 2.0)
    >>> m("b") in ("a", "b", "c")
    True
    >>> m("z")
    Traceback (most recent call last):
    ...
    dpcert.errors.OutOfDomain: value 'z' is not one of categories=['a', 'b', 'c']
    """
    eps = check_positive(epsilon, "epsilon")
    cats, atom = _categories(categories)
    k = len(cats)
    domain, metric, vector = _local_space(input_domain, atom, "make_randomized_response")
    q = krr_other_probability(eps, k)
    p_truth = 1 - (k - 1) * q
    p_replace = k * q
    lookup = {c: i for i, c in enumerate(cats)}
    out_values = np.empty(k, dtype=object)
    out_values[:] = cats

    if vector:
        assert isinstance(domain, VectorDomain)
        to_array = domain.to_array

        def function(x: object) -> object:
            arr = to_array(x)
            idx = _index_of(np.asarray(arr), lookup, cats)
            replace = bernoulli(p_replace, idx.size)
            fresh = uniform_below(k, idx.size)
            out = out_values[np.where(replace, fresh, idx)]
            return out if atom.type is str else out.astype(type(cats[0]))
    else:
        def function(x: object) -> object:
            if x not in lookup:
                raise OutOfDomain(f"value {x!r} is not one of categories={cats!r}")
            if bool(bernoulli(p_replace, 1)[0]):
                return cats[int(uniform_below(k, 1)[0])]
            return x

    return Measurement(
        domain, metric, PureDP(), function=function, privacy_map=_linear_map(eps),
        name="randomized_response",
        params={"epsilon": eps, "categories": list(cats), "p_truth": p_truth, "p_other": q},
        event_map=_rr_event_map(eps), proof="randomized_response.md",
    )


def rappor_flip_probability(epsilon: Fraction) -> Fraction:
    """RAPPOR's per-bit flip probability ``f/2``: the smallest ``j/2^48 ≥ 1/(1+e^{ε/2})``."""
    e_lo = exp_lower(epsilon / 2)
    return min(_ceil_dyadic(1 / (1 + e_lo)), Fraction(1, 2))


def make_rappor(domain_size: int, epsilon: Number, *,
                input_domain: Domain | None = None) -> Measurement:
    """Basic one-hot RAPPOR (Erlingsson, Pihur & Korolova 2014; the DP-proofs post).

    Encode index ``v`` as the one-hot vector of length ``domain_size`` and flip every bit
    independently w.p. ``f/2 = 1/(1+e^{ε/2})``.  Neighbouring values differ in two bits, each a
    binary randomized response at level ``ε/2``, so the map is ``ε·d_in``.

    Parameters
    ----------
    domain_size : int ≥ 2
    epsilon : number > 0
    input_domain : VectorDomain, optional
        ``VectorDomain(AtomDomain(int, bounds=(0, domain_size − 1)))`` to randomize many records;
        the output is then a ``(n, domain_size)`` array.

    Returns
    -------
    Measurement
        An index → a 0/1 ``uint8`` vector, under PureDP.

    Examples
    --------
    >>> import dpcert as dp
    >>> r = dp.m.make_rappor(4, 1.0)
    >>> r.input_domain
    AtomDomain(int, bounds=(0, 3))
    >>> set(r(2).tolist()) <= {0, 1}
    True
    """
    k = check_int(domain_size, "domain_size", minimum=2)
    eps = check_positive(epsilon, "epsilon")
    atom = AtomDomain(int, bounds=(0, k - 1))
    domain, metric, vector = _local_space(input_domain, atom, "make_rappor")
    r = rappor_flip_probability(eps)

    if vector:
        assert isinstance(domain, VectorDomain)
        to_array = domain.to_array

        def function(x: object) -> Array:
            idx = np.asarray(to_array(x), dtype=np.int64)
            n = idx.size
            out = bernoulli(r, n * k).reshape(n, k).astype(np.uint8)
            out[np.arange(n), idx] ^= 1
            return out
    else:
        def function(x: object) -> Array:
            out = bernoulli(r, k).astype(np.uint8)
            out[int(cast("SupportsInt", x))] ^= 1  # the domain admits only ints
            return out

    return Measurement(
        domain, metric, PureDP(), function=function, privacy_map=_linear_map(eps),
        name="rappor",
        params={"epsilon": eps, "domain_size": k, "p_flip": r},
        event_map=_rr_event_map(eps / 2, per_record=2), proof="randomized_response.md",
    )
