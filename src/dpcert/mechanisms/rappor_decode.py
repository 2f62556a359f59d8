"""Decoding RAPPOR-with-Bloom-filter reports: bit counts per cohort, then candidate strings by
non-negative least squares (Erlingsson, Pihur & Korolova 2014, Section 4).

1. **Bit counts.**  In cohort ``j`` with ``N_j`` reports, ``t_ij`` of which set bit ``i``,
   ``E[t_ij] = p*·N_j + (q* − p*)·B_ij`` where ``B_ij`` is the number of clients of the cohort
   whose Bloom filter has bit ``i``; so ``B̂_ij = (t_ij − p*·N_j)/(q* − p*)`` is unbiased.
   Given the clients' values the ``t_ij`` are sums of independent coins, with variance
   ``Σ P(1 − P) ≤ N_j·ȳ(1 − ȳ)`` (concavity), estimated by ``t(N_j − t)/(N_j − 1)``:
   a conservative variance.
2. **Candidates.**  With candidate strings ``c``, the design matrix has the entry
   ``(N_j/N)·[bit i of c's Bloom filter in cohort j]`` at row ``(j, i)``, column ``c``, so the
   coefficient of ``c`` is its total count ``n_c`` (a candidate falls in cohort ``j`` in
   proportion ``N_j/N``).  The fit is NumPy non-negative least squares (Lawson & Hanson 1974,
   active set); on its support it equals ordinary least squares, whose heteroscedasticity-
   robust ("sandwich") covariance with the variances of step 1 gives the standard errors.
3. **Which strings are there.**  A candidate is *significant* when its z-score exceeds the
   one-sided Bonferroni level ``Φ⁻¹(1 − α/C)`` over the ``C`` candidates (the paper's rule).

What the standard errors do not cover (stated, not hidden): strings missing from the candidate
list (their bits are absorbed by others), the randomness of the cohort assignment around
``N_j/N``, and the data-dependent choice of the support.  Everything here is post-processing of
the reports and costs no privacy.

Examples
--------
>>> import numpy as np
>>> import dpcert as dp
>>> from dpcert.samplers import InsecureSeededSource
>>> params = dp.m.RapporBloomParams(num_bits=32, num_hashes=2, num_cohorts=8,
...                                 f=0.25, p=0.25, q=0.75)
>>> m = dp.m.make_rappor_bloom(params, input_domain=dp.VectorDomain(dp.AtomDomain(str)),
...                            source=InsecureSeededSource(1))
>>> values = ["a"] * 6000 + ["b"] * 3000 + ["c"] * 1000
>>> dec = dp.m.decode_rappor_bloom(m(values), params, ["a", "b", "c", "d", "e"])
>>> dec.significant.tolist()
[True, True, True, False, False]
>>> bool(abs(dec.counts[0] - 6000) < 4 * dec.std_errors[0])
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from dpcert._numbers import Number
from dpcert._validate import check_probability
from dpcert.errors import InvalidParameter
from dpcert.mechanisms.rappor_bloom import RapporBloomParams, RapporReports

__all__ = ["BitCountEstimate", "RapporDecoding", "decode_rappor_bloom", "estimate_bit_counts",
           "nnls"]

F64 = npt.NDArray[np.float64]

#: Iteration cap of the active-set NNLS, as a multiple of the number of columns.
NNLS_ITERATIONS_PER_COLUMN = 5


@dataclass(frozen=True, eq=False)
class BitCountEstimate:
    """Unbiased per-cohort estimates of how many clients' Bloom filters set each bit.

    Attributes
    ----------
    reports : numpy.ndarray, shape (num_cohorts,)
        ``N_j``, reports per cohort.
    counts : numpy.ndarray, shape (num_cohorts, num_bits)
        ``B̂_ij``, the estimated count of reports with bit ``i`` set in cohort ``j``.
    variances : numpy.ndarray, shape (num_cohorts, num_bits)
        The (conservative) estimated variance of ``counts``.
    """

    reports: npt.NDArray[np.int64]
    counts: F64
    variances: F64


def _check(reports: object, params: object) -> RapporReports:
    if not isinstance(params, RapporBloomParams):
        raise InvalidParameter(f"params={params!r} must be a RapporBloomParams")
    if not isinstance(reports, RapporReports):
        raise InvalidParameter(f"reports={reports!r} must be RapporReports")
    if reports.bits.shape[1] != params.num_bits:
        raise InvalidParameter(
            f"reports have {reports.bits.shape[1]} bits, params.num_bits={params.num_bits}")
    if len(reports) and (reports.cohorts.min() < 0
                         or reports.cohorts.max() >= params.num_cohorts):
        raise InvalidParameter(f"reports have cohorts outside [0, {params.num_cohorts})")
    if reports.bits.size and reports.bits.max() > 1:
        raise InvalidParameter("report bits must be 0 or 1")
    return reports


def estimate_bit_counts(reports: RapporReports, params: RapporBloomParams) -> BitCountEstimate:
    """Step 1: ``B̂_ij = (t_ij − p*·N_j)/(q* − p*)`` with conservative variances.

    Examples
    --------
    >>> import dpcert as dp
    >>> params = dp.m.RapporBloomParams(num_bits=8, num_cohorts=2)
    >>> est = dp.m.estimate_bit_counts(dp.m.make_rappor_bloom(params)("x"), params)
    >>> est.counts.shape
    (2, 8)
    """
    rep = _check(reports, params)
    m = params.num_cohorts
    n_j = np.bincount(rep.cohorts, minlength=m).astype(np.int64)
    t = np.zeros((m, params.num_bits), dtype=np.int64)
    order = np.argsort(rep.cohorts, kind="stable")
    present = np.flatnonzero(n_j)
    if present.size:
        starts = np.concatenate([[0], np.cumsum(n_j[present])[:-1]])
        t[present] = np.add.reduceat(rep.bits[order], starts, axis=0, dtype=np.int64)
    ps, gap = float(params.p_star), float(params.q_star - params.p_star)
    nf = n_j[:, None].astype(np.float64)
    counts = (t - ps * nf) / gap
    with np.errstate(invalid="ignore", divide="ignore"):
        var_t = np.where(nf > 1, t * (nf - t) / np.maximum(nf - 1, 1), 0.0)
    return BitCountEstimate(n_j, counts, var_t / (gap * gap))


def nnls(a: F64, b: F64) -> F64:
    """Non-negative least squares ``argmin_{x ≥ 0} ‖a x − b‖₂`` (Lawson–Hanson active set).

    Examples
    --------
    >>> import numpy as np
    >>> nnls(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([2.0, -1.0])).tolist()
    [2.0, 0.0]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ncol = a.shape[1]
    gram, atb = a.T @ a, a.T @ b
    x = np.zeros(ncol)
    passive = np.zeros(ncol, dtype=bool)
    tol = 10 * np.finfo(np.float64).eps * max(float(np.abs(gram).sum(axis=0).max(initial=0)), 1.0) \
        * max(a.shape)

    def solve(mask: npt.NDArray[np.bool_]) -> F64:
        s = np.zeros(ncol)
        idx = np.flatnonzero(mask)
        if idx.size:
            sub = gram[np.ix_(idx, idx)]
            try:  # LU is several times faster than the SVD of lstsq on these small systems
                s[idx] = np.linalg.solve(sub, atb[idx])
            except np.linalg.LinAlgError:  # collinear columns (colliding candidates)
                s[idx] = np.linalg.lstsq(sub, atb[idx], rcond=None)[0]
        return s

    budget = NNLS_ITERATIONS_PER_COLUMN * max(ncol, 1) + 10
    w = atb - gram @ x
    while (~passive).any() and float(np.where(passive, -np.inf, w).max()) > tol:
        passive[int(np.argmax(np.where(passive, -np.inf, w)))] = True
        s = solve(passive)
        while passive.any() and s[passive].min() <= 0:
            budget -= 1
            if budget < 0:
                raise InvalidParameter("nnls did not converge (a degenerate design matrix)")
            neg = passive & (s <= 0)
            step = float(np.min(x[neg] / (x[neg] - s[neg])))
            x = x + step * (s - x)
            passive &= x > tol
            s = solve(passive)
        x = s
        w = atb - gram @ x
        budget -= 1
        if budget < 0:
            raise InvalidParameter("nnls did not converge (a degenerate design matrix)")
    out: F64 = np.maximum(x, 0.0)
    return out


@dataclass(frozen=True, eq=False)
class RapporDecoding:
    """Estimated counts of candidate strings among ``n`` reports.

    Attributes
    ----------
    candidates : tuple of str
    n : int
    counts : numpy.ndarray
        Non-negative least-squares estimates of each candidate's number of clients.
    std_errors, ci_low, ci_high : numpy.ndarray
        Sandwich standard errors and the ``confidence`` normal interval (lower end clamped at
        0) on the fit's support; NaN for candidates the fit set to 0.
    z_scores : numpy.ndarray
        ``counts / std_errors`` (0 off the support).
    significant : numpy.ndarray of bool
        ``z > Φ⁻¹(1 − alpha/C)``: detected at family-wise level ``alpha`` (Bonferroni).
    """

    candidates: tuple[str, ...]
    n: int
    counts: F64
    std_errors: F64
    ci_low: F64
    ci_high: F64
    z_scores: F64
    significant: npt.NDArray[np.bool_]
    confidence: float
    alpha: float

    @property
    def frequencies(self) -> F64:
        """``counts / n``."""
        out: F64 = self.counts / max(self.n, 1)
        return out

    def as_dict(self) -> dict[str, float]:
        """``{candidate: estimated count}`` for the significant candidates."""
        return {c: float(v) for c, v, s in zip(self.candidates, self.counts.tolist(),
                                               self.significant.tolist(), strict=True) if s}


def _design(params: RapporBloomParams, candidates: tuple[str, ...],
            share: F64) -> F64:
    """Rows ``(j, i)``, columns candidates: ``share_j·[bit i of c in cohort j]``."""
    m, c = params.num_cohorts, len(candidates)
    vals = np.tile(np.asarray(candidates, dtype=object), m)
    coh = np.repeat(np.arange(m), c)
    bits = params.bloom_filters(vals, coh).reshape(m, c, params.num_bits).astype(np.float64)
    x: F64 = (bits * share[:, None, None]).transpose(0, 2, 1).reshape(m * params.num_bits, c)
    return x


def decode_rappor_bloom(reports: RapporReports, params: RapporBloomParams,
                        candidates: Sequence[str], *, confidence: Number = 0.95,
                        alpha: Number = 0.05) -> RapporDecoding:
    """Estimate how many clients hold each candidate string (steps 1–3 above).

    Parameters
    ----------
    reports : RapporReports
        Reports of `make_rappor_bloom` (one per client) or fresh
        instantaneous reports, one per client, of memoized PRRs.
    params : RapporBloomParams
        The parameters the reports were made with.
    candidates : sequence of str
        Distinct strings to look for.
    confidence : float in (0, 1)
        Coverage of the per-candidate normal intervals.
    alpha : float in (0, 1)
        Family-wise level of the detection test.

    Returns
    -------
    RapporDecoding
    """
    rep = _check(reports, params)
    conf = float(check_probability(confidence, "confidence", open_low=True, open_high=True))
    level = float(check_probability(alpha, "alpha", open_low=True, open_high=True))
    if isinstance(candidates, str):
        raise InvalidParameter(f"candidates={candidates!r} must be a sequence of strings")
    cands = tuple(candidates)
    if not cands or not all(isinstance(c, str) for c in cands) or len(set(cands)) != len(cands):
        raise InvalidParameter(
            f"candidates={list(cands)[:5]!r}... must be distinct strings, at least one")
    n = len(rep)
    if n < 2:
        raise InvalidParameter(f"need at least 2 reports, got n={n}")
    est = estimate_bit_counts(rep, params)
    x = _design(params, cands, est.reports / n)
    y = est.counts.reshape(-1)
    v = est.variances.reshape(-1)
    counts = nnls(x, y)
    se = np.full(len(cands), np.nan)
    support = np.flatnonzero(counts > 0)
    if support.size:
        xs = x[:, support]
        bread = np.linalg.pinv(xs.T @ xs)
        cov = bread @ (xs.T * v) @ xs @ bread
        se[support] = np.sqrt(np.maximum(np.diag(cov), 0.0))
    z = NormalDist().inv_cdf(0.5 + conf / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        zs = np.where(se > 0, counts / se, 0.0)
    zs = np.nan_to_num(zs, nan=0.0)
    threshold = NormalDist().inv_cdf(1 - level / len(cands))
    return RapporDecoding(
        candidates=cands, n=n, counts=counts, std_errors=se,
        ci_low=np.maximum(counts - z * se, 0.0), ci_high=counts + z * se,
        z_scores=zs, significant=zs > threshold, confidence=conf, alpha=level,
    )
