"""Continual release in the engine: per-period counts (or integer sums) and their running
totals over a time column, per group of public keys, with one unit's rows bounded over the
whole stream.

* **Batch** (`ContinualQuery.release`): all periods are in the data; one charge, one table.
* **Online** (`ContinualQuery.open`, then `ContinualStream.append` per period): the
  stream's whole budget is charged once when it is opened (session filter and ledger), every
  append releases the next step, and the certificate covers the whole stream.

The periods (``T`` of them) and the group keys (``G``) are public.  Bounding: each unit keeps at
most ``max_contributions`` rows over the whole stream — its earliest periods first, rows of one
period in an order drawn by a keyed hash — so its kept rows depend on its own rows (and the key)
only, and adding or removing a unit changes the ``G×T`` table of counts by at most
``R = max_contributions`` in L1 (sums of an integer column clipped to ``[lo, hi]``: by
``R·max(|lo|, |hi|)``).  Each group's series is released by
`dpcert.mechanisms.make_continual_sum` with noise drawn when the stream starts; the ``G``
releases together cost the one-group map at that ``d`` (block-diagonal: the
columns are those of one group; the streaming factor also pays its rounding term once per group
a unit touches; ``docs/proofs/continual.md``, *In the engine*).  The online
stream gives exactly the batch release's numbers: every output of step ``t`` depends on periods
``≤ t`` and the noise only.

Examples
--------
>>> from fractions import Fraction
>>> import polars as pl
>>> import dpcert as dp
>>> df = pl.DataFrame({"pid": [1, 1, 2, 3, 3, 4], "day": [1, 2, 1, 2, 3, 3],
...                    "region": ["n", "n", "s", "n", "s", "s"]})
>>> sess = dp.Session(df, privacy_unit="pid", budget=dp.ZCDP(1))
>>> q = sess.continual("day", periods=[1, 2, 3], by="region", keys=["n", "s"],
...                    max_contributions=2, method="factorization")
>>> rel = q.release(dp.ZCDP(Fraction(1, 2)))
>>> rel.table.columns[:5]
['region', 'day', 'count', 'running_total', 'running_total_se']
>>> rel.table.height, float(sess.spent) <= 0.5
(6, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, overload

import numpy as np
import numpy.typing as npt
import polars as pl

from dpcert._directed import sqrt_bounds
from dpcert._validate import check_int, check_probability
from dpcert.core.domains import AtomDomain, VectorDomain
from dpcert.core.events import event_from_distance, with_relation
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP, pair_loss, scalar_loss
from dpcert.core.metrics import L1Distance
from dpcert.errors import InvalidParameter, ReleaseFailed
from dpcert.frame.checks import check_public_keys, check_unit_column, internal_prefix
from dpcert.mechanisms.continual import ContinualPlan, continual_plan
from dpcert.samplers import default_source

if TYPE_CHECKING:
    from dpcert._numbers import Number
    from dpcert._types import JSON, Array
    from dpcert.accounting.filters import Amount
    from dpcert.frame.aliases import KeyList, KeyValue, PublicKey
    from dpcert.frame.session import Session

__all__ = ["ContinualQuery", "ContinualRelease", "ContinualStream"]

ENGINE_METHODS = ("tree", "factorization", "streaming")


@dataclass(frozen=True)
class ContinualRelease:
    """A released series: one row per (group, period) and the certificate."""

    table: pl.DataFrame
    certificate: dict[str, JSON]

    def to_polars(self) -> pl.DataFrame:
        """Group keys, the period, ``count`` or ``sum`` (this period), ``running_total``, its
        standard error ``running_total_se`` (exact, from the noise covariance) and an interval
        ``running_total_ci_low/high`` holding it with probability ≥ 1 − alpha
        ([`half_widths`][dpcert.mechanisms.continual.ContinualPlan.half_widths])."""
        return self.table


@dataclass(frozen=True)
class ContinualQuery:
    """A continual release over ``time``: build with `Session.continual`."""

    session: Session
    time: str
    periods: tuple[KeyValue, ...]
    group_keys: tuple[str, ...] = ()
    public_keys: tuple[PublicKey, ...] = ((),)
    max_contributions: int = 1
    method: str = "tree"
    value: str | None = None
    bounds: tuple[int, int] = (0, 1)
    _checked: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def create(cls, session: Session, time: str, periods: Sequence[KeyValue], *,
               by: str | Sequence[str] | None = None, keys: KeyList | None = None,
               max_contributions: int = 1, method: str = "tree", value: str | None = None,
               bounds: tuple[int, int] | None = None) -> ContinualQuery:
        """Check the arguments (reads the schema only) and build the query.

        ``value=None`` counts rows; ``value="col"`` sums an integer column clipped to
        ``bounds=(lo, hi)`` (integers; nulls count as 0 before clipping)."""
        if session._backend.name != "polars":
            raise InvalidParameter("continual releases run on the Polars backend; "
                                   f"this session's data is {session._backend.name}")
        if session.privacy_unit is None:
            raise InvalidParameter("continual releases need privacy_unit: a unit's rows over the "
                                   "whole stream are bounded together")
        by_cols = (by,) if isinstance(by, str) else tuple(by or ())
        if by_cols and keys is None:
            raise InvalidParameter(f"by={by!r} needs keys=[...]: the public group keys")
        pk = ((),) if not by_cols else tuple(
            tuple(k) if isinstance(k, (tuple, list)) else (k,) for k in keys or ())
        if not isinstance(periods, (list, tuple)) or not periods:
            raise InvalidParameter(f"periods={periods!r} must be a non-empty list of the "
                                   "public time periods, in order")
        if method not in ENGINE_METHODS:
            raise InvalidParameter(f"method={method!r} must be one of "
                                   f"{', '.join(ENGINE_METHODS)} in the engine")
        q = cls(session, time, tuple(periods), by_cols, pk,
                check_int(max_contributions, "max_contributions", minimum=1), method,
                value, _int_bounds(value, bounds))
        q._schema_check()
        return q

    def _frame(self) -> pl.LazyFrame:
        """The session's data: a Polars LazyFrame (`create` refuses the other backends)."""
        lf = self.session._lf
        assert isinstance(lf, pl.LazyFrame)
        return lf

    def _schema_check(self) -> None:
        schema = dict(self._frame().collect_schema())
        unit = self.session.privacy_unit
        missing = [c for c in (self.time, *self.group_keys) if c not in schema]
        if missing:
            raise InvalidParameter(f"columns {missing} are not in the data: it has "
                                   f"{sorted(schema)}")
        check_unit_column(unit, (*self.group_keys, self.time), schema)
        if self.value is not None:
            if self.value not in schema:
                raise InvalidParameter(f"value={self.value!r} is not a column: the data has "
                                       f"{sorted(schema)}")
            if not schema[self.value].is_integer():
                raise InvalidParameter(f"value={self.value!r} has type {schema[self.value]}: "
                                       "continual sums need an integer column; cast or round it")
        period_df = check_public_keys([self.time], [(p,) for p in self.periods], schema)
        key_df = (check_public_keys(self.group_keys, self.public_keys, schema)
                  if self.group_keys else pl.DataFrame())
        self._checked.update(periods=period_df, keys=key_df)

    @property
    def steps(self) -> int:
        """``T``: the number of periods."""
        return len(self.periods)

    @property
    def sensitivity(self) -> int:
        """A unit's largest total contribution (L1) over the stream: ``R`` rows, each adding 1
        (counts) or at most ``max(|lo|, |hi|)`` (sums)."""
        if self.value is None:
            return self.max_contributions
        return self.max_contributions * max(abs(self.bounds[0]), abs(self.bounds[1]))

    @property
    def statistic(self) -> str:
        """The output column of the per-period values: ``count`` or ``sum``."""
        return "count" if self.value is None else "sum"

    def _noise_for(self, budget: Measure) -> tuple[str, Fraction]:
        """The noise and its scale so the stream costs at most ``budget``."""
        value = budget.require_value("budget")
        r = Fraction(max(1, self.sensitivity))
        pure = isinstance(budget, (PureDP, ApproxDP))
        if not pure and not isinstance(budget, ZCDP):
            raise InvalidParameter(f"budget={budget!r}: continual releases take PureDP(ε) or "
                                   "ApproxDP(ε, δ) (discrete Laplace, δ unused) or ZCDP(ρ) "
                                   "(discrete Gaussian)")
        noise = "laplace" if pure else "gaussian"
        target = Fraction(pair_loss(value, "budget")[0] if isinstance(budget, ApproxDP)
                          else scalar_loss(value, "budget"))
        if target <= 0:
            raise InvalidParameter(f"budget={budget!r}: continual releases need a positive budget")
        unit = continual_plan(*self._space(), 1, self.method, noise)
        # the linear part fixes the scale; the streaming factor's rounding term (tiny) is then
        # covered by growing the scale until the whole loss fits
        scale = _round_up(r * unit.epsilon(Fraction(1)) / target if pure
                          else r * sqrt_bounds(unit.rho(Fraction(1)) / target)[1])
        for _ in range(8):
            loss = self._loss(continual_plan(*self._space(), scale, self.method, noise))
            if loss <= target:
                return noise, scale
            grow = loss / target if pure else sqrt_bounds(loss / target)[1]
            scale = _round_up(scale * grow * (1 + Fraction(1, 2**30)))
        raise InvalidParameter(f"budget={budget!r} too small for {self.steps} periods")

    def _loss(self, plan: ContinualPlan) -> Fraction:
        """The stream's loss: the one-group map at ``d = sensitivity``, with the streaming
        rounding term paid for each of the at most ``min(G, R)`` groups a unit touches."""
        d = Fraction(self.sensitivity)
        if d == 0:
            return Fraction(0)
        blocks = min(self._n_groups(), self.max_contributions)
        return plan.epsilon(d, blocks) if plan.noise == "laplace" else plan.rho(d, blocks)

    def _space(self) -> tuple[VectorDomain, L1Distance]:
        return VectorDomain(AtomDomain(int), size=self.steps), L1Distance()

    def plan(self, budget: Measure, *, smooth: bool = False) -> ContinualPlan:
        """The per-group mechanism for ``budget`` (reads no data)."""
        noise, scale = self._noise_for(budget)
        return continual_plan(*self._space(), scale, self.method, noise, smooth)

    def cost(self, budget: Measure) -> Amount:
        """What the whole stream charges: the per-group map at ``d = sensitivity``."""
        plan = self.plan(budget)
        loss = self._loss(plan)
        total: Amount = (loss, Fraction(0)) if isinstance(budget, ApproxDP) else loss
        if not budget.compare(total, budget.require_value()):
            raise InvalidParameter(f"internal: stream cost {total} exceeds budget {budget!r}")
        return total

    def release(self, budget: Measure, *, name: str | None = None, alpha: Number = 0.05,
                smooth: bool = False) -> ContinualRelease:
        """Batch mode: check, charge ``cost(budget)`` once, release every period (intervals
        for the running totals at level ``alpha``).  ``smooth=True`` (tree only) reads the
        tree with Honaker's full estimator: smaller errors, each total also informed by later
        periods (a revised series, not a step-by-step one)."""
        stream = self._start(budget, name, "batch", alpha, smooth)
        try:
            counts = _bounded_counts(self, self._frame(), None, None, stream._seed)
        except Exception:
            raise ReleaseFailed("the continual release failed after its charge") from None
        return stream._release_all(counts)

    def open(self, budget: Measure, *, name: str | None = None, alpha: Number = 0.05
             ) -> ContinualStream:
        """Online mode: check and charge the whole stream now; then `ContinualStream.append`
        each period's rows in order."""
        return self._start(budget, name, "online", alpha, False)

    def _start(self, budget: Measure, name: str | None, mode: str, alpha: Number,
               smooth: bool) -> ContinualStream:
        a = float(check_probability(alpha, "alpha", open_low=True, open_high=True))
        plan = self.plan(budget, smooth=smooth)
        total = self.cost(budget)
        event = with_relation(event_from_distance(budget, total), "add_remove")
        label = name or f"continual {self.time}"
        ledger, _, _ = self.session._charge(budget, total, event, note=f"{mode} stream: {label}")
        src = self.session._source or default_source()
        noise = [plan.draw_all(self.session._source) for _ in range(self._n_groups())]
        seed = int(src.random_uint64(1)[0] >> np.uint64(1))
        cert = self._certificate(plan, budget, total, ledger, mode, label)
        return ContinualStream(self, plan, noise, seed, cert, a)

    def _n_groups(self) -> int:
        return max(1, int(self._checked["keys"].height))

    def _certificate(self, plan: ContinualPlan, budget: Measure, total: Amount,
                     ledger: dict[str, JSON] | None, mode: str, label: str) -> dict[str, JSON]:
        sess = self.session
        return {
            "kind": "continual release", "mode": mode, "name": label,
            "time": self.time, "periods": len(self.periods), "groups": self._n_groups(),
            "group_by": list(self.group_keys),
            "neighbours": "add or remove one privacy unit; each unit keeps at most "
                          f"{self.max_contributions} rows over the whole stream",
            "mechanism": {"name": "continual_sum", "method": plan.method, "noise": plan.noise,
                          "smooth": plan.smooth,
                          "scale": str(plan.scale), "steps": plan.steps,
                          "statistic": self.statistic, "value": self.value,
                          "bounds": list(self.bounds) if self.value else None,
                          "sensitivity_l1": self.sensitivity},
            "privacy": {"measure": type(budget).__name__, "charged": str(total),
                        "budget": str(budget.require_value())},
            "session": {"spent": str(sess.spent), "budget": str(sess.budget.require_value())},
            "ledger": ledger,
            "proofs": ["continual.md"],
        }


class ContinualStream:
    """An opened stream (charged): `append` releases the next period."""

    def __init__(self, query: ContinualQuery, plan: ContinualPlan,
                 noise: list[list[npt.NDArray[np.int64]]], seed: int,
                 certificate: dict[str, JSON], alpha: float) -> None:
        self._q, self._plan, self._noise, self._seed = query, plan, noise, seed
        self._half = plan.half_widths(alpha)
        self._se = np.sqrt(plan.errors())
        self.certificate = certificate
        self._x = np.zeros((query._n_groups(), query.steps), dtype=np.int64)
        self._used = pl.DataFrame()
        self.step = 0

    def append(self, data: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
        """Release the next period from its rows (rows of other periods or groups are
        ignored); returns one row per group."""
        q = self._q
        if self.step >= q.steps:
            raise InvalidParameter(f"the stream has released all {q.steps} periods")
        lf = data.lazy() if isinstance(data, pl.DataFrame) else data
        try:
            counts, self._used = _bounded_counts(q, lf, self.step, self._used, self._seed)
            self._add(counts)
            table = self._table(self.step, self.step + 1)
        except Exception:
            raise ReleaseFailed("the continual release failed after its charge") from None
        self.step += 1
        return table

    def _add(self, counts: pl.DataFrame) -> None:
        if counts.height:
            g = counts["g"].to_numpy()
            t = counts["t"].to_numpy()
            np.add.at(self._x, (g, t), counts["n"].to_numpy().astype(np.int64))

    def _release_all(self, counts: pl.DataFrame) -> ContinualRelease:
        try:
            self._add(counts)
            self.step = self._q.steps
            table = self._table(0, self._q.steps)
        except Exception:
            raise ReleaseFailed("the continual release failed after its charge") from None
        return ContinualRelease(table, self.certificate)

    def _table(self, start: int, stop: int) -> pl.DataFrame:
        q, plan = self._q, self._plan
        x = self._x.copy()
        x[:, stop:] = 0  # periods not yet seen; outputs before `stop` do not depend on them
        totals = np.stack([plan.release_with(x[g], self._noise[g]) for g in range(x.shape[0])])
        per_period = np.diff(totals, axis=1, prepend=0.0)
        se = self._se
        steps = np.arange(start, stop)
        n_g = x.shape[0]
        periods = q._checked["periods"][q.time]
        cols: dict[str, Array] = {}
        keys = q._checked["keys"]
        for c in q.group_keys:
            cols[c] = np.repeat(keys[c].to_numpy(), steps.size)
        frame = pl.DataFrame(cols).with_columns(
            periods.gather(np.tile(steps, n_g)).alias(q.time)) if cols else pl.DataFrame(
            {q.time: periods.gather(steps)})
        return frame.with_columns(
            pl.Series(q.statistic, per_period[:, start:stop].reshape(-1)),
            pl.Series("running_total", totals[:, start:stop].reshape(-1)),
            pl.Series("running_total_se", np.tile(se[start:stop], n_g)),
            pl.Series("running_total_ci_low",
                      (totals - self._half)[:, start:stop].reshape(-1)),
            pl.Series("running_total_ci_high",
                      (totals + self._half)[:, start:stop].reshape(-1)),
        )


def _int_bounds(value: str | None, bounds: object) -> tuple[int, int]:
    if value is None:
        if bounds is not None:
            raise InvalidParameter(f"bounds={bounds!r} applies to value=... sums only")
        return (0, 1)
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise InvalidParameter(f"value={value!r} needs bounds=(lo, hi) (integers), got "
                               f"bounds={bounds!r}")
    lo, hi = check_int(bounds[0], "bounds[0]"), check_int(bounds[1], "bounds[1]")
    if lo > hi:
        raise InvalidParameter(f"bounds={bounds!r}: lo={lo} > hi={hi}")
    return lo, hi


def _round_up(x: Fraction, bits: int = 40) -> Fraction:
    """``x`` rounded up to ``bits`` significant bits (a short rational, never smaller)."""
    shift = bits - (x.numerator.bit_length() - x.denominator.bit_length())
    scale = Fraction(2) ** shift
    return Fraction(math.ceil(x * scale)) / scale


@overload
def _bounded_counts(q: ContinualQuery, lf: pl.LazyFrame, period: None, used: None,
                    seed: int | None = None) -> pl.DataFrame: ...


@overload
def _bounded_counts(q: ContinualQuery, lf: pl.LazyFrame, period: int, used: pl.DataFrame,
                    seed: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]: ...


def _bounded_counts(q: ContinualQuery, lf: pl.LazyFrame, period: int | None,
                    used: pl.DataFrame | None, seed: int | None = None
                    ) -> pl.DataFrame | tuple[pl.DataFrame, pl.DataFrame]:
    """Rows bounded per unit over the stream, counted per (group ``g``, period ``t``).

    ``period=None``: every period at once (batch); otherwise the one period, with ``used`` the
    rows each unit has kept so far, returning ``(counts, used')``."""
    unit = q.session.privacy_unit
    assert unit is not None
    schema = dict(lf.collect_schema())
    pre = internal_prefix(list(schema))
    t_col, g_col, r_col = pre + "t", pre + "g", pre + "r"
    periods = q._checked["periods"].with_row_index(t_col)
    if period is not None:
        periods = periods.filter(pl.col(t_col) == period)
    v_col = pre + "v"
    if q.value is None:
        contribution = pl.lit(1, dtype=pl.Int64)
    else:
        contribution = pl.col(q.value).cast(pl.Int64).fill_null(0).clip(*q.bounds)
    rows = (lf.select(unit, q.time, *q.group_keys, contribution.alias(v_col))
            .join(periods.lazy(), on=q.time, how="inner", nulls_equal=False))
    if q.group_keys:
        keys = q._checked["keys"].with_row_index(g_col)
        rows = rows.join(keys.lazy(), on=list(q.group_keys), how="inner", nulls_equal=True)
    else:
        rows = rows.with_columns(pl.lit(0, dtype=pl.UInt32).alias(g_col))
    rows = rows.filter(pl.col(unit).is_not_null())
    order = pl.struct(unit, t_col, g_col).hash(seed if seed is not None else 0)
    rows = rows.with_columns(order.alias(r_col))
    # rank of each row among its unit's rows: earliest period first, then the keyed order
    rank = pl.int_range(pl.len(), dtype=pl.Int64).over(unit)
    cap = q.max_contributions
    if period is None:
        kept = rows.sort([unit, t_col, r_col, g_col]).filter(rank < cap)
        return (kept.group_by(g_col, t_col).agg(pl.col(v_col).sum().alias("n"))
                .rename({g_col: "g", t_col: "t"}).collect())
    prev = used if used is not None and used.height else pl.DataFrame(
        {unit: pl.Series([], dtype=schema[unit]), "used": pl.Series([], dtype=pl.Int64)})
    rows = (rows.join(prev.lazy(), on=unit, how="left").with_columns(pl.col("used").fill_null(0))
            .sort([unit, t_col, r_col, g_col]))
    kept_now = rows.filter(rank < cap - pl.col("used")).collect()
    counts = (kept_now.group_by(g_col, t_col).agg(pl.col(v_col).sum().alias("n"))
              .rename({g_col: "g", t_col: "t"}))
    kept_per_unit = kept_now.group_by(unit).agg(pl.len().cast(pl.Int64).alias("used"))
    new_used = pl.concat([prev, kept_per_unit]).group_by(unit).agg(pl.col("used").sum())
    return counts, new_used
