"""The auditor: empirical lower bounds on a mechanism's privacy loss, from its samples.

``audit(mechanism, pairs, AuditOptions(claimed=..., samples=... or seconds=...))`` runs a
search plug-in (`StandardSearch` by default) on one batch of samples to choose a few
events, then measures the chosen events on a fresh batch and turns the counts into a lower
bound on ε with exact Clopper–Pearson bounds (a Poissonized ratio bound for pure DP) and a
union bound.  A claim is *violated* when the lower bound exceeds it: that is evidence, at the
stated confidence, of a privacy bug.

The package has three parts: `dpcert.audit.kernel` (pairs, claims, the fresh-draw
estimation, the bounds and the verdict: what the soundness argument covers),
`dpcert.audit.stats` (the fixed statistics events are made of) and
`dpcert.audit.search` (the searches, behind `Search`, on the time shares of one
`Schedule`).  The kernel imports nothing from the searches; a search hands it only
`Choice` values (a pair, a fixed event, a direction).
User guide: ``docs/auditor.md``; design: ``docs/dev/auditor-design.md``.

Examples
--------
>>> import dpcert as dp
>>> from dpcert.audit import AuditOptions, audit
>>> def leaky(x, n):          # reveals whether x > 0, always
...     return [x > 0] * n
>>> r = audit(leaky, None, AuditOptions(claimed=dp.PureDP(1.0), samples=1_000, seed=0))
>>> r.violated, r.witness.event.describe() in ("output ≤ 0", "output ≥ 1")
(True, True)
"""

from dpcert.audit.auditor import AuditResult, Witness, audit
from dpcert.audit.kernel.bounds import cp_lower, cp_upper
from dpcert.audit.kernel.claims import Claim, resolve_claim
from dpcert.audit.kernel.outputs import Sampler, measurement_sampler, one_at_a_time
from dpcert.audit.kernel.pairs import measurement_pairs, scalar_pairs, statdp_pairs
from dpcert.audit.options import AuditOptions
from dpcert.audit.search.base import Search, SearchOutcome, SearchTask
from dpcert.audit.search.given import GivenEvents
from dpcert.audit.search.schedule import SCHEDULE, Schedule
from dpcert.audit.search.standard import StandardSearch
from dpcert.audit.stats.events import Event

__all__ = [
    "SCHEDULE",
    "AuditOptions",
    "AuditResult",
    "Claim",
    "Event",
    "GivenEvents",
    "Sampler",
    "Schedule",
    "Search",
    "SearchOutcome",
    "SearchTask",
    "StandardSearch",
    "Witness",
    "audit",
    "cp_lower",
    "cp_upper",
    "measurement_pairs",
    "measurement_sampler",
    "one_at_a_time",
    "resolve_claim",
    "scalar_pairs",
    "statdp_pairs",
]
