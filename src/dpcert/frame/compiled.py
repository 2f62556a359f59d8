"""The compiled part of a certificate: the plan, schema, budget, charged amount ``m.map(1)`` and
every step of the compiled chain (`compiled_certificate`), read back by
`plan_from_json` and `budget_from_json`, and the per-output noisy statistics of a
release (`release_components`).  Checked by `dpcert.frame.certify`.

Examples
--------
>>> from dpcert.core.measures import PureDP
>>> from dpcert.frame.compile import compile_plan
>>> from dpcert.frame.plan import Count, QueryPlan
>>> plan = QueryPlan((Count(),), group_keys=("g",), public_keys=(("a",), ("b",)))
>>> m = compile_plan(plan, PureDP(1), schema={"g": "str"}, backend=None)
>>> compiled_certificate(m, plan, PureDP(1), {"g": "str"})["charged_exact"]
'1'
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dpcert._version import __version__
from dpcert.core._describe import jsonable
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP
from dpcert.core.params import param_mapping, param_number
from dpcert.core.trace import trace
from dpcert.errors import InvalidParameter
from dpcert.frame.plan import (
    DEFAULT_AUTO_SHARE,
    Aggregate,
    Count,
    CountDistinct,
    Mean,
    Quantile,
    QueryPlan,
    Sum,
    Variance,
)

if TYPE_CHECKING:
    from dpcert._types import JSON

__all__ = ["FORMAT", "budget_from_json", "budget_json", "compiled_certificate",
           "plan_from_json", "release_components"]

FORMAT = "dpcert-compiled-certificate/1"
_AGGREGATES: dict[str, type[Aggregate]] = {
    c.__name__: c for c in (Count, CountDistinct, Sum, Mean, Variance, Quantile)}
_MEASURES: dict[str, type[Measure]] = {"PureDP": PureDP, "ApproxDP": ApproxDP, "ZCDP": ZCDP}


def budget_json(budget: Measure) -> dict[str, JSON]:
    """The JSON form of a budget, read back by `budget_from_json`."""
    return {"measure": type(budget).__name__, "value": jsonable(budget.require_value())}


def budget_from_json(d: Mapping[str, Any]) -> Measure:
    """The budget recorded by `compiled_certificate`."""
    cls = _MEASURES.get(str(d.get("measure")))
    if cls is None:
        raise InvalidParameter(f"budget.measure={d.get('measure')!r} is not one of "
                               f"{sorted(_MEASURES)}")
    v = d.get("value")
    args = [Fraction(x) for x in v] if isinstance(v, list) else [Fraction(str(v))]
    return cls(*args)


def plan_from_json(d: Mapping[str, Any]) -> QueryPlan:
    """Rebuild a `QueryPlan` from ``plan.describe()`` (filters are dropped: see
    module docstring)."""
    aggs: list[Aggregate] = []
    for i, a in enumerate(d.get("aggregates", [])):
        cls = _AGGREGATES.get(str(a.get("kind")))
        if cls is None:
            raise InvalidParameter(f"plan.aggregates[{i}].kind={a.get('kind')!r} is unknown")
        kw = {k: v for k, v in a.items() if k not in ("kind", "alias_name", "weight")}
        if kw.get("bounds") is not None:
            kw["bounds"] = tuple(kw["bounds"])
        if "qs" in kw:
            kw["qs"] = tuple(kw["qs"])
        agg: Aggregate = cls(**kw)
        if a.get("alias_name"):
            agg = agg.alias(a["alias_name"])
        aggs.append(agg.weighted(Fraction(str(a.get("weight", 1)))))
    keys = d.get("keys")
    unit = d.get("privacy_unit")
    return QueryPlan(
        tuple(aggs), group_keys=tuple(d.get("group_keys", ())),
        public_keys=None if keys == "private" else tuple(tuple(k) for k in keys or [[]]),
        privacy_unit=None if unit in (None, "row") else str(unit),
        max_groups=_bound(d.get("max_groups", 1)),
        max_rows_per_group=_bound(d.get("max_rows_per_group", 1)),
        sql=None if d.get("sql") is None else str(d["sql"]),
        auto_share=Fraction(str(d.get("auto_share", DEFAULT_AUTO_SHARE))))


def _bound(v: int | str | None) -> int | None:
    """A contribution bound of a plan record (``None``: chosen privately)."""
    return None if v is None else int(v)


def compiled_certificate(m: Measurement, plan: QueryPlan, budget: Measure,
                         schema: Mapping[str, str]) -> dict[str, Any]:
    """A JSON-serialisable certificate of the compiled release ``m`` of ``plan``."""
    import numpy as np

    charged = m.map(1)
    return {
        "format": FORMAT,
        "plan": plan.describe(),
        "schema": dict(schema),
        "budget": budget_json(budget),
        "d_in": "1 privacy unit" if plan.privacy_unit else "1 row",
        "charged": budget.to_json(charged),
        "charged_exact": jsonable(charged),
        "steps": [s.to_json() for s in trace(m, 1)],
        "versions": {"dpcert": __version__, "python": platform.python_version(),
                     "numpy": np.__version__},
    }


def release_components(m: Measurement, plan: QueryPlan, budget: Measure) -> list[dict[str, Any]]:
    """Per output, the compiled noisy statistics it reads (for ``tidy`` and reports): name,
    aggregate, kind, the statistic, its noise scale and, for quantiles, level and ε."""
    from dpcert.frame.compile import _split, plan_stats
    from dpcert.frame.measure_policy import measure_policy

    stats, uses = plan_stats(plan)
    private = plan.public_keys is None
    out: list[dict[str, Any]] = []
    if plan.is_auto:  # the selections first, then the release on what is left
        from dpcert.frame.autobounds import quantities, split_auto

        shares, budget = split_auto(plan, budget)
        out += [{"name": f"select({q})", "aggregate": "(bound selection)",
                 "kind": "select_bounds", "statistic": q, "d_in": "1 privacy unit",
                 "mechanism": "exponential mechanism on a rank score (edge_rank)",
                 "budget": str(shares[q])} for q in quantities(plan)]
    shares, _ = _split(budget, stats, private)
    scales = param_mapping(m.params.get("scales", {}), "scales")
    kinds = {"count": "count", "unit_count": "count_distinct", "fixed_sum": "sum",
             "fixed_sum_sq": "sumsq", "quantile": "quantile"}
    for a in plan.aggregates:
        names = a.names() if isinstance(a, Quantile) else [a.name]
        for n in names:
            for stat in uses[n].values():
                s = stats[stat]
                kind = kinds[s.kind]
                if isinstance(a, CountDistinct) and kind == "count":
                    kind = "count_distinct"
                d: dict[str, Any] = {"name": n if isinstance(a, Quantile) else stat,
                                     "aggregate": a.name, "kind": kind, "statistic": stat,
                                     "d_in": "1 privacy unit"}
                if stat in scales:
                    d["scale"] = scales[stat]
                if s.kind == "quantile":
                    share = shares[stat]
                    eps = measure_policy(budget).quantile_epsilon(share)
                    d.update(mechanism="permute_and_flip", quantile=str(s.level),
                             epsilon=str(eps),
                             role=("ci_low", "value", "ci_high")[s.side + 1])
                out.append(d)
    if private:
        out.append({"name": "select", "aggregate": "(partition selection)", "kind": "select",
                    "threshold": _threshold(m.params.get("threshold"))})
    return out


def _threshold(x: object) -> int | float | None:
    return None if x is None else _number(param_number(x, "threshold"))


def _number(x: Fraction | int | float | str | None) -> int | float | None:
    if x is None or isinstance(x, int):
        return x
    f = Fraction(x)
    return int(f) if f.denominator == 1 else float(f)
