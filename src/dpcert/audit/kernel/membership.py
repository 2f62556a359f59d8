"""Event membership on the estimation batch, by the cheapest route that gives the same bits.

The estimation phase (`dpcert.audit.kernel.estimate`) asks, chunk after chunk of fresh draws,
which outputs lie in each chosen event ``S = {y : low <= s(y) <= high}``.  Evaluating the
fitted statistics ``s`` row by row (hashing rows for a histogram score, binning every feature
of an additive score) cost more than drawing the outputs.  `Membership` answers with the
*same* membership bits, cheaper:

* **Discrete outputs** (every value an integer in a small range: SVT's ⊤/⊥/abort rows,
  report-noisy-max indices, RAPPOR's bits): each row gets an exact integer code
  ``Σ_j (y_j − lo)·base^j`` (one code, one row: values are checked to be those integers bit
  for bit, so a ``-0.0`` or a fraction sends its chunk the direct way); the events are
  evaluated on the first row seen with each code, remembered in a table across chunks, and
  each chunk is a table lookup.
* **Additive scores** (`AdditiveScore`): each feature's bin
  index is looked up on a uniform grid over its edges and checked against the two edges around it
  (values failing the check, and NaN, get the exact binary search); the per-feature table
  values are then summed in the same order as the statistic itself, so scores are equal bit
  for bit.
* **Histogram scores** (`HistogramScore`, alone or over a feature
  map): the binary search of each row's hash among the fitted keys becomes one lookup in a
  collision-free slot table (a bit slice of the 64-bit key; unmatched hashes score 0 as before).
* Intersections (`AllOf`): each event by its own route.
* Everything else: the statistic itself, computed once per chunk for all events sharing it.

The events are fixed before the estimation batch is drawn and this only changes how their
membership is computed, so the bounds' validity is untouched; ``tests/audit/test_membership.py``
checks the bits against [`contains`][dpcert.audit.stats.events.Event.contains] on every route.

Examples
--------
>>> import numpy as np
>>> from dpcert.audit.stats.events import Event, Coordinate
>>> y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
>>> m = Membership([Event(Coordinate(1), 1.0, np.inf)])
>>> m(y)[0].tolist(), m.coded_rows
([False, True, True], 3)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpcert._types import Array
from dpcert.audit.stats.events import AllOf, Event, HistogramScore, Statistic, row_hash
from dpcert.audit.stats.features import AdditiveScore, Composed

__all__ = ["Membership"]

#: Most distinct codes (``base^width``) of the discrete route's lookup tables.
MAX_CODES = 1 << 22
#: Cells of the uniform grid that guesses a feature's bin.
GRID_CELLS = 4096
#: Most code books built for one set of events (a wider range of values needs a new one).
MAX_SETUPS = 4
#: Largest slot table (2^bits entries) of a histogram score's keys.
MAX_SLOT_BITS = 20
#: Features with at most this many bin edges are binned by comparisons (as the score does).
FEW_EDGES = 4


class _Codes:
    """Exact integer codes of rows whose values are integers in ``[lo, lo + base)``."""

    def __init__(self, lo: float, base: int, width: int, events: int) -> None:
        self.lo, self.base, self.width = lo, base, width
        self.powers = (base ** np.arange(width, dtype=np.int64)).astype(np.float64)
        self.offset = lo * float(self.powers.sum())
        size = base ** width
        self.known = np.zeros(size, dtype=bool)
        self.member = np.zeros((events, size), dtype=bool)

    def codes(self, y2: Array) -> Array | None:
        """The codes of the rows of ``y2`` (2-D), or None when some value is not codable."""
        with np.errstate(invalid="ignore"):
            small = y2.astype(np.int8)   # NaN, ±inf, huge: some int8, caught just below
        # bit for bit: catches non-integers, values beyond int8, NaN and -0.0 (which a code
        # would turn into 0.0)
        if not np.array_equal(small.astype(np.float64).view(np.uint64), y2.view(np.uint64)):
            return None
        if small.min() < self.lo or small.max() > self.lo + (self.base - 1):
            return None
        # Σ y_j·base^j − lo·Σ base^j, exact in float64 (integers below 2^22 · 128)
        code = (np.einsum("ij,j->i", y2, self.powers) if self.width > 1 else y2[:, 0].copy())
        code -= self.offset
        out: Array = code.astype(np.intp)
        return out


def _direct(y: Array, events: Sequence[Event]) -> list[Array]:
    # one value per statistic (and per inner map of a composed one) per chunk: the events of
    # one statistic, the ladder's rays and an intersection's parts share them
    cache: dict[int, Array] = {}
    out = []
    for e in events:
        s = _cached(e.statistic, y, cache)
        out.append((s >= e.low) & (s <= e.high))
    return out


def _cached(stat: Statistic, y: Array, cache: dict[int, Array]) -> Array:
    key = id(stat)
    if key not in cache:
        cache[key] = _score(stat, y, cache)
    return cache[key]


def _score(stat: Statistic, y: Array, cache: dict[int, Array] | None = None) -> Array:
    if cache is None:
        cache = {}
    if type(stat) is AllOf:
        # each event by its own cheapest route (the same bits as AllOf's own contains)
        hit = np.ones(y.shape[0], dtype=bool)
        for e in stat.events:
            s = _cached(e.statistic, y, cache)
            hit &= (s >= e.low) & (s <= e.high)
        return hit.astype(np.float64)
    if type(stat) is AdditiveScore:
        return _additive(stat, y)
    if type(stat) is HistogramScore:
        return _histogram(stat, y)
    if type(stat) is Composed and type(stat.outer) is HistogramScore:
        return _histogram(stat.outer, _cached(stat.inner, y, cache))
    out: Array = stat(y)
    return out


_TABLES: dict[int, tuple[HistogramScore, tuple[int, int, Array, Array] | None]] = {}


def _table(stat: HistogramScore) -> tuple[int, int, Array, Array] | None:
    """A collision-free slot table for the score's keys: ``slot = (key >> shift) & mask``,
    with each key and its score in its slot (and the first key in the empty ones: a key
    landing in an empty slot is never equal to it, since that key has a slot of its own)."""
    got = _TABLES.get(id(stat))
    if got is not None and got[0] is stat:
        return got[1]
    keys, found = stat.keys, None
    need = max(4, int(keys.size - 1).bit_length() + 2)
    for bits in range(need, MAX_SLOT_BITS + 1):
        mask = np.uint64((1 << bits) - 1)
        for shift in range(0, 64 - bits + 1, 4):
            slots = ((keys >> np.uint64(shift)) & mask).astype(np.intp)
            if np.unique(slots).size == keys.size:
                table_keys = np.full(1 << bits, keys[0], dtype=np.uint64)
                table_scores = np.full(1 << bits, stat.scores[0], dtype=np.float64)
                table_keys[slots] = keys
                table_scores[slots] = stat.scores
                found = (shift, bits, table_keys, table_scores)
                break
        if found is not None:
            break
    if len(_TABLES) > 256:
        _TABLES.clear()
    _TABLES[id(stat)] = (stat, found)
    return found


def _histogram(stat: HistogramScore, y: Array) -> Array:
    """``stat(y)``, the binary search over the keys replaced by a slot table lookup."""
    table = _table(stat) if stat.keys.size else None
    if table is None:
        out: Array = stat(y)
        return out
    shift, bits, table_keys, table_scores = table
    h = row_hash(y)
    slot = ((h >> np.uint64(shift)) & np.uint64((1 << bits) - 1)).astype(np.intp)
    out = np.where(table_keys[slot] == h, table_scores[slot], 0.0)
    return out


def _additive(stat: AdditiveScore, y: Array) -> Array:
    """``stat(y)`` with the bins looked up on a grid (same bins, same order of the sum)."""
    f = stat.features(y)
    total = np.zeros(f.shape[0])
    for j, (e, t) in enumerate(zip(stat.edges, stat.tables, strict=True)):
        total += t[_bins(np.ascontiguousarray(f[:, j]), e)]
    return total


def _bins(v: Array, edges: Array) -> Array:
    """How many edges are ≤ each value (``edges.size + 1`` for NaN): ``_bin`` of
    `dpcert.audit.stats.features`, i.e. ``searchsorted(edges, v, "right")``."""
    size = edges.size
    if size <= FEW_EDGES:
        idx: Array = np.zeros(v.shape, dtype=np.intp)
        for e in edges:
            idx += v >= e
        return np.where(np.isnan(v), size + 1, idx)
    scale, guess_of_cell, padded = _grid(edges)
    with np.errstate(invalid="ignore", over="ignore"):
        c = ((v - float(edges[0])) * scale).astype(np.intp)   # NaN, ±inf: any cell
    np.clip(c, 0, GRID_CELLS, out=c)
    idx = guess_of_cell[c]
    # exact check: edges[idx-1] <= v < edges[idx] (padded with ∓inf); NaN fails it
    bad = ~((padded[idx] <= v) & (v < padded[idx + 1]))
    if bad.any():
        idx[bad] = np.searchsorted(edges, v[bad], side="right")
    return np.where(np.isnan(v), size + 1, idx)


_GRIDS: dict[int, tuple[Array, float, Array, Array]] = {}


def _grid(edges: Array) -> tuple[float, Array, Array]:
    """(cells per unit, edges ≤ each cell's start, edges padded with ∓inf), cached."""
    got = _GRIDS.get(id(edges))
    if got is not None and got[0] is edges:
        return got[1], got[2], got[3]
    lo, hi = float(edges[0]), float(edges[-1])
    scale = GRID_CELLS / (hi - lo)
    starts = lo + np.arange(GRID_CELLS + 1) / scale
    guess = np.searchsorted(edges, starts, side="right")
    padded = np.concatenate([[-np.inf], edges, [np.inf]])
    if len(_GRIDS) > 256:
        _GRIDS.clear()
    _GRIDS[id(edges)] = (edges, scale, guess, padded)
    return scale, guess, padded


class Membership:
    """Membership of outputs in fixed events, through the cheapest exact route (see module).

    ``coded_rows`` counts the rows answered by the discrete route's lookup tables and
    ``distinct_codes`` the distinct rows the events were evaluated on there."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.events = list(events)
        self._codes: _Codes | None = None
        self._range: tuple[float, float] | None = None
        self._setups = 0
        self.coded_rows = 0
        self.distinct_codes = 0

    def _setup(self, y2: Array) -> None:
        """A code book for the values seen so far and in ``y2``, if they are few integers."""
        self._setups += 1
        self._codes = None
        with np.errstate(invalid="ignore"):
            lo, hi = float(y2.min()), float(y2.max())
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return
        if self._range is not None:
            lo, hi = min(lo, self._range[0]), max(hi, self._range[1])
        self._range = (lo, hi)
        base = int(hi - lo) + 1
        width = y2.shape[1]
        if (lo != np.rint(lo) or lo < -128 or hi > 127
                or width * np.log2(base) > np.log2(MAX_CODES)):
            self._setups = MAX_SETUPS    # not few integers: the direct route from now on
            return
        if base < 2:
            return                       # one value so far: a book once a second one shows
        self._codes = _Codes(lo, base, width, len(self.events))

    def __call__(self, y: Array) -> list[Array]:
        """One boolean array per event: which rows of ``y`` lie in it."""
        if not self.events or y.shape[0] == 0:
            return _direct(y, self.events)
        y2 = y if y.ndim == 2 else y[:, None]
        if self._range is None and self._setups < MAX_SETUPS:
            self._setup(y2)      # (again while no chunk had a finite range)
        book = self._codes
        codes = None if book is None else book.codes(y2)
        if codes is None and self._range is not None and self._setups < MAX_SETUPS:
            with np.errstate(invalid="ignore"):
                lo, hi = float(y2.min()), float(y2.max())
            if lo < self._range[0] or hi > self._range[1]:
                # a value outside the range seen so far (SVT's abort code first seen late): a
                # new book over the widened range (its tables refill from the rows)
                self._setup(y2)
                book = self._codes
                codes = None if book is None else book.codes(y2)
        if book is None or codes is None:
            return _direct(y, self.events)
        fresh = np.flatnonzero(~book.known[codes])
        if fresh.size:
            # rows never seen: the events on the rows themselves (the code stands for them)
            new = codes[fresh]
            hits = _direct(y[fresh], self.events)
            for e, h in enumerate(hits):
                book.member[e, new] = h
            book.known[new] = True
            self.distinct_codes = int(np.count_nonzero(book.known))
        self.coded_rows += y.shape[0]
        return [m[codes] for m in book.member]
