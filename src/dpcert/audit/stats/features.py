"""Features and statistics beyond the raw output: sentinels, differences, additive scores, floats.

All of these are *fitted on the search batch* and then fixed, so events built on them are fixed
events on the estimation batch (see `dpcert.audit.auditor`).

* `FeatureMap`: each coordinate, with *sentinel* values (atoms such as ``-1000`` for ⊥
  mixed into numeric outputs, as in SVT Alg. 3) replaced by NaN and flagged in an indicator
  column of their own, and optionally the differences of consecutive coordinates (prefix sums
  and other cumulative outputs).  DP-Sniper passes such flags to its classifier by hand
  (``FlagsFeatureTransformer``); here they are found from the data.
* `AdditiveScore`: a binned naive-Bayes log-likelihood ratio ``Σ_j ln(p̂_j(b)/q̂_j(b))``
  over features — the exact Neyman–Pearson statistic when the features are independent
  (RAPPOR's bits, parallel Laplace runs, prefix-sum increments) and a small non-linear
  classifier otherwise (each feature's contribution is any step function).
* `LowestBit`: the exponent of the lowest set bit of a float — the *lattice* an output
  lies on.  ``x + noise`` computed in floating point lands on a coarser lattice near 0 when
  ``x = 1`` than when ``x = 0``, so some outputs of one input are impossible for the other
  (Mironov, *CCS 2012*: the float-lattice holes of the textbook Laplace mechanism).
* `Composed`: a statistic applied to another (a histogram over lowest-bit cells).
* `Pattern`: the atom pattern of a row (which sentinel, or "a number", in each
  coordinate; the level of each few-valued coordinate), over one block of coordinates: a
  post-processing of the output with few values, so the discrete machinery applies to outputs
  that mix atoms with numbers (SVT Alg. 3's ⊤/⊥/abort pattern, Alg. 4's codes beside it).

Examples
--------
>>> import numpy as np
>>> LowestBit()(np.array([1.0, 0.75, 2.0 ** -60, 0.0])).tolist()
[0.0, -2.0, -60.0, inf]
>>> fm = fit_feature_map(np.array([[1.5, -1000.0]] * 10 + [[2.5, 3.25]] * 10), differences=True)
>>> fm.describe()
'1 coordinates, 1 differences'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np

from dpcert._types import Array
from dpcert.audit.stats.events import Statistic

__all__ = [
    "SPARSE_Z",
    "AdditiveScore",
    "Binned",
    "Composed",
    "FeatureMap",
    "FloatCell",
    "LowestBit",
    "Pattern",
    "SentinelSummary",
    "fit_additive",
    "fit_additive_pair",
    "fit_binned",
    "fit_feature_map",
    "fit_patterns",
    "fit_summary",
    "is_float_valued",
    "most_bins",
    "refine_pattern",
]

#: A value is a sentinel when it makes up at least this share of a coordinate's outputs...
SENTINEL_SHARE = 0.005
#: ...and the coordinate also has more than this many distinct values (a continuous part).
SENTINEL_MIN_DISTINCT = 64
#: Most sentinels flagged per coordinate.
MAX_SENTINELS = 4
#: Bins per feature of the additive score.
ADDITIVE_BINS = 48
#: Standard errors within which a sparse additive score's table entry counts as 0
#: (:func:`fit_additive_pair`): a feature without information keeps an entry with
#: probability 0.27 %, while an informative one seen often (log-ratio 5.6 standard errors
#: from 0) keeps its entry with probability 99.5 %.
SPARSE_Z = 3.0


def is_float_valued(y: Array) -> bool:
    """Whether some finite output is not an integer (so lattice structure may matter)."""
    f = y[np.isfinite(y)]
    return bool(f.size) and bool(np.any(f != np.round(f)))


@dataclass(frozen=True, eq=False)
class FeatureMap:
    """Coordinates with sentinels split off; with ``differences`` the first coordinate and the
    differences of consecutive ones instead (the increments of a cumulative output)."""

    width: int
    sentinels: tuple[tuple[int, float], ...]
    differences: bool

    def __call__(self, y: Array) -> Array:
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 1:
            y = y[:, None]
        base = y.copy()
        flags = []
        for j, v in self.sentinels:
            hit = y[:, j] == v
            flags.append(hit.astype(np.float64))
            np.copyto(base[:, j], np.nan, where=hit)   # (boolean indexing is 10× slower)
        if self.differences and self.width > 1:
            cols = [base[:, :1], *(f[:, None] for f in flags), np.diff(base, axis=1)]
        else:
            cols = [base, *(f[:, None] for f in flags)]
        out: Array = np.concatenate(cols, axis=1) if len(cols) > 1 else base
        return out

    def describe(self) -> str:
        diff = self.differences and self.width > 1
        parts = [f"{1 if diff else self.width} coordinates"]
        if self.sentinels:
            parts.append(f"{len(self.sentinels)} sentinel flags")
        if diff:
            parts.append(f"{self.width - 1} differences")
        return ", ".join(parts)


def _sentinels(col: Array, min_distinct: int = SENTINEL_MIN_DISTINCT,
               min_count: float = 0.0) -> list[float]:
    """The (at most `MAX_SENTINELS`) values of at least `SENTINEL_SHARE` of the
    column and ``min_count`` rows, most frequent first; none when the column has at most
    ``min_distinct`` distinct finite values."""
    finite = col[np.isfinite(col)]
    if finite.size == 0:
        return []
    vals, counts = np.unique(finite, return_counts=True)
    if vals.size <= min_distinct:
        return []
    order = np.argsort(counts)[::-1][:MAX_SENTINELS]
    least = max(SENTINEL_SHARE * col.size, min_count)
    return [float(vals[i]) for i in order if counts[i] >= least]


def fit_feature_map(y: Array, *, differences: bool = False) -> FeatureMap:
    """Find sentinel values of each coordinate of training outputs ``y``."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1:
        y = y[:, None]
    sent = tuple((j, v) for j in range(y.shape[1]) for v in _sentinels(y[:, j]))
    return FeatureMap(int(y.shape[1]), sent, differences)


@dataclass(frozen=True, eq=False)
class SentinelSummary:
    """Per output row: how many coordinates hold each sentinel value, how many *discrete*
    coordinates hold each of their levels, and the sum of the other (numeric) coordinates
    (NaN when there is none).

    Outputs that mix atoms and numbers, such as SVT Alg. 3 (``-1000`` for each ⊥ before the
    first ⊤, its noisy answer, ``-2000`` after), have their likelihood ratio mostly in a few
    pooled quantities: how many ⊥ came first and how large the answer was.  Pooled over
    coordinates, each cell of (counts, sum) is seen far more often in a search batch than any
    one row pattern, so an additive score or histogram over them is estimated well where one
    over the raw rows is noise.  Outputs that concatenate such a block with a discrete one
    (two mechanisms run in parallel, as DP-Sniper's ``SVT34Parallel``: Alg. 3 beside Alg. 4's
    ⊤/⊥/abort codes) get the discrete block's level counts as features of their own, kept out
    of the numeric sum, so that a quadrant event can be a conjunction of one event on each
    block (their likelihood ratios multiply).

    Examples
    --------
    >>> s = SentinelSummary((-1000.0,), discrete=(2,), levels=(0.0, 1.0))
    >>> s(np.array([[-1000.0, 3.5, 1.0], [2.0, 3.0, 0.0], [-1000.0, -1000.0, 1.0]])).tolist()
    [[1.0, 0.0, 1.0, 3.5], [0.0, 1.0, 0.0, 5.0], [2.0, 0.0, 1.0, nan]]
    """

    values: tuple[float, ...]
    discrete: tuple[int, ...] = ()
    levels: tuple[float, ...] = ()

    def __call__(self, y: Array) -> Array:
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 1:
            y = y[:, None]
        cols = []
        numeric = np.isfinite(y)
        numeric[:, list(self.discrete)] = False
        rest = numeric.copy()
        for v in self.values:
            hit = (y == v) & rest
            numeric &= ~hit
            cols.append(hit.sum(axis=1).astype(np.float64))
        if self.discrete:
            d = y[:, list(self.discrete)]
            cols += [(d == v).sum(axis=1).astype(np.float64) for v in self.levels]
        total = np.where(numeric, y, 0.0).sum(axis=1)
        # NaN (in no threshold event) when no coordinate is numeric: "first ⊤ late and a low
        # answer" must not take in the rows with no answer at all, whose sum would be 0
        total[~numeric.any(axis=1)] = np.nan
        cols.append(total)
        return np.column_stack(cols)

    def describe(self) -> str:
        levels = (f", counts of {len(self.levels)} levels of {len(self.discrete)} discrete "
                  "coordinates" if self.discrete else "")
        return (f"counts of {len(self.values)} sentinel values{levels} and the sum of the "
                "other coordinates")


#: Most distinct values of a coordinate counted level by level in the sentinel summary.
SUMMARY_LEVELS = 4


def fit_summary(features: FeatureMap, y: Array | None = None) -> SentinelSummary | None:
    """The `SentinelSummary` over the sentinels a feature map found (None if none).

    With training outputs ``y``, coordinates with at most `SUMMARY_LEVELS` distinct
    values (a discrete block beside the sentinel one) are counted level by level."""
    values = tuple(sorted({v for _, v in features.sentinels}))
    if not values:
        return None
    if y is None:
        return SentinelSummary(values)
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1:
        y = y[:, None]
    y = y[:: max(1, y.shape[0] // 50_000)]
    discrete: list[int] = []
    levels: set[float] = set()
    for j in range(y.shape[1]):
        u = np.unique(y[:, j])
        if u.size <= SUMMARY_LEVELS and np.isfinite(u).all():
            discrete.append(j)
            levels.update(float(v) for v in u)
    if not discrete or len(levels) > SUMMARY_LEVELS or len(discrete) == y.shape[1]:
        return SentinelSummary(values)
    return SentinelSummary(values, tuple(discrete), tuple(sorted(levels)))


@dataclass(frozen=True, eq=False)
class AdditiveScore:
    """``Σ_j table_j[bin_j(f_j(y))]`` over the features ``f`` of a `FeatureMap`
    (``sparse``: entries within `SPARSE_Z` standard errors of 0 were set to 0)."""

    features: Statistic
    edges: tuple[Array, ...]
    tables: tuple[Array, ...]
    sparse: bool = False

    def __call__(self, y: Array) -> Array:
        f = self.features(y)
        total = np.zeros(f.shape[0])
        for j, (e, t) in enumerate(zip(self.edges, self.tables, strict=True)):
            total += t[_bin(f[:, j], e)]
        return total

    def describe(self) -> str:
        kind = "sparse additive" if self.sparse else "additive"
        return f"{kind} log-ratio score over {self.features.describe()}"


def _bin(v: Array, edges: Array) -> Array:
    """How many edges are ≤ each value (``edges.size + 1`` for NaN)."""
    if edges.size <= 4:   # bits and small counts: a few comparisons beat a binary search
        idx: Array = np.zeros(v.shape, dtype=np.intp)
        for e in edges:
            idx += v >= e
        return np.where(np.isnan(v), edges.size + 1, idx)
    idx = np.searchsorted(edges, v, side="right")
    return np.where(np.isnan(v), edges.size + 1, idx)


def _edges(v: Array) -> Array:
    finite = v[np.isfinite(v)]
    finite = finite[:: max(1, finite.size // 50_000)]
    if finite.size == 0:
        return np.zeros(0)
    u = np.unique(finite)
    if u.size <= ADDITIVE_BINS:
        return np.unique(v[np.isfinite(v)])
    return np.unique(np.quantile(finite, np.linspace(0.0, 1.0, ADDITIVE_BINS + 1)[1:-1]))


def fit_additive(a: Array, b: Array, features: Statistic) -> AdditiveScore:
    """Fit the per-feature binned log-ratios on training outputs ``a`` (from x), ``b`` (x')."""
    return _fit_additive(a, b, features)[0]


def fit_additive_pair(a: Array, b: Array, features: Statistic
                      ) -> tuple[AdditiveScore, AdditiveScore | None]:
    """`fit_additive` and its sparse version, or None when sparsity changes nothing or
    leaves nothing (one set of counts serves both).

    The sparse score drops every table entry whose log-ratio is within `SPARSE_Z`
    standard errors (``√(1/c_a + 1/c_b)``) of 0: the features that carry no information then
    add no noise to the score.  When a few of many coordinates carry the information (RAPPOR:
    6 of 20 bits differ between the inputs), the plain score's noise weights smear its top
    level into the levels below; the sparse score depends on the informative coordinates
    alone, and its top value is their best joint level."""
    return _fit_additive(a, b, features, sparse=True)


def _fit_additive(a: Array, b: Array, features: Statistic, sparse: bool = False
                  ) -> tuple[AdditiveScore, AdditiveScore | None]:
    fa, fb = features(a), features(b)
    edges, tables, thin = [], [], []
    for j in range(fa.shape[1]):
        e = _edges(np.concatenate([fa[:, j], fb[:, j]]))
        size = e.size + 2
        ca = np.bincount(_bin(fa[:, j], e), minlength=size).astype(np.float64)
        cb = np.bincount(_bin(fb[:, j], e), minlength=size).astype(np.float64)
        t = np.log((ca + 0.5) / fa.shape[0]) - np.log((cb + 0.5) / fb.shape[0])
        t[(ca == 0) & (cb == 0)] = 0.0
        edges.append(e)
        tables.append(t)
        if sparse:
            se = np.sqrt(1.0 / (ca + 0.5) + 1.0 / (cb + 0.5))
            thin.append(np.where(np.abs(t) < SPARSE_Z * se, 0.0, t))
    plain = AdditiveScore(features, tuple(edges), tuple(tables))
    if not sparse or all(np.array_equal(u, v) for u, v in zip(thin, tables, strict=True)) \
            or not any(u.any() for u in thin):
        return plain, None
    return plain, AdditiveScore(features, tuple(edges), tuple(thin), sparse=True)


@dataclass(frozen=True, eq=False)
class Binned:
    """Each coordinate replaced by its bin index: atoms (sentinels such as ``-1000``) get a
    bin of their own, the numeric part a few quantile bins.  A histogram over binned rows is
    then a non-parametric likelihood ratio for outputs that mix a discrete structure (which
    query was answered) with numbers (the answer), as SVT Alg. 3 does."""

    edges: tuple[Array, ...]

    def __call__(self, y: Array) -> Array:
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 1:
            y = y[:, None]
        out: Array = np.column_stack([_bin(y[:, j], e) for j, e in enumerate(self.edges)])
        return out.astype(np.float64)

    def describe(self) -> str:
        return f"binned output ({len(self.edges)} coordinates)"


def fit_binned(y: Array, bins: int = 12) -> Binned:
    """Bin edges per coordinate of training outputs ``y`` (atoms kept apart)."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1:
        y = y[:, None]
    edges = []
    for j in range(y.shape[1]):
        col = y[:, j]
        finite = col[np.isfinite(col)]
        sub = finite[:: max(1, finite.size // 50_000)]
        u, counts = np.unique(sub, return_counts=True)
        if u.size <= bins:
            edges.append(u)
            continue
        atoms = u[counts * 50 >= sub.size]
        rest = sub[~np.isin(sub, atoms)]
        q = np.quantile(rest, np.linspace(0.0, 1.0, bins + 1)[1:-1]) if rest.size else rest
        # an atom a gets the bin [a, next float after a)
        edges.append(np.unique(np.concatenate([atoms, np.nextafter(atoms, np.inf), q])))
    return Binned(tuple(edges))


#: Coordinates with at most this many distinct values are *discrete* for :func:`fit_patterns`.
PATTERN_LEVELS = 8


@dataclass(frozen=True, eq=False)
class Pattern:
    """Each of ``columns`` replaced by the index of its value among that column's ``atoms``
    (``len(atoms)`` for any other value, NaN included): the ⊤/⊥/abort pattern of SVT Alg. 3
    (``-1000``, ``-2000`` and "an answer"), the levels of a few-valued block.  A fixed map of
    the output, so an event on it is an event on the output; its values are small integers, so
    the discrete screen (`dpcert.audit.search.dscreen`) counts them cheaply.

    Examples
    --------
    >>> p = Pattern((1, 2), ((-1000.0,), (-1.0, 0.0, 1.0)))
    >>> p(np.array([[9.0, -1000.0, 1.0], [9.0, 3.5, -1.0], [9.0, np.nan, 0.0]])).tolist()
    [[0.0, 2.0], [1.0, 0.0], [1.0, 1.0]]
    >>> p.describe()
    'atom pattern of coordinates 1, 2'

    With ``cuts`` (sorted), "a number" is split further into ``len(cuts) + 1`` bins
    (``len(atoms) + i`` for a number with ``i`` cuts at or below it; NaN in the first bin):

    >>> q = Pattern((1,), ((-1000.0,),), cuts=(0.0, 2.0))
    >>> q(np.array([[9.0, -1000.0], [9.0, -3.0], [9.0, 0.0], [9.0, 5.0]])).ravel().tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> q.describe()
    'atom pattern of coordinate 1, its numbers in 3 bins'
    """

    columns: tuple[int, ...]
    atoms: tuple[tuple[float, ...], ...]
    cuts: tuple[float, ...] = ()

    def __call__(self, y: Array) -> Array:
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 1:
            y = y[:, None]
        cols = list(self.columns)
        block = y if cols == list(range(y.shape[1])) else y[:, cols]
        # whole-block operations, one per cut and per atom value (column-by-column strided
        # work costs more than drawing the outputs)
        out = np.broadcast_to(np.array([float(len(a)) for a in self.atoms]), block.shape).copy()
        for c in self.cuts:
            out += block >= c
        for v in sorted({v for atoms in self.atoms for v in atoms}):
            index = np.array([float(atoms.index(v)) if v in atoms else -1.0
                              for atoms in self.atoms])
            hit = block == v
            if (index < 0).any():
                hit &= index >= 0
            np.copyto(out, index, where=hit)
        return out

    def describe(self) -> str:
        cols = self.columns
        run = len(cols) > 2 and cols == tuple(range(cols[0], cols[-1] + 1))
        where = f"{cols[0]}–{cols[-1]}" if run else ", ".join(str(j) for j in cols)
        binned = f", its numbers in {len(self.cuts) + 1} bins" if self.cuts else ""
        return f"atom pattern of coordinate{'s' if len(cols) > 1 else ''} {where}{binned}"


class _Binned(Protocol):
    def __call__(self, y: Array) -> Array: ...


_Map = TypeVar("_Map", bound=_Binned)

#: Bins tried (most first) for the numbers of a refined pattern (:func:`refine_pattern`).
REFINE_BINS = (8, 6, 4, 3, 2)


def refine_pattern(pattern: Pattern, y: Array, max_values: int) -> Pattern | None:
    """``pattern`` with its numbers split at quantiles of the numbers in ``y`` (outputs), into
    the most bins of `REFINE_BINS` that keep at most ``max_values`` distinct patterns on
    ``y``; None when the pattern has no numbers in ``y`` or even 2 bins are too many.

    SVT Alg. 3 reveals the noisy answer of its ⊤ query, and how large it is says how the
    threshold was drawn: "⊤ at query 6 with an answer in the top sixth" has likelihood ratio
    far from "⊤ at query 6" alone (held-out predictions on 10⁶ draws of a half-half pair 0.14
    for the plain pattern, 0.4–0.9 for 4–6 bins).  The cuts are fitted on ``y``, so they (and
    the refined pattern) are fixed before any draw an event is scored on."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 2 or y.shape[0] == 0:
        return None
    cols = y[:, list(pattern.columns)]
    is_atom = np.zeros(cols.shape, dtype=bool)
    for k, atoms in enumerate(pattern.atoms):
        is_atom[:, k] = np.isin(cols[:, k], atoms)
    numbers = cols[~is_atom & np.isfinite(cols)]
    if numbers.size == 0:
        return None
    return most_bins(numbers, y, lambda cuts: Pattern(pattern.columns, pattern.atoms, cuts),
                     max_values)


def most_bins(values: Array, y: Array, make: Callable[[tuple[float, ...]], _Map],
              max_values: int) -> _Map | None:
    """``make(cuts)`` with ``values`` cut at their quantiles into the most bins of
    `REFINE_BINS` whose map keeps at most ``max_values`` distinct rows on the outputs
    ``y``; None when even 2 bins are too many (or the values have one quantile only)."""
    for bins in REFINE_BINS:
        q = np.unique(np.quantile(values, np.linspace(0.0, 1.0, bins + 1)[1:-1]))
        if q.size == 0:
            continue
        binned = make(tuple(float(v) for v in q))
        if np.unique(binned(y), axis=0).shape[0] <= max_values:
            return binned
    return None


def fit_patterns(y: Array) -> list[Pattern]:
    """Atom patterns of training outputs ``y`` (2-D), one per block: the *mixed* coordinates
    (atoms beside other values) and, when the output also has other coordinates, the
    *discrete* ones (2 to `PATTERN_LEVELS` integer values: a small batch of a mixed
    coordinate can have few values too, but its numbers are not integers).  Two
    blocks apart because outputs that concatenate independent mechanisms (DP-Sniper's
    ``SVT34Parallel``) have few patterns per block but many in all.  Outputs that are all
    discrete get none (their histogram is the pattern)."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 2 or y.shape[0] == 0:
        return []
    y = y[:: max(1, y.shape[0] // 50_000)]
    discrete: dict[int, tuple[float, ...]] = {}
    mixed: dict[int, tuple[float, ...]] = {}
    plain = 0
    for j in range(y.shape[1]):
        col = y[:, j]
        u = np.unique(col)
        if u.size <= PATTERN_LEVELS and np.isfinite(u).all() and np.array_equal(u, np.rint(u)):
            discrete[j] = tuple(float(v) for v in u)
            continue
        # atoms: the sentinels, without the feature map's floor on distinct values (a
        # column's numeric part can have few distinct values in a small batch: SVT's rare
        # early answers), seen at least 5 times
        sent = sorted(_sentinels(col, min_distinct=0, min_count=5.0))
        if sent:
            mixed[j] = tuple(sent)
        else:
            plain += 1
    # a few-valued coordinate whose values are all atoms of mixed ones is mixed too (SVT Alg.
    # 3's last answers: only ⊥ and abort codes in a small batch)
    atoms = {v for a in mixed.values() for v in a}
    for j in [j for j, u in discrete.items() if atoms and set(u) <= atoms]:
        mixed[j] = tuple(sorted(atoms))
        del discrete[j]
    mixed = dict(sorted(mixed.items()))
    discrete = {j: u for j, u in discrete.items() if len(u) >= 2}
    out = []
    if mixed:
        out.append(Pattern(tuple(mixed), tuple(mixed.values())))
    if discrete and (mixed or plain):
        out.append(Pattern(tuple(discrete), tuple(discrete.values())))
    return out


@dataclass(frozen=True)
class LowestBit:
    """The exponent of the lowest set bit of each float output (``inf`` for 0, ±inf, NaN).

    An output ``y = m·2^k`` with ``m`` odd has statistic ``k``: the finest lattice ``2^k·ℤ`` it
    lies on.  Values computed as ``x + noise`` inherit the lattice of both terms.
    """

    def __call__(self, y: Array) -> Array:
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 2:
            y = y[:, 0]
        bits = np.abs(y).view(np.uint64)
        field = (bits >> np.uint64(52)).astype(np.int64)
        frac = bits & np.uint64((1 << 52) - 1)
        sig = np.where(field > 0, frac | np.uint64(1 << 52), frac)
        low = sig & (~sig + np.uint64(1))          # lowest set bit, a power of two
        with np.errstate(divide="ignore"):
            tz = np.log2(low.astype(np.float64))
        out: Array = np.maximum(field, 1) - 1075 + tz
        return np.where(np.isfinite(y) & (y != 0), out, np.inf)

    def describe(self) -> str:
        return "lowest set bit of the output (float lattice)"


@dataclass(frozen=True)
class FloatCell:
    """``(binary exponent, lowest set bit)`` of each float output: its magnitude and lattice."""

    def __call__(self, y: Array) -> Array:
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 2:
            y = y[:, 0]
        _, e = np.frexp(np.where(np.isfinite(y), y, 0.0))
        low = LowestBit()(y)
        out: Array = np.column_stack([e.astype(np.float64), np.where(np.isfinite(low), low,
                                                                     9999.0)])
        return out

    def describe(self) -> str:
        return "float cell (exponent, lowest set bit)"


@dataclass(frozen=True, eq=False)
class Composed:
    """``outer(inner(y))``: e.g. a histogram score over lowest-bit cells."""

    inner: Statistic
    outer: Statistic

    def __call__(self, y: Array) -> Array:
        out: Array = self.outer(self.inner(y))
        return out

    def describe(self) -> str:
        return f"{self.outer.describe()} of the {self.inner.describe()}"
