"""Exact linear forms and public monomials, the value domain of symbolic execution.

A `LinForm` is ``c + Σ aᵥ·v`` with ``Fraction`` coefficients over named variables: data
atoms (``q[0]``, ``clamp#1``), noise samples (``η…``) and public real parameters (``T``).
A `PublicPoly` is a Laurent polynomial in the positive public parameters (``2/eps``), the
domain of noise scales and claims.

Examples
--------
>>> x = LinForm.var("x") * 2 + 1
>>> str(x), str(x - x)
('1 + 2·x', '0')
>>> b = PublicPoly.const(2) / PublicPoly.var("eps")
>>> str(b), str(b.reciprocal())
('2·eps^-1', '1/2·eps')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import TypeAlias

__all__ = ["FormKey", "LinForm", "PublicPoly", "fmt_frac"]


def fmt_frac(x: Fraction) -> str:
    """``3``, ``-1/2`` -- a Fraction as short text."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


#: A linear form's canonical, hashable value: (sorted (name, coefficient) terms, constant).
FormKey: TypeAlias = tuple[tuple[tuple[str, Fraction], ...], Fraction]


class LinForm:
    """An immutable exact linear form ``const + Σ coeff·var``."""

    __slots__ = ("const", "terms")

    def __init__(self, terms: Mapping[str, Fraction] | None = None, const: Fraction = Fraction(0)):
        self.terms: dict[str, Fraction] = {k: v for k, v in (terms or {}).items() if v != 0}
        self.const = Fraction(const)

    @staticmethod
    def var(name: str) -> LinForm:
        """The form ``1·name``."""
        return LinForm({name: Fraction(1)})

    @staticmethod
    def num(value: Fraction | int) -> LinForm:
        """The constant form ``value``."""
        return LinForm(None, Fraction(value))

    def is_const(self) -> bool:
        """True when the form has no variables."""
        return not self.terms

    def vars(self) -> Iterable[str]:
        """The variables with non-zero coefficient."""
        return self.terms.keys()

    def __add__(self, other: LinForm | int | Fraction) -> LinForm:
        o = other if isinstance(other, LinForm) else LinForm.num(other)
        t = dict(self.terms)
        for k, v in o.terms.items():
            t[k] = t.get(k, Fraction(0)) + v
        return LinForm(t, self.const + o.const)

    def __neg__(self) -> LinForm:
        return LinForm({k: -v for k, v in self.terms.items()}, -self.const)

    def __sub__(self, other: LinForm | int | Fraction) -> LinForm:
        o = other if isinstance(other, LinForm) else LinForm.num(other)
        return self + (-o)

    def __mul__(self, k: Fraction | int) -> LinForm:
        k = Fraction(k)
        return LinForm({n: v * k for n, v in self.terms.items()}, self.const * k)

    def subst(self, values: Mapping[str, LinForm]) -> LinForm:
        """Replace variables by forms (variables not in ``values`` stay)."""
        out = LinForm.num(self.const)
        for k, v in self.terms.items():
            out = out + (values[k] * v if k in values else LinForm({k: v}))
        return out

    def evaluate(self, values: Mapping[str, Fraction]) -> Fraction:
        """The exact value given every variable's value."""
        return self.const + sum((v * values[k] for k, v in self.terms.items()), Fraction(0))

    def key(self) -> FormKey:
        """A hashable canonical form."""
        return (tuple(sorted(self.terms.items())), self.const)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LinForm) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __str__(self) -> str:
        parts: list[str] = []
        if self.const != 0 or not self.terms:
            parts.append(fmt_frac(self.const))
        for k, v in sorted(self.terms.items()):
            mag = abs(v)
            coef = "" if mag == 1 else f"{fmt_frac(mag)}·"
            sign = "-" if v < 0 else "+"
            if not parts:
                parts.append(f"{'-' if v < 0 else ''}{coef}{k}")
            else:
                parts.append(f"{sign} {coef}{k}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"LinForm({self})"


Monomial = tuple[tuple[str, int], ...]


class PublicPoly:
    """An immutable Laurent polynomial in public parameters: ``Σ c·Π pᵢ^kᵢ``."""

    __slots__ = ("terms",)

    def __init__(self, terms: Mapping[Monomial, Fraction]):
        self.terms: dict[Monomial, Fraction] = {m: c for m, c in terms.items() if c != 0}

    @staticmethod
    def const(c: Fraction | int) -> PublicPoly:
        """The constant ``c``."""
        return PublicPoly({(): Fraction(c)})

    @staticmethod
    def var(name: str) -> PublicPoly:
        """The parameter ``name``."""
        return PublicPoly({((name, 1),): Fraction(1)})

    def is_const(self) -> bool:
        """True when no parameter occurs."""
        return all(m == () for m in self.terms)

    def const_value(self) -> Fraction:
        """The constant term."""
        return self.terms.get((), Fraction(0))

    def __add__(self, o: PublicPoly) -> PublicPoly:
        t = dict(self.terms)
        for m, c in o.terms.items():
            t[m] = t.get(m, Fraction(0)) + c
        return PublicPoly(t)

    def __neg__(self) -> PublicPoly:
        return PublicPoly({m: -c for m, c in self.terms.items()})

    def __sub__(self, o: PublicPoly) -> PublicPoly:
        return self + (-o)

    def __mul__(self, o: PublicPoly) -> PublicPoly:
        t: dict[Monomial, Fraction] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in o.terms.items():
                exps: dict[str, int] = dict(m1)
                for p, k in m2:
                    exps[p] = exps.get(p, 0) + k
                m = tuple(sorted((p, k) for p, k in exps.items() if k != 0))
                t[m] = t.get(m, Fraction(0)) + c1 * c2
        return PublicPoly(t)

    def reciprocal(self) -> PublicPoly:
        """``1/self``; only single-term polynomials (monomials) have one here."""
        if len(self.terms) != 1:
            raise ZeroDivisionError(f"cannot divide by {self}, which is not a single term")
        ((m, c),) = self.terms.items()
        return PublicPoly({tuple((p, -k) for p, k in m): 1 / c})

    def __truediv__(self, o: PublicPoly) -> PublicPoly:
        return self * o.reciprocal()

    def evaluate(self, values: Mapping[str, Fraction]) -> Fraction:
        """The exact value at the given parameter values."""
        total = Fraction(0)
        for m, c in self.terms.items():
            v = c
            for p, k in m:
                v *= values[p] ** k
            total += v
        return total

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for m, c in sorted(self.terms.items()):
            mono = "·".join(p if k == 1 else f"{p}^{k}" for p, k in m)
            if not mono:
                parts.append(fmt_frac(c))
            elif c == 1:
                parts.append(mono)
            else:
                parts.append(f"{fmt_frac(c)}·{mono}")
        return " + ".join(parts)
