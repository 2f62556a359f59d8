"""Privacy accounting (alias ``dp.accounting``): events, accountants and the budget ledger.

Events describe what ran (:mod:`dpcert.core.events`); accountants compose them into an
(ε, δ) guarantee.  Each accountant is immutable: ``compose`` returns a new one.

Examples
--------
>>> from dpcert.accounting import ZCDPAccountant, GaussianEvent
>>> acc = ZCDPAccountant().compose(GaussianEvent(sigma=10), 50)
>>> acc.rho
Fraction(1, 4)
"""

from dpcert.accounting.accountant import Accountant
from dpcert.accounting.approx import ApproxAccountant
from dpcert.accounting.pld import PLDAccountant
from dpcert.accounting.pure import PureAccountant
from dpcert.accounting.rdp import RDPAccountant
from dpcert.accounting.zcdp import ZCDPAccountant
from dpcert.core.events import (
    ApproxEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureEvent,
    RandomizedResponseEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPEvent,
    event_from_distance,
)

__all__ = [
    "Accountant",
    "ApproxAccountant",
    "ApproxEvent",
    "ComposedEvent",
    "DiscreteGaussianEvent",
    "DiscreteLaplaceEvent",
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "PLDAccountant",
    "PoissonSampledEvent",
    "PureAccountant",
    "PureEvent",
    "RDPAccountant",
    "RandomizedResponseEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ZCDPAccountant",
    "ZCDPEvent",
    "event_from_distance",
]
