"""The exact engine behind geometric, discrete Laplace and discrete Gaussian sampling.

Target: ``P(X = x) ∝ exp(-f(|x|))`` on ℤ (or on ℕ when one-sided) with ``f(m) = m / s``
(Laplace, geometric) or ``f(m) = m² / (2σ²)`` (Gaussian).

Method (rejection from a piecewise-constant envelope, see docs/proofs/samplers.md):

* Cells of width ``t = 2**e`` partition ℤ: cell ``v`` is ``{t v, ..., t v + t - 1}``, with
  ``e = max(0, floor(log2 scale) - 6)`` so that ``scale / t`` lies in [64, 128) (``t = 1``, no
  rejection at all, when ``scale < 128``).  ``m_v`` is the smallest ``|x|`` in cell ``v``.
* Draw ``V`` with ``P(V = v) ∝ exp(-f(m_v))`` by exact inversion
  (`ThresholdTable`, 32 random bits per draw); cells beyond the
  table (total mass < 2**-40) come from an exact scalar tail sampler.
* Draw ``R`` uniform below ``t`` (``e`` random bits); ``X = t V + R``.
* Accept with probability ``exp(-(f(|X|) - f(m_V)))`` (at least ``exp(-1/64)`` for Laplace,
  ``exp(-0.12)`` for Gaussian), decided by a 16-bit uniform against a squeeze bound, then a float
  polynomial *filter* with a proven error margin, and exactly (lazily refined uniform vs rigorous
  bounds on exp) when the filter is unsure.
  Rejected elements are redrawn.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache, partial

import numpy as np
import numpy.typing as npt

from dpcert._directed import Bounds, exp_neg_bounds, mul_bounds
from dpcert.samplers._exact import LazyUniform, lazy_less
from dpcert.samplers._inversion import ThresholdTable
from dpcert.samplers.entropy import EntropySource

__all__ = ["CellSampler", "cell_sampler"]

I64 = npt.NDArray[np.int64]

#: Tables cover cells down to this relative mass (2**-40); the rest is the exact tail sampler.
_TAIL_LOG = 40 * math.log(2)
#: Safety margin of the float filter (its proven error is below 2**-46).
_FILTER_EPS = 2.0**-40
#: The float filter is used only for acceptance exponents z <= this.
_FILTER_ZMAX = 0.2
#: Draws per vectorised pass (keeps temporaries in cache).
_CHUNK = 1 << 16
_TAYLOR = [(-1.0) ** k / math.factorial(k) for k in range(13)]


def _floor_log2(x: Fraction) -> int:
    k = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** k > x:
        k -= 1
    return k


class CellSampler:
    """Exact sampler for ``P(x) ∝ exp(-f(|x|))``; see the module docstring."""

    def __init__(self, kind: str, scale: Fraction, one_sided: bool) -> None:
        self.kind = kind
        self.scale = scale
        self.one_sided = one_sided
        self.e = max(0, _floor_log2(scale) - 6)
        self.t = 1 << self.e
        ratio = float(scale / self.t)
        if kind == "laplace":
            span = math.ceil(_TAIL_LOG * ratio) + 1
            self._inv2 = Fraction(0)
        else:
            span = math.ceil(math.sqrt(2 * _TAIL_LOG) * ratio) + 1
            self._inv2 = 1 / (2 * scale * scale)
        self.jr = span
        self.jl = 0 if one_sided else span
        self.vmin = -self.jl
        self.nt = 1 + self.jl + self.jr  # thresholds: left tail, then one per table cell
        self.table = ThresholdTable(self._cdf_bounds)
        t = self.t
        # Squeeze: accept surely when (u + 1) / 2^16 <= 1 - zmax_v <= exp(-z)
        # (indexed by table index: 0 and nt are the tails, squeeze 0 there).
        self._squeeze_const = max(0, math.floor((1 - Fraction(t - 1) / scale) * 65536))
        sq = []
        if kind == "gaussian" and t > 1:
            cells = range(self.vmin, self.jr)
            sq = [max(0, math.floor((1 - self._zmax(v)) * 65536)) for v in cells]
        self._squeeze = np.array([0, *sq, 0], dtype=np.int64)
        self._inv_scale = 1.0 / float(scale)
        self._inv_2s2 = float(self._inv2) if kind == "gaussian" else 0.0

    # -- the target ------------------------------------------------------------------------
    def f(self, m: int) -> Fraction:
        """-log of the unnormalised weight at ``|x| = m``."""
        if self.kind == "laplace":
            return m / self.scale
        return m * m * self._inv2

    def m_of(self, v: int) -> int:
        """Smallest ``|x|`` in cell ``v``."""
        return self.t * v if v >= 0 else -self.t * v - self.t + 1

    def _zmax(self, v: int) -> Fraction:
        m = self.m_of(v)
        return self.f(m + self.t - 1) - self.f(m)

    # -- exact table of cell probabilities ------------------------------------------------------
    def _side(self, m0: int, count: int, prec: int) -> tuple[list[Bounds], Bounds]:
        """Bounds on W_j = exp(-f(m0 + t j)) for j < count, and on their tail sum (j >= count)."""
        t = self.t
        one = 1 << prec
        w = exp_neg_bounds(self.f(m0), prec)
        r = exp_neg_bounds(self.f(m0 + t) - self.f(m0), prec)
        second = self.f(m0 + 2 * t) - 2 * self.f(m0 + t) + self.f(m0)
        mu = exp_neg_bounds(second, prec) if second else (one, one)
        ws = []
        for _ in range(count):
            ws.append(w)
            w = mul_bounds(w, r, prec)
            if second:
                r = mul_bounds(r, mu, prec)
        # Tail: sum_{j>=count} W_j, with W_{j+1}/W_j = r_j non-increasing.
        t_lo = t_hi = 0
        while True:
            if r[1] >= one:  # pragma: no cover - cannot happen for a decreasing weight
                raise AssertionError("non-decreasing weights")
            rem_hi = -((-w[1] * one) // (one - r[1]))
            if not second:  # geometric: the tail is exactly W / (1 - r)
                return ws, (t_lo + w[0] * one // (one - r[0]), t_hi + rem_hi)
            if rem_hi <= 256:  # a few units of 2^-prec; prec carries 24+ guard bits
                return ws, (t_lo, t_hi + rem_hi)
            t_lo += w[0]
            t_hi += w[1]
            w = mul_bounds(w, r, prec)
            r = mul_bounds(r, mu, prec)

    def _cdf_bounds(self, prec: int) -> list[Bounds]:
        p2 = prec + 2 * (self.nt + 8).bit_length() + 24
        right, rtail = self._side(0, self.jr, p2)
        if self.one_sided:
            left: list[Bounds] = []
            ltail = (0, 0)
        else:
            left, ltail = self._side(1, self.jl, p2)
            left.reverse()
        weights = left + right
        z_lo = ltail[0] + sum(w[0] for w in weights) + rtail[0]
        z_hi = ltail[1] + sum(w[1] for w in weights) + rtail[1]
        out = []
        c_lo, c_hi = ltail
        scale = 1 << prec
        out.append((c_lo * scale // z_hi, -((-c_hi * scale) // z_lo)))
        for w in weights:
            c_lo += w[0]
            c_hi += w[1]
            out.append((c_lo * scale // z_hi, min(-((-c_hi * scale) // z_lo), scale)))
        return out

    # -- sampling ---------------------------------------------------------------------------
    def _tail(self, right: bool, source: EntropySource) -> int:
        """Exact draw of the cell V conditioned on lying beyond the table on one side."""
        from dpcert.samplers.coins import bernoulli_exp

        m0 = self.m_of(self.jr) if right else self.m_of(-(self.jl + 1))
        t = self.t
        a = self.f(m0 + t) - self.f(m0)
        b = (self.f(m0 + 2 * t) - 2 * self.f(m0 + t) + self.f(m0)) / 2
        a -= b  # f(m0 + t j) - f(m0) = a j + b j^2
        while True:
            # geometric with rate a: the one-sided Laplace engine itself (as samplers.geom does)
            j = int(cell_sampler("laplace", 1 / a, True).sample(1, source)[0])
            if b == 0 or bool(bernoulli_exp(b * j * j, 1, source=source)[0]):
                return self.jr + j if right else -(self.jl + 1 + j)

    def _accept(self, v: I64, idx: I64, r: I64, u: I64, source: EntropySource
                ) -> npt.NDArray[np.bool_]:
        """Exact Bernoulli(exp(-(f(m_v + d) - f(m_v)))) given the 16-bit prefixes ``u``.

        ``d = r`` for ``v >= 0`` and ``t - 1 - r`` for ``v < 0`` (distance to the cell's ``m_v``);
        ``idx`` is the table index (0 and ``nt`` mark tail cells, whose squeeze bound is 0).
        """
        squeeze = self._squeeze_const if self.kind == "laplace" else self._squeeze[idx]
        acc: npt.NDArray[np.bool_] = u < squeeze
        chk = np.flatnonzero(~acc)
        if chk.size == 0:
            return acc
        vv = v[chk]
        rr = r[chk]
        dv = np.where(vv < 0, (self.t - 1) - rr, rr)
        if self.kind == "laplace":
            z = dv.astype(np.float64) * self._inv_scale
        else:
            m = np.where(vv >= 0, self.t * vv, -self.t * vv - self.t + 1)
            z = dv.astype(np.float64) * (dv + 2 * m).astype(np.float64) * self._inv_2s2
        zc = np.minimum(z, _FILTER_ZMAX)
        p = np.full(zc.shape, _TAYLOR[-1])
        for c in reversed(_TAYLOR[:-1]):
            p = p * zc + c
        uu = u[chk].astype(np.float64)
        yes = (uu + 1.0) * 2.0**-16 <= p - _FILTER_EPS
        no = uu * 2.0**-16 >= p + _FILTER_EPS
        sure = (yes | no) & (z <= _FILTER_ZMAX)
        acc[chk[yes & sure]] = True
        for k in np.flatnonzero(~sure).tolist():
            i = int(chk[k])
            m_int = self.m_of(int(vv[k]))
            zx = self.f(m_int + int(dv[k])) - self.f(m_int)
            lu = LazyUniform(int(u[i]), 16, source)
            acc[i] = lazy_less(lu, partial(exp_neg_bounds, zx))
        return acc

    def _cells(self, h: I64, source: EntropySource) -> tuple[I64, I64]:
        """Table indices and cells V for 32-bit prefixes ``h`` (tails drawn exactly)."""
        idx = self.table.sample(h, source)
        v = idx + (self.vmin - 1)
        tails = np.flatnonzero((idx == 0) | (idx == self.nt))
        for i in tails.tolist():
            v[i] = self._tail(bool(idx[i] == self.nt), source)
        return idx, v

    def sample(self, size: int, source: EntropySource) -> I64:
        """``size`` exact draws (in cache-sized chunks)."""
        if size <= _CHUNK:
            return self._sample(size, source)
        out = np.empty(size, dtype=np.int64)
        for start in range(0, size, _CHUNK):
            stop = min(size, start + _CHUNK)
            out[start:stop] = self._sample(stop - start, source)
        return out

    def _sample(self, size: int, source: EntropySource) -> I64:
        if self.t == 1:  # plain inversion, 32 random bits per draw
            return self._cells(source.random_uint32(size).astype(np.int64), source)[1]
        e = self.e
        out = np.empty(0, dtype=np.int64)
        todo: I64 | None = None
        n = size
        while n:
            # one word per draw: bits 0-31 pick the cell, 32-47 decide acceptance, 48-63 (and
            # 32 more bits if e > 16) give the offset R inside the cell.
            w = source.random_uint64(n)
            idx, v = self._cells((w & np.uint64(0xFFFFFFFF)).astype(np.int64), source)
            u = ((w >> np.uint64(32)) & np.uint64(0xFFFF)).astype(np.int64)
            top = w >> np.uint64(48)
            if e <= 16:
                r = (top >> np.uint64(16 - e)).astype(np.int64)
            else:
                low = source.random_uint32(n).astype(np.uint64)
                r = (((top << np.uint64(32)) | low) >> np.uint64(48 - e)).astype(np.int64)
            x = (v << e) + r
            acc = self._accept(v, idx, r, u, source)
            if todo is None:
                out = x
                todo = np.flatnonzero(~acc)
            else:
                out[todo[acc]] = x[acc]
                todo = todo[~acc]
            n = todo.size
        return out


@lru_cache(maxsize=128)
def cell_sampler(kind: str, scale: Fraction, one_sided: bool) -> CellSampler:
    """The (cached) sampler for one distribution."""
    return CellSampler(kind, scale, one_sided)
