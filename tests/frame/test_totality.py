"""The post-charge path is total: on every table and query that are admitted, a release cannot
fail after its charge, and adding one unit never turns success into failure.

Cases come from ``tests/_frames.py`` (names from every internal alphabet, every admitted dtype and
some refused ones, nulls, NaN, ±0.0, ±inf, extremes, odd strings, heavy units, units with
hundreds of groups, forced hash-bit ties) × every aggregate, public or private keys and filters.
A case may be refused -- but only before the charge (nothing spent), with a typed error, and the
same way on its neighbour (refusals read the schema and the query, never the rows).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import dpcert as dp
from _frames import Case, cases
from dpcert.backends import polars as polars_backend
from dpcert.errors import DPCertError, ReleaseFailed
from dpcert.samplers import InsecureSeededSource

#: A session budget of each measure, large enough for every release of a case.
SESSION_BUDGETS = {dp.PureDP: dp.PureDP(10**6), dp.ZCDP: dp.ZCDP(10**6),
                   dp.ApproxDP: dp.ApproxDP(10**6, 0.5)}


def _outcome(case: Case, neighbour: bool) -> str:
    """``"released"``, or ``"refused: <error type>"`` for a refusal before the charge.  A
    failure after the charge is re-raised (the property fails)."""
    df = case.frame(neighbour)
    try:
        sess = dp.Session(df, privacy_unit=case.unit, budget=SESSION_BUDGETS[type(case.budget)],
                          _source=InsecureSeededSource(1))
        q = case.build(sess)
        q.check(case.budget)
    except ReleaseFailed:  # pragma: no cover - never before a charge
        raise
    except DPCertError as e:
        return f"refused: {type(e).__name__}"
    spent_before = sess.spent
    try:
        res = q.release(case.budget)
    except ReleaseFailed as e:
        raise AssertionError(f"failed after the charge: {case.describe}") from e
    assert sess.spent != spent_before
    assert res.to_polars().height >= 0
    return "released"


def check_total(case: Case) -> None:
    """The property, for one case: total after the charge, and the neighbour agrees."""
    a = _outcome(case, neighbour=False)
    b = _outcome(case, neighbour=True)
    assert a == b, f"{case.describe}: {a} on D, {b} on D' (one unit added)"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cases())
def test_polars_release_cannot_fail_after_the_charge(case: Case) -> None:
    check_total(case)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cases(exact_only=True))
def test_polars_total_with_forced_hash_ties(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two unit-hash bits only: most units tie on the packed key and the exact repair runs."""
    monkeypatch.setattr(polars_backend, "_UNIT_BITS", 2)
    check_total(case)


def test_refusal_before_the_charge_spends_nothing() -> None:
    import polars as pl

    df = pl.DataFrame({"u": [1, 2], "k": pl.Series([b"a", b"b"], dtype=pl.Binary)})
    sess = dp.Session(df, privacy_unit="u", budget=dp.PureDP(1))
    q = sess.query().group_by("k", keys="private").agg(dp.count()).bound_contributions(1, 1)
    with pytest.raises(dp.errors.InadmissibleColumn, match="'k' has type Binary"):
        q.release(dp.PureDP(1))
    assert sess.spent == 0
