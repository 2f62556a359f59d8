"""What the measure of a release's budget decides, decided in one place.

A budget's measure picks the noise (Laplace for ε, Gaussian for ρ), the norm of the
sensitivities it is calibrated to (L1, L2), how a quantile's share of the budget reads as the ε
of its permute-and-flip, and whether keys may be selected privately (only with δ > 0).  The
compiler, the accuracy planner and the release's component table ask `measure_policy`
instead of testing the budget's type each.

Examples
--------
>>> from dpcert.core.measures import ApproxDP, ZCDP
>>> p = measure_policy(ZCDP(Fraction(1, 2)))
>>> p.norm, p.mechanism, p.quantile_epsilon(Fraction(1, 8))
('L2', 'discrete_gaussian', Fraction(1, 2))
>>> measure_policy(ApproxDP(1, Fraction(1, 10**6))).split(private=True)
(Fraction(1, 1), Fraction(1, 1000000))
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from dpcert._directed import sqrt_up
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP, pair_loss, scalar_loss
from dpcert.errors import InvalidParameter, MeasureMismatch

__all__ = ["MeasurePolicy", "measure_policy"]


@dataclass(frozen=True)
class MeasurePolicy:
    """The decisions a budget's measure makes for a compiled release."""

    budget: Measure
    #: ρ-zCDP: Gaussian noise on L2 sensitivities; otherwise Laplace on L1.
    zcdp: bool
    #: (ε, δ)-DP: private keys may be selected; a public-key composition is converted to it.
    approx: bool

    @property
    def norm(self) -> Literal["L1", "L2"]:
        return "L2" if self.zcdp else "L1"

    @property
    def mechanism(self) -> Literal["discrete_gaussian", "discrete_laplace"]:
        return "discrete_gaussian" if self.zcdp else "discrete_laplace"

    def quantile_epsilon(self, share: Fraction) -> Fraction:
        """The ε of a permute-and-flip paid by ``share`` (ε-DP ⇒ ε²/2-zCDP, so under ρ the
        ε is ``√(2·share)``, here the upper-rounded ``2·share/sqrt_up(2·share)`` ≤ it)."""
        return 2 * share / sqrt_up(2 * share) if self.zcdp else share

    def split(self, *, private: bool) -> tuple[Fraction, Fraction | None]:
        """``(total, δ)``: the ε or ρ the statistics share and ApproxDP's δ (None otherwise);
        refuses private keys without δ > 0 and a total that is not positive."""
        value = self.budget.require_value("budget")
        if not self.approx:
            if private:
                raise InvalidParameter(
                    f"budget={type(self.budget).__name__}(...) cannot pay for private keys "
                    "(selection needs δ): use ApproxDP(epsilon, delta) or give the public keys")
            total, delta = scalar_loss(value, "budget"), None
        else:
            total, delta = pair_loss(value, "budget")
            if private and delta == 0:
                raise InvalidParameter("private keys need delta > 0 in the ApproxDP budget")
        if total <= 0:
            raise InvalidParameter(f"budget={self.budget!r} must be positive")
        return total, delta


def measure_policy(budget: Measure) -> MeasurePolicy:
    """The policy of ``budget``'s measure (PureDP, ApproxDP or ZCDP; others are refused)."""
    if not isinstance(budget, (PureDP, ApproxDP, ZCDP)):
        raise MeasureMismatch(f"budget={budget!r}: the engine supports PureDP, ApproxDP, ZCDP")
    return MeasurePolicy(budget, zcdp=isinstance(budget, ZCDP), approx=isinstance(budget, ApproxDP))
