"""Group privacy: a measurement private for neighbours is private for groups of k.

From the loss ``d`` at d_in = 1 (Dwork & Roth 2014, Thm. 2.2; Vadhan 2017, Lemma 2.2; Bun &
Steinke 2016, Prop. 1.9), at d_in = k:

* pure: kε;
* approx: (kε, δ·Σ_{i<k} e^{iε}), which is at most the textbook (kε, k·e^{(k−1)ε}·δ);
* zCDP: k²ρ.

Rényi DP has no simple group rule here and is refused.  Proof: ``docs/proofs/composition.md``.

Examples
--------
>>> from fractions import Fraction
>>> import dpcert as dp
>>> dp.c.group_privacy_map(dp.PureDP(), Fraction(1, 2), 3)
Fraction(3, 2)
>>> dp.c.group_privacy_map(dp.ZCDP(), Fraction(1, 8), 2)
Fraction(1, 2)
"""

from __future__ import annotations

from fractions import Fraction
from typing import overload

from dpcert._directed import exp_up
from dpcert._validate import check_int
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, ApproxDP, Loss, Measure, PureDP
from dpcert.errors import InvalidParameter, MeasureMismatch

__all__ = ["group_privacy_map", "make_group_privacy"]


@overload
def group_privacy_map(measure: PureDP | ZCDP, d_out_1: Loss, k: int) -> Fraction: ...
@overload
def group_privacy_map(measure: ApproxDP, d_out_1: Loss, k: int) -> tuple[Fraction, Fraction]: ...
@overload
def group_privacy_map(measure: Measure, d_out_1: Loss, k: int) -> Loss: ...
def group_privacy_map(measure: Measure, d_out_1: Loss, k: int) -> Loss:
    """The loss at d_in = ``k`` implied by the loss ``d_out_1`` at d_in = 1 (upper bound)."""
    k = check_int(k, "k", minimum=0)
    measure.validate_distance(d_out_1, "d_out_1")
    if k == 0:
        return measure.zero()
    if isinstance(measure, PureDP):
        return k * measure.validate_distance(d_out_1, "d_out_1")
    if isinstance(measure, ZCDP):
        return k * k * measure.validate_distance(d_out_1, "d_out_1")
    if isinstance(measure, ApproxDP):
        e, dl = measure.validate_distance(d_out_1, "d_out_1")
        # δ Σ_{i<k} e^{iε}, each e^{iε} replaced by an upper bound.
        factor = sum((exp_up(i * e) for i in range(k)), Fraction(0))
        return k * e, min(Fraction(1), dl * factor)
    raise MeasureMismatch(f"group privacy is not available for {type(measure).__name__}")


def make_group_privacy(measurement: Measurement) -> Measurement:
    """The same measurement with the privacy map derived from ``map(1)`` by group privacy.

    Use it for measurements whose map is only proven at d_in = 1; integer d_in only.
    """
    if not isinstance(measurement, Measurement):
        raise InvalidParameter(f"measurement={measurement!r} is not a Measurement")
    measure = measurement.output_measure
    group_privacy_map(measure, measure.zero(), 1)  # refuse unsupported measures now
    at_one = measurement.map(1)

    def privacy_map(d_in: int | Fraction) -> Loss:
        if isinstance(d_in, Fraction) and d_in.denominator != 1:
            raise InvalidParameter(f"d_in={d_in!r} must be an integer group size")
        return group_privacy_map(measure, at_one, int(d_in))

    return Measurement(
        measurement.input_domain, measurement.input_metric, measure,
        function=measurement.function,
        privacy_map=privacy_map,
        name=f"group({measurement.name})",
        params={"inner": measurement.describe()}, proof="composition.md",
    )
