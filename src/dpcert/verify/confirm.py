"""Close the loop: confirm a refutation by *running* the program with dpcert's exact samplers.

The refuter's witness is exact arithmetic on the program's semantics; the confirmation is an
independent, statistical check of the same violation on the program as dpcert executes it:

1. the event is chosen *before* sampling, from exact probabilities, to maximise the bound the
   draw budget can confirm (`dpcert.verify.confirm_events`: a larger event with a smaller
   loss beats a rare one with a large loss), so the samples carry no selection bias;
2. the program, unrolled at the witness's size, is run ``draws`` times on each input in batches
   through NumPy: every noise instance the event reads is drawn eagerly with
   [`dpcert.samplers.lattice_laplace`][dpcert.samplers.lattice_laplace], `discrete_laplace`,
   [`lattice_gaussian`][dpcert.samplers.lattice_gaussian] or a lattice exponential built on
   [`geometric`][dpcert.samplers.geometric], and a run is in the event when the guards of one of the
   event's paths (and its output thresholds) hold;
3. with counts k on the first input and k' on the second, the one-sided exact Clopper–Pearson
   bounds at α/2 each (``dpcert.audit``) give, with probability ≥ 1 − α,
   ``ε ≥ ln((CP_lower(k, N, α/2) − δ) / CP_upper(k', N, α/2))`` for an (ε, δ) claim (δ = 0
   for pure DP: an (ε, δ)-DP mechanism has P ≤ e^ε·P' + δ on every event).  The refutation is
   *confirmed* when this bound exceeds the claimed ε.

When no event can be confirmed with the budget, `Confirmation` says so and gives about how
many draws per input would suffice (at the expected counts).

Real-valued noise is on the lattice ``2**k ℤ`` (Mironov 2012) as in dpcert's mechanisms, so the
confirmed program is the lattice one; its probabilities differ from the exact reals' by far less
than the statistical error.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dpcert._validate import check_int
from dpcert.audit import cp_lower, cp_upper
from dpcert.errors import InvalidParameter
from dpcert.samplers import (
    EntropySource,
    discrete_laplace,
    geometric,
    lattice_gaussian,
    lattice_laplace,
)
from dpcert.samplers.lattice import lattice_exponent
from dpcert.verify.confirm_events import Candidate, Part, candidates, needed_draws, rank
from dpcert.verify.gauss_refute import (
    event_text,
    gauss_model,
    linear_event_probability,
    optimal_event,
)
from dpcert.verify.ir import Program
from dpcert.verify.refute import Witness
from dpcert.verify.runner import Outputs, RunnerUnsupported, run_batch
from dpcert.verify.search import _component_key
from dpcert.verify.semantics import concrete
from dpcert.verify.symexec import Unrolled, unroll

__all__ = ["Confirmation", "confirm", "measure", "witness_event"]

Arr = npt.NDArray[np.float64]

#: Runs per NumPy batch.
BATCH = 1 << 16
#: Fewest runs per input that a confirmation uses (when the budget allows).
MIN_DRAWS = 1000


@dataclass(frozen=True)
class Confirmation:
    """A sampled lower bound on the privacy loss of a witness pair on one event."""

    event: str
    draws: int
    count_x: int
    count_x_prime: int
    confidence: float
    epsilon_lower: float
    claim: float
    delta: float = 0.0
    #: the measured order: ``x`` is the input counted first (the witness's x' when swapped)
    swapped: bool = False
    p: float = math.nan
    p_prime: float = math.nan
    #: the bound the budget gives at the expected counts, and the draws that would suffice
    expected_bound: float = math.nan
    needed_draws: int | None = None
    #: "interpreter" (the program run by :mod:`dpcert.verify.runner`) or "unrolled paths"
    runner: str = "interpreter"
    #: the draw budget (``draws`` is at most this)
    budget: int = 0

    @property
    def samples(self) -> int:
        """Alias of ``draws`` (runs on each input)."""
        return self.draws

    @property
    def confirmed(self) -> bool:
        """Whether the lower bound exceeds the claim (a refutation confirmed by sampling)."""
        return self.epsilon_lower > self.claim

    def describe(self) -> str:
        """Human-readable text."""
        verdict = "CONFIRMED" if self.confirmed else "NOT confirmed with this budget"
        pair = "x' then x" if self.swapped else "x then x'"
        dl = f", δ = {self.delta:.6g}" if self.delta else ""
        lines = [f"confirmation by sampling ({self.draws:,} runs on each input of a budget of "
                 f"{self.budget:,}, exact samplers, {self.runner}):",
                 f"  event S: {self.event}  (exact P = {self.p:.6g}, P' = {self.p_prime:.6g};"
                 f" chosen before sampling)",
                 f"  counts ({pair}): {self.count_x} and {self.count_x_prime}",
                 f"  ε ≥ {self.epsilon_lower:.4f} at confidence {self.confidence:.4g}"
                 f" (Clopper–Pearson{dl}) vs claim {self.claim:.4g}: {verdict}"]
        if not self.confirmed:
            lines.append(self._advice())
        return "\n".join(lines)

    def _advice(self) -> str:
        if self.needed_draws is None:
            return ("  no event of this pair can be confirmed with fewer than 10^13 draws per "
                    "input (the loss margin over the claim is too small)")
        return (f"  about {self.needed_draws:,} draws per input would suffice "
                f"(--samples {self.needed_draws}); expected bound at this budget "
                f"{self.expected_bound:.4f}")

    def to_json(self) -> dict[str, object]:
        """JSON-ready."""
        def num(v: float) -> object:
            return str(v) if math.isinf(v) or math.isnan(v) else v
        return {"event": self.event, "draws": self.draws, "samples": self.draws,
                "count_x": self.count_x, "count_x_prime": self.count_x_prime,
                "swapped": self.swapped, "confidence": self.confidence,
                "epsilon_lower": num(self.epsilon_lower), "claim": self.claim,
                "delta": self.delta, "confirmed": self.confirmed, "p": self.p,
                "p_prime": self.p_prime, "expected_bound": num(self.expected_bound),
                "needed_draws": self.needed_draws, "runner": self.runner,
                "budget": self.budget}


def _noise(u: Unrolled, names: list[str], params: dict[str, Fraction], size: int,
           source: EntropySource | None) -> dict[str, Arr]:
    out: dict[str, Arr] = {}
    for name in names:
        nz = u.noises[name]
        b = nz.scale.evaluate(params)
        if nz.kind == "lap":
            out[name] = np.asarray(lattice_laplace(np.zeros(size), b, source=source))
        elif nz.kind == "gauss":
            out[name] = np.asarray(lattice_gaussian(np.zeros(size), b, source=source))
        elif nz.kind == "dlap":
            out[name] = discrete_laplace(b, size, source=source).astype(np.float64)
        else:  # one-sided exponential on the lattice 2**k: P(j·2**k) ∝ exp(-j·2**k / b)
            step = Fraction(2) ** lattice_exponent(b)
            out[name] = geometric(step / b, size, source=source).astype(np.float64) * \
                float(step)
    return out


def _hits(u: Unrolled, c: Candidate, data: dict[str, Fraction], params: dict[str, Fraction],
          noise: dict[str, Arr], size: int) -> int:
    """How many of the ``size`` runs (one per noise row) land in the event."""
    hit = np.zeros(size, dtype=bool)
    if c.lin is not None:
        weights, t = c.lin
        (path,) = u.paths
        val = np.full(size, 0.0)
        const = Fraction(0)
        for j, w in weights:
            v = path.outputs[j]
            assert not isinstance(v, bool)
            coef, k0 = concrete(u, v, data, params)
            const += w * k0
            for name, a in coef.items():
                val = val + float(w * a) * noise[name]
        return int(np.count_nonzero(val >= float(t - const)))
    for part in c.parts:
        for k in part.paths:
            path = u.paths[k]
            ok = np.ones(size, dtype=bool)
            forms = [(con.form, con.op) for con in path.constraints]
            for idx, op, t in part.extra:
                v = path.outputs[idx]
                assert not isinstance(v, bool)
                if op == "==":
                    forms.append((v - t, "=="))
                else:
                    forms.append((v - t, "<=") if op == "<=" else (-(v - t), "<="))
            for form, op in forms:
                coef, c0 = concrete(u, form, data, params)
                val = np.full(size, float(c0))
                for name, a in coef.items():
                    val = val + float(a) * noise[name]
                ok &= {"<": val < 0, "<=": val <= 0, "==": val == 0, "!=": val != 0}[op]
            hit |= ok
    return int(np.count_nonzero(hit))


def _used_noise(u: Unrolled, c: Candidate) -> list[str]:
    paths = [u.paths[0]] if c.lin is not None else \
        [u.paths[k] for part in c.parts for k in part.paths]
    return sorted({k for p in paths for k in p.drawn})


def _gauss_candidates(prog: Program, w: Witness) -> list[Candidate]:
    m = gauss_model(prog, w.n)
    if isinstance(m, str):
        raise InvalidParameter(f"witness: {m}")
    u = m.u
    x, y = _atoms(u, w.x), _atoms(u, w.x_prime)
    out = []
    for a, b, swapped in ((x, y, False), (y, x, True)):
        for k in range(-12, 25):
            ev = optimal_event(m, a, b, Fraction(k, 8))
            if ev is None:
                continue
            weights, t, _ = ev
            p = linear_event_probability(m, a, weights, t)
            q = linear_event_probability(m, b, weights, t)
            out.append(Candidate(event_text(weights, t), (), float(p[0]), float(q[1]),
                                 swapped, (weights, t)))
    return out


def _atoms(u: Unrolled, vec: dict[str, tuple[Fraction, ...]]) -> dict[str, Fraction]:
    del u
    return {f"{name}[{i}]": v for name, t in vec.items() for i, v in enumerate(t)}


def confirm(prog: Program, witness: Witness, samples: int = 2_000_000,
            confidence: float = 0.95, source: EntropySource | None = None) -> Confirmation:
    """Run the program on the witness's inputs and bound its privacy loss from below.

    Parameters
    ----------
    prog
        The parsed program (as refuted).
    witness
        The refutation: its size, parameters and pair are used; the event measured is the one,
        among the candidates of `dpcert.verify.confirm_events` that violate the claim
        exactly, with the best bound expected at this budget.
    samples
        The draw budget: at most this many runs of the program on each input (in batches of
        ``BATCH``); fewer when 8 times the number at which the bound expected from the exact
        probabilities reaches the claim is smaller (at least ``MIN_DRAWS``).
    confidence
        Probability that the reported bound is below the true privacy loss of the event.
    source
        Randomness (the OS CSPRNG by default; tests pass an ``InsecureSeededSource``).

    Returns
    -------
    Confirmation
        With ``confirmed`` false and ``needed_draws`` set when the budget does not suffice.

    Examples
    --------
    >>> from dpcert.samplers import InsecureSeededSource
    >>> from dpcert.verify import parse_program, verify
    >>> src = ("input q : real[1]; adjacent q : all in [-1, 1]; param eps > 0;"
    ...        " claim eps; return q[0] + lap(1/(2*eps));")
    >>> c = confirm(parse_program(src), verify(src).witness, samples=20_000,
    ...             source=InsecureSeededSource(1))
    >>> c.confirmed, c.epsilon_lower > 1
    (True, True)
    """
    samples = check_int(samples, "samples")
    if samples < 100:
        raise InvalidParameter(f"samples={samples!r} must be an integer >= 100")
    if not (isinstance(confidence, float | int) and 0 < confidence < 1):
        raise InvalidParameter(f"confidence={confidence!r} must be in (0, 1)")
    alpha = 1 - float(confidence)
    delta = float(witness.claim_delta) if witness.claim_delta is not None else 0.0
    eps = witness.claim
    if witness.event_lin is not None:
        cands = _gauss_candidates(prog, witness)
        u = unroll(prog, witness.n)
    else:
        u = unroll(prog, witness.n)
        cands = candidates(u, _atoms(u, witness.x), _atoms(u, witness.x_prime), witness.params)
    if not any(c.margin(eps, delta) > 0 for c in cands):
        raise InvalidParameter("the witness's pair has no event that violates the claim")
    # draws: 8x the number at which the bound at the expected counts reaches the claim (the
    # measured bound then misses it with probability ~1e-4), at most the budget
    reach = needed_draws(cands, MIN_DRAWS, alpha, eps, delta, limit=samples)
    draws = samples if reach is None else min(samples, max(MIN_DRAWS, 8 * reach))
    expected, best = rank(cands, draws, alpha, eps, delta)[0]
    counts, bound, runner = measure(u, best, witness, draws, alpha, delta, source)
    need = None
    if not bound > eps:
        # when the budget should have sufficed, the counts fell short of their expectation
        need = needed_draws(cands, draws if expected <= eps else 2 * draws, alpha, eps, delta)
    return Confirmation(best.text, draws, counts[0], counts[1], float(confidence), bound, eps,
                        delta, best.swapped, best.p, best.p_prime, expected, need, runner,
                        samples)


def witness_event(w: Witness) -> Candidate:
    """The refuter's own event of ``w`` as a candidate (for comparison with the chosen one)."""
    parts = () if w.event_lin is not None else (Part(w.event_paths, w.event_extra),)
    return Candidate(w.event, parts, w.p, w.p_prime, False, w.event_lin)


def measure(u: Unrolled, event: Candidate, witness: Witness, draws: int, alpha: float,
            delta: float = 0.0, source: EntropySource | None = None
            ) -> tuple[tuple[int, int], float, str]:
    """Counts of ``event`` in ``draws`` runs on each input of the pair, and the lower bound.

    The runs go in batches of ``BATCH`` through the vectorised interpreter
    (`dpcert.verify.runner`), or, for constructs it does not run, through the unrolled
    paths evaluated on sampled noise (the third value says which); the bound is
    ``ln((CP_lower(k, N, α/2) − δ) / CP_upper(k', N, α/2))`` (−∞ when the numerator is ≤ 0).
    """
    first, second = (witness.x_prime, witness.x) if event.swapped else \
        (witness.x, witness.x_prime)
    counts = [0, 0]
    try:
        match = _output_event(u, event)
        for j, vec in enumerate((first, second)):
            done = 0
            while done < draws:
                size = min(BATCH, draws - done)
                outs = run_batch(u.program, u.n, vec, witness.params, size, source)
                counts[j] += int(np.count_nonzero(match(outs)))
                done += size
        runner = "interpreter"
    except RunnerUnsupported:
        counts = [0, 0]
        names = _used_noise(u, event)
        for j, vec in enumerate((first, second)):
            data = _atoms(u, vec)
            done = 0
            while done < draws:
                size = min(BATCH, draws - done)
                noise = _noise(u, names, witness.params, size, source)
                counts[j] += _hits(u, event, data, witness.params, noise, size)
                done += size
        runner = "unrolled paths"
    lo = cp_lower(counts[0], draws, alpha / 2)
    hi = cp_upper(counts[1], draws, alpha / 2)
    bound = -math.inf if lo - delta <= 0 else (
        math.inf if hi <= 0 else math.log((lo - delta) / hi))
    return (counts[0], counts[1]), bound, runner


def _output_event(u: Unrolled, event: Candidate) -> Callable[[Outputs], npt.NDArray[np.bool_]]:
    """The event as a set of output values: which runs of a batch land in it.

    A part (whole output classes, thresholds) holds when a run's output has the shape of one of
    its paths' output keys (booleans and constants equal, numbers where reals are) and its
    thresholds hold; a linear event when ``Σ w_j·out_j ≥ t``.
    """
    if event.lin is not None:
        weights, t = event.lin

        def lin(o: Outputs) -> npt.NDArray[np.bool_]:
            tot = np.zeros(len(o.length))
            for j, w in weights:
                tot = tot + float(w) * o.values[j]
            return np.asarray(tot >= float(t))
        return lin
    parts = [({tuple(_component_key(v, u) for v in u.paths[k].outputs) for k in part.paths},
              part.extra) for part in event.parts]

    def match(o: Outputs) -> npt.NDArray[np.bool_]:
        hit = np.zeros(len(o.length), dtype=bool)
        for keys, extra in parts:
            shape = np.zeros(len(o.length), dtype=bool)
            for key in keys:
                if len(key) > len(o.values):
                    continue
                ok = o.length == len(key)
                for j, k in enumerate(key):
                    if k[0] == "b":
                        ok = ok & o.is_bool[j] & (o.values[j] == float(k[1]))
                    elif k[0] == "c":
                        ok = ok & ~o.is_bool[j] & (o.values[j] == float(k[1]))
                    else:
                        ok = ok & ~o.is_bool[j]
                shape |= ok
            for idx, op, t in extra:
                if idx >= len(o.values):
                    shape[:] = False
                    break
                shape &= {"<=": np.less_equal, ">=": np.greater_equal,
                          "==": np.equal}[op](o.values[idx], float(t))
            hit |= shape
        return hit
    return match
