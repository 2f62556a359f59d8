"""``AuditOptions``: everything about an audit except the mechanism and its pairs, in one value.

``audit(mechanism, pairs, AuditOptions(...))`` is the call.  The options may also be given as
keywords, ``audit(mechanism, claimed=..., samples=...)``: each keyword is an
`AuditOptions` field (with ``options`` given too, the keywords replace those fields);
any other keyword is refused with `InvalidParameter` naming it.  Code
written for the keyword form keeps working unchanged; new code should build the options once
and pass them (see ``docs/auditor.md``, "How to audit").

Examples
--------
>>> import dpcert as dp
>>> o = AuditOptions(claimed=dp.PureDP(1.0), samples=10_000, seed=1)
>>> with_keywords(o, {"seed": 2}).seed, o.seed
(2, 1)
>>> try:
...     with_keywords(None, {"sample": 10})
... except InvalidParameter as e:
...     print(str(e)[:47])
audit() has no option 'sample'; the options are
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

from dpcert.audit.kernel.claims import Claimable
from dpcert.audit.kernel.pairs import Adjacency
from dpcert.audit.search.base import Progress, Search
from dpcert.audit.search.standard import StandardSearch
from dpcert.errors import InvalidParameter

__all__ = ["AuditKeywords", "AuditOptions", "with_keywords"]


@dataclass(frozen=True, eq=False)
class AuditOptions:
    """How to audit.

    Attributes
    ----------
    claimed
        The claimed privacy: ``PureDP(ε)``, ``ApproxDP(ε, δ)``, ``ZCDP(ρ)`` (audited as
        (ε, δ)-DP at ``δ = zcdp_delta`` with the tight conversion of Canonne, Kamath &
        Steinke 2020) or a number ε.  A measurement's own ``map(1)`` when omitted.
    samples
        Estimation draws per input of each chosen pair.  When omitted, the auditor times a
        pilot batch and fits the audit into ``seconds`` (default 30 s), capped at 10⁸.
    seconds
        Time budget, checked between chunks of draws (with ``samples`` given, ``samples``
        becomes a cap).
    confidence
        Probability that ``epsilon_lower`` (and ``delta_lower`` and ``curve``) are valid.
    search_samples
        Search draws per input of each pair (default: planned from the budget).
    input_size, sensitivity, adjacency
        For black boxes without ``pairs``: vector length for the StatDP patterns (scalar
        ``0`` vs ``±sensitivity`` when omitted) and which patterns are neighbours.
    candidates
        How many (pair, event) choices go to the estimation phase.
    ladder
        How many smaller rays nested inside the best choice's event also go to it (on the
        same draws).  The union bound covers ``candidates + ladder`` events.  Pure-DP claims
        only (at δ > 0 small events are swamped by δ).
    zcdp_delta
        The δ at which a zCDP claim is audited.
    name
        Label for the result (defaults to the mechanism's name).
    progress
        Called with a line of text as the audit proceeds (the CLI prints it to stderr).
    seed
        Seeds the auditor's own randomness (the Poisson sample sizes of the ratio bound); by
        default fresh OS entropy.  It must not depend on the mechanism's outputs.
    workers
        Processes drawing the estimation batch (this one and ``workers − 1`` forked ones,
        `dpcert.audit.kernel.parallel`); on a time budget the search's screens draw in as
        many.  The processes must draw independent outputs: dpcert measurements do (they read
        the OS CSPRNG); a black box holding its own generator needs ``worker_init``.  Outputs
        that repeat between processes stop the audit with `AuditFailed`.
    worker_init
        Called as ``worker_init(w)`` in each worker process before it draws, with
        ``w = 1 … workers−1`` in the estimation's and ``w = workers … 2·workers−2`` in the
        search's, to give the mechanism's generator a stream of its own for each ``w``.
    search
        The search plug-in ([`Search`][dpcert.audit.search.base.Search]) that chooses the events.
    """

    claimed: Claimable = None
    samples: int | None = None
    seconds: float | None = None
    confidence: float = 0.95
    search_samples: int | None = None
    input_size: int | None = None
    sensitivity: float = 1.0
    adjacency: Adjacency = "linf"
    candidates: int = 2
    ladder: int = 4
    zcdp_delta: float = 1e-6
    name: str | None = None
    progress: Progress | None = None
    seed: int | None = None
    workers: int = 1
    worker_init: Callable[[int], None] | None = None
    search: Search = field(default_factory=StandardSearch)


class AuditKeywords(TypedDict, total=False):
    """The keyword form of `AuditOptions` (``audit(m, claimed=..., samples=...)``)."""

    claimed: Claimable
    samples: int | None
    seconds: float | None
    confidence: float
    search_samples: int | None
    input_size: int | None
    sensitivity: float
    adjacency: Adjacency
    candidates: int
    ladder: int
    zcdp_delta: float
    name: str | None
    progress: Progress | None
    seed: int | None
    workers: int
    worker_init: Callable[[int], None] | None
    search: Search


FIELDS = tuple(f.name for f in dataclasses.fields(AuditOptions))


def with_keywords(options: AuditOptions | None, keywords: AuditKeywords
                  ) -> AuditOptions:
    """``options`` (default ``AuditOptions()``) with the fields named in ``keywords`` replaced;
    a keyword that is not a field is refused, naming it."""
    if options is not None and not isinstance(options, AuditOptions):
        raise InvalidParameter(f"options={options!r} must be an AuditOptions (or None)")
    for key in keywords:
        if key not in FIELDS:
            raise InvalidParameter(f"audit() has no option {key!r}; the options are "
                                   f"AuditOptions' fields: {', '.join(FIELDS)}")
    base = AuditOptions() if options is None else options
    return dataclasses.replace(base, **keywords) if keywords else base
