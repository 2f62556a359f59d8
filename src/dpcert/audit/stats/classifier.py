"""A NumPy logistic-regression likelihood-ratio classifier for multi-dimensional outputs.

DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, *S&P 2021*) audits a mechanism by training a
classifier to tell ``M(x)`` from ``M(x')`` and taking the event "the classifier's score exceeds
a threshold": for a calibrated classifier the score is monotone in the likelihood ratio
``P[M(x) = y] / P[M(x') = y]``, and thresholding it gives the Neyman–Pearson optimal tests.  We
fit an L2-regularised logistic regression by Newton's method (IRLS) on standardised features;
non-finite values (``NaN`` standing for ⊥, ±inf) get an indicator column and value 0.

The score is a fixed function once fitted, so events defined by thresholding it on a *later*
batch are ordinary fixed events: the auditor's bounds stay valid however well or badly the
classifier fits.

Examples
--------
>>> import numpy as np
>>> a = np.array([[0.0, 1.0], [0.2, 0.9], [0.1, 1.2], [0.3, 0.8]])
>>> b = a + np.array([1.0, -1.0])
>>> model = fit_logistic(a, b)
>>> bool(model.decision(a).min() > model.decision(b).max())
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpcert._types import Array
from dpcert.audit.stats.events import Statistic
from dpcert.errors import InvalidParameter

__all__ = ["LogisticScore", "fit_logistic"]

#: Most training rows used per class (the fit is O(rows · features²)).
MAX_TRAIN_ROWS = 30_000
#: Rows × features² budget of one Newton step (fewer rows for wide outputs).
TRAIN_FLOPS = 40_000_000


def _as_2d(y: Array) -> Array:
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1:
        return y[:, None]
    if y.ndim != 2:
        raise InvalidParameter(f"outputs must be 1-D or 2-D arrays, got shape {y.shape}")
    return y


@dataclass(frozen=True, eq=False)
class LogisticScore:
    """A fitted logistic model; ``decision(y)`` is its log-odds that ``y`` came from ``M(x)``."""

    mean: Array
    scale: Array
    indicator_columns: Array
    weights: Array
    bias: float
    transform: Statistic | None = None

    def features(self, y: Array) -> Array:
        """The standardised features (plus non-finite indicators) of outputs ``y``."""
        y = _as_2d(y if self.transform is None else self.transform(y))
        finite = np.isfinite(y)
        z = (np.where(finite, y, 0.0) - self.mean) / self.scale
        z = np.where(finite, z, 0.0)
        if self.indicator_columns.size:
            z = np.concatenate([z, (~finite[:, self.indicator_columns]).astype(np.float64)],
                               axis=1)
        return z

    def decision(self, y: Array) -> Array:
        """The log-odds score of each output (higher: more like ``M(x)``)."""
        raw = _as_2d(y if self.transform is None else self.transform(y))
        # the standardisation folded into the weights (the same arithmetic for every row, so
        # an output's score never depends on the other outputs of its batch)
        d = self.mean.size
        w = self.weights[:d] / self.scale
        fast: Array = np.einsum("ij,j->i", raw, w)
        if np.isfinite(fast).all():
            # every value finite (a non-finite one makes its row's sum inf or NaN, even at
            # weight 0): the general formula below with its masks folded away; the constant is
            # the same einsum on a row of ones, so the scores are equal to the general ones
            shift = np.einsum("ij,j->i", np.ones((1, d)), self.mean * w)[0]
            fast -= shift
            fast += self.bias
            return fast
        finite = np.isfinite(raw)
        out: Array = (np.einsum("ij,j->i", np.where(finite, raw, 0.0), w)
                      - np.einsum("ij,j->i", finite.astype(np.float64), self.mean * w)
                      + self.bias)
        if self.indicator_columns.size:
            out += np.einsum("ij,j->i", (~finite[:, self.indicator_columns]).astype(np.float64),
                             self.weights[d:])
        return out

    def __call__(self, y: Array) -> Array:
        return self.decision(y)

    def describe(self) -> str:
        """A short human description."""
        over = "" if self.transform is None else f" over {self.transform.describe()}"
        return f"logistic score ({self.weights.size} features{over})"


def fit_logistic(a: Array, b: Array, *, l2: float = 1e-3, iterations: int = 15,
                 transform: Statistic | None = None) -> LogisticScore:
    """Fit a logistic regression separating outputs ``a`` (label 1) from ``b`` (label 0).

    Parameters
    ----------
    a, b
        Outputs of ``M(x)`` and ``M(x')``: arrays of shape ``(n,)`` or ``(n, k)``.
    l2
        Ridge penalty per training row (keeps the fit finite on separable data).
    iterations
        Most Newton steps.
    transform
        A fixed feature map applied to outputs first (e.g. a
        `FeatureMap`).
    """
    if transform is not None:
        a, b = transform(a), transform(b)
    width = _as_2d(a).shape[1]
    rows = int(min(MAX_TRAIN_ROWS, max(2_000, TRAIN_FLOPS // (width + 1) ** 2)))
    ya, yb = _as_2d(a)[:rows], _as_2d(b)[:rows]
    if ya.shape[1] != yb.shape[1]:
        raise InvalidParameter(f"outputs have different widths: {ya.shape[1]} != {yb.shape[1]}")
    y = np.concatenate([ya, yb])
    finite = np.isfinite(y)
    safe = np.where(finite, y, np.nan)
    with np.errstate(all="ignore"):
        mean = np.nan_to_num(np.nanmean(safe, axis=0)) if finite.any() else np.zeros(y.shape[1])
        scale = np.nan_to_num(np.nanstd(safe, axis=0)) if finite.any() else np.ones(y.shape[1])
    mean = np.where(np.isfinite(mean), mean, 0.0)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    indicators = np.flatnonzero((~finite).any(axis=0))
    proto = LogisticScore(mean, scale, indicators, np.zeros(0), 0.0)
    x = proto.features(y)
    x = np.concatenate([x, np.ones((x.shape[0], 1))], axis=1)
    t = np.concatenate([np.ones(ya.shape[0]), np.zeros(yb.shape[0])])
    d = x.shape[1]
    w = np.zeros(d)
    lam = l2 * x.shape[0]
    reg = np.full(d, lam)
    reg[-1] = 1e-9 * x.shape[0]  # (almost) no penalty on the bias
    for _ in range(iterations):
        # einsum, not BLAS: a multi-threaded BLAS competes with the mechanism's own threads
        s = np.clip(np.einsum("ij,j->i", x, w), -35.0, 35.0)
        p = 1.0 / (1.0 + np.exp(-s))
        grad = np.einsum("ij,i->j", x, p - t) + reg * w
        hess = np.einsum("ij,ik->jk", x * (p * (1.0 - p))[:, None], x) + np.diag(reg)
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        w = w - step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return LogisticScore(mean, scale, indicators, w[:-1].copy(), float(w[-1]), transform)
