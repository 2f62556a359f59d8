"""Refutation: a concrete neighbouring pair and output event whose privacy loss beats the claim.

For sizes 1..N, public parameters set to a value inside their declared range, a small grid of
neighbouring inputs (bases 0…0, 0101…, 1010… moved by the adjacency's extreme differences, kept
inside the declared adjacency) and a few events per output class (the class itself for discrete
outputs; all continuous outputs below / above a threshold in the tails; outputs with discrete
noise only at a lattice point; every output in a small box around its centre, or beyond the
midpoint of its two centres), the loss ``ln P[M(x) ∈ S] / P[M(x') ∈ S]`` is computed exactly
with `dpcert.verify.semantics` (no sampling).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from dpcert.verify.ir import Program, param_values
from dpcert.verify.linear import LinForm, fmt_frac
from dpcert.verify.search import OutputClass, classes
from dpcert.verify.semantics import Lin, concrete, constraint_lin, region_probability
from dpcert.verify.symexec import Path, Unrolled, unroll

__all__ = ["Witness", "param_grid", "param_values", "refute"]

#: Event thresholds: the extreme output centre moved by k times the largest noise scale.
TAIL_STEPS = (4, 1, 0)


@dataclass(frozen=True)
class Witness:
    """A refutation: inputs ``x``/``x_prime``, the event, and the exact loss on it."""

    n: int
    params: dict[str, Fraction]
    x: dict[str, tuple[Fraction, ...]]
    x_prime: dict[str, tuple[Fraction, ...]]
    event: str
    p: float
    p_prime: float
    loss: float
    claim: float
    #: the event as data: indices of its paths in the unrolled program, and output thresholds
    event_paths: tuple[int, ...] = ()
    event_extra: tuple[tuple[int, str, Fraction], ...] = ()
    #: (ε, δ) claims: the claimed δ, and proven enclosures of P, P' and of P − e^ε·P'
    claim_delta: Fraction | None = None
    p_enclosure: tuple[Fraction, Fraction] | None = None
    p_prime_enclosure: tuple[Fraction, Fraction] | None = None
    delta_enclosure: tuple[Fraction, Fraction] | None = None
    #: a linear event ``Σ w_j·out_j ≥ t`` on the outputs: ((index, w_j), ...), t
    event_lin: tuple[tuple[tuple[int, Fraction], ...], Fraction] | None = None

    def to_json(self) -> dict[str, object]:
        """JSON-ready: inputs (exact rationals as strings), event, probabilities, loss."""
        def vec(v: dict[str, tuple[Fraction, ...]]) -> dict[str, list[str]]:
            return {k: [fmt_frac(a) for a in t] for k, t in v.items()}
        out: dict[str, object] = {
            "n": self.n, "params": {k: fmt_frac(v) for k, v in self.params.items()},
            "x": vec(self.x), "x_prime": vec(self.x_prime), "event": self.event,
            "p": self.p, "p_prime": self.p_prime,
            "loss": "inf" if math.isinf(self.loss) else self.loss, "claim": self.claim,
            "exact": "quadrature (error ~1e-12)" if self.delta_enclosure is None
            else "proven enclosure"}
        if self.claim_delta is not None:
            out["claim_delta"] = float(self.claim_delta)
        for key, iv in (("p_enclosure", self.p_enclosure),
                        ("p_prime_enclosure", self.p_prime_enclosure),
                        ("delta_enclosure", self.delta_enclosure)):
            if iv is not None:
                out[key] = [down(iv[0]), up(iv[1])]
        return out

    def describe(self) -> str:
        """Human-readable text of the witness."""
        def vec(v: dict[str, tuple[Fraction, ...]]) -> str:
            return ", ".join(f"{k} = [{', '.join(fmt_frac(a) for a in t)}]" for k, t in v.items())
        ps = ", ".join(f"{k} = {fmt_frac(v)}" for k, v in self.params.items())
        loss = "∞" if math.isinf(self.loss) else f"{self.loss:.6g}"
        return (f"n = {self.n}; parameters: {ps or '(none)'}\n"
                f"  x  : {vec(self.x)}\n  x' : {vec(self.x_prime)}\n"
                f"  event S: {self.event}\n"
                + self._numbers(loss))

    def _numbers(self, loss: str) -> str:
        if self.claim_delta is not None and self.delta_enclosure is None:
            return (f"  P[M(x) ∈ S] = {self.p:.6g},  P[M(x') ∈ S] = {self.p_prime:.6g}\n"
                    f"  P − e^ε·P' > claimed δ = {float(self.claim_delta):.6g}: the event's ε "
                    f"at that δ, ln((P − δ)/P') = {loss} > claim {self.claim:.6g} "
                    "(exact up to quadrature error ~1e-12)")
        if self.delta_enclosure is None or self.claim_delta is None:
            return (f"  P[M(x) ∈ S] = {self.p:.6g},  P[M(x') ∈ S] = {self.p_prime:.6g}\n"
                    f"  privacy loss ln(P/P') = {loss} > claim {self.claim:.6g} "
                    "(exact up to quadrature error ~1e-12)")
        assert self.p_enclosure is not None and self.p_prime_enclosure is not None
        (a, b), (c, d), (e, f) = self.p_enclosure, self.p_prime_enclosure, self.delta_enclosure
        return (f"  P[M(x) ∈ S] ∈ [{down(a):.10g}, {up(b):.10g}],  "
                f"P[M(x') ∈ S] ∈ [{down(c):.10g}, {up(d):.10g}]  (proven enclosures)\n"
                f"  P − e^ε·P' ∈ [{down(e):.6g}, {up(f):.6g}] > claimed δ = "
                f"{float(self.claim_delta):.6g} at ε = {self.claim:.6g}; the event's "
                f"ε at that δ is ≥ {loss}")


def down(x: Fraction) -> float:
    """``x`` as a float rounded down."""
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def up(x: Fraction) -> float:
    """``x`` as a float rounded up."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def param_grid(prog: Program) -> list[dict[str, Fraction]]:
    """Parameter values tried by the refuter: the default, then one parameter moved at a time.

    A positive parameter (``eps > 0``) is also tried small and large (a program private only
    for ``eps >= 1`` is refuted at ``eps = 1/2``); a threshold-like unbounded one at ±1.
    """
    base = param_values(prog)
    out = [base]
    for p in prog.params:
        alts: list[Fraction] = []
        if p.lo is not None and p.hi is not None:
            w = p.hi - p.lo
            alts = [p.lo + w / 10, p.lo + w / 100, p.hi - w / 10]
        elif p.lo is not None:
            alts = [p.lo + Fraction(1, 2), p.lo + Fraction(1, 10), p.lo + 3]
        elif p.hi is not None:
            alts = [p.hi - Fraction(1, 2), p.hi - 3]
        else:
            alts = [Fraction(1), Fraction(-1)]
        for a in alts:
            g = dict(base)
            g[p.name] = a
            if g not in out:
                out.append(g)
    return out


def _pairs(u: Unrolled) -> list[tuple[dict[str, Fraction], dict[str, Fraction]]]:
    prog = u.program
    out = []
    seen = set()
    per_input: list[list[tuple[dict[str, Fraction], dict[str, Fraction]]]] = []
    for d in prog.inputs:
        atoms = [a for a in u.data if u.data_info[a][0] == d.name]
        m = len(atoms)
        lo_r = d.lo if d.lo is not None else Fraction(0)
        hi_r = d.hi if d.hi is not None else Fraction(1)
        if d.lo is not None and d.hi is None:
            hi_r = lo_r + 1
        if d.hi is not None and d.lo is None:
            lo_r = hi_r - 1
        zero = Fraction(0) if lo_r <= 0 <= hi_r else lo_r
        bases = [[zero] * m, [lo_r if i % 2 == 0 else hi_r for i in range(m)],
                 [hi_r if i % 2 == 0 else lo_r for i in range(m)], [hi_r] * m]
        adj = prog.adjacency[d.name]
        lo_d = adj.lo if adj.lo is not None else Fraction(-10)
        hi_d = adj.hi if adj.hi is not None else Fraction(10)
        deltas: list[list[Fraction]] = []
        for v in {lo_d, hi_d, -lo_d, -hi_d, Fraction(1), Fraction(-1)}:
            if not lo_d <= v <= hi_d or v == 0:
                continue
            for j in sorted({0, m - 1}):
                e = [Fraction(0)] * m
                e[j] = v
                deltas.append(e)
            if adj.mode == "all":
                deltas.append([v] * m)
                neg = -v if lo_d <= -v <= hi_d else Fraction(0)
                deltas.append([v if i % 2 == 0 else neg for i in range(m)])
                deltas.append([v if i % 2 == 1 else neg for i in range(m)])
                if m > 1:  # all but the last (first) query move one way, that one the other
                    deltas.append([v] * (m - 1) + [neg])
                    deltas.append([neg] + [v] * (m - 1))
        pairs: list[tuple[dict[str, Fraction], dict[str, Fraction]]] = []
        deltas = [e for e in deltas if _adjacent(e, adj.mode, lo_d, hi_d)]
        for base in bases:
            for delta in deltas:
                other = [b + x for b, x in zip(base, delta, strict=True)]
                if d.elem == "int" and any(x.denominator != 1 for x in other):
                    continue
                if (d.lo is not None and min(other) < d.lo) or \
                        (d.hi is not None and max(other) > d.hi):
                    continue
                pairs.append((dict(zip(atoms, base, strict=True)),
                              dict(zip(atoms, other, strict=True))))
        per_input.append(pairs)
    # one input varies at a time; the others stay at their first base
    for i, plist in enumerate(per_input):
        for x, y in plist:
            fx: dict[str, Fraction] = {}
            fy: dict[str, Fraction] = {}
            for j, others in enumerate(per_input):
                if j == i:
                    fx.update(x)
                    fy.update(y)
                elif others:
                    fx.update(others[0][0])
                    fy.update(others[0][0])
            key = (tuple(sorted(fx.items())), tuple(sorted(fy.items())))
            if key not in seen:
                seen.add(key)
                out.append((fx, fy))
    return out


def _adjacent(delta: list[Fraction], mode: str, lo: Fraction, hi: Fraction) -> bool:
    """Δ is in the declared adjacency: every Δᵢ in [lo, hi], or every −Δᵢ (``all``), or one
    Δⱼ ≠ 0 (``one``) — a pair outside it would not refute anything."""
    if mode == "one":
        moved = [x for x in delta if x != 0]
        return len(moved) <= 1 and all(lo <= x <= hi or lo <= -x <= hi for x in moved)
    return all(lo <= x <= hi for x in delta) or all(lo <= -x <= hi for x in delta)


def _path_event_prob(u: Unrolled, path: Path, extra: list[tuple[int, str, Fraction]],
                     data: dict[str, Fraction], params: dict[str, Fraction],
                     scales: dict[str, float]) -> float | None:
    cons: list[Lin] = []
    for con in path.constraints:
        lin = constraint_lin(u, con, data, params)
        if lin is False:
            return 0.0
        if lin is True:
            continue
        assert isinstance(lin, Lin)
        cons.append(lin)
    for idx, op, t in extra:
        v = path.outputs[idx]
        assert not isinstance(v, bool)
        coef, c = concrete(u, v, data, params)
        # out <= t  <=>  out - t <= 0 ;  out >= t  <=>  t - out <= 0 ;  out == t
        sign = -1 if op == ">=" else 1
        c = sign * (c - t)
        if not coef:
            if c > 0 or (op == "==" and c != 0):
                return 0.0
            continue
        cons.append(Lin(tuple((k, float(sign * a)) for k, a in sorted(coef.items())), float(c),
                        "==" if op == "==" else "<="))
    return region_probability(u, cons, scales)


def refute(prog: Program, max_n: int, deadline: float, first: int | None = None,
           vary_params: bool = True) -> tuple[Witness | None, str]:
    """Search a witness for sizes 1..max_n (``first`` first); returns it (or None) and a note.

    Every size is first tried at the default parameter values; then, when ``vary_params``,
    every size again at the other values of `param_grid`.
    """
    grid = param_grid(prog)
    rounds = [grid[:1], grid[1:]] if vary_params else [grid[:1]]
    note = "no neighbouring pair and event with loss above the claim was found"
    skipped = 0
    order = list(range(1, max_n + 1))
    if first is not None and first in order:
        order.remove(first)
        order.insert(0, first)
    for n, grid_round in ((n, g) for g in rounds for n in order):
        if time.monotonic() > deadline:
            return None, "time limit reached during the search for a counterexample"
        try:
            u = unroll(prog, n, deadline)
        except TimeoutError:
            return None, "time limit reached during the search for a counterexample"
        except Exception:  # sizes too small for the program: try the next one
            continue
        if any(nz.kind == "gauss" for nz in u.noises.values()):
            return None, "refutation of programs with Gaussian noise is not supported"
        for params in grid_round:
            if time.monotonic() > deadline:
                return None, "time limit reached during the search for a counterexample"
            w, skip = _refute_at(u, n, params, deadline)
            skipped += skip
            if w is not None:
                return _smallest(prog, w, deadline), "found"
    if skipped:
        note += f" ({skipped} events could not be computed exactly and were skipped)"
    return None, note


def _smallest(prog: Program, w: Witness, deadline: float) -> Witness:
    """A witness at a smaller size than ``w.n`` (same parameters), if any: the smallest one."""
    for n in range(1, w.n):
        if time.monotonic() > deadline:
            break
        try:
            u = unroll(prog, n, deadline)
        except Exception:  # too small for the program, or out of time
            continue
        smaller, _ = _refute_at(u, n, w.params, deadline)
        if smaller is not None:
            return smaller
    return w


def _delta(prog: Program, n: int, params: dict[str, Fraction]) -> Fraction | None:
    """The claimed δ at size ``n`` (``None`` for a pure claim)."""
    if prog.claim_delta is None:
        return None
    from dpcert.verify.loopshape import public_poly

    sizes = {s: Fraction(n) for s in prog.size_names}
    return public_poly(prog.claim_delta, prog).evaluate({**params, **sizes})


Score = Callable[[float, float], float]


def _by_loss(p: float, p_prime: float) -> float:
    return math.inf if p_prime <= 0 else math.log(p / p_prime)


def _refute_at(u: Unrolled, n: int, params: dict[str, Fraction], deadline: float,
               score: Score = _by_loss) -> tuple[Witness | None, int]:
    """The witness of highest ``score(P, P')`` at size ``n`` and these parameter values (and
    the number of skipped events); ``score`` defaults to the loss ``ln(P/P')``."""
    index = {id(p): k for k, p in enumerate(u.paths)}
    skipped = 0
    claim = float(u.claim.evaluate(params))
    delta_q = _delta(u.program, n, params)
    delta = float(delta_q) if delta_q is not None else 0.0
    e_claim = math.exp(claim)
    scales = {k: float(nz.scale.evaluate(params)) for k, nz in u.noises.items()}
    bmax = max(scales.values(), default=1.0)
    best: Witness | None = None
    for x, y in _pairs(u):
        if time.monotonic() > deadline:
            break
        for cls in classes(u):
            cont = [i for i, v in enumerate(cls.paths[0].outputs)
                    if not isinstance(v, bool) and not v.is_const()]
            events: list[tuple[str, list[tuple[int, str, Fraction]]]] = []
            if cont:
                centers = []
                for p in cls.paths:
                    for d in (x, y):
                        for i in cont:
                            v = p.outputs[i]
                            assert not isinstance(v, bool)
                            centers.append(concrete(u, v, d, params)[1])
                for k in TAIL_STEPS:  # thresholds in the tails and near the centres
                    off = Fraction(round(k * bmax * 64), 64)
                    t_lo, t_hi = min(centers) - off, max(centers) + off
                    events.append((f"output class {cls.label} with every real output ≤ "
                                   f"{float(t_lo):.6g}", [(i, "<=", t_lo) for i in cont]))
                    events.append((f"output class {cls.label} with every real output ≥ "
                                   f"{float(t_hi):.6g}", [(i, ">=", t_hi) for i in cont]))
                for i in cont:  # outputs without continuous noise: split at x's value
                    v = cls.paths[0].outputs[i]
                    assert not isinstance(v, bool)
                    if not any(u.is_continuous_noise(k) for k in v.vars()):
                        t = concrete(u, v, x, params)[1]
                        events.append((f"output class {cls.label} with output #{i} ≤ "
                                       f"{float(t):.6g}", [(i, "<=", t)]))
                        events.append((f"output class {cls.label} with output #{i} ≥ "
                                       f"{float(t):.6g}", [(i, ">=", t)]))
                events += lattice_events(u, cls, cont, (x, y), params)
                events += box_events(u, cls, cont, (x, y), params, bmax)
                events += split_events(u, cls, cont, (x, y), params)
            else:
                events.append((f"output = {cls.label}", []))
            for text, extra in events:
                probs = []
                for d in (x, y):
                    tot = 0.0
                    for p in cls.paths:
                        pr = _path_event_prob(u, p, extra, d, params, scales)
                        if pr is None:
                            tot = math.nan
                            break
                        tot += pr
                    probs.append(tot)
                if any(math.isnan(p) for p in probs):
                    skipped += 1
                    continue
                for (a, pa), (b, pb) in (((x, probs[0]), (y, probs[1])),
                                         ((y, probs[1]), (x, probs[0]))):
                    if pa <= 1e-12:
                        continue
                    if delta:  # (ε, δ): P − e^ε·P' > δ; the loss is ε at that δ
                        if pa - e_claim * pb <= delta * (1 + 1e-9) + 1e-12:
                            continue
                        loss = math.inf if pb <= 0 else math.log((pa - delta) / pb)
                    else:
                        loss = math.inf if pb <= 0 else math.log(pa / pb)
                    if loss > claim * (1 + 1e-9) + 1e-9 and (
                            best is None or score(pa, pb) > score(best.p, best.p_prime)):
                        best = Witness(n, params, _vec(u, a), _vec(u, b), text, pa, pb,
                                       loss, claim,
                                       tuple(index[id(p)] for p in cls.paths), tuple(extra),
                                       claim_delta=delta_q)
    return best, skipped


Event = tuple[str, list[tuple[int, str, Fraction]]]


def lattice_events(u: Unrolled, cls: OutputClass, cont: list[int],
                   inputs: tuple[dict[str, Fraction], ...],
                   params: dict[str, Fraction]) -> list[Event]:
    """Point events of the outputs that carry discrete noise only (on a lattice).

    Each such output equals its centre on one input of the pair (its value with the noise at
    0), and the other outputs of the class are left free: ``P`` is an exact lattice sum, and a
    centre that the other input cannot reach (a shift by half the lattice step) has ``P' = 0``.
    """
    disc = [i for i in cont if _lattice_only(u, cls.paths[0].outputs[i])]
    out: list[Event] = []
    if not disc:
        return out
    for d in inputs:
        vals = []
        for i in disc:
            v = cls.paths[0].outputs[i]
            assert not isinstance(v, bool)
            vals.append((i, "==", concrete(u, v, d, params)[1]))
        text = ", ".join(f"output #{i} = {fmt_frac(t)}" for i, _, t in vals)
        out.append((f"output class {cls.label} with {text}", vals))
    return out


#: Half-widths of the box events, in largest noise scales.
BOX_WIDTHS = (Fraction(1, 4), Fraction(1, 16))


def box_events(u: Unrolled, cls: OutputClass, cont: list[int],
               inputs: tuple[dict[str, Fraction], ...], params: dict[str, Fraction],
               bmax: float) -> list[Event]:
    """Every real output within ``w`` of its centre on one input (outputs sharing a sample).

    With two or more real outputs that share a noise sample (``q[0] + e, q[1] + e``) the
    outputs lie on a line that moves with the data; a small box around one input's centres
    meets the other input's line in a shorter segment, or not at all (``P' = 0``).
    """
    seen: set[str] = set()
    shared = False
    for i in cont:
        v = cls.paths[0].outputs[i]
        assert not isinstance(v, bool)
        ks = {k for k in v.vars() if k in u.noises}
        shared |= bool(ks & seen)
        seen |= ks
    if not shared:  # no sample in two outputs: the threshold events see what a box would
        return []
    out: list[Event] = []
    for w in BOX_WIDTHS:
        half = Fraction(round(float(w) * bmax * 64), 64) or Fraction(1, 64)
        for d in inputs:
            extra: list[tuple[int, str, Fraction]] = []
            for i in cont:
                v = cls.paths[0].outputs[i]
                assert not isinstance(v, bool)
                c = concrete(u, v, d, params)[1]
                extra += [(i, ">=", c - half), (i, "<=", c + half)]
            out.append((f"output class {cls.label} with every real output within "
                        f"{fmt_frac(half)} of its centre {_centres(extra)}", extra))
    return out


def split_events(u: Unrolled, cls: OutputClass, cont: list[int],
                 inputs: tuple[dict[str, Fraction], ...],
                 params: dict[str, Fraction]) -> list[Event]:
    """Every output with one-sided noise below (above) the midpoint of its two centres.

    One-sided noise (``expo``) puts an output's support on one side of its centre: a value
    released from it (the maximum of a noisy max) has, between the two inputs' centres, a
    threshold that one input's outputs cannot cross (``P' = 0``).
    """
    x, y = inputs
    mids = []
    for i in cont:
        v = cls.paths[0].outputs[i]
        assert not isinstance(v, bool)
        if not any(u.noises[k].kind == "expo" for k in v.vars() if k in u.noises):
            continue  # two-sided noise: the threshold events cover it
        a, b = concrete(u, v, x, params)[1], concrete(u, v, y, params)[1]
        if a != b:
            mids.append((i, (a + b) / 2))
    if not mids:
        return []
    text = ", ".join(f"#{i} {{}} {fmt_frac(t)}" for i, t in mids)
    return [(f"output class {cls.label} with output {text.format(*[op] * len(mids))}",
             [(i, op, t) for i, t in mids]) for op in ("<=", ">=")]


def _centres(extra: list[tuple[int, str, Fraction]]) -> str:
    lo = [t for _, op, t in extra if op == ">="]
    hi = [t for _, op, t in extra if op == "<="]
    return "(" + ", ".join(fmt_frac((a + b) / 2) for a, b in zip(lo, hi, strict=True)) + ")"


def _lattice_only(u: Unrolled, v: object) -> bool:
    """A value that moves with discrete noise only (and does move)."""
    if isinstance(v, bool) or not isinstance(v, LinForm):
        return False
    ks = [k for k in v.vars() if k in u.noises]
    return bool(ks) and all(u.noises[k].kind == "dlap" for k in ks)


def _vec(u: Unrolled, d: dict[str, Fraction]) -> dict[str, tuple[Fraction, ...]]:
    out: dict[str, list[Fraction]] = {}
    for a in u.data:
        out.setdefault(u.data_info[a][0], []).append(d[a])
    return {k: tuple(v) for k, v in out.items()}
