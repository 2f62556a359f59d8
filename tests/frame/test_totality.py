"""The post-charge path is total: on every table and query that are admitted, a release cannot
fail after its charge, and adding one unit never turns success into failure.

Cases come from ``tests/_frames.py`` (names from every internal alphabet, every admitted dtype and
some refused ones, nulls, NaN, ±0.0, ±inf, extremes, odd strings, heavy units, units with
hundreds of groups, forced hash-bit ties) × every aggregate, public or private keys and filters.
A case may be refused -- but only before the charge (nothing spent), with a typed error, and the
same way on its neighbour (refusals read the schema and the query, never the rows).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import dpcert as dp
from _frames import SOURCE_TYPES, Case, cases, check_total
from dpcert.backends import polars as polars_backend
from dpcert.frame import admit as admit_module


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cases())
def test_polars_release_cannot_fail_after_the_charge(case: Case) -> None:
    check_total(case)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cases(exact_only=True))
def test_polars_total_with_forced_hash_ties(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two unit-hash bits and one pair-hash bit: most units and groups tie on the packed key,
    so the exact repair runs."""
    monkeypatch.setattr(polars_backend, "_UNIT_BITS", 2)
    monkeypatch.setattr(polars_backend, "_PAIR_BITS", 1)
    check_total(case)


def _heavy_case(value_name: str) -> Case:
    """The issue's case: a value column named like a scratch column, one unit above R."""
    import polars as pl

    cols = {"pid": pl.Series("pid", [1, 1, 1, 2]), "g": pl.Series("g", ["a", "a", "a", "b"]),
            value_name: pl.Series(value_name, [1.0, 2.0, 3.0, 4.0])}
    extra = {"pid": pl.Series("pid", [3]), "g": pl.Series("g", ["a"]),
             value_name: pl.Series(value_name, [5.0])}
    return Case(cols, "pid", SOURCE_TYPES[0],
                lambda s: (s.query().group_by("g", keys=["a", "b"])
                           .agg(dp.sum(value_name, bounds=(0, 10))).bound_contributions(1, 2)),
                dp.PureDP(1.0), extra, f"value {value_name!r}")


def test_the_property_catches_user_names_in_the_admitted_frame(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrong variant: an admission that keeps the user's names lets a value column named
    ``_s`` meet the bounding code's scratch column, and the release fails after its charge."""
    check_total(_heavy_case("_s"))
    real = admit_module._columns

    def keep_names(*args: Any) -> Any:
        return tuple(replace(c, internal=c.user) for c in real(*args))

    monkeypatch.setattr(admit_module, "_columns", keep_names)
    with pytest.raises(AssertionError, match="failed after the charge"):
        check_total(_heavy_case("_s"))


def test_refusal_before_the_charge_spends_nothing() -> None:
    import polars as pl

    df = pl.DataFrame({"u": [1, 2], "k": pl.Series([b"a", b"b"], dtype=pl.Binary)})
    sess = dp.Session(df, privacy_unit="u", budget=dp.PureDP(1))
    q = sess.query().group_by("k", keys="private").agg(dp.count()).bound_contributions(1, 1)
    with pytest.raises(dp.errors.InadmissibleColumn, match="'k' has type Binary"):
        q.release(dp.PureDP(1))
    assert sess.spent == 0
