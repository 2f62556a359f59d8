"""Quadrant events: conjunctions of two threshold events on two features.

Some likelihood ratios grow only where two quantities are extreme *together*: in SVT Alg. 3
(Lyu, Su & Li, *VLDB 2017*) with the inputs all moved down by one, an output whose first ⊤
comes late (many ⊥ before it) *and* whose revealed answer is low is up to ``e^{0.2}`` times
likelier, while either condition alone gives less than half of that.  A ray of any additive
score mixes these cells with weaker ones; a quadrant ``{f_j ≥ a, f_k ≤ b}`` is the event
itself.  DP-Sniper (Bichsel et al., *S&P 2021*) reaches such events through its classifier's
threshold; here they are searched directly on a grid of both features' quantiles.

The quadrant is chosen on the search batch and then fixed (a `Quadrant` statistic, 1
inside and 0 outside), so the estimation phase measures a fixed event.

Examples
--------
>>> import numpy as np
>>> q = Quadrant(None, 0, 1, 2.0, True, 0.0, False)
>>> q(np.array([[3.0, -1.0], [3.0, 1.0], [1.0, -1.0]])).tolist()
[1.0, 0.0, 0.0]
>>> q.describe()
'f0 ≥ 2 and f1 < 0'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcert._types import Array
from dpcert.audit.search.intervals import guard_z, predicted_bound
from dpcert.audit.stats.events import Event, Statistic

__all__ = ["Quadrant", "search_quadrants"]

#: Thresholds per feature (quantiles of the pooled values, or every value when fewer).
QUADRANT_GRID = 32


@dataclass(frozen=True, eq=False)
class Quadrant:
    """``1`` where ``f_j ≥ a`` (or ``< a``) and ``f_k ≥ b`` (or ``< b``), else ``0``, for the
    features ``f = features(y)`` (``features`` None: the outputs themselves)."""

    features: Statistic | None
    j: int
    k: int
    a: float
    j_upper: bool
    b: float
    k_upper: bool

    def __call__(self, y: Array) -> Array:
        f = np.asarray(y if self.features is None else self.features(y), dtype=np.float64)
        fj, fk = f[:, self.j], f[:, self.k]
        in_j = fj >= self.a if self.j_upper else fj < self.a
        in_k = fk >= self.b if self.k_upper else fk < self.b
        out: Array = (in_j & in_k).astype(np.float64)
        return out

    def describe(self) -> str:
        over = "" if self.features is None else f" of the {self.features.describe()}"
        return (f"f{self.j} {'≥' if self.j_upper else '<'} {self.a:g} and "
                f"f{self.k} {'≥' if self.k_upper else '<'} {self.b:g}{over}")


def _edges(v: Array) -> Array:
    """Every value when few; else quantiles, with each *atom* (a value holding at least
    1/QUADRANT_GRID of the mass, such as a sum of 0 when nothing was answered) split off by an
    edge on each side, so that ``f < atom`` and ``f ≤ atom`` are both thresholds."""
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return np.zeros(0)
    sub = finite[:: max(1, finite.size // 50_000)]
    u, counts = np.unique(sub, return_counts=True)
    if u.size <= QUADRANT_GRID:
        return u
    atoms = u[counts * QUADRANT_GRID >= sub.size]
    q = np.quantile(sub, np.linspace(0.0, 1.0, QUADRANT_GRID + 1)[1:-1])
    return np.unique(np.concatenate([atoms, np.nextafter(atoms, np.inf), q]))


def _cum(c: Array, upper_j: bool, upper_k: bool) -> Array:
    """``out[t, u]`` = count of bins ``i ≥ t`` (or ``< t``) and ``l ≥ u`` (or ``< u``)."""
    if upper_j:
        c = np.flip(np.cumsum(np.flip(c, 0), 0), 0)
    else:
        c = np.concatenate([np.zeros((1, c.shape[1])), np.cumsum(c, 0)[:-1]], 0)
    if upper_k:
        c = np.flip(np.cumsum(np.flip(c, 1), 1), 1)
    else:
        c = np.concatenate([np.zeros((c.shape[0], 1)), np.cumsum(c, 1)[:, :-1]], 1)
    return c


def _grid_counts(fj: Array, fk: Array, ej: Array, ek: Array) -> Array:
    """``out[i, l]`` = rows whose features fall in bin ``i`` of ``ej`` and bin ``l`` of ``ek``
    (bin = how many edges are ≤ the value; rows with a non-finite feature are left out)."""
    shape = (ej.size + 1, ek.size + 1)
    bj = np.searchsorted(ej, fj, side="right")
    bk = np.searchsorted(ek, fk, side="right")
    ok = np.isfinite(fj) & np.isfinite(fk)
    flat = np.bincount((bj * shape[1] + bk)[ok], minlength=shape[0] * shape[1])
    out: Array = flat.reshape(shape).astype(np.float64)
    return out


def search_quadrants(features: Statistic | None, fa: Array, fb: Array, *, n_estimate: int, z: float,
                     delta: float) -> list[tuple[Event, bool, float]]:
    """The best quadrant of each pair of feature columns, in each direction.

    ``fa``, ``fb``: the features of search outputs from ``x`` and ``x'``.  Returns
    ``(event, forward, predicted)`` triples (``forward``: likelier under ``x``)."""
    out: list[tuple[Event, bool, float]] = []
    d = fa.shape[1]
    for j in range(d):
        for k in range(j + 1, d):
            ej = _edges(np.concatenate([fa[:, j], fb[:, j]]))
            ek = _edges(np.concatenate([fa[:, k], fb[:, k]]))
            if ej.size == 0 or ek.size == 0:
                continue
            shape = (ej.size + 1, ek.size + 1)
            ca, cb = (_grid_counts(f[:, j], f[:, k], ej, ek) for f in (fa, fb))
            n_events = 4 * shape[0] * shape[1]
            z_search = guard_z(n_events)
            for uj in (True, False):
                for uk in (True, False):
                    ka, kb = _cum(ca, uj, uk), _cum(cb, uj, uk)
                    for forward, (k1, n1, k2, n2) in (
                            (True, (ka, fa.shape[0], kb, fb.shape[0])),
                            (False, (kb, fb.shape[0], ka, fa.shape[0]))):
                        score = predicted_bound(k1, k2, n1, n2, n_estimate, z, delta, z_search)
                        # threshold index t ≥ 1 means "bin ≥ t" ⟺ f ≥ edges[t-1] (or "< t")
                        score[0, :] = -np.inf
                        score[:, 0] = -np.inf
                        t, u = (int(v) for v in np.unravel_index(int(np.argmax(score)),
                                                                 score.shape))
                        best = float(score[t, u])
                        if not math.isfinite(best):
                            continue
                        stat = Quadrant(features, j, k, float(ej[t - 1]), uj,
                                        float(ek[u - 1]), uk)
                        out.append((Event(stat, 1.0, 1.0), forward, best))
    return out
