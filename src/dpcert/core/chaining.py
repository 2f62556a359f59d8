"""Chaining with ``>>``: transformation >> transformation, transformation >> measurement,
measurement >> post-processing, and ``then_*`` partial constructors.

This module is a facade: the code lives in `partial` (leaf),
[`measurement`][dpcert.core.measurement] (post-processing) and `transformation`
(chains), which import one another in that direction only.

Chaining checks that the output space of the left side is the input space of the right side and
raises `DomainMismatch` or `MetricMismatch` showing
both sides otherwise.

Privacy of a chain (see ``docs/proofs/chaining.md``): if ``T`` is stable with map ``s`` and ``M``
is private with map ``p``, then ``M ∘ T`` is private with map ``p ∘ s``; post-processing by any
function keeps the map of ``M`` unchanged.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> space >> dp.t.then_sum()  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.InvalidParameter: make_sum needs bounded elements: ... clamp first
"""

from __future__ import annotations

from dpcert.core.measurement import chain_postprocess
from dpcert.core.partial import PartialConstructor, partial
from dpcert.core.transformation import chain

__all__ = ["PartialConstructor", "chain", "chain_postprocess", "partial"]
