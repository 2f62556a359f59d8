"""Events as versioned JSON: round trips, allow-list, typed errors on bad input."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from dpcert.accounting.codec import event_from_json, event_to_json, summarize
from dpcert.core import events as ev
from dpcert.errors import InvalidParameter, UnsupportedEvent

ALL = [
    ev.PureEvent(0.5),
    ev.BoundedRangeEvent(0.5, neighbours="add_remove"),
    ev.ApproxEvent(1, 1e-6, neighbours="replace_one"),
    ev.ZCDPEvent(Fraction(1, 8)),
    ev.LaplaceEvent(10, 2, neighbours="add_remove"),
    ev.GaussianEvent(1.5, 3),
    ev.DiscreteLaplaceEvent(4, 2),
    ev.DiscreteGaussianEvent(7, 1),
    ev.RandomizedResponseEvent(epsilon=1, categories=4),
    ev.RandomizedResponseEvent(probability=0.75),
    ev.SelfComposedEvent(ev.LaplaceEvent(10), 100),
    ev.ComposedEvent([ev.GaussianEvent(2), ev.LaplaceEvent(3)]),
    ev.PoissonSampledEvent(ev.ComposedEvent([ev.GaussianEvent(4), ev.GaussianEvent(3)]), 0.01),
    ev.SampledWithoutReplacementEvent(ev.PoissonSampledEvent(ev.PureEvent(1), 0.1), 10, 100),
    ev.ComposedEvent([]),
]


@pytest.mark.parametrize("event", ALL, ids=lambda e: type(e).__name__)
def test_round_trip_is_exact(event: ev.Event) -> None:
    text = event_to_json(event)
    back = event_from_json(text)
    assert back == event and repr(back) == repr(event)
    assert event_to_json(back) == text
    assert json.loads(text)["version"] == 1
    assert summarize(event)


def _doc(node: object, version: object = 1) -> str:
    return json.dumps({"format": "dpcert.event", "version": version, "event": node})


@pytest.mark.parametrize("text, match", [
    (_doc({"type": "os.system", "epsilon": "1"}), "unknown"),
    (_doc({"type": "PureEvent", "epsilon": "1", "neighbours": None, "x": 1}), "unexpected"),
    (_doc({"type": "PureEvent"}), "missing"),
    (_doc({"type": "PureEvent", "epsilon": "1", "neighbours": None}, version=2), "version"),
    ("not json", "not JSON"),
    (json.dumps({"format": "other", "version": 1}), "not a dpcert event"),
])
def test_unknown_or_malformed_events_raise_unsupported(text: str, match: str) -> None:
    with pytest.raises(UnsupportedEvent, match=match):
        event_from_json(text)


@pytest.mark.parametrize("node", [
    {"type": "PureEvent", "epsilon": "nan", "neighbours": None},
    {"type": "PureEvent", "epsilon": "-1", "neighbours": None},
    {"type": "PureEvent", "epsilon": 0.5, "neighbours": None},
    {"type": "GaussianEvent", "sigma": "1", "sensitivity": "1", "neighbours": "sideways"},
    {"type": "SelfComposedEvent", "count": 1.5,
     "event": {"type": "PureEvent", "epsilon": "1", "neighbours": None}},
])
def test_bad_values_raise_invalid_parameter(node: dict[str, object]) -> None:
    with pytest.raises(InvalidParameter):
        event_from_json(_doc(node))


def test_decoding_reapplies_nesting_rules() -> None:
    inner = {"type": "LaplaceEvent", "scale": "1", "sensitivity": "1",
             "neighbours": "replace_one"}
    with pytest.raises(InvalidParameter, match="replace-one"):
        event_from_json(_doc({"type": "PoissonSampledEvent", "event": inner, "rate": "1/10"}))
