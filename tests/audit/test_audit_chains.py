"""Auditing whole dpcert chains (Measurement.sample batches, neighbours from the metric)."""

from __future__ import annotations

import dataclasses

import pytest

import dpcert as dp

SPACE = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())


def seed004(scale: float) -> dp.Measurement:
    m = SPACE >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum() >> dp.m.then_laplace(scale)
    assert isinstance(m, dp.Measurement)
    return m


@pytest.mark.slow
def test_correct_chain_is_not_flagged_and_bound_is_close() -> None:
    m = seed004(25.0)
    # the true loss on the worst pair equals the claim, so only a high confidence keeps a
    # correct mechanism from being flagged by chance (failure probability < 1e-7 per run)
    r = dp.audit.audit(m, samples=400_000, confidence=1 - 1e-7)
    assert not r.violated
    assert 0.25 < r.epsilon_lower <= float(m.map(1))


@pytest.mark.slow
def test_chain_that_understates_its_map_is_flagged() -> None:
    honest = seed004(25.0)
    lying = dataclasses.replace(seed004(10.0), privacy_map=honest.privacy_map)  # 1.2-DP, says 0.48
    r = dp.audit.audit(lying, samples=400_000, confidence=1 - 1e-7)
    assert r.violated and r.witness is not None
