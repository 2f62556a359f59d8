"""Privacy accounting (alias ``dp.accounting``): events, accountants and the budget ledger.

Events describe what ran (`dpcert.core.events`); accountants compose them into an
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
from dpcert.accounting.calibrate import calibrate, gaussian_sigma, max_count
from dpcert.accounting.codec import event_from_json, event_to_json
from dpcert.accounting.filters import PrivacyFilter
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
    relation_of,
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
    "PrivacyFilter",
    "PoissonSampledEvent",
    "PureAccountant",
    "PureEvent",
    "RDPAccountant",
    "RandomizedResponseEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ZCDPAccountant",
    "ZCDPEvent",
    "calibrate",
    "event_from_distance",
    "event_from_json",
    "event_to_json",
    "gaussian_sigma",
    "max_count",
    "relation_of",
]
