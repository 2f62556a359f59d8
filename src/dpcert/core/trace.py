"""Walk a chain and evaluate every step's map: the body of a certificate.

``trace(m, d_in)`` yields one `Step` per constructor in a transformation or measurement:
its name, parameters, the ``d_in`` it sees, the ``d_out`` its own map gives there, and its proof
note.  Chains (``>>``) are structural: they contribute no step of their own, and each child sees
the previous child's ``d_out``.  Other composites (composition, conversions, post-processing,
keyed release) are steps themselves and their children are evaluated at the composite's ``d_in``.
Every number comes from evaluating a map, never from a description.

Examples
--------
>>> import dpcert as dp
>>> from dpcert.core.trace import trace
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> m = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum() >> dp.m.then_laplace(25.0)
>>> [(s.constructor, str(s.d_in), str(s.d_out)) for s in trace(m, 1)][:2]
[('clamp', '1', '1'), ('sum', '1', '12')]
>>> [s.proof for s in trace(m, 1)]
['clamp.md', 'sum.md', 'laplace.md']
>>> [s.constructor for s in trace(m >> round, 1)]
['clamp', 'sum', 'laplace', 'postprocess(round)']
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcert._types import JSON, DistanceLike
from dpcert.core._describe import jsonable
from dpcert.core.measurement import Measurement
from dpcert.core.measures import Loss
from dpcert.core.transformation import Transformation

__all__ = ["Step", "proof_note", "trace"]

def proof_note(component: Transformation | Measurement) -> str | None:
    """The proof note (a file of ``docs/proofs/``) a component was built with: every
    constructor passes ``proof=`` (``tests/test_proof_links.py`` checks each one)."""
    return component.proof


@dataclass(frozen=True)
class Step:
    """One constructor of a chain, evaluated at the distance it sees."""

    constructor: str
    kind: str  # "transformation" or "measurement"
    params: dict[str, JSON]
    d_in: DistanceLike
    d_out: Loss
    proof: str | None
    depth: int

    def to_json(self) -> dict[str, JSON]:
        """JSON-friendly: exact numbers as strings (``"1/3"``), tuples as lists."""
        return {"constructor": self.constructor, "kind": self.kind, "params": self.params,
                "d_in": jsonable(self.d_in), "d_out": jsonable(self.d_out),
                "proof": self.proof, "depth": self.depth}


def _params(component: Transformation | Measurement) -> dict[str, JSON]:
    return {k: jsonable(v) for k, v in component.params.items()
            if k not in ("chain", "parts", "inner", "postprocess")}


def trace(component: Transformation | Measurement, d_in: DistanceLike, _depth: int = 0
          ) -> Iterator[Step]:
    """Every step of ``component`` with the ``d_in`` it sees and its ``d_out`` (see module)."""
    d = component.input_metric.validate_d_in(d_in)
    if component.wiring == "chain" and component.children:
        for child in component.children:
            yield from trace(child, d, _depth)
            if isinstance(child, Transformation):
                d = child.map(d)
        return
    kind = "measurement" if isinstance(component, Measurement) else "transformation"
    post = component.params.get("postprocess")
    if post is not None:  # post-processing reads the release: it comes after its input
        for child in component.children:
            yield from trace(child, d, _depth)
        yield Step(f"postprocess({post})", kind, _params(component), d, component.map(d),
                   proof_note(component), _depth)
        return
    yield Step(component.name, kind, _params(component), d, component.map(d),
               proof_note(component), _depth)
    for child in component.children:
        yield from trace(child, d, _depth + 1)
