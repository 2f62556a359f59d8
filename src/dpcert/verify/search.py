"""Proof search by randomness alignment, synthesised with z3 by counterexample-guided search.

For one adjacency piece and one output class K (outputs that share their discrete part), find a
shift ``s_k = c_k + Σ_a c_{k,a}·Δa`` for every noise ``η_k`` (Δa ranges over the differences of
data atoms, clamped atoms included) such that for every run-1 path π in K and every input pair,
parameters and noise:

    C_π(q, η)  ⇒  ∨_{π' ∈ K} C_π'(q', η + s) ∧ out_π'(q', η + s) = out_π(q, η)        (align)
    Σ_k |s_k|/b_k ≤ claim                                                           (cost)

(run-1 comparisons that involve continuous noise are read strictly: ties have probability 0).
Synthesis alternates a solver over the unknown coefficients constrained at finitely many
counterexample points, and a verifier that looks for a new counterexample over the rationals.
See ``docs/proofs/verifier.md`` for why this proves ε-DP.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import TYPE_CHECKING

from dpcert.verify._deps import require_z3
from dpcert.verify.adjacency import Piece
from dpcert.verify.conds import ValueClass
from dpcert.verify.ir import param_values
from dpcert.verify.linear import FormKey, LinForm, Monomial
from dpcert.verify.symexec import Constraint, Path, Scalar, Unrolled

if TYPE_CHECKING:
    from collections.abc import Callable

    from z3 import ArithRef, BoolRef, ModelRef, Solver

__all__ = ["ClassProof", "OutputClass", "classes", "prove_class"]

#: Counterexample-guided iterations per (piece, class) and template stage.
MAX_ITERS = 200


@dataclass(frozen=True)
class OutputClass:
    """Paths whose outputs share their discrete part (a function of the output value)."""

    key: tuple[ValueClass, ...]
    paths: tuple[Path, ...]
    label: str


@dataclass(frozen=True)
class ClassProof:
    """A verified alignment for one (piece, class)."""

    piece: Piece
    cls: OutputClass
    shifts: dict[str, LinForm]  # noise -> shift over Δ-atoms ("Δq[0]")
    cost: dict[Monomial, Fraction]  # max over the piece of Σ r_k·|s_k| per monomial
    queries: list[str]  # SMT-LIB text of the discharged side conditions


def _component_key(v: Scalar, u: Unrolled) -> ValueClass:
    if isinstance(v, bool):
        return ("b", v)
    if v.is_const():
        return ("c", v.const)
    if any(u.is_continuous_noise(x) for x in v.vars()):
        return ("r",)
    if any(x in u.noises for x in v.vars()):
        return ("z",)  # integer-valued noise (discrete Laplace): any integer is possible
    return ("d",)


def _distinguishable(k1: tuple[ValueClass, ...], k2: tuple[ValueClass, ...]) -> bool:
    if len(k1) != len(k2):
        return True
    for a, b in zip(k1, k2, strict=True):
        if a[0] in "bc" and b[0] in "bc" and a != b:
            return True
        if {a[0], b[0]} == {"b", "c"}:
            return True
        if {a[0], b[0]} in ({"r", "b"}, {"r", "c"}, {"z", "b"}):
            return True  # a continuous value equals a constant with probability 0
    return False


def classes(u: Unrolled) -> list[OutputClass]:
    """Group paths by output class; classes that one output value could belong to are merged."""
    keyed: dict[tuple[ValueClass, ...], list[Path]] = {}
    for p in u.paths:
        keyed.setdefault(tuple(_component_key(v, u) for v in p.outputs), []).append(p)
    keys = list(keyed)
    parent = list(range(len(keys)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            if not _distinguishable(keys[i], keys[j]):
                parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(keys)):
        groups.setdefault(find(i), []).append(i)
    out = []
    for members in groups.values():
        paths = tuple(p for i in members for p in keyed[keys[i]])
        out.append(OutputClass(keys[members[0]], paths, _label(keys[members[0]])
                               if len(members) == 1 else "merged classes"))
    return out


def _label(key: tuple[ValueClass, ...]) -> str:
    parts = []
    for k in key:
        if k[0] == "b":
            parts.append("true" if k[1] else "false")
        elif k[0] == "c":
            c = k[1]
            parts.append(str(c.numerator) if c.denominator == 1 else str(c))
        else:
            parts.append("·" if k[0] in "rz" else "?")
    return "(" + ", ".join(parts) + ")"


class _Enc:
    """z3 encoding of one (piece, class) problem."""

    def __init__(self, u: Unrolled, piece: Piece, cls: OutputClass) -> None:
        self.z3 = require_z3()
        z3 = self.z3
        self.deadline = time.monotonic() + 60.0
        self.u, self.piece, self.cls = u, piece, cls
        self.bounds = piece.as_dict()
        elem = {d.name: d.elem for d in u.program.inputs}
        self.int_data = {a: elem[u.data_info[a][0]] == "int" for a in u.data}
        self.q = {a: (z3.Int if self.int_data[a] else z3.Real)(a) for a in u.data}
        self.d = {a: (z3.Int if self.int_data[a] else z3.Real)("Δ" + a) for a in self.bounds}
        self.params = {p: z3.Real(p) for p in u.params}
        drawn = sorted({k for p in cls.paths for k in p.drawn})
        self.noise = drawn
        self.eta = {k: (z3.Int if u.noises[k].kind == "dlap" else z3.Real)(k) for k in drawn}
        # template atoms: varying data atoms and clamps that depend on them
        self.atoms = [a for a in u.data if a in self.bounds]
        self.atoms += [c for c, cl in u.clamps.items()
                       if any(v in self.bounds for v in cl.arg.vars())]

    # -- helpers ------------------------------------------------------------------------------
    def val(self, x: Fraction) -> ArithRef:
        return self.z3.RealVal(f"{x.numerator}/{x.denominator}")

    def lin(self, f: LinForm, env: dict[str, ArithRef]) -> ArithRef:
        z3 = self.z3
        terms = [self.val(f.const)] if f.const != 0 or not f.terms else []
        for k, v in f.terms.items():
            e = env[k]
            terms.append(e if v == 1 else self.val(v) * e)
        return terms[0] if len(terms) == 1 else z3.Sum(terms)

    def clamp_env(self, base: dict[str, ArithRef]) -> dict[str, ArithRef]:
        z3 = self.z3
        env = dict(base)
        for name, cl in self.u.clamps.items():
            a = self.lin(cl.arg, base)
            env[name] = z3.If(a < self.val(cl.lo), self.val(cl.lo),
                              z3.If(a > self.val(cl.hi), self.val(cl.hi), a))
        return env

    def cons(self, c: Constraint, env: dict[str, ArithRef], strict: bool) -> BoolRef:
        f = self.lin(c.form, env)
        op = c.op
        if strict and op == "<=" and any(self.u.is_continuous_noise(v) for v in c.form.vars()):
            op = "<"
        return {"<": f < 0, "<=": f <= 0, "==": f == 0, "!=": f != 0}[op]

    def out_eq(self, p1: Path, env1: dict[str, ArithRef], p2: Path, env2: dict[str, ArithRef]
               ) -> BoolRef:
        z3 = self.z3
        eqs = []
        for a, b in zip(p1.outputs, p2.outputs, strict=True):
            if isinstance(a, bool) or isinstance(b, bool):
                if a != b:
                    return z3.BoolVal(False)
                continue
            eqs.append(self.lin(a, env1) == self.lin(b, env2))
        return z3.And(eqs) if eqs else z3.BoolVal(True)

    def side(self) -> list[BoolRef]:
        """Constraints on data, differences and parameters common to every query."""
        z3 = self.z3
        out = []
        ranges = {d.name: (d.lo, d.hi) for d in self.u.program.inputs}
        for a, q in self.q.items():
            lo, hi = ranges[self.u.data_info[a][0]]
            q2 = q + self.d[a] if a in self.d else q
            for x in (q, q2):
                if lo is not None:
                    out.append(x >= self.val(lo))
                if hi is not None:
                    out.append(x <= self.val(hi))
        for a, (lo, hi) in self.bounds.items():
            if lo is not None:
                out.append(self.d[a] >= self.val(lo))
            if hi is not None:
                out.append(self.d[a] <= self.val(hi))
        for p in self.u.program.params:
            if p.lo is not None:
                out.append(self.params[p.name] > self.val(p.lo))
            if p.hi is not None:
                out.append(self.params[p.name] < self.val(p.hi))
        for k in self.noise:
            if self.u.noises[k].kind == "expo":
                out.append(self.eta[k] > 0)
        del z3
        return out

    def envs(self, shift_terms: dict[str, ArithRef], eta: dict[str, ArithRef],
             q: dict[str, ArithRef], d: dict[str, ArithRef], params: dict[str, ArithRef]
             ) -> tuple[dict[str, ArithRef], dict[str, ArithRef]]:
        base1: dict[str, ArithRef] = {**params, **q, **eta}
        base2: dict[str, ArithRef] = {**params, **eta}
        for a in self.u.data:
            base2[a] = q[a] + d[a] if a in d else q[a]
        for k in self.noise:
            base2[k] = eta[k] + shift_terms[k]
        # noises not drawn by this class do not occur in its paths
        return self.clamp_env(base1), self.clamp_env(base2)

    def success(self, p1: Path, env1: dict[str, ArithRef], env2: dict[str, ArithRef]) -> BoolRef:
        z3 = self.z3
        alts = []
        for p2 in self.cls.paths:
            alts.append(z3.And([*(self.cons(c, env2, False) for c in p2.constraints),
                                self.out_eq(p1, env1, p2, env2)]))
        supp = [env2[k] >= 0 for k in self.noise if self.u.noises[k].kind == "expo"]
        return z3.And(z3.Or(alts), *supp)


def _weights(u: Unrolled, k: str) -> tuple[Monomial, Fraction]:
    inv = u.noises[k].scale.reciprocal()
    ((m, r),) = inv.terms.items()
    return m, r


def candidates(u: Unrolled, piece: Piece, cls: OutputClass, k: str,
               outputs_only: bool = False) -> list[LinForm]:
    """Data differences that the noise ``k`` may have to compensate (LightDP-style guesses).

    For every comparison or output of the class in which ``η_k`` occurs with coefficient ``a``,
    the data part ``D`` of that form divided by ``a``; the candidate is ``D(q') − D(q)`` written
    over the Δ-atoms of the piece (atoms that cannot change are dropped).
    """
    bounds = piece.as_dict()
    varying = set(bounds) | {c for c, cl in u.clamps.items()
                             if any(v in bounds for v in cl.arg.vars())}
    forms: list[LinForm] = []
    for p in cls.paths:
        forms.extend(v for v in p.outputs if isinstance(v, LinForm))
        if not outputs_only:
            forms.extend(c.form for c in p.constraints)
    out: list[LinForm] = []
    seen: set[FormKey] = set()
    for f in forms:
        a = f.terms.get(k)
        if not a:
            continue
        g = LinForm({"Δ" + v: c / a for v, c in f.terms.items() if v in varying})
        if g.terms and g.key() not in seen:
            seen.add(g.key())
            out.append(g)
    return out


STAGES = ("constant", "outputs", "all")


def prove_class(u: Unrolled, piece: Piece, cls: OutputClass, deadline: float,
                keep_smt: bool = False, stages: tuple[str, ...] = STAGES) -> ClassProof | str:
    """Search an alignment for one (piece, class); a reason string when none is found."""
    if any(u.noises[k].kind == "gauss" for p in cls.paths for k in p.drawn):
        return "Gaussian noise is proved by dpcert.verify.gaussian, not by pure-DP alignment"
    if any(k[0] == "d" for k in cls.key):
        return (f"output class {cls.label} contains a value computed from the data without "
                "continuous noise")
    enc = _Enc(u, piece, cls)
    enc.deadline = deadline
    tried: set[tuple[tuple[str, tuple[FormKey, ...]], ...]] = set()
    for stage in stages:
        key = tuple((k, tuple(g.key() for g in _cands(enc, k, stage))) for k in enc.noise)
        if key in tried:
            continue
        tried.add(key)
        res = _cegis(enc, deadline, keep_smt, stage)
        if isinstance(res, ClassProof):
            return res
        if res == "timeout":
            return "time limit reached during proof search"
    return (f"no alignment (shift = h/2 + Σ λ·[data difference next to the noise], |h| ≤ 16, "
            f"λ ∈ {{-1, 0, 1}}) makes output class {cls.label} equal within the claim under "
            f"adjacency piece '{piece.text}'")


def _cands(enc: _Enc, k: str, stage: str) -> list[LinForm]:
    if stage == "constant":
        return []
    return candidates(enc.u, enc.piece, enc.cls, k, outputs_only=stage == "outputs")


def _cegis(enc: _Enc, deadline: float, keep_smt: bool, stage: str) -> ClassProof | str:
    z3, u = enc.z3, enc.u
    # unknowns: h_k (shift constant, in halves; whole units for the discrete Laplace) and a
    # multiplier λ in {-1, 0, 1} for each candidate data difference g
    hs: dict[str, ArithRef] = {}
    lams: dict[str, list[tuple[ArithRef, LinForm]]] = {}
    synth = z3.Solver()
    synth.set("timeout", _ms(deadline))
    for k in enc.noise:
        hs[k] = z3.Int(f"h_{k}")
        synth.add(hs[k] >= -16, hs[k] <= 16)
        lams[k] = []
        for j, g in enumerate(_cands(enc, k, stage)):
            if u.noises[k].kind == "dlap" and not all(
                    enc.int_data.get(v[1:], False) and c.denominator == 1
                    for v, c in g.terms.items()):
                continue
            lam = z3.Int(f"l_{k}_{j}")
            synth.add(lam >= -1, lam <= 1)
            lams[k].append((lam, g))
    half = {k: Fraction(1) if u.noises[k].kind == "dlap" else Fraction(1, 2) for k in enc.noise}

    def shift_at(k: str, diffs: dict[str, Fraction]) -> ArithRef:
        terms = [hs[k] * enc.val(half[k])]
        for lam, g in lams[k]:
            gv = g.evaluate({v: diffs.get(v[1:], Fraction(0)) for v in g.terms})
            if gv != 0:
                terms.append(lam * enc.val(gv))
        return z3.Sum(terms) if len(terms) > 1 else terms[0]

    groups: dict[Monomial, list[tuple[str, Fraction]]] = {}
    for k in enc.noise:
        m, r = _weights(u, k)
        groups.setdefault(m, []).append((k, r))
    claim = u.claim.terms
    # a noise monomial the claim lacks (Lap(eps) under the claim eps: cost 1/eps ≤ eps only for
    # eps ≥ 1) is paid for by the claim's total at the parameter values, not monomial-wise
    cross = any(m not in claim for m in groups)
    n_points = 0

    def add_cost(pt: dict[str, Fraction]) -> None:
        nonlocal n_points
        n_points += 1
        tots: dict[Monomial, ArithRef] = {}
        for m, ks in groups.items():
            tot = []
            for k, r in ks:
                s = shift_at(k, pt)
                t = z3.Real(f"abs{n_points}_{k}")
                synth.add(t >= s, t >= (-s if u.noises[k].kind != "expo" else 0))
                tot.append(enc.val(r) * t)
            tots[m] = z3.Sum(tot)
        if not cross:
            for m, tot_m in tots.items():
                synth.add(tot_m <= enc.val(claim.get(m, Fraction(0))))
            return
        at = _param_point(u, pt)
        synth.add(z3.Sum([enc.val(_mono_value(m, at)) * t for m, t in tots.items()])
                  <= enc.val(u.claim.evaluate(at)))

    add_cost({})
    for _ in range(MAX_ITERS):
        if time.monotonic() > deadline:
            return "timeout"
        r = synth.check()
        if r != z3.sat:
            return "timeout" if r == z3.unknown and time.monotonic() > deadline else \
                "no alignment"
        model = synth.model()
        shifts = {}
        for k in enc.noise:
            sk = LinForm.num(half[k] * model.eval(hs[k], model_completion=True).as_long())
            for lam, g in lams[k]:
                sk = sk + g * model.eval(lam, model_completion=True).as_long()
            shifts[k] = sk
        cex = _verify(enc, shifts, keep_smt)
        if isinstance(cex, ClassProof):
            return cex
        kind, point = cex
        if kind == "unknown" or not point:
            return "no alignment"
        if kind == "cost":
            add_cost(point)
        else:
            _add_point(enc, synth, shift_at, point, kind)
    return "no alignment"


def _ms(deadline: float) -> int:
    """A z3 timeout (ms): the time left, at most 10 s per query."""
    return max(1, min(10_000, int(1000 * (deadline - time.monotonic()))))


def _point_vars(enc: _Enc) -> list[ArithRef]:
    return [*enc.q.values(), *enc.d.values(), *enc.params.values(), *enc.eta.values()]


def _model_num(z3: ModuleType, v: ArithRef) -> Fraction:
    """A model value as a Fraction (huge rationals are rounded to 30 digits)."""
    if z3.is_int_value(v):
        return Fraction(v.as_long())
    if z3.is_rational_value(v):
        num, den = v.numerator(), v.denominator()
        if len(str(num.as_string())) < 400 and len(str(den.as_string())) < 400:
            return Fraction(int(num.as_string()), int(den.as_string()))
    return Fraction(v.as_decimal(30).rstrip("?"))


def _diff_values(enc: _Enc, m: ModelRef) -> dict[str, Fraction]:
    """Concrete Δ of every template atom at a model of the verifier."""
    z3 = enc.z3

    def num(e: ArithRef) -> Fraction:
        return _model_num(z3, m.eval(e, model_completion=True))

    q = {a: num(x) for a, x in enc.q.items()}
    d = {a: num(x) for a, x in enc.d.items()}
    q2 = {a: q[a] + d.get(a, Fraction(0)) for a in q}
    out = dict(d)
    for name, cl in enc.u.clamps.items():
        v1 = min(max(cl.arg.evaluate(q), cl.lo), cl.hi)
        v2 = min(max(cl.arg.evaluate(q2), cl.lo), cl.hi)
        out[name] = v2 - v1
    out.update({"q:" + a: v for a, v in q.items()})
    out.update({"p:" + p: num(x) for p, x in enc.params.items()})
    out.update({"e:" + k: num(x) for k, x in enc.eta.items()})
    return out


def _shift_z3(enc: _Enc, s: LinForm, diffs: dict[str, ArithRef]) -> ArithRef:
    env = {"Δ" + a: diffs[a] for a in diffs}
    return enc.lin(s, env)


def _verify(enc: _Enc, shifts: dict[str, LinForm],
            keep_smt: bool) -> ClassProof | tuple[str, dict[str, Fraction]]:
    z3, u = enc.z3, enc.u
    queries: list[str] = []
    diffs_sym: dict[str, ArithRef] = {a: enc.d[a] for a in enc.atoms if a in enc.d}
    # clamp differences are expressions of q and Δ
    base1 = {**enc.params, **enc.q}
    base2 = {**enc.params, **{a: enc.q[a] + enc.d[a] if a in enc.d else enc.q[a]
                              for a in u.data}}
    c1, c2 = enc.clamp_env(base1), enc.clamp_env(base2)
    for name in u.clamps:
        if name in enc.atoms:
            diffs_sym[name] = c2[name] - c1[name]
    shift_terms = {k: _shift_z3(enc, shifts[k], diffs_sym) for k in enc.noise}
    env1, env2 = enc.envs(shift_terms, enc.eta, enc.q, enc.d, enc.params)
    side = enc.side()
    for i, p in enumerate(enc.cls.paths):
        if time.monotonic() > enc.deadline:
            return ("unknown", {})
        s = z3.Solver()
        s.set("timeout", _ms(enc.deadline))
        s.add(*side)
        s.add(*(enc.cons(c, env1, True) for c in p.constraints))
        s.add(z3.Not(enc.success(p, env1, env2)))
        r = s.check()
        if keep_smt:
            queries.append(f"; alignment side condition, path {i}\n" + s.to_smt2())
        if r == z3.sat:
            # prefer a small counterexample: it makes the synthesis constraints simpler
            s.push()
            s.add(*(z3.And(v >= -64, v <= 64) for v in _point_vars(enc)))
            if s.check() == z3.sat:
                return (f"path{i}", _diff_values(enc, s.model()))
            s.pop()
            s.check()
            return (f"path{i}", _diff_values(enc, s.model()))
        if r != z3.unsat:
            return ("unknown", {})
    # cost, per monomial: max over the piece
    exprs: dict[Monomial, ArithRef] = {}
    for k in enc.noise:
        m, r = _weights(u, k)
        sk = shift_terms[k]
        a = z3.If(sk >= 0, sk, -sk) if u.noises[k].kind != "expo" else z3.If(sk >= 0, sk, 0)
        exprs[m] = exprs.get(m, enc.val(Fraction(0))) + enc.val(r) * a
    bad = _cost_check(enc, side, exprs, queries if keep_smt else None)
    if bad is not None:
        return bad
    cost: dict[Monomial, Fraction] = {}
    for m, expr in exprs.items():
        opt = z3.Optimize()
        opt.set("timeout", _ms(enc.deadline))
        opt.add(*side)
        h = opt.maximize(expr)
        opt.check()
        v = opt.upper(h)
        cost[m] = Fraction(str(v.as_fraction())) if z3.is_rational_value(v) else \
            u.claim.terms.get(m, Fraction(0))
    return ClassProof(enc.piece, enc.cls, shifts, cost, queries)


def _cost_check(enc: _Enc, side: list[BoolRef], exprs: dict[Monomial, ArithRef],
                queries: list[str] | None) -> tuple[str, dict[str, Fraction]] | None:
    """``None`` when the aligned cost is at most the claim over the piece, else a point.

    Monomial by monomial first (linear: parameters are positive), then the total
    ``Σ_m m(params)·cost_m ≤ claim(params)`` over the declared parameter ranges (nonlinear:
    ``1/eps ≤ eps`` for ``eps > 1``); its counterexample carries the parameter values.
    """
    z3, u = enc.z3, enc.u
    claim = u.claim.terms
    point: tuple[str, dict[str, Fraction]] | None = None
    for m, expr in exprs.items():
        s = z3.Solver()
        s.set("timeout", _ms(enc.deadline))
        s.add(*side, expr > enc.val(claim.get(m, Fraction(0))))
        if queries is not None:
            queries.append(f"; cost side condition, monomial {m}\n" + s.to_smt2())
        r = s.check()
        if r == z3.sat:
            point = ("cost", _diff_values(enc, s.model()))
            break
        if r != z3.unsat:
            return ("unknown", {})
    if point is None:
        return None
    s = z3.Solver()
    s.set("timeout", _ms(enc.deadline))
    total = z3.Sum([_mono_z3(enc, m) * e for m, e in exprs.items()])
    s.add(*side, total > z3.Sum([enc.val(c) * _mono_z3(enc, m) for m, c in claim.items()]))
    if queries is not None:
        queries.append("; cost side condition, total over the parameters\n" + s.to_smt2())
    r = s.check()
    if r == z3.unsat:
        return None
    return ("cost", _diff_values(enc, s.model())) if r == z3.sat else ("unknown", {})


def _mono_z3(enc: _Enc, m: Monomial) -> ArithRef:
    """A parameter monomial (``eps^-1``) as a z3 term."""
    t = enc.val(Fraction(1))
    for name, k in m:
        for _ in range(abs(k)):
            t = t * enc.params[name] if k > 0 else t / enc.params[name]
    return t


def _mono_value(m: Monomial, at: dict[str, Fraction]) -> Fraction:
    out = Fraction(1)
    for name, k in m:
        out *= at[name] ** k
    return out


def _param_point(u: Unrolled, pt: dict[str, Fraction]) -> dict[str, Fraction]:
    """The parameters of a counterexample point, else a value inside each declared range."""
    base = param_values(u.program)
    return {p: pt.get("p:" + p, base[p]) for p in base}


def _add_point(enc: _Enc, synth: Solver, shift_at: Callable[[str, dict[str, Fraction]], ArithRef],
               pt: dict[str, Fraction],
               kind: str) -> None:
    """Constrain the unknowns so that the alignment works at a counterexample point."""
    u = enc.u
    p1 = enc.cls.paths[int(kind[4:])]
    shift_terms = {k: shift_at(k, pt) for k in enc.noise}
    q = {a: enc.val(pt["q:" + a]) for a in u.data}
    d = {a: enc.val(pt.get(a, Fraction(0))) for a in enc.d}
    eta = {k: enc.val(pt["e:" + k]) for k in enc.noise}
    params = {p: enc.val(pt["p:" + p]) for p in u.params}
    env1, env2 = enc.envs(shift_terms, eta, q, d, params)
    synth.add(enc.success(p1, env1, env2))
