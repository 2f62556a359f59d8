"""Events as versioned JSON, for the ledger and certificates.

Format (version 1; these rules never change meaning, a new meaning gets a new version)::

    {"format": "dpcert.event", "version": 1, "event": NODE}
    NODE = {"type": "<event class name>", <field>: <value>, ...}

Privacy parameters are exact fractions written as strings (``"1/10"``), integers as JSON
integers, absent optionals as ``null``; ``neighbours`` is ``"add_remove"``, ``"replace_one"`` or
``null``; wrappers nest their ``event`` / ``events``.  Only the event classes of
`dpcert.core.events` are known (an allow-list): an unknown ``type``, an unknown or missing
field, or a newer ``version`` raises `UnsupportedEvent`; a bad value raises
`InvalidParameter` from the event's own constructor.  Decoding re-runs the
constructors, so every check of a hand-built event (including the nesting rules) applies.

Examples
--------
>>> import json
>>> from dpcert.core.events import PoissonSampledEvent, GaussianEvent
>>> ev = PoissonSampledEvent(GaussianEvent(sigma=1.5), 0.01)
>>> text = event_to_json(ev)
>>> text[:74]
'{"format":"dpcert.event","version":1,"event":{"type":"PoissonSampledEvent"'
>>> json.loads(text)["event"]["event"]
{'type': 'GaussianEvent', 'sigma': '3/2', 'sensitivity': '1', 'neighbours': None}
>>> event_from_json(text) == ev
True
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from dpcert._types import JSON
from dpcert.core import events as _ev
from dpcert.errors import InvalidParameter, UnsupportedEvent

__all__ = ["EVENT_FORMAT_VERSION", "event_from_json", "event_to_json", "summarize"]

#: Version of the JSON event format written by this dpcert.
EVENT_FORMAT_VERSION = 1

#: type name -> (class, fields in constructor order, which fields are keyword-only).
_SCHEMA: dict[str, tuple[type[_ev.Event], tuple[str, ...]]] = {
    "PureEvent": (_ev.PureEvent, ("epsilon", "neighbours")),
    "BoundedRangeEvent": (_ev.BoundedRangeEvent, ("epsilon", "neighbours")),
    "ApproxEvent": (_ev.ApproxEvent, ("epsilon", "delta", "neighbours")),
    "ZCDPEvent": (_ev.ZCDPEvent, ("rho", "neighbours")),
    "LaplaceEvent": (_ev.LaplaceEvent, ("scale", "sensitivity", "neighbours")),
    "GaussianEvent": (_ev.GaussianEvent, ("sigma", "sensitivity", "neighbours")),
    "DiscreteLaplaceEvent": (_ev.DiscreteLaplaceEvent, ("scale", "sensitivity", "neighbours")),
    "DiscreteGaussianEvent": (_ev.DiscreteGaussianEvent, ("sigma", "sensitivity",
                                                          "neighbours")),
    "RandomizedResponseEvent": (_ev.RandomizedResponseEvent, ("epsilon", "categories",
                                                              "probability", "neighbours")),
    "ComposedEvent": (_ev.ComposedEvent, ("events",)),
    "SelfComposedEvent": (_ev.SelfComposedEvent, ("event", "count")),
    "PoissonSampledEvent": (_ev.PoissonSampledEvent, ("event", "rate")),
    "SampledWithoutReplacementEvent": (_ev.SampledWithoutReplacementEvent,
                                       ("event", "sample_size", "population_size")),
}
_MAX_DEPTH = 64


def _node(event: _ev.Event) -> dict[str, JSON]:
    name = type(event).__name__
    if name not in _SCHEMA or _SCHEMA[name][0] is not type(event):
        raise UnsupportedEvent(f"event={event!r} has no JSON form (not a dpcert.core event)")
    out: dict[str, JSON] = {"type": name}
    for f in _SCHEMA[name][1]:
        v = getattr(event, f)
        if f == "events":
            out[f] = [_node(e) for e in v]
        elif f == "event":
            out[f] = _node(v)
        elif isinstance(v, Fraction):
            out[f] = str(v)
        else:
            out[f] = v
    return out


def event_to_json(event: _ev.Event) -> str:
    """The canonical JSON text of ``event`` (compact, keys in schema order)."""
    if not isinstance(event, _ev.Event):
        raise InvalidParameter(f"event={event!r} is not an accounting Event")
    doc = {"format": "dpcert.event", "version": EVENT_FORMAT_VERSION, "event": _node(event)}
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True)


def _frac(v: object, where: str) -> Fraction:
    if not isinstance(v, str):
        raise InvalidParameter(f"{where}={v!r} must be an exact fraction written as a string")
    try:
        return Fraction(v)
    except (ValueError, ZeroDivisionError) as e:
        raise InvalidParameter(f"{where}={v!r} is not a fraction") from e


def _decode(node: JSON, depth: int) -> _ev.Event:
    if depth > _MAX_DEPTH:
        raise UnsupportedEvent(f"event nesting deeper than {_MAX_DEPTH}")
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise UnsupportedEvent(f"event node={node!r} is not an object with a 'type'")
    name = node["type"]
    if name not in _SCHEMA:
        raise UnsupportedEvent(
            f"event type={name!r} is unknown to this dpcert (known: {sorted(_SCHEMA)})"
        )
    cls, fields = _SCHEMA[name]
    extra = set(node) - set(fields) - {"type"}
    missing = set(fields) - set(node)
    if extra or missing:
        raise UnsupportedEvent(
            f"event type={name!r}: unexpected fields {sorted(extra)}, missing {sorted(missing)}"
        )
    args: dict[str, Any] = {}
    for f in fields:
        v = node[f]
        if f == "events":
            if not isinstance(v, list):
                raise UnsupportedEvent(f"{name}.events={v!r} must be a list")
            args[f] = [_decode(x, depth + 1) for x in v]
        elif f == "event":
            args[f] = _decode(v, depth + 1)
        elif f == "neighbours" or v is None:
            args[f] = v
        elif f in ("categories", "count", "sample_size", "population_size"):
            if not isinstance(v, int) or isinstance(v, bool):
                raise InvalidParameter(f"{name}.{f}={v!r} must be an integer")
            args[f] = v
        else:
            args[f] = _frac(v, f"{name}.{f}")
    return cls(**args)


def event_from_json(text: str) -> _ev.Event:
    """Decode `event_to_json` text (see the module docstring for the errors)."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError) as e:
        raise UnsupportedEvent(f"event text={text!r:.80} is not JSON") from e
    if not isinstance(doc, dict) or doc.get("format") != "dpcert.event":
        raise UnsupportedEvent(f"event text={text!r:.80} is not a dpcert event")
    version = doc.get("version")
    if not isinstance(version, int) or not 1 <= version <= EVENT_FORMAT_VERSION:
        raise UnsupportedEvent(
            f"event format version={version!r} is not understood by this dpcert "
            f"(knows 1..{EVENT_FORMAT_VERSION}); upgrade dpcert"
        )
    return _decode(doc.get("event"), 0)


def summarize(event: _ev.Event) -> str:
    """A short human description, e.g. ``100 × Laplace(scale 10)``.

    Examples
    --------
    >>> from dpcert.core.events import ComposedEvent, LaplaceEvent, GaussianEvent
    >>> summarize(ComposedEvent([LaplaceEvent(10), GaussianEvent(2, 3)]))
    'Laplace(scale 10) + Gaussian(σ 2, Δ 3)'
    """
    def frac(x: Fraction) -> str:
        return str(x) if x.denominator < 1000 else f"{float(x):.6g}"

    def one(e: _ev.Event) -> str:
        if isinstance(e, _ev.ComposedEvent):
            return " + ".join(one(x) for x in e.events) or "nothing"
        if isinstance(e, _ev.SelfComposedEvent):
            return f"{e.count} × {one(e.event)}"
        if isinstance(e, _ev.PoissonSampledEvent):
            return f"Poisson(q {frac(e.rate)})[{one(e.event)}]"
        if isinstance(e, _ev.SampledWithoutReplacementEvent):
            return f"WOR({e.sample_size}/{e.population_size})[{one(e.event)}]"
        name = type(e).__name__.removesuffix("Event")
        parts = []
        for k, v in e._fields().items():
            if v is None or k == "neighbours" or (k == "sensitivity" and v == 1):
                continue
            sym = {"sigma": "σ", "epsilon": "ε", "delta": "δ", "rho": "ρ", "sensitivity": "Δ",
                   "categories": "k", "probability": "p"}.get(k, k)
            parts.append(f"{sym} {frac(v) if isinstance(v, Fraction) else v}")
        return f"{name}({', '.join(parts)})"

    return one(event)
