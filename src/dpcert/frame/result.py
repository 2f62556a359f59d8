"""What a user does with a release: tidy post-processed tables, conversions, and saving.

Everything here reads only the released table and its certificate: it is post-processing and
costs no privacy.

* **Counts** (``count``, ``count_distinct``) become non-negative integers.  A true count is a
  non-negative integer, so when it lies in the noisy interval ``[lo, hi]`` it also lies in
  ``[max(0, ⌈lo⌉), max(0, ⌊hi⌋)]``: the tidy interval keeps the coverage of the raw one.  The
  estimate is rounded to the nearest integer and clipped into that interval.
* **Quantiles** keep their value interval ``<name>_ci_low/high`` (it contains the group's
  quantile with probability ``≥ 1 − α``: `dpcert.frame.quantile_interval`; a quantile
  released with ``interval=False`` has none and its empty columns are dropped) and get a
  rank-error column ``<name>_rank_error``: with probability at least ``1 − α`` (per group and
  quantile), the grid cell the value was drawn in holds ranks within that many rows of the
  target rank ``q·n``.  Permute-and-flip accepts a candidate ``t`` utility units worse than
  the best w.p. at most ``exp(−ε·t/(2Δ))``, and it always stops at the best, so by a union
  bound over the ``C`` candidates it outputs one worse than ``t = (2Δ/ε)·ln(C/α)`` w.p. at
  most ``α`` (McKenna & Sheldon 2020); the cell utility's best is 0 and ``b`` units are one
  row, so that is ``t/b`` rows.
* **Sums** of values whose lower bound is ``≥ 0`` are clipped at 0 (estimate and interval).
* `upper_float` shows an exact accuracy or privacy figure as a short decimal rounded up
  (``306763/4096`` → ``74.9``).

Examples
--------
>>> import polars as pl
>>> cert = {"plan": {"aggregates": [{"kind": "Count"}], "max_rows_per_group": 1},
...         "measurements": [{"name": "count", "aggregate": "count", "kind": "count"}],
...         "confidence_level": 0.95}
>>> t = pl.DataFrame({"g": ["a", "b"], "count": [-9.0, 12.4],
...                   "count_ci_low": [-21.0, 0.4], "count_ci_high": [3.0, 24.4]})
>>> tidy_table(t, cert).rows()
[('a', 0, 0, 3), ('b', 12, 1, 24)]
>>> upper_float(Fraction(306763, 4096))
74.9
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Mapping
from decimal import ROUND_CEILING, Decimal
from fractions import Fraction
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert._types import JSON
    from dpcert.frame.aliases import PandasFrame

__all__ = ["ReleaseMixin", "quantile_rank_error", "rank_error", "tidy_table", "upper_float"]

def upper_float(value: Fraction | int | float | Decimal | str, digits: int = 3) -> float:
    """``value`` rounded *up* to ``digits`` significant digits, as a float (never below it).

    Examples
    --------
    >>> upper_float(Fraction(1, 3)), upper_float(0.48000061), upper_float(12)
    (0.334, 0.481, 12.0)
    """
    x = Fraction(value)
    if x == 0:
        return 0.0
    d = Decimal(x.numerator) / Decimal(x.denominator)
    exp = d.adjusted() - digits + 1
    q = Decimal(x.numerator * 10 ** max(-exp, 0)) / Decimal(x.denominator * 10 ** max(exp, 0))
    r = q.to_integral_value(rounding=ROUND_CEILING)
    out = float(r.scaleb(exp))
    while Fraction(out) < x:  # a float just below the decimal: step up
        out = math.nextafter(out, math.inf)
    return out


def _outputs(certificate: Mapping[str, Any]) -> list[tuple[str, dict[str, Any], list[Any]]]:
    """``(output name, plan aggregate, its measurements)`` in plan order."""
    plan = certificate.get("plan")
    meas = certificate.get("measurements")
    if not isinstance(plan, dict) or not isinstance(plan.get("aggregates"), list) \
            or not isinstance(meas, list):
        raise InvalidParameter("certificate has no 'plan' and 'measurements': not a release's")
    names = list(dict.fromkeys(m["aggregate"] for m in meas
                               if m.get("kind") not in ("select", "select_bounds")))
    if len(names) != len(plan["aggregates"]):
        raise InvalidParameter("certificate: measurements do not match the plan's aggregates")
    return [(n, a, [m for m in meas if m.get("aggregate") == n])
            for n, a in zip(names, plan["aggregates"], strict=True)]


def quantile_rank_error(certificate: Mapping[str, Any], name: str, alpha: float) -> float:
    """Rows of rank error of quantile component ``name`` at level ``alpha`` (see module doc)."""
    for _, agg, comps in _outputs(certificate):
        comp = next((m for m in comps if m.get("name") == name and m.get("kind") == "quantile"
                     and m.get("role", "value") == "value"), None)
        if comp is None:
            continue
        chosen = certificate.get("chosen_bounds") or {}  # bounds chosen privately
        rows = chosen.get("max_rows_per_group") or certificate["plan"]["max_rows_per_group"]
        return rank_error(Fraction(comp["quantile"]), Fraction(comp["epsilon"]), int(rows),
                          int(agg.get("candidates", 1025)), alpha)
    raise InvalidParameter(f"name={name!r} is not a quantile of this release")


def rank_error(level: Fraction, epsilon: Fraction, rows: int, candidates: int,
               alpha: float) -> float:
    """Rows of rank error, at level ``alpha``, of a quantile at ``level`` released by
    permute-and-flip with ``epsilon`` over ``candidates`` grid points, ``rows`` rows per unit
    and group (module docstring).

    >>> rank_error(Fraction(1, 2), Fraction(1), 1, 1025, 0.05)
    9.92819
    """
    a, b = level.numerator, level.denominator
    delta = rows * max(b - a, a)
    t = 2 * delta / epsilon * Fraction(math.log(candidates / alpha) * (1 + 1e-12))
    return upper_float(t / b, 6)


def _bounds(certificate: Mapping[str, Any], agg: dict[str, Any]) -> Any:
    """An aggregate's bounds: given, or chosen privately (the certificate's ``chosen_bounds``)."""
    if agg.get("bounds") is not None:
        return agg["bounds"]
    return certificate["chosen_bounds"]["bounds"][agg["column"]]


def tidy_table(table: pl.DataFrame, certificate: Mapping[str, Any]) -> pl.DataFrame:
    """Integer non-negative counts with consistent intervals, and quantile rank errors."""
    alpha = 1 - float(certificate.get("confidence_level", 0.95))
    out = table
    for name, agg, comps in _outputs(certificate):
        kinds = [m.get("kind") for m in comps]
        if kinds in (["count"], ["count_distinct"]) and name in table.columns:
            lo_c, hi_c = f"{name}_ci_low", f"{name}_ci_high"
            lo = pl.max_horizontal(pl.col(lo_c).ceil(), pl.lit(0.0))
            hi = pl.max_horizontal(pl.col(hi_c).floor(), pl.lit(0.0))
            hi = pl.max_horizontal(hi, lo)
            est = pl.min_horizontal(pl.max_horizontal(pl.col(name).round(0), lo), hi)
            out = out.with_columns(est.cast(pl.Int64).alias(name),
                                   lo.cast(pl.Int64).alias(lo_c), hi.cast(pl.Int64).alias(hi_c))
        elif agg.get("kind") == "Sum" and float(_bounds(certificate, agg)[0]) >= 0 \
                and name in table.columns:
            cols = [name, f"{name}_ci_low", f"{name}_ci_high"]
            out = out.with_columns(pl.max_horizontal(pl.col(c), pl.lit(0.0)).alias(c)
                                   for c in cols)
        elif agg.get("kind") == "Quantile":
            for m in comps:
                q = m.get("name")
                if q in table.columns and m.get("role", "value") == "value":
                    err = quantile_rank_error(certificate, q, alpha)
                    if not agg.get("interval", False):
                        out = out.drop(f"{q}_ci_low", f"{q}_ci_high", strict=False)
                    out = out.with_columns(pl.lit(err).alias(f"{q}_rank_error"))
    return out


class ReleaseMixin:
    """Conversions and saving for a release (``table`` and ``certificate`` attributes).

    Every conversion has one meaning: the *tidy* table (`tidy_table`: integer
    non-negative counts, quantile rank errors) unless ``tidy=False`` asks for the raw one
    (``table``: the post-processed floats, with every ``_ci_low``/``_ci_high`` column).
    """

    table: pl.DataFrame
    certificate: dict[str, JSON]

    def tidy(self) -> pl.DataFrame:
        """The table with integer non-negative counts and quantile rank errors
        ([`tidy_table`][dpcert.frame.result.tidy_table])."""
        return tidy_table(self.table, self.certificate)

    def to_polars(self, *, tidy: bool = True) -> pl.DataFrame:
        """One row per group: the keys, then per aggregate ``<name>``, ``<name>_ci_low``,
        ``<name>_ci_high`` (tidy: see the class docstring; ``tidy=False``: the raw table)."""
        return self.tidy() if tidy else self.table

    def to_pandas(self, *, tidy: bool = True) -> PandasFrame:
        """A pandas DataFrame of `to_polars` (needs pandas; Arrow is not required)."""
        try:
            pd = importlib.import_module("pandas")
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise InvalidParameter("to_pandas needs pandas: pip install pandas") from e
        t = self.tidy() if tidy else self.table
        return pd.DataFrame({c: t[c].to_numpy() for c in t.columns})

    def write_parquet(self, path: str | PathLike[str], *, tidy: bool = True) -> Path:
        """Write the table to a Parquet file; returns its path."""
        p = Path(path)
        (self.tidy() if tidy else self.table).write_parquet(p)
        return p

    def save(self, directory: str | PathLike[str], *, tidy: bool = True) -> Path:
        """Write ``results.parquet``, ``results.csv`` and ``certificate.json`` into
        ``directory`` (created if needed); returns the directory."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        t = self.tidy() if tidy else self.table
        t.write_parquet(d / "results.parquet")
        t.write_csv(d / "results.csv")
        (d / "certificate.json").write_text(json.dumps(self.certificate, indent=2, default=str),
                                            encoding="utf-8")
        return d
