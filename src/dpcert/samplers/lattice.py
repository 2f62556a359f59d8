"""Float noise that cannot leak: integer noise on the lattice ``2**k ℤ`` (Mironov 2012).

Adding textbook float Laplace noise to a float leaks the input through the pattern of
representable outputs (I. Mironov, "On significance of the least significant bits for
differential privacy", CCS 2012).  Here every input is clamped to ``[-2**(k+51), 2**(k+51)]``,
rounded to the nearest multiple of ``2**k`` (exactly), shifted by *exact* integer noise of scale
``scale / 2**k`` and returned as the float ``n * 2**k`` with ``|n| <= 2**53 - 1``.  Whatever the
input, every output is an exact multiple of ``2**k``, so the set of possible outputs does not
depend on the input.  The privacy map must charge the rounding: sensitivity
``Δ + rounding_allowance(k)`` per coordinate, ``rounding_allowance(k) = 2**k + 2**(k-2)`` (the
``2**(k-2)`` pays for a correctly rounded input landing exactly on a lattice midpoint; see
docs/proofs/lattice.md).

``k`` defaults to `lattice_exponent`: ``floor(log2(scale)) - 40``, so the lattice spacing is
about ``2**-40`` of the noise scale: rounding is far below the noise, and the integer noise has
scale in ``[2**40, 2**41)``.

Examples
--------
>>> from fractions import Fraction
>>> from dpcert.samplers import InsecureSeededSource
>>> lattice_exponent(Fraction(1))
-40
>>> y = lattice_laplace(np.array([0.0, 0.1]), 1.0, source=InsecureSeededSource(0))
>>> bool((np.ldexp(y, 40) == np.rint(np.ldexp(y, 40))).all())
True
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import partial

import numpy as np
import numpy.typing as npt

from dpcert._numbers import is_real_number
from dpcert._validate import check_int, check_positive
from dpcert.errors import InvalidParameter
from dpcert.samplers._limits import MAX_SCALE
from dpcert.samplers.entropy import EntropySource
from dpcert.samplers.gaussian import discrete_gaussian
from dpcert.samplers.laplace import discrete_laplace

__all__ = [
    "LATTICE_BITS",
    "lattice_exponent",
    "lattice_gaussian",
    "lattice_indices",
    "lattice_laplace",
    "rounding_allowance",
]

#: The integer noise has scale in [2**LATTICE_BITS, 2**(LATTICE_BITS + 1)) by default.
LATTICE_BITS = 40

#: Largest integer the output lattice index may reach (keeps ``n * 2**k`` exact).
_NMAX = 2**53 - 1


def _floor_log2(x: Fraction) -> int:
    k = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** k > x:
        k -= 1
    return k


def lattice_exponent(scale: object) -> int:
    """``floor(log2(scale)) - LATTICE_BITS``, computed exactly (so ``2**k <= scale * 2**-40``).

    Examples
    --------
    >>> lattice_exponent(3), lattice_exponent(Fraction(1, 3)), lattice_exponent(2.0**60)
    (-39, -42, 20)
    """
    return _floor_log2(check_positive(scale, "scale")) - LATTICE_BITS


def rounding_allowance(k: int) -> Fraction:
    """Per-coordinate sensitivity allowance for rounding to ``2**k ℤ``: ``2**k + max(2**(k-2),
    2**-1074)``.

    If the inputs are correctly rounded floats ``fl(S)``, ``fl(S')`` of reals at distance ``d``,
    their lattice indices differ by at most ``floor((d + rounding_allowance(k)) / 2**k)``
    (``docs/proofs/lattice.md``).  The ``2**k`` pays for rounding each side by up to half a step;
    the extra term pays for ties: ``fl(S)`` can land exactly on a lattice midpoint while ``S`` lies
    up to half a float spacing on the other side, and ties-to-even may then round away from ``S``.
    Below the clamp bound ``2**(k+51)`` floats are spaced at most ``2**(k-2)`` apart (``2**-1074``
    among subnormals), and the two sides together lose at most one spacing.

    Examples
    --------
    >>> rounding_allowance(-20) == Fraction(5, 4) * Fraction(2) ** -20
    True
    """
    kk = check_int(k, "k")
    return Fraction(2) ** kk + max(Fraction(2) ** (kk - 2), Fraction(2) ** -1074)


def _prepare(values: object, scale_name: str, scale: object, k: int | None
             ) -> tuple[npt.NDArray[np.float64], bool, int, Fraction]:
    s = check_positive(scale, scale_name)
    kk = _floor_log2(s) - LATTICE_BITS if k is None else check_int(k, "k")
    if not -1074 <= kk <= 971:
        raise InvalidParameter(f"k={kk!r} must be in [-1074, 971] (lattice must be floats)")
    if s / Fraction(2) ** kk > MAX_SCALE:
        raise InvalidParameter(f"k={kk!r} too small for {scale_name}={scale!r}: "
                               f"{scale_name} / 2**k must be <= 2**52")
    bad = f"values={values!r} must be a float or a 1-D float64 array"
    if is_real_number(values):
        scalar = True
    elif isinstance(values, (np.ndarray, list, tuple)):
        scalar = False
    else:
        raise InvalidParameter(bad)
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidParameter(bad) from e
    if not scalar and arr.ndim != 1:
        raise InvalidParameter(f"values must be 1-D, got shape {arr.shape}")
    x = arr.reshape(-1)
    if np.isnan(x).any():
        raise InvalidParameter("values must not contain NaN")
    return x, scalar, kk, s / Fraction(2) ** kk


_CHUNK = 1 << 16


def _indices(part: npt.NDArray[np.float64], k: int) -> npt.NDArray[np.int64]:
    buf = np.clip(part, -np.ldexp(1.0, k + 51), np.ldexp(1.0, k + 51))
    np.ldexp(buf, -k, out=buf)
    np.rint(buf, out=buf)  # ties to even
    return buf.astype(np.int64)  # exact: |n| <= 2^51


def lattice_indices(values: object, k: int) -> npt.NDArray[np.int64]:
    """The lattice indices ``n`` the samplers add noise to: ``rint(clamp(x, ±2**(k+51)) / 2**k)``.

    Examples
    --------
    >>> lattice_indices([0.5, 1.5, 2.5, -7.0, 1e300], 0).tolist()
    [0, 2, 2, -7, 2251799813685248]
    """
    kk = check_int(k, "k")
    if not -1074 <= kk <= 971:
        raise InvalidParameter(f"k={kk!r} must be in [-1074, 971] (lattice must be floats)")
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if np.isnan(x).any():
        raise InvalidParameter("values must not contain NaN")
    return _indices(x, kk)


def _finish(x: npt.NDArray[np.float64], noise: Callable[[int], npt.NDArray[np.int64]], k: int,
            scalar: bool) -> float | npt.NDArray[np.float64]:
    y = np.empty(x.size, dtype=np.float64)
    for start in range(0, x.size, _CHUNK):  # chunks keep the temporaries in cache
        part = x[start:start + _CHUNK]
        n = _indices(part, k)
        n += noise(part.size)
        np.clip(n, -_NMAX, _NMAX, out=n)
        np.ldexp(n.astype(np.float64), k, out=y[start:start + _CHUNK])  # exact: |n| < 2^53
    return float(y[0]) if scalar else y


def lattice_laplace(values: object, scale: object, *, k: int | None = None,
                    source: EntropySource | None = None
                   ) -> float | npt.NDArray[np.float64]:
    """Add exact Laplace noise of ``scale`` to floats, on the lattice ``2**k ℤ``.

    Parameters
    ----------
    values : float or 1-D array of float64
        The inputs (NaN refused; infinities clamp to ``±2**(k+51)``).
    scale : Fraction, int or float
        Noise scale ``b``: the integer noise is discrete Laplace with scale ``b / 2**k``.
    k : int, optional
        Lattice exponent; defaults to `lattice_exponent` of ``scale``.
    source : EntropySource, optional
        Randomness (defaults to the OS CSPRNG).

    Returns
    -------
    float or ndarray of float64
        Exact multiples of ``2**k`` (a Python float for a scalar input).

    Examples
    --------
    >>> from dpcert.samplers import InsecureSeededSource
    >>> y = lattice_laplace(0.1, 1.0, source=InsecureSeededSource(1))
    >>> isinstance(y, float) and (y * 2**40).is_integer()
    True
    """
    x, scalar, kk, s = _prepare(values, "scale", scale, k)
    return _finish(x, partial(discrete_laplace, s, source=source), kk, scalar)


def lattice_gaussian(values: object, sigma: object, *, k: int | None = None,
                     source: EntropySource | None = None
                   ) -> float | npt.NDArray[np.float64]:
    """Add exact Gaussian noise of standard deviation ``sigma`` to floats, on ``2**k ℤ``.

    Same contract as `lattice_laplace`; the integer noise is the discrete Gaussian with
    parameter ``sigma / 2**k`` (Canonne, Kamath & Steinke 2020).

    Examples
    --------
    >>> from dpcert.samplers import InsecureSeededSource
    >>> y = lattice_gaussian(np.zeros(3), 2.0, source=InsecureSeededSource(1))
    >>> y.dtype, bool((np.ldexp(y, 39) % 1 == 0).all())
    (dtype('float64'), True)
    """
    x, scalar, kk, s = _prepare(values, "sigma", sigma, k)
    return _finish(x, partial(discrete_gaussian, s, source=source), kk, scalar)
