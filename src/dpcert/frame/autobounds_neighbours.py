"""The neighbour harness for releases with bounds chosen privately (`dpcert.frame.autobounds`).

`check_auto_neighbours` runs the *real* selection steps
(`selection_steps`: ``admit >> filter >> one number per unit``) on
a table and on each neighbour (`dpcert.frame.neighbours.neighbours` of the plan with
concrete bounds) and asserts what the proof note ``docs/proofs/frame_autobounds.md`` claims:
the two multisets differ by at most ``t.map(1)`` entries, and every candidate's edge-rank score
moves by at most ``t.map(1)`` (sensitivity 1 per entry).  The release that follows is checked
by `check_neighbours` at the two ends of every choice (smallest
and largest contribution bounds and value bounds).

Examples
--------
>>> import polars as pl, dpcert as dp
>>> from dpcert.testing import check_neighbours
>>> df = pl.DataFrame({"u": [1, 1, 2, 3], "g": ["a", "b", "a", "b"], "x": [1.0, 2.0, 3.0, 4.0]})
>>> q = (dp.Session(df, "u", budget=dp.PureDP(1.0)).query().group_by("g", keys=["a", "b"])
...      .agg(dp.count(), dp.sum("x")).bound_contributions())
>>> check_neighbours(df, q.plan(), dp.PureDP(1.0)) >= 30
True
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import TypedDict

import numpy as np
import polars as pl

from dpcert.backends.polars import PolarsBackend
from dpcert.core.measurement import Measurement
from dpcert.core.measures import Measure
from dpcert.core.transformation import Transformation
from dpcert.frame.admit import admit_plan
from dpcert.frame.autobounds import concrete_plan, selection_steps
from dpcert.frame.neighbours import check_neighbours, neighbours
from dpcert.frame.plan import QueryPlan
from dpcert.mechanisms.edge_rank import edge_scores

__all__ = ["End", "check_any_neighbours", "check_auto_neighbours"]

class End(TypedDict):
    """One end of every choice: the contribution bounds ``n`` and the value ``bounds``."""

    n: int
    bounds: tuple[float, float]


#: Concrete values the release after the choices is checked at (the ends of every choice).
ENDS: tuple[End, ...] = (
    {"n": 1, "bounds": (0.0, 2.0**-20)},
    {"n": 3, "bounds": (-10.0, 1e6)},
    {"n": 1 << 16, "bounds": (-(2.0**64), 2.0**64)},
)


def _ends(plan: QueryPlan, end: End) -> QueryPlan:
    chosen: dict[str, object] = {q: end["n"] for q in plan.auto_contributions}
    chosen["bounds"] = {c: end["bounds"] for c in plan.auto_columns}
    return concrete_plan(plan, chosen)


def _multiset(v: object) -> Counter[float]:
    return Counter(float(x) for x in np.asarray(v).tolist())


def check_auto_neighbours(df: pl.DataFrame, plan: QueryPlan, budget: Measure, *,
                          seed: int = 0, extra: list[tuple[str, pl.DataFrame]] | None = None
                          ) -> int:
    """Check every selection step and the release at the ends of every choice on ``df`` and
    its neighbours; returns the number of (neighbour, check) pairs, raises ``AssertionError``
    naming the neighbour and the step."""
    backend = PolarsBackend()
    admission = admit_plan(plan, backend, df.lazy())
    pre, steps = selection_steps(plan, budget, schema=backend.schema(df.lazy()),
                                 backend=backend, admission=admission)
    tables = [*neighbours(df, _ends(plan, ENDS[1])), *(extra or [])]
    n = 0
    for s in steps:
        t: Transformation | Measurement = (s.transformation if pre is None
                                            else pre >> s.transformation)
        d = t.map(1)
        assert isinstance(d, (int, Fraction))
        base = t(df.lazy())
        sa = edge_scores(base, s.candidates, s.k, s.side)
        for what, nb in tables:
            other = t(nb.lazy())
            ma, mb = _multiset(base), _multiset(other)
            moved = sum(((ma - mb) + (mb - ma)).values())
            assert moved <= d, f"{what}: {s.name} moved {moved} entries > {d}"
            sb = edge_scores(other, s.candidates, s.k, s.side)
            assert int(np.max(np.abs(sa - sb), initial=0)) <= d, (
                f"{what}: {s.name} scores moved by more than {d}")
            n += 1
    for end in ENDS:
        n += check_neighbours(df, _ends(plan, end), budget, seed=seed, extra=extra)
    return n


def check_any_neighbours(df: pl.DataFrame, plan: QueryPlan, budget: Measure, *, seed: int = 0,
                         extra: list[tuple[str, pl.DataFrame]] | None = None) -> int:
    """`check_auto_neighbours` for a plan with omitted bounds, else
    `dpcert.frame.neighbours.check_neighbours` (what ``dpcert.testing`` exports)."""
    if plan.is_auto:
        return check_auto_neighbours(df, plan, budget, seed=seed, extra=extra)
    return check_neighbours(df, plan, budget, seed=seed, extra=extra)
