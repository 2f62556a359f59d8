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
from typing import Any

from dpcert.core._describe import jsonable
from dpcert.core.measurement import Measurement
from dpcert.core.transformation import Transformation

__all__ = ["PROOF_NOTES", "Step", "proof_note", "trace"]

#: Proof notes (files in ``docs/proofs/``) of constructors that predate the ``proof`` field,
#: by component name.  A component's own ``proof`` takes precedence.
PROOF_NOTES: dict[str, str] = {
    "clamp": "clamp.md", "sum": "sum.md", "count": "count.md", "mean": "mean.md",
    "variance": "variance.md", "count_distinct": "count_distinct.md",
    "count_by_categories": "histogram.md", "histogram": "histogram.md",
    "resize": "resize.md", "cast": "row_maps.md", "impute_constant": "row_maps.md",
    "select_column": "row_maps.md", "laplace": "laplace.md", "gaussian": "gaussian.md",
    "gaussian_approx": "gaussian_approx.md", "partition_selection": "threshold.md",
    "quantile": "quantile.md", "quantiles": "quantile.md",
    "report_noisy_max": "exponential.md", "sparse_vector": "sparse_vector.md",
    "randomized_response_bool": "randomized_response.md",
    "randomized_response": "randomized_response.md", "rappor": "randomized_response.md",
    "partition": "composition.md",
}


def proof_note(component: Any) -> str | None:
    """The proof note of a component: its ``proof``, else the registry entry for its name
    (``composition[3]`` → ``composition``, ``zCDP(laplace)`` → the conversions note)."""
    own = getattr(component, "proof", None)
    if own:
        return str(own)
    name = str(getattr(component, "name", ""))
    base = name.split("[", 1)[0]
    if base in ("composition", "parallel"):
        return "composition.md"
    if base.startswith(("zCDP(", "approxDP(")) or "(" in base:
        return "conversions.md"
    return PROOF_NOTES.get(base)


@dataclass(frozen=True)
class Step:
    """One constructor of a chain, evaluated at the distance it sees."""

    constructor: str
    kind: str  # "transformation" or "measurement"
    params: dict[str, Any]
    d_in: Any
    d_out: Any
    proof: str | None
    depth: int

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly: exact numbers as strings (``"1/3"``), tuples as lists."""
        return {"constructor": self.constructor, "kind": self.kind, "params": self.params,
                "d_in": jsonable(self.d_in), "d_out": jsonable(self.d_out),
                "proof": self.proof, "depth": self.depth}


def _params(component: Any) -> dict[str, Any]:
    return {k: jsonable(v) for k, v in component.params.items()
            if k not in ("chain", "parts", "inner", "postprocess")}


def trace(component: Transformation | Measurement, d_in: Any, _depth: int = 0
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
