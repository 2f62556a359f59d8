"""Private measurements (alias ``dp.m``): ``make_*`` constructors and ``then_*`` partials."""

from dpcert.mechanisms.gaussian import make_gaussian, then_gaussian
from dpcert.mechanisms.laplace import make_laplace, then_laplace

__all__ = [
    "make_gaussian",
    "make_laplace",
    "then_gaussian",
    "then_laplace",
]
