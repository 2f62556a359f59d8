"""Continual release of running sums: every step of a stream, the whole stream private.

The input is the vector of ``T`` per-step counts (or sums) ``x``; the output is the ``T``
running sums ``S_t = x_1 + … + x_t``, each computed from steps ``≤ t`` only, so the same
mechanism can publish a daily series as the days arrive.  **Neighbours**: two streams whose
per-step counts differ by at most ``d_in`` in L1 (one unit's total contribution over the whole
stream is at most ``d_in``, however it is spread over the steps).

``method``:

* ``"tree"`` — the binary tree (Dwork, Naor, Pitassi & Rothblum 2010; Chan, Shi & Song 2011) read
  with Honaker's (2015) subtree estimator; ``h = ⌈log2 T⌉`` levels of noisy block sums
  (``smooth=True``: Honaker's full estimator, for a finished stream released at once — its
  totals also draw on later steps).
* ``"factorization"`` — the square root of the prefix-sum matrix (Fichtenberger, Henzinger &
  Upadhyay 2023; Henzinger, Upadhyay & Upadhyay 2023), on an exact integer fixed-point factor.
* ``"streaming"`` — the same idea with a factor that runs on ``d ≈ 1.4·ln T + 9`` buffers
  (Dvijotham, McMahan, Pillutla, Steinke & Thakurta 2024), within about 3% of the full
  factorization's largest error at ``T = 4096``.

``noise="laplace"`` gives pure DP (discrete Laplace), ``noise="gaussian"`` zCDP (discrete
Gaussian).  Under pure DP the tree is the better choice (the factor's L1 column norm grows like
``√T``); under zCDP the factorization is.  Proof: ``docs/proofs/continual.md``.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(int), size=8), dp.L1Distance())
>>> m = space >> dp.m.then_continual_sum(3, method="tree")
>>> m.map(1), m.map(2)
(Fraction(1, 1), Fraction(2, 1))
>>> g = space >> dp.m.then_continual_sum(2, method="factorization", noise="gaussian")
>>> g.output_measure, round(float(g.map(1)), 4)
(ZCDP(), 0.2148)
>>> len(m([1, 0, 2, 0, 0, 1, 3, 0]))
8
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from dpcert._directed import ceil_sqrt
from dpcert._numbers import Number
from dpcert._validate import check_positive
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, PureDP
from dpcert.core.metrics import L1Distance, Metric
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch
from dpcert.mechanisms import _continual_factor as fac
from dpcert.mechanisms import _continual_tree as tree
from dpcert.mechanisms._continual_stream import (
    StreamFactor,
    StreamState,
    decode_all,
    encode_all,
)
from dpcert.samplers import discrete_gaussian, discrete_laplace
from dpcert.samplers.entropy import EntropySource

__all__ = ["ContinualPlan", "ContinualSumStream", "continual_plan", "continual_sum_errors",
           "make_continual_sum", "open_continual_sum", "then_continual_sum"]

Method = Literal["tree", "factorization", "streaming"]
Noise = Literal["laplace", "gaussian"]
METHODS: tuple[str, ...] = ("tree", "factorization", "streaming")
NOISES: tuple[str, ...] = ("laplace", "gaussian")
#: Noise of the streaming factor is drawn in units 2^-s with scale·2^s in [2^STREAM_BITS, 2^(+1)).
STREAM_BITS = 48
FloatArray = npt.NDArray[np.float64]


def _check_space(input_domain: Domain, input_metric: Metric) -> int:
    who = "make_continual_sum"
    if not isinstance(input_domain, VectorDomain) or not isinstance(input_domain.element,
                                                                    AtomDomain):
        raise DomainMismatch(f"{who} needs VectorDomain(AtomDomain(int), size=T), got "
                             f"input_domain={input_domain!r}")
    if input_domain.element.type is not int:
        raise DomainMismatch(f"{who} needs integer counts, got input_domain={input_domain!r}; "
                             "cast or round the per-step values first")
    if input_domain.size is None or input_domain.size < 1:
        raise InvalidParameter(f"{who} needs the number of steps: input_domain={input_domain!r} "
                               "has no size")
    if not isinstance(input_metric, L1Distance):
        raise MetricMismatch(f"{who} needs L1Distance (a unit's total contribution over the "
                             f"stream), got input_metric={input_metric!r}")
    return input_domain.size


def _check_choice(value: object, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidParameter(f"{name}={value!r} must be one of {', '.join(allowed)}")
    return str(value)


def noise_variance(noise: str, param: Fraction) -> float:
    """``E[z²]`` of one integer noise draw: discrete Laplace ``2q/(1−q)²`` (``q = e^(−1/b)``);
    discrete Gaussian by direct summation (equal to ``σ²`` to float precision once σ ≥ 8)."""
    p = float(param)
    if noise == "laplace":
        one_minus_q = -np.expm1(-1.0 / p)
        return float(2 * (1 - one_minus_q) / one_minus_q**2)
    if p >= 8:
        return p * p
    z = np.arange(-int(40 * p) - 2, int(40 * p) + 3, dtype=np.float64)
    mass = np.exp(-(z * z) / (2 * p * p))
    return float((z * z * mass).sum() / mass.sum())


def _stream_bits(scale: Fraction) -> int:
    log2 = scale.numerator.bit_length() - scale.denominator.bit_length()
    if Fraction(2) ** log2 > scale:
        log2 -= 1
    return max(0, STREAM_BITS - log2)


class ContinualPlan:
    """What one `make_continual_sum` call fixed: sensitivities, noise parameter, release
    and error functions (also used by the engine, `dpcert.frame.continual`)."""

    def __init__(self, steps: int, scale: Fraction, method: str, noise: str,
                 smooth: bool = False) -> None:
        self.steps, self.scale, self.method, self.noise = steps, scale, method, noise
        self.smooth = smooth
        if method == "tree":
            self.levels = tree.tree_levels(steps)
            self.unit_bits = 0
        elif method == "factorization":
            self.unit_bits = fac.FACTOR_BITS
            self.coef = fac.integer_factor(steps)
        else:
            self.unit_bits = _stream_bits(scale)
            self.factor = StreamFactor.for_steps(steps)
            self.stream_bounds = (self.factor.coefficient_sum_bound(),
                                  self.factor.column_l2_bound(), self.factor.rounding_bound())
        # noise parameter in integer units
        self.param = scale * (1 << self.unit_bits)
        if method == "factorization":
            self.col1 = int(self.coef.astype(object).sum())
            self.col2_sq = int((self.coef.astype(object) ** 2).sum())

    def epsilon(self, d: Fraction, blocks: int = 1) -> Fraction:
        """Pure DP loss (L1 sensitivity in units / noise scale in units) for ``d > 0``; with
        ``blocks`` independent copies (groups) of which a unit touches at most ``blocks``,
        spreading ``d`` over them (only the streaming factor's rounding term grows)."""
        if self.method == "tree":
            sens = d * self.levels
        elif self.method == "factorization":
            sens = d * self.col1
        else:
            col1, _, e = self.stream_bounds
            sens = d * col1 * (1 << self.unit_bits) + blocks * 2 * self.steps * e
        return sens / self.param

    def rho(self, d: Fraction, blocks: int = 1) -> Fraction:
        """zCDP loss ``Δ₂²/(2σ²)`` in integer units for ``d > 0`` (``blocks`` as in
        `epsilon`: ``Σ_g (a·d_g + c)² ≤ (a·d + c)² + (blocks − 1)·c²``)."""
        if self.method == "tree":
            sq = d * d * self.levels
        elif self.method == "factorization":
            sq = d * d * self.col2_sq
        else:
            _, col2, e = self.stream_bounds
            c = 2 * Fraction(ceil_sqrt(self.steps)) * e
            sq = (d * col2 * (1 << self.unit_bits) + c) ** 2 + (blocks - 1) * c * c
        return sq / (2 * self.param**2)

    def _read_tree(self, noisy: list[FloatArray]) -> FloatArray:
        if self.smooth:
            return tree.smoothed_prefix(noisy, self.steps)
        return tree.honaker_prefix(noisy, self.steps)

    def draw(self, size: int, source: EntropySource | None) -> npt.NDArray[np.int64]:
        sampler = discrete_laplace if self.noise == "laplace" else discrete_gaussian
        return sampler(self.param, size, source=source)

    def draw_all(self, source: EntropySource | None = None) -> list[npt.NDArray[np.int64]]:
        """All the noise one release uses (per tree level, or one vector), drawn up front."""
        if self.method == "tree":
            return [self.draw(1 << (self.levels - ell), source) for ell in range(self.levels)]
        return [self.draw(self.steps, source)]

    def release_with(self, x: npt.NDArray[np.int64], noise: list[npt.NDArray[np.int64]]
                     ) -> FloatArray:
        """The ``T`` running sums of ``x`` with the given noise (causal: output ``t`` depends on
        ``x[:t]`` and the noise only, so a stream padded with zeros after step ``t`` gives the
        same first ``t`` outputs)."""
        if self.method == "tree":
            noisy = [(s + z).astype(np.float64)
                     for s, z in zip(tree.node_sums(x, self.levels), noise, strict=True)]
            return self._read_tree(noisy)
        if self.method == "streaming":
            y = np.array(encode_all(self.factor, self.unit_bits, x), dtype=object)
            return np.asarray(decode_all(self.factor, self.unit_bits, (y + noise[0])[None, :])[0])
        w = fac.exact_toeplitz_apply(self.coef, x) + noise[0]
        scaled = np.ldexp(np.asarray(w, dtype=np.float64), -self.unit_bits)
        return fac.toeplitz_apply(_prefix_weights(self.steps), scaled)

    def release(self, x: npt.NDArray[np.int64], source: EntropySource | None = None
                ) -> FloatArray:
        """The ``T`` noisy running sums of the integer counts ``x``."""
        return self.release_with(x, self.draw_all(source))

    def release_batch(self, x: npt.NDArray[np.int64], n: int,
                      source: EntropySource | None = None) -> FloatArray:
        """``n`` independent releases on ``x``, shape ``(n, T)``."""
        if self.method == "streaming":
            y = np.array(encode_all(self.factor, self.unit_bits, x), dtype=object)
            z = self.draw(n * self.steps, source).reshape(n, self.steps)
            return decode_all(self.factor, self.unit_bits, y[None, :] + z)
        if self.method == "tree":
            noisy = []
            for s in tree.node_sums(x, self.levels):
                z = self.draw(n * s.size, source).reshape(n, s.size)
                noisy.append((s[None, :] + z).astype(np.float64))
            return self._read_tree(noisy)
        exact = fac.exact_toeplitz_apply(self.coef, x)
        w = exact[None, :] + self.draw(n * self.steps, source).reshape(n, self.steps)
        scaled = np.ldexp(np.asarray(w, dtype=np.float64), -self.unit_bits)
        return fac.toeplitz_apply(_prefix_weights(self.steps), scaled)

    def errors(self) -> FloatArray:
        """Expected squared error of each running sum (exact formula, evaluated in floats)."""
        v = noise_variance(self.noise, self.param) / 4.0**self.unit_bits
        if self.method == "tree":
            if self.smooth:
                return v * tree.smoothed_variances(self.steps)
            return v * tree.prefix_variances(self.steps, honaker=True)
        if self.method == "factorization":
            g = _prefix_weights(self.steps)
        else:
            g = fac.prefix_weights(self.factor.coefficients())
        return v * np.cumsum(g * g)

    def half_widths(self, alpha: float) -> FloatArray:
        """Half-widths ``a_t`` with ``P(|ŝ_t − S_t| > a_t) ≤ alpha`` for each step.

        Gaussian noise: the discrete Gaussian is sub-Gaussian with proxy ``σ²`` (Canonne, Kamath
        & Steinke 2020), so a linear read-out ``Σ a_i z_i`` has tails ``≤ 2·exp(−a²/(2σ²Σa_i²))``
        and ``a_t = √(2 ln(2/α)·σ²Σa_i²)``.  Laplace noise: Chebyshev, ``a_t = √(E[err²]/α)``.
        The streaming factor adds its deterministic rounding offset ``e·2^(−s)·Σ_(k≤t)|g_k|``."""
        if self.noise == "gaussian":
            proxy = self.errors() * (float(self.param) ** 2
                                     / noise_variance(self.noise, self.param))
            half = np.sqrt(2 * np.log(2 / alpha) * proxy)
        else:
            half = np.sqrt(self.errors() / alpha)
        if self.method == "streaming":
            g = fac.prefix_weights(self.factor.coefficients())
            half = half + float(self.stream_bounds[2]) * 2.0**-self.unit_bits * np.cumsum(
                np.abs(g))
        return np.asarray(half, dtype=np.float64)


@lru_cache(maxsize=8)
def _prefix_weights(steps: int) -> FloatArray:
    g = fac.prefix_weights(np.ldexp(fac.integer_factor(steps).astype(np.float64),
                                    -fac.FACTOR_BITS))
    g.setflags(write=False)
    return g


def continual_plan(input_domain: Domain, input_metric: Metric, scale: Number, method: str,
                   noise: str, smooth: bool = False) -> ContinualPlan:
    """Check the arguments of `make_continual_sum` and fix its plan (maps, noise,
    read-out); raises typed errors naming the argument."""
    steps = _check_space(input_domain, input_metric)
    b = check_positive(scale, "scale")
    m = _check_choice(method, "method", METHODS)
    n = _check_choice(noise, "noise", NOISES)
    if smooth not in (True, False):
        raise InvalidParameter(f"smooth={smooth!r} must be True or False")
    if smooth and m != "tree":
        raise InvalidParameter(f"smooth=True applies to method='tree', not method={m!r}")
    plan = ContinualPlan(steps, b, m, n, bool(smooth))
    if plan.param > 2**52:
        raise InvalidParameter(f"scale={scale!r} too large for method={m!r}: "
                               f"scale·2^{plan.unit_bits} must be <= 2^52")
    return plan


def make_continual_sum(input_domain: Domain, input_metric: Metric, scale: Number, *,
                       method: Method = "tree", noise: Noise = "laplace",
                       smooth: bool = False) -> Measurement:
    """Release the ``T`` running sums of a stream of per-step integer counts.

    Parameters
    ----------
    input_domain : VectorDomain(AtomDomain(int), size=T)
        The per-step counts (or integer sums) of the stream.
    input_metric : L1Distance
        ``d_in`` bounds one unit's total contribution over the whole stream.
    scale : number > 0
        Noise scale: the discrete Laplace scale ``b`` or discrete Gaussian ``σ`` of each noisy
        node (tree) or of the noise ``z`` in ``Cx + z`` (factorizations).
    method : {"tree", "factorization", "streaming"}
    noise : {"laplace", "gaussian"}
    smooth : bool
        ``method="tree"`` only: read the tree with Honaker's full estimator (every running
        total also draws on nodes of later steps; about 2.8× smaller error at ``T = 4096``).
        For batch releases of a finished stream: the outputs are then not causal and must not
        be published step by step.

    Returns
    -------
    Measurement
        Under [`PureDP`][dpcert.PureDP] (laplace) or [`ZCDP`][dpcert.ZCDP] (gaussian); the output
        is a float64 array of the ``T`` running sums.  `continual_sum_errors` gives each
        step's expected squared error.

    Examples
    --------
    >>> import dpcert as dp
    >>> d = dp.VectorDomain(dp.AtomDomain(int), size=4096)
    >>> m = dp.m.make_continual_sum(d, dp.L1Distance(), 4, method="tree")
    >>> m.map(1)   # 12 levels, scale 4
    Fraction(3, 1)
    """
    plan = continual_plan(input_domain, input_metric, scale, method, noise, smooth)
    assert isinstance(input_domain, VectorDomain)
    to_array = input_domain.to_array

    def privacy_map(d_in: int | Fraction) -> Fraction:
        d = Fraction(d_in)
        if d == 0:
            return Fraction(0)
        return plan.epsilon(d) if plan.noise == "laplace" else plan.rho(d)

    def function(x: object) -> FloatArray:
        return plan.release(np.asarray(to_array(x), dtype=np.int64))

    params: dict[str, object] = {"scale": plan.scale, "method": plan.method, "noise": plan.noise,
                              "steps": plan.steps, "unit_bits": plan.unit_bits}
    if plan.method == "tree":
        params["levels"] = plan.levels
        params["smooth"] = plan.smooth
    if plan.method == "streaming":
        params["buffers"] = plan.factor.buffers
    def batch(x: object, n: int) -> FloatArray:
        return plan.release_batch(np.asarray(to_array(x), dtype=np.int64), n)

    return Measurement(
        input_domain, input_metric, PureDP() if plan.noise == "laplace" else ZCDP(),
        function=function, privacy_map=privacy_map, name="continual_sum",
        params=params, proof="continual.md",
        batch_map=batch,
    )


def then_continual_sum(scale: Number, *, method: Method = "tree", noise: Noise = "laplace",
                       smooth: bool = False) -> PartialConstructor:
    """Partial form of [`make_continual_sum`][dpcert.mechanisms.continual.make_continual_sum]."""
    return partial(make_continual_sum, "continual_sum", scale, method=method, noise=noise,
                   smooth=smooth)


def continual_sum_errors(steps: int, scale: Number, *, method: Method = "tree",
                         noise: Noise = "laplace", smooth: bool = False) -> FloatArray:
    """Expected squared error of each of the ``steps`` released running sums.

    Exact formulas (the noise covariance pushed through the linear read-out), evaluated in
    floats: tree ``v·Σ_(ℓ ∈ bits(t)) a_ℓ``; factorizations ``v·Σ_(k<t) g_k²`` with ``g`` the
    coefficients of ``A·C^(−1)`` (``v`` is one noise draw's variance, ``a_ℓ`` Honaker's weights).

    Examples
    --------
    >>> e = continual_sum_errors(4, 1, method="tree", noise="gaussian")
    >>> [round(float(v), 4) for v in e]
    [1.0, 0.6667, 1.6667, 1.3333]
    """
    domain = VectorDomain(AtomDomain(int), size=steps)
    return continual_plan(domain, L1Distance(), scale, method, noise, smooth).errors()



class ContinualSumStream:
    """The online, small-memory form of ``make_continual_sum(..., method="streaming")``.

    `step` takes the next step's integer count and returns the next running total,
    keeping ``2·buffers + 1`` numbers between steps (``buffers ≈ 1.4·ln T + 9``) and drawing one
    noise value per step.  For a stream fixed in advance, the ``T`` outputs have exactly the
    distribution of the measurement `measurement` on the whole vector, so the stream costs
    ``measurement.map(d_in)``; charge it before the first step (as the engine's
    `open` does for its streams).

    Examples
    --------
    >>> s = open_continual_sum(365, 10, noise="gaussian")
    >>> s.buffers, round(float(s.measurement.map(1)), 4)
    (18, 0.015)
    >>> isinstance(s.step(3), float), s.steps_done
    (True, 1)
    """

    def __init__(self, measurement: Measurement, plan: ContinualPlan,
                 source: EntropySource | None = None) -> None:
        self.measurement = measurement
        self._plan = plan
        self._state = StreamState(plan.factor, plan.unit_bits)
        self._source = source
        self.steps_done = 0

    @property
    def buffers(self) -> int:
        """``d``: the buffers kept on each side (data and noise)."""
        return self._plan.factor.buffers

    def step(self, count: Number) -> float:
        """Release the running total after this step's ``count`` (an integer)."""
        if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)):
            raise InvalidParameter(f"count={count!r} must be an integer")
        if self.steps_done >= self._plan.steps:
            raise InvalidParameter(f"the stream has released all {self._plan.steps} steps")
        noise = int(self._plan.draw(1, self._source)[0])
        out = self._state.decode(self._state.encode(int(count)) + noise)
        self.steps_done += 1
        return out


def open_continual_sum(steps: int, scale: Number, *, noise: Noise = "gaussian",
                       source: EntropySource | None = None) -> ContinualSumStream:
    """Start an online stream of ``steps`` running totals (``method="streaming"``).

    ``source`` is for reproducible tests only (`InsecureSeededSource`);
    by default the noise comes from the OS CSPRNG.
    """
    from dpcert._validate import check_int

    n = check_int(steps, "steps", minimum=1)
    domain = VectorDomain(AtomDomain(int), size=n)
    m = make_continual_sum(domain, L1Distance(), scale, method="streaming", noise=noise)
    plan = continual_plan(domain, L1Distance(), scale, "streaming", noise)
    return ContinualSumStream(m, plan, source)
