r"""Events for ``--confirm``: candidates with exact probabilities, ranked by confirmability.

The refuter's witness event maximises the privacy loss; it may be far too rare to be seen in a
feasible number of runs (BadGapSVT's tail event has probability 4·10⁻⁷).  A larger event with a
smaller loss that is still above the claim can be confirmed where the witness cannot.  For the
witness's pair (both orders) this module lists candidate events and their *exact* probabilities
(`dpcert.verify.semantics`, `dpcert.verify.gauss_refute`):

* level sets of the likelihood ratio over the discrete output classes (Neyman–Pearson: the
  classes sorted by ``P/P'``, every prefix a union event);
* for classes with real outputs, "every real output ≤ t" / "≥ t" on a grid of thresholds from
  2 noise scales inside to 12 outside the outputs' centres (one common t, or one offset from
  each output's own centre);
* for outputs that carry discrete noise only, each equal to its centre on one input (a
  point of the lattice: exact sums);
* for two or more real outputs, every output within a small box around its centre on one
  input (outputs that share one noise sample lie on a line the other input may miss), and
  every real output below (above) the midpoint of its centres on the two inputs (one-sided
  noise: a threshold one input's outputs cannot cross);
* for Gaussian programs, ``Σ w_j·out_j ≥ t`` along the privacy-loss direction for a grid of t.

`expected_bound` is the lower bound the sampled confirmation would report if the counts
equalled their expectations; the event maximising it at the draw budget is measured.  The choice
uses exact probabilities only — never the samples — so the measured bound needs no correction
for the selection.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

from dpcert.audit import cp_lower, cp_upper
from dpcert.verify.refute import _path_event_prob, box_events, lattice_events, split_events
from dpcert.verify.search import classes
from dpcert.verify.semantics import concrete
from dpcert.verify.symexec import Unrolled

__all__ = ["Candidate", "Part", "candidates", "expected_bound", "needed_draws", "rank"]

#: Threshold offsets, in quarters of the largest noise scale, from inside to outside.
OFFSETS = range(-8, 49)

Extra = tuple[tuple[int, str, Fraction], ...]


@dataclass(frozen=True)
class Part:
    """Paths of the unrolled program (indices) with thresholds on their outputs."""

    paths: tuple[int, ...]
    extra: Extra = ()


@dataclass(frozen=True)
class Candidate:
    """An event with its exact probabilities on the first (``p``) and second input."""

    text: str
    parts: tuple[Part, ...]
    p: float
    p_prime: float
    swapped: bool  # True: measured as P[M(x') ∈ S] against P[M(x) ∈ S]
    lin: tuple[tuple[tuple[int, Fraction], ...], Fraction] | None = None

    def margin(self, eps: float, delta: float) -> float:
        """``P − e^ε·P' − δ``: positive when the event violates the claim."""
        return self.p - math.exp(eps) * self.p_prime - delta


def _prob(u: Unrolled, part: Part, data: dict[str, Fraction], params: dict[str, Fraction],
          scales: dict[str, float]) -> float:
    tot = 0.0
    for k in part.paths:
        pr = _path_event_prob(u, u.paths[k], list(part.extra), data, params, scales)
        if pr is None:
            return math.nan
        tot += pr
    return tot


def candidates(u: Unrolled, x: dict[str, Fraction], y: dict[str, Fraction],
               params: dict[str, Fraction]) -> list[Candidate]:
    """Candidate events of a pure-noise program for the pair (x, y), both orders."""
    scales = {k: float(nz.scale.evaluate(params)) for k, nz in u.noises.items()}
    bmax = max(scales.values(), default=1.0)
    index = {id(p): k for k, p in enumerate(u.paths)}
    found: list[tuple[str, tuple[Part, ...], float, float]] = []
    discrete: list[tuple[str, Part, float, float]] = []
    for cls in classes(u):
        paths = tuple(index[id(p)] for p in cls.paths)
        cont = [i for i, v in enumerate(cls.paths[0].outputs)
                if not isinstance(v, bool) and not v.is_const()]
        if not cont:
            part = Part(paths)
            px, py = _prob(u, part, x, params, scales), _prob(u, part, y, params, scales)
            if not (math.isnan(px) or math.isnan(py)):
                discrete.append((cls.label, part, px, py))
            continue
        lo_c: dict[int, Fraction] = {}
        hi_c: dict[int, Fraction] = {}
        for p in cls.paths:
            for d in (x, y):
                for i in cont:
                    v = p.outputs[i]
                    assert not isinstance(v, bool)
                    c = concrete(u, v, d, params)[1]
                    lo_c[i] = min(lo_c.get(i, c), c)
                    hi_c[i] = max(hi_c.get(i, c), c)
        for k in OFFSETS:
            off = Fraction(round(k * bmax * 16), 64)
            fams = [(f"every real output ≤ {float(min(lo_c.values()) - off):.6g}",
                     tuple((i, "<=", min(lo_c.values()) - off) for i in cont)),
                    (f"every real output ≥ {float(max(hi_c.values()) + off):.6g}",
                     tuple((i, ">=", max(hi_c.values()) + off) for i in cont))]
            if len(cont) > 1:
                sign = "−" if off >= 0 else "+"
                fams += [(f"each real output ≤ its lowest centre {sign} {float(abs(off)):.6g}",
                          tuple((i, "<=", lo_c[i] - off) for i in cont)),
                         (f"each real output ≥ its highest centre {_neg(sign)} "
                          f"{float(abs(off)):.6g}",
                          tuple((i, ">=", hi_c[i] + off) for i in cont))]
            for text, extra in fams:
                part = Part(paths, extra)
                px, py = _prob(u, part, x, params, scales), _prob(u, part, y, params, scales)
                if not (math.isnan(px) or math.isnan(py)):
                    found.append((f"output class {cls.label} with {text}", (part,), px, py))
        for text, lat in [*lattice_events(u, cls, cont, (x, y), params),  # discrete noise
                          *box_events(u, cls, cont, (x, y), params, bmax),  # shared noise
                          *split_events(u, cls, cont, (x, y), params)]:  # one-sided noise
            part = Part(paths, tuple(lat))
            px, py = _prob(u, part, x, params, scales), _prob(u, part, y, params, scales)
            if not (math.isnan(px) or math.isnan(py)):
                found.append((text, (part,), px, py))
    out = [c for text, parts, px, py in found
           for c in (Candidate(text, parts, px, py, False), Candidate(text, parts, py, px, True))]
    out += list(_level_sets(discrete))
    return out


def _neg(sign: str) -> str:
    return "+" if sign == "−" else "−"


def _level_sets(discrete: list[tuple[str, Part, float, float]]) -> Iterable[Candidate]:
    """Unions of discrete classes with the largest likelihood ratios, every prefix."""
    for swapped in (False, True):
        rows = [(lab, part, py, px) if swapped else (lab, part, px, py)
                for lab, part, px, py in discrete]
        rows = [r for r in rows if r[2] > 0]
        rows.sort(key=lambda r: math.inf if r[3] <= 0 else r[2] / r[3], reverse=True)
        p = q = 0.0
        for j, (_, _, a, b) in enumerate(rows[:64]):
            p, q = p + a, q + b
            labels = [r[0] for r in rows[:j + 1]]
            text = "output = " + labels[0] if j == 0 else \
                "output in {" + ", ".join(labels) + "}"
            yield Candidate(text, tuple(r[1] for r in rows[:j + 1]), p, q, swapped)


_Z = functools.lru_cache(maxsize=8)(lambda a: NormalDist().inv_cdf(1 - a))


@functools.lru_cache(maxsize=1 << 16)
def _cp(k: int, n: int, alpha: float, upper: bool) -> float:
    return cp_upper(k, n, alpha) if upper else cp_lower(k, n, alpha)


def _eps_bound(lo: float, hi: float, delta: float) -> float:
    if lo - delta <= 0:
        return -math.inf
    return math.inf if hi <= 0 else math.log((lo - delta) / hi)


def expected_bound(c: Candidate, draws: int, alpha: float, delta: float = 0.0) -> float:
    """The lower bound on ε (at the claimed δ) that counts equal to their expectations give."""
    k = min(draws, round(c.p * draws))
    k2 = min(draws, round(c.p_prime * draws))
    return _eps_bound(_cp(k, draws, alpha / 2, False), _cp(k2, draws, alpha / 2, True), delta)


def _approx_bound(c: Candidate, draws: int, alpha: float, delta: float) -> float:
    z = _Z(alpha / 2)
    lo = c.p - z * math.sqrt(c.p * (1 - c.p) / draws)
    hi = c.p_prime + z * math.sqrt(c.p_prime * (1 - c.p_prime) / draws) + z * z / draws
    return _eps_bound(lo, hi, delta)


def rank(cands: list[Candidate], draws: int, alpha: float, eps: float, delta: float,
         top: int = 8) -> list[tuple[float, Candidate]]:
    """The violating candidates with the best expected bounds at ``draws``, best first."""
    viol = [c for c in cands if c.margin(eps, delta) > 0]
    viol.sort(key=lambda c: _approx_bound(c, draws, alpha, delta), reverse=True)
    scored = [(expected_bound(c, draws, alpha, delta), c) for c in viol[:top]]
    scored.sort(key=lambda t: t[0], reverse=True)
    return scored


def needed_draws(cands: list[Candidate], start: int, alpha: float, eps: float, delta: float,
                 limit: int = 10**13) -> int | None:
    """About how many draws per input make some candidate's expected bound exceed ``eps``."""
    def ok(n: int) -> bool:
        r = rank(cands, n, alpha, eps, delta, top=4)
        return bool(r) and r[0][0] > eps

    lo, hi = start, start
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    for _ in range(12):
        if hi - lo <= max(1, hi // 50):
            break
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
