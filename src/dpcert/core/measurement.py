"""Private measurements: randomized maps from a (domain, metric) to a privacy measure.

A `Measurement` is private in the sense that for inputs ``d_in`` apart under
``input_metric``, the output distributions are ``privacy_map(d_in)`` apart under
``output_measure``.  ``M >> f`` post-processes the output with any function and keeps the map.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> m = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum() >> dp.m.then_laplace(25.0)
>>> 0.48 <= float(m.map(1)) <= 0.4801
True
>>> m.check(1, 0.49), m.check(1, 0.47)
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING

from dpcert._numbers import Number
from dpcert._types import JSON, DistanceLike
from dpcert.core._describe import Wiring, frozen_params, jsonable
from dpcert.core.domains import Domain
from dpcert.core.maps import BatchMap, EventMap, Function, PrivacyMap, Releases
from dpcert.core.measures import ExactLoss, Loss, Measure
from dpcert.core.metrics import Metric
from dpcert.core.partial import PartialConstructor
from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert.core.events import Event
    from dpcert.core.transformation import Transformation

__all__ = ["Measurement", "chain_postprocess"]


@dataclass(frozen=True, eq=False)
class Measurement:
    """A private measurement.

    Parameters
    ----------
    input_domain
        The space of inputs.
    input_metric
        How distance between inputs is measured.
    output_measure
        The privacy measure the map is stated in (``PureDP()``, ``ZCDP()``, ...).
    function
        The randomized map; called only on members of ``input_domain``.
    privacy_map
        ``d_in ↦ d_out``: the privacy loss for inputs ``d_in`` apart (monotone in ``d_in``).
    name
        A label, for certificates and reports.
    params
        The constructor's parameters, for certificates and reports.
    event_map
        Optional ``d_in ↦ accounting event`` so accountants can compose this measurement
        tightly (see [`dpcert.accounting`][dpcert.accounting]).
    accuracy_map
        Optional ``alpha ↦ a``, for additive-noise measurements: the half-width ``a`` such that
        ``P(|noise| > a) ≤ alpha`` (per coordinate); see `accuracy`.
    batch_map
        Optional ``(data, n) ↦ n`` independent releases on the same data, vectorised; it must
        have exactly the distribution of ``n`` calls of ``function`` (see `sample`).
    children
        The components a combinator is built from; read by `dpcert.core.trace.trace` for
        certificates.
    wiring
        How the children receive ``d_in``: ``"chain"``, each child gets the previous child's
        ``d_out``; ``"shared"``, all get the parent's.
    proof
        The proof note (a file in ``docs/proofs/``) of the constructor's privacy map.
    """

    input_domain: Domain
    input_metric: Metric
    output_measure: Measure
    function: Function
    privacy_map: PrivacyMap
    name: str = "measurement"
    params: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    event_map: EventMap | None = None
    accuracy_map: Callable[[Fraction], Fraction] | None = None
    batch_map: BatchMap | None = None
    children: tuple[Transformation | Measurement, ...] = ()
    wiring: Wiring = "shared"
    proof: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", frozen_params(self.params))
        object.__setattr__(self, "children", tuple(self.children))

    def __call__(self, data: object) -> object:
        """Run the measurement, after checking ``data`` is in the input domain."""
        self.input_domain.check_member(data)
        return self.function(data)

    def map(self, d_in: DistanceLike) -> ExactLoss:
        """The privacy loss (in ``output_measure``) for inputs at most ``d_in`` apart."""
        d = self.input_metric.validate_d_in(d_in)
        return self.output_measure.validate_distance(self.privacy_map(d), "d_out")

    def check(self, d_in: DistanceLike, d_out: Loss) -> bool:
        """Whether the measurement is ``d_out``-private for inputs ``d_in`` apart."""
        return self.output_measure.compare(self.map(d_in), d_out)

    def event(self, d_in: DistanceLike = 1) -> Event:
        """This measurement as an accounting event at ``d_in`` (see `dpcert.accounting`)."""
        from dpcert.core.events import event_from_distance, relation_for_metric, with_relation

        d = self.input_metric.validate_d_in(d_in)
        if self.event_map is not None:
            ev = self.event_map(d)
        else:
            ev = event_from_distance(self.output_measure, self.map(d))
        return with_relation(ev, relation_for_metric(self.input_metric, d))

    def sample(self, data: object, n: int) -> Releases:
        """``n`` independent releases on ``data`` (each costs the map: for auditing and
        simulation, not for publishing).  Vectorised when the mechanism provides it.

        Examples
        --------
        >>> import dpcert as dp
        >>> m = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=1)
        >>> len(m.sample(0, 5))
        5
        """
        from dpcert._validate import check_size

        count = check_size(n, "n")
        self.input_domain.check_member(data)
        if self.batch_map is not None:
            return self.batch_map(data, count)
        return [self.function(data) for _ in range(count)]

    def accuracy(self, alpha: Number) -> Fraction:
        """Half-width ``a`` with ``P(|noise| > a) ≤ alpha`` (additive-noise measurements only)."""
        from dpcert._validate import check_probability

        if self.accuracy_map is None:
            raise InvalidParameter(f"{self.name} has no additive-noise accuracy statement")
        return self.accuracy_map(check_probability(alpha, "alpha", open_low=True, open_high=True))

    def __rshift__(self, postprocess: Callable[..., object]) -> Measurement:
        return chain_postprocess(self, postprocess)

    def describe(self) -> dict[str, JSON]:
        """A JSON-friendly description (name, parameters, spaces)."""
        return {
            "kind": "measurement",
            "name": self.name,
            "params": {k: jsonable(v) for k, v in self.params.items()},
            "input": f"{self.input_domain!r} / {type(self.input_metric).__name__}",
            "output_measure": type(self.output_measure).__name__,
        }

    def __repr__(self) -> str:
        return (f"Measurement({self.name}: {self.input_domain!r}/"
                f"{type(self.input_metric).__name__} -> {type(self.output_measure).__name__})")


def chain_postprocess(meas: Measurement, post: object) -> Measurement:
    """``meas >> post``: apply a data-independent function to the release (map unchanged).

    Privacy (``docs/proofs/chaining.md``): post-processing cannot increase the privacy loss.
    """
    if isinstance(post, (Measurement, PartialConstructor)):
        raise InvalidParameter(
            f"postprocess={post!r}: only a function or Transformation can follow a Measurement "
            "(use dpcert.c.make_composition to combine measurements)"
        )
    if not callable(post):
        raise InvalidParameter(f"postprocess={post!r} is not callable")
    g = meas.function
    name = getattr(post, "name", getattr(post, "__name__", type(post).__name__))
    batch = meas.batch_map
    return Measurement(
        meas.input_domain, meas.input_metric, meas.output_measure,
        function=lambda x: post(g(x)),
        privacy_map=meas.privacy_map,
        name=f"{meas.name} >> {name}",
        params={"chain": [meas.describe(), {"kind": "postprocess", "name": str(name)}],
                "postprocess": str(name)},
        event_map=meas.event_map,
        batch_map=None if batch is None else (lambda x, n: [post(y) for y in batch(x, n)]),
        children=(meas,),
        wiring="shared",
        proof="chaining.md",
    )
