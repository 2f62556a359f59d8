"""RAPPOR with Bloom filters: strings → cohort-hashed Bloom filters → two layers of randomized
response (Erlingsson, Pihur & Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving
Ordinal Response", CCS 2014).

A client holding a string ``v`` and assigned (uniformly, independently of ``v``) to cohort ``c``

1. **encodes** ``v`` into a ``k``-bit Bloom filter ``B`` with ``h`` hash functions specific to
   its cohort: bit ``H_j(c, v) mod k`` is set for ``j = 1..h``.  The hash is keyed BLAKE2b
   (deterministic across processes and machines; Python's ``hash()`` is salted per process and
   would make reports undecodable);
2. **permanent randomized response** (PRR): each bit becomes 1 w.p. ``f/2``, 0 w.p. ``f/2``
   and stays ``B_i`` w.p. ``1 − f`` — i.e. flips w.p. ``f/2``.  A client memoizes ``B'`` for
   ``v`` and reuses it forever;
3. **instantaneous randomized response** (IRR): each report sends ``S_i = 1`` w.p. ``q`` if
   ``B'_i = 1`` and w.p. ``p`` if ``B'_i = 0``.

Privacy (the paper's Theorems 1 and 2; ``docs/proofs/rappor_bloom.md``).  Two values' Bloom
filters differ in at most ``2h`` bits, so

* the PRR is ``ε∞``-DP with ``ε∞ = 2h·ln((1 − f/2)/(f/2))``; every report derived from one
  memoized ``B'`` is post-processing, so this bounds the loss over *all* reports of ``v``;
* one report ``S`` (PRR then IRR, nothing memoized) is ``ε₁``-DP with
  ``ε₁ = h·ln(q*(1 − p*)/(p*(1 − q*)))``, ``q* = ½f(p + q) + (1 − f)q`` and
  ``p* = ½f(p + q) + (1 − f)p``, the probabilities that ``S_i = 1`` given ``B_i = 1`` / ``0``.

``f``, ``p`` and ``q`` are exact rationals (a float means its decimal) and every coin is an
exact Bernoulli of the dyadic or rational probability stated, so these are the true
probabilities; the maps return an upper enclosure of the logarithm rounded up to ``2^-64``.

Examples
--------
>>> import dpcert as dp
>>> params = dp.m.RapporBloomParams(num_bits=32, num_hashes=2, num_cohorts=8,
...                                 f=0.5, p=0.5, q=0.75)
>>> round(float(params.epsilon_permanent()), 4)   # 2h·ln(3) with h = 2
4.3944
>>> round(float(params.epsilon_one_report()), 4)
1.0743
>>> m = dp.m.make_rappor_bloom(params)
>>> rep = m("www.example.com")
>>> rep.bits.shape, 0 <= int(rep.cohorts[0]) < 8
((1, 32), True)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dpcert._directed import log_bounds
from dpcert._validate import check_int, check_probability
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import PureDP
from dpcert.core.metrics import Metric
from dpcert.errors import InvalidParameter, OutOfDomain
from dpcert.mechanisms.randomized_response import _linear_map, _local_space
from dpcert.samplers import EntropySource, bernoulli, uniform_below

__all__ = [
    "MAX_BITS",
    "MAX_HASHES",
    "RapporBloomParams",
    "RapporReports",
    "instantaneous_report",
    "make_rappor_bloom",
    "make_rappor_bloom_permanent",
]

#: Largest Bloom filter accepted (bits per report).
MAX_BITS = 1 << 16
#: Largest number of hash functions (BLAKE2b gives 64 bytes: 8 bytes per hash).
MAX_HASHES = 8
#: Coins drawn per call of the sampler (bounds the memory of large collections).
_CHUNK = 1 << 22
#: Privacy maps are rounded up to a multiple of this.
_EPS_GRID = 1 << 64

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]


def _ceil_grid(x: Fraction) -> Fraction:
    return Fraction(math.ceil(x * _EPS_GRID), _EPS_GRID)


@dataclass(frozen=True)
class RapporBloomParams:
    """The public parameters of a RAPPOR collection (shared by clients and the aggregator).

    The paper writes ``k`` for ``num_bits``, ``h`` for ``num_hashes`` and ``m`` for
    ``num_cohorts``; its deployments used ``k = 128, h = 2, m = 64, f = 1/2, p = 1/2, q = 3/4``
    (the defaults here).

    Parameters
    ----------
    num_bits : int in [2, 65536]
        Bloom filter size ``k``.
    num_hashes : int in [1, min(8, num_bits)]
        Hash functions ``h`` per cohort.
    num_cohorts : int ≥ 1
        Cohorts ``m``; each has its own hash functions, which lets the decoder separate
        strings that collide in one cohort.
    f : number in (0, 1]
        Permanent randomized response: a bit flips w.p. ``f/2``.  ``f = 0`` would publish the
        Bloom filter itself (ε∞ = ∞) and is refused.
    p : number in [0, 1], ``p < q``
        Instantaneous randomized response: ``P(S_i = 1 | B'_i = 0) = p``.
    q : number in [0, 1], ``p < q``
        Instantaneous randomized response: ``P(S_i = 1 | B'_i = 1) = q``.
    key : bytes
        Key of the BLAKE2b hash (public; it only separates this collection's hash functions
        from others').  At most 64 bytes.

    Examples
    --------
    >>> RapporBloomParams(f=0)
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: f=0 must be in (0, 1]
    """

    num_bits: int = 128
    num_hashes: int = 2
    num_cohorts: int = 64
    f: Fraction | float = Fraction(1, 2)
    p: Fraction | float = Fraction(1, 2)
    q: Fraction | float = Fraction(3, 4)
    key: bytes = field(default=b"dpcert-rappor-v1", repr=False)

    def __post_init__(self) -> None:
        k = check_int(self.num_bits, "num_bits", minimum=2)
        if k > MAX_BITS:
            raise InvalidParameter(f"num_bits={self.num_bits!r} must be <= {MAX_BITS}")
        h = check_int(self.num_hashes, "num_hashes", minimum=1)
        if h > min(MAX_HASHES, k):
            raise InvalidParameter(
                f"num_hashes={self.num_hashes!r} must be <= min({MAX_HASHES}, num_bits={k})")
        m = check_int(self.num_cohorts, "num_cohorts", minimum=1)
        f = check_probability(self.f, "f")
        if f == 0:
            raise InvalidParameter(f"f={self.f!r} must be in (0, 1]")
        p = check_probability(self.p, "p")
        q = check_probability(self.q, "q")
        if not p < q:
            raise InvalidParameter(f"p={self.p!r} must be < q={self.q!r}")
        if not isinstance(self.key, bytes) or len(self.key) > 64:
            raise InvalidParameter(f"key={self.key!r} must be bytes of length <= 64")
        for name, value in (("num_bits", k), ("num_hashes", h), ("num_cohorts", m),
                            ("f", f), ("p", p), ("q", q)):
            object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ probabilities
    @property
    def q_star(self) -> Fraction:
        """``P(S_i = 1 | B_i = 1) = ½f(p + q) + (1 − f)q`` for one report."""
        f, p, q = Fraction(self.f), Fraction(self.p), Fraction(self.q)
        return f * (p + q) / 2 + (1 - f) * q

    @property
    def p_star(self) -> Fraction:
        """``P(S_i = 1 | B_i = 0) = ½f(p + q) + (1 − f)p`` for one report."""
        f, p, q = Fraction(self.f), Fraction(self.p), Fraction(self.q)
        return f * (p + q) / 2 + (1 - f) * p

    def epsilon_permanent(self) -> Fraction:
        """``ε∞ = 2h·ln((1 − f/2)/(f/2))``, rounded up: the loss over all reports of one value."""
        half = Fraction(self.f) / 2
        ratio = (1 - half) / half
        if ratio == 1:
            return Fraction(0)
        return _ceil_grid(2 * self.num_hashes * log_bounds(ratio)[1])

    def epsilon_one_report(self) -> Fraction:
        """``ε₁ = h·ln(q*(1 − p*)/(p*(1 − q*)))``, rounded up: the loss of one fresh report."""
        qs, ps = self.q_star, self.p_star
        ratio = qs * (1 - ps) / (ps * (1 - qs))
        if ratio == 1:
            return Fraction(0)
        return _ceil_grid(self.num_hashes * log_bounds(ratio)[1])

    # ------------------------------------------------------------------ Bloom encoding
    def bloom_indices(self, value: str, cohort: int) -> tuple[int, ...]:
        """The ``h`` bit positions of ``value`` in ``cohort`` (keyed BLAKE2b, deterministic).

        Examples
        --------
        >>> RapporBloomParams().bloom_indices("abc", 3) == RapporBloomParams().bloom_indices(
        ...     "abc", 3)
        True
        """
        if not isinstance(value, str):
            raise OutOfDomain(f"value={value!r} must be a str")
        c = check_int(cohort, "cohort", minimum=0)
        if c >= self.num_cohorts:
            raise OutOfDomain(f"cohort={cohort!r} must be < num_cohorts={self.num_cohorts}")
        digest = hashlib.blake2b(c.to_bytes(4, "big") + value.encode("utf-8", "surrogatepass"),
                                 digest_size=8 * self.num_hashes, key=self.key).digest()
        return tuple(int.from_bytes(digest[8 * j:8 * j + 8], "big") % self.num_bits
                     for j in range(self.num_hashes))

    def bloom_filters(self, values: object, cohorts: npt.ArrayLike) -> U8:
        """The ``(n, num_bits)`` 0/1 Bloom filters of ``values`` in ``cohorts``.

        Factorises the (value, cohort) pairs with NumPy, hashes each distinct pair once, then
        scatters the bits.
        """
        vals = np.asarray(values, dtype=object).reshape(-1)
        coh = np.asarray(cohorts, dtype=np.int64).reshape(-1)
        if vals.size != coh.size:
            raise InvalidParameter(
                f"values ({vals.size}) and cohorts ({coh.size}) must have the same length")
        out = np.zeros((vals.size, self.num_bits), dtype=np.uint8)
        if vals.size == 0:
            return out
        bad = next((t for t in set(map(type, vals)) if t is not str), None)
        if bad is not None:
            example = next(v for v in vals if type(v) is bad)
            raise OutOfDomain(f"value={example!r} must be a str")
        if coh.min() < 0 or coh.max() >= self.num_cohorts:
            raise OutOfDomain(f"cohorts must be in [0, {self.num_cohorts})")
        uniq, vidx = np.unique(vals, return_inverse=True)  # exact str (no NumPy U-dtype trims)
        keys, which = np.unique(vidx.reshape(-1) * self.num_cohorts + coh, return_inverse=True)
        table = np.array([self.bloom_indices(str(uniq[k // self.num_cohorts]),
                                             int(k % self.num_cohorts)) for k in keys.tolist()],
                         dtype=np.int64)
        rows = np.repeat(np.arange(vals.size), self.num_hashes)
        out[rows, table[which.reshape(-1)].reshape(-1)] = 1
        return out


@dataclass(frozen=True, eq=False)
class RapporReports:
    """``n`` RAPPOR reports: each client's cohort and its ``num_bits`` reported bits.

    Attributes
    ----------
    cohorts : numpy.ndarray of int64, shape (n,)
    bits : numpy.ndarray of uint8, shape (n, num_bits)
    """

    cohorts: I64
    bits: U8

    def __post_init__(self) -> None:
        c = np.asarray(self.cohorts, dtype=np.int64).reshape(-1)
        b = np.asarray(self.bits, dtype=np.uint8)
        if b.ndim != 2 or b.shape[0] != c.size:
            raise InvalidParameter(
                f"bits of shape {b.shape} must be (n, num_bits) with n = len(cohorts) = {c.size}")
        c.setflags(write=False)
        b.setflags(write=False)
        object.__setattr__(self, "cohorts", c)
        object.__setattr__(self, "bits", b)

    def __len__(self) -> int:
        return int(self.cohorts.size)

    @staticmethod
    def concatenate(parts: Iterable[RapporReports]) -> RapporReports:
        """One `RapporReports` from several (e.g. collected one client at a time)."""
        items = list(parts)
        if not items:
            raise InvalidParameter("parts must hold at least one RapporReports")
        return RapporReports(np.concatenate([r.cohorts for r in items]),
                             np.concatenate([r.bits for r in items]))


def _coins(prob: Fraction, size: int, source: EntropySource | None) -> npt.NDArray[np.bool_]:
    """``size`` exact Bernoulli(``prob``) draws, in chunks (bounded memory)."""
    if size <= _CHUNK:
        return bernoulli(prob, size, source=source)
    return np.concatenate([bernoulli(prob, min(_CHUNK, size - i), source=source)
                           for i in range(0, size, _CHUNK)])


def _flip(bits: U8, prob: Fraction, source: EntropySource | None) -> U8:
    noise = _coins(prob, bits.size, source).reshape(bits.shape)
    out: U8 = bits ^ noise.astype(np.uint8)
    return out


def _respond(bits: U8, if_one: Fraction, if_zero: Fraction,
             source: EntropySource | None) -> U8:
    """Each bit independently: 1 w.p. ``if_one`` where it is 1, w.p. ``if_zero`` where 0.

    Draws ``if_zero`` coins for every bit, then fresh ``if_one`` coins for the (few) bits that
    are 1, which has the same law and needs ``n·k + #ones`` coins instead of ``2·n·k``.
    """
    out = _coins(if_zero, bits.size, source)
    ones = np.flatnonzero(bits.reshape(-1))
    out[ones] = _coins(if_one, ones.size, source)
    result: U8 = out.reshape(bits.shape).astype(np.uint8)
    return result


def _builder(params: RapporBloomParams, input_domain: Domain | None, who: str,
             source: EntropySource | None, randomize: Callable[[U8], U8]
             ) -> tuple[Domain, Metric, tuple[Callable[[object], RapporReports],
                                             Callable[[object, int], I64]]]:
    if not isinstance(params, RapporBloomParams):
        raise InvalidParameter(f"params={params!r} must be a RapporBloomParams")
    domain, metric, vector = _local_space(input_domain, AtomDomain(str), who)

    def run(values: object) -> RapporReports:
        vals = np.asarray(values, dtype=object).reshape(-1)
        cohorts = uniform_below(params.num_cohorts, vals.size, source=source).astype(np.int64)
        bloom = params.bloom_filters(vals, cohorts)
        return RapporReports(cohorts, randomize(bloom))

    if vector:
        assert isinstance(domain, VectorDomain)
        to_array = domain.to_array

        def function(x: object) -> RapporReports:
            return run(np.asarray(to_array(x), dtype=object))
    else:
        def function(x: object) -> RapporReports:
            return run([x])

    def batch(x: object, n: int) -> I64:
        rep = run([x] * n)
        out: I64 = np.column_stack([rep.cohorts, rep.bits]).astype(np.int64)
        return out

    return domain, metric, (function, batch)


def make_rappor_bloom(params: RapporBloomParams, *, input_domain: Domain | None = None,
                      source: EntropySource | None = None) -> Measurement:
    """One RAPPOR report per record: cohort, Bloom filter, PRR then IRR (nothing memoized).

    Each bit of the report is 1 w.p. ``q*`` where the Bloom filter has a 1 and ``p*`` where it
    has a 0 — exactly the law of PRR followed by IRR for a single report, drawn in one step.

    Parameters
    ----------
    params : RapporBloomParams
    input_domain : AtomDomain(str) or VectorDomain(AtomDomain(str)), optional
        One string (default) or a vector of strings, one per client (HammingDistance).
    source : EntropySource, optional
        For reproducible tests only (``InsecureSeededSource``); the default is the OS CSPRNG.

    Returns
    -------
    Measurement
        ``str → RapporReports`` (``n = 1``; ``n = len(x)`` for a vector) under PureDP,
        ``map(d_in) = ε₁·d_in``.  ``sample(x, n)`` returns an ``(n, 1 + num_bits)`` integer
        array (cohort, bits) for the auditor.

    Examples
    --------
    >>> import dpcert as dp
    >>> m = dp.m.make_rappor_bloom(dp.m.RapporBloomParams(num_bits=16, num_cohorts=4),
    ...                            input_domain=dp.VectorDomain(dp.AtomDomain(str)))
    >>> m(["a", "b", "a"]).bits.shape
    (3, 16)
    """
    qs, ps = (params.q_star, params.p_star) if isinstance(params, RapporBloomParams) else (0, 0)
    domain, metric, (function, batch) = _builder(
        params, input_domain, "make_rappor_bloom", source,
        lambda bloom: _respond(bloom, Fraction(qs), Fraction(ps), source))
    eps = params.epsilon_one_report()
    return Measurement(
        domain, metric, PureDP(), function=function, privacy_map=_linear_map(eps),
        name="rappor_bloom", params=_describe(params, eps, "one report"), batch_map=batch,
        proof="rappor_bloom.md",
    )


def make_rappor_bloom_permanent(params: RapporBloomParams, *,
                                input_domain: Domain | None = None,
                                source: EntropySource | None = None) -> Measurement:
    """The permanent randomized response ``B'`` (memoize it per client and value).

    Reports for the same value must all come from one memoized ``B'`` through
    `instantaneous_report`; they are post-processing of ``B'``, so the total loss for
    that value is this measurement's ``ε∞``, however many reports are sent.

    Returns
    -------
    Measurement
        ``str → RapporReports`` holding ``B'`` under PureDP, ``map(d_in) = ε∞·d_in``.

    Examples
    --------
    >>> import dpcert as dp
    >>> params = dp.m.RapporBloomParams(num_bits=16, num_cohorts=4)
    >>> prr = dp.m.make_rappor_bloom_permanent(params)("example")   # keep this per client
    >>> reports = [dp.m.instantaneous_report(prr, params) for _ in range(3)]
    >>> [r.bits.shape for r in reports]
    [(1, 16), (1, 16), (1, 16)]
    """
    half = Fraction(params.f) / 2 if isinstance(params, RapporBloomParams) else Fraction(0)
    domain, metric, (function, batch) = _builder(
        params, input_domain, "make_rappor_bloom_permanent", source,
        lambda bloom: _flip(bloom, half, source))
    eps = params.epsilon_permanent()
    return Measurement(
        domain, metric, PureDP(), function=function, privacy_map=_linear_map(eps),
        name="rappor_bloom_permanent", params=_describe(params, eps, "permanent"),
        batch_map=batch, proof="rappor_bloom.md",
    )


def instantaneous_report(permanent: RapporReports, params: RapporBloomParams, *,
                         source: EntropySource | None = None) -> RapporReports:
    """A fresh IRR of memoized PRR bits: 1 w.p. ``q`` where ``B'_i = 1``, ``p`` where 0.

    Post-processing of ``permanent`` (no further privacy cost for the value it encodes).
    """
    if not isinstance(permanent, RapporReports):
        raise InvalidParameter(f"permanent={permanent!r} must be RapporReports")
    if permanent.bits.shape[1] != params.num_bits:
        raise InvalidParameter(
            f"permanent has {permanent.bits.shape[1]} bits, params.num_bits={params.num_bits}")
    bits = _respond(permanent.bits, Fraction(params.q), Fraction(params.p), source)
    return RapporReports(permanent.cohorts, bits)


def _describe(params: RapporBloomParams, eps: Fraction, stage: str) -> dict[str, object]:
    return {"epsilon": eps, "stage": stage, "num_bits": params.num_bits,
            "num_hashes": params.num_hashes, "num_cohorts": params.num_cohorts,
            "f": params.f, "p": params.p, "q": params.q,
            "q_star": params.q_star, "p_star": params.p_star, "hash": "blake2b-keyed"}
