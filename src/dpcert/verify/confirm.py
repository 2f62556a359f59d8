"""Close the loop: confirm a refutation by *running* the program with dpcert's exact samplers.

The refuter's witness is exact arithmetic on the program's semantics; the confirmation is an
independent, statistical check of the same violation on the program as dpcert executes it:

1. the event is chosen *before* sampling, from exact probabilities, to maximise the expected
   Clopper–Pearson bound at the given number of samples (no selection bias);
2. the program, unrolled at the witness's size, is executed ``samples`` times on x and on x'
   (every noise instance drawn eagerly with :func:`dpcert.samplers.lattice_laplace`,
   :func:`~dpcert.samplers.discrete_laplace` or a lattice exponential built on
   :func:`~dpcert.samplers.geometric`; the run follows the path whose guards hold);
3. the lower bound ``ln(CP_lower(k, N, α/2) / CP_upper(k', N, α/2))`` (one-sided exact
   Clopper–Pearson, :mod:`dpcert.audit`) holds with probability ≥ 1 − α; the refutation is
   *confirmed* when it exceeds the claim.

Real-valued noise is on the lattice ``2**k ℤ`` (Mironov 2012) as in dpcert's mechanisms, so the
confirmed program is the lattice one; its probabilities differ from the exact reals' by far less
than the statistical error.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dpcert.audit import cp_lower, cp_upper
from dpcert.errors import InvalidParameter
from dpcert.samplers import EntropySource, discrete_laplace, geometric, lattice_laplace
from dpcert.samplers.lattice import lattice_exponent
from dpcert.verify.ir import Program
from dpcert.verify.refute import Witness, _refute_at
from dpcert.verify.semantics import concrete
from dpcert.verify.symexec import Unrolled, unroll

__all__ = ["Confirmation", "confirm"]

Arr = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Confirmation:
    """A sampled lower bound on the privacy loss of a witness event."""

    event: str
    samples: int
    count_x: int
    count_x_prime: int
    confidence: float
    epsilon_lower: float
    claim: float

    @property
    def confirmed(self) -> bool:
        """Whether the lower bound exceeds the claim (a refutation confirmed by sampling)."""
        return self.epsilon_lower > self.claim

    def describe(self) -> str:
        """Human-readable text."""
        verdict = "CONFIRMED" if self.confirmed else "not confirmed"
        return (f"confirmation by sampling ({self.samples} runs on x and on x', exact "
                f"samplers):\n  event S: {self.event}\n"
                f"  count on x: {self.count_x}, on x': {self.count_x_prime}\n"
                f"  ε ≥ {self.epsilon_lower:.4f} with confidence {self.confidence:.4g} "
                f"(Clopper–Pearson) vs claim {self.claim:.4g}: {verdict}")

    def to_json(self) -> dict[str, object]:
        """JSON-ready."""
        return {"event": self.event, "samples": self.samples, "count_x": self.count_x,
                "count_x_prime": self.count_x_prime, "confidence": self.confidence,
                "epsilon_lower": self.epsilon_lower, "claim": self.claim,
                "confirmed": self.confirmed}


def _expected_bound(samples: int, alpha: float) -> object:
    def score(p: float, p_prime: float) -> float:
        k = min(samples, round(p * samples))
        k2 = min(samples, round(p_prime * samples))
        lo, hi = cp_lower(k, samples, alpha / 2), cp_upper(k2, samples, alpha / 2)
        return -math.inf if lo <= 0 else math.log(lo / hi)
    return score


def _noise(u: Unrolled, params: dict[str, Fraction], samples: int,
           source: EntropySource | None) -> dict[str, Arr]:
    out: dict[str, Arr] = {}
    for name, nz in sorted(u.noises.items()):
        b = nz.scale.evaluate(params)
        if nz.kind == "lap":
            out[name] = np.asarray(lattice_laplace(np.zeros(samples), b, source=source))
        elif nz.kind == "dlap":
            out[name] = discrete_laplace(b, samples, source=source).astype(np.float64)
        else:  # one-sided exponential on the lattice 2**k: P(j·2**k) ∝ exp(-j·2**k / b)
            k = lattice_exponent(b)
            step = Fraction(2) ** k
            out[name] = geometric(step / b, samples, source=source).astype(np.float64) * \
                float(step)
    return out


def _count(u: Unrolled, w: Witness, data: dict[str, Fraction], noise: dict[str, Arr],
           samples: int) -> int:
    hit = np.zeros(samples, dtype=bool)
    for k in w.event_paths:
        path = u.paths[k]
        ok = np.ones(samples, dtype=bool)
        forms = [(c.form, c.op) for c in path.constraints]
        for idx, op, t in w.event_extra:
            v = path.outputs[idx]
            assert not isinstance(v, bool)
            forms.append((v - t, "<=") if op == "<=" else (-(v - t), "<="))
        for form, op in forms:
            coef, c = concrete(u, form, data, w.params)
            val = np.full(samples, float(c))
            for name, a in coef.items():
                val = val + float(a) * noise[name]
            ok &= {"<": val < 0, "<=": val <= 0, "==": val == 0, "!=": val != 0}[op]
        hit |= ok
    return int(hit.sum())


def confirm(prog: Program, witness: Witness, samples: int = 200_000,
            confidence: float = 0.95, source: EntropySource | None = None,
            seconds: float = 60.0) -> Confirmation:
    """Run the program on the witness's inputs and bound its privacy loss from below.

    Parameters
    ----------
    prog
        The parsed program (as refuted).
    witness
        The refutation; its size, parameters and inputs are used, and the event with the best
        expected bound at ``samples`` among the violating events of that pair is measured.
    samples
        Runs on each input.
    confidence
        Probability that the reported bound is below the true privacy loss of the event.
    source
        Randomness (the OS CSPRNG by default; tests pass an ``InsecureSeededSource``).
    seconds
        Time for re-ranking the events.

    Returns
    -------
    Confirmation
    """
    if not (isinstance(samples, int) and samples >= 100):
        raise InvalidParameter(f"samples={samples!r} must be an integer >= 100")
    if not 0 < confidence < 1:
        raise InvalidParameter(f"confidence={confidence!r} must be in (0, 1)")
    alpha = 1 - confidence
    u = unroll(prog, witness.n)
    best, _ = _refute_at(u, witness.n, witness.params, time.monotonic() + seconds,
                         score=_expected_bound(samples, alpha))  # type: ignore[arg-type]
    w = best if best is not None and best.x == witness.x else witness
    if not w.event_paths:
        raise InvalidParameter("the witness carries no event to measure")
    counts = []
    for vec in (w.x, w.x_prime):
        data = {f"{name}[{i}]": v for name, t in vec.items() for i, v in enumerate(t)}
        counts.append(_count(u, w, data, _noise(u, w.params, samples, source), samples))
    lo = cp_lower(counts[0], samples, alpha / 2)
    hi = cp_upper(counts[1], samples, alpha / 2)
    eps = -math.inf if lo <= 0 else math.log(lo / hi)
    return Confirmation(w.event, samples, counts[0], counts[1], confidence, eps, w.claim)
