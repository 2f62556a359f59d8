"""The self-audit registry: engine releases are audited like every mechanism."""

from __future__ import annotations

from fractions import Fraction

import pytest

pytest.importorskip("polars")

from dpcert.selfaudit.targets import TARGETS, Target, run_target


def test_engine_targets_build_with_their_compiled_claim_and_unit_neighbours() -> None:
    engine = [t for t in TARGETS if t.name.startswith("engine:")]
    assert len(engine) == 3
    for t in engine:
        built = t.build(None)
        d = built.claim_from.map(1)
        eps = d[0] if isinstance(d, tuple) else d
        assert Fraction(eps) == 1, t.name          # the budget's ε is spent exactly
        assert built.pairs, t.name                  # neighbours: one unit added or removed
        out = built.sampler(built.pairs[0][0], 3)
        assert len(out) == 3


def test_a_target_whose_module_is_missing_is_reported_not_available() -> None:
    t = Target("ghost", "dpcert.no_such_module:make_ghost", lambda make: make)
    r = run_target(t, seconds=1.0)
    assert r.status == "not available" and "no_such_module" in r.note


def test_only_the_engine_targets_stay_in_one_process() -> None:
    # a Polars query hangs in a child forked after Polars started its threads
    engine = {t.name for t in TARGETS if not t.forkable}
    assert engine == {t.name for t in TARGETS if t.name.startswith("engine:")}
    assert len(engine) == 3 and len(TARGETS) > len(engine)
