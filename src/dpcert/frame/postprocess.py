"""Post-processing of a compiled release: estimates and honest intervals from noisy integers.

Everything here reads only noisy values and public half-widths, so it is post-processing (the
privacy map is unchanged, ``docs/proofs/chaining.md``).  A half-width ``h`` at level ``α``
satisfies ``P(|noise| > h) ≤ α`` (``Measurement.accuracy``).  A mean uses the *same* noisy count
as a released count (no second noisy count); its interval combines the sum's and the count's
half-widths at ``α/2`` each, so it holds with probability ≥ ``1 − α`` by a union bound; a variance
splits ``α`` three ways.

Examples
--------
>>> import numpy as np
>>> v, lo, hi = mean_interval(np.array([50.0]), np.array([10.0]), 2.0, 1.0, (0.0, 10.0))
>>> float(v[0]), float(lo[0]) <= 5.0 <= float(hi[0])
(5.0, True)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dpcert._types import Array, FloatArray

__all__ = ["ReleaseTable", "mean_interval", "variance_interval"]

class ReleaseTable(dict[str, list[object]]):
    """A release as columns (``{name: list}``): the key columns, then per output ``<name>``,
    ``<name>_ci_low``, ``<name>_ci_high``.

    As an array (what `dpcert.audit.audit` reads) it is a fixed-length float vector: the
    released values in order when the keys are public; with private keys, the number of
    released keys followed by each value column's total.

    Examples
    --------
    >>> t = ReleaseTable({"g": ["a", "b"], "n": [3.0, 4.0]}, values=("n",), private=False)
    >>> np.asarray(t).tolist(), np.asarray(ReleaseTable(t, values=("n",), private=True)).tolist()
    ([3.0, 4.0], [2.0, 7.0])
    """

    def __init__(self, columns: dict[str, list[object]], *, values: tuple[str, ...],
                 private: bool) -> None:
        super().__init__(columns)
        self.value_columns = values
        self.private = private

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> Array:
        cols = [np.asarray(self[v], dtype=np.float64) for v in self.value_columns]
        if self.private:
            n = len(self[self.value_columns[0]]) if self.value_columns else 0
            out = np.array([float(n), *(float(c.sum()) for c in cols)])
        else:
            out = np.concatenate(cols) if cols else np.zeros(0)
        return out if dtype is None else out.astype(dtype)


def mean_interval(s: FloatArray, n: FloatArray, hs: float, hn: float, bounds: tuple[float, float]
                  ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Mean ``s/n`` clipped to ``bounds`` and its interval from the sum's and count's
    half-widths (``[lo, hi]`` when the count's interval reaches below 1)."""
    lo, hi = bounds
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.clip(np.where(n >= 1, s / np.maximum(n, 1), (lo + hi) / 2), lo, hi)
        n_lo, n_hi = np.maximum(n - hn, 0), n + hn
        cand = np.stack([(s - hs) / n_lo, (s - hs) / n_hi, (s + hs) / n_lo, (s + hs) / n_hi])
        ok = n_lo >= 1
        low = np.where(ok, np.nanmin(cand, axis=0), lo)
        high = np.where(ok, np.nanmax(cand, axis=0), hi)
    return mean, np.clip(low, lo, hi), np.clip(high, lo, hi)


def variance_interval(s: FloatArray, sq: FloatArray, n: FloatArray, hs: float, hq: float, hn: float,
                      bounds: tuple[float, float], shift: tuple[float, float] = (0.0, 0.0)
                      ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Population variance ``E[x²] − E[x]²`` with ``E[x] = s/n + shift[0]`` and
    ``E[x²] = sq/n + shift[1]`` (``shift``: the per-row offsets of centred sums), clipped to
    ``[0, ((hi − lo)/2)²]``, and an interval by interval arithmetic over the three noisy inputs.

    Examples
    --------
    >>> v, lo, hi = variance_interval(np.array([20.0]), np.array([50.0]), np.array([10.0]),
    ...                               1.0, 1.0, 1.0, (0.0, 4.0))
    >>> float(v[0]), float(lo[0]) <= 1.0 <= float(hi[0])
    (1.0, True)
    """
    lo, hi = bounds
    a, b = shift
    vmax = ((hi - lo) / 2) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        nn = np.maximum(n, 1)
        var = np.clip(sq / nn + b - (s / nn + a) ** 2, 0, vmax)
        n_lo, n_hi = np.maximum(n - hn, 1), n + hn
        ex2_lo = np.minimum((sq - hq) / n_hi, (sq - hq) / n_lo) + b
        ex2_hi = np.maximum((sq + hq) / n_lo, (sq + hq) / n_hi) + b
        m_c = a + np.stack([(s - hs) / n_lo, (s - hs) / n_hi, (s + hs) / n_lo,
                            (s + hs) / n_hi])
        m_lo, m_hi = np.clip(m_c.min(axis=0), lo, hi), np.clip(m_c.max(axis=0), lo, hi)
        m2_hi = np.maximum(m_lo**2, m_hi**2)
        m2_lo = np.where((m_lo <= 0) & (m_hi >= 0), 0.0, np.minimum(m_lo**2, m_hi**2))
        low = np.where(n - hn >= 1, ex2_lo - m2_hi, 0.0)
        high = np.where(n - hn >= 1, ex2_hi - m2_lo, vmax)
    return var, np.clip(low, 0, vmax), np.clip(high, 0, vmax)
