"""Every example program gets its expected verdict (examples/programs/README.md)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.verify import verify

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"

EXPECTED = {
    "laplace": "PROVED",
    "mean": "PROVED",
    "dummysum_fresh": "PROVED",
    "dummysum_prefix": "PROVED",
    "noisy_max": "PROVED",
    "svt": "PROVED",
    "gap_svt": "PROVED",
    "numeric_svt": "PROVED",
    "dummysum_fresh_bad": "REFUTED",
    "noisy_max_value": "REFUTED",
    "svt_no_query_noise": "REFUTED",
    "svt_never_halts": "REFUTED",
    "histogram_bad_scale": "REFUTED",
}


def test_every_example_is_listed() -> None:
    assert {p.stem for p in PROGRAMS.glob("*.dp")} == set(EXPECTED)
    readme = (PROGRAMS / "README.md").read_text(encoding="utf-8")
    for name, verdict in EXPECTED.items():
        assert f"`{name}.dp`" in readme and verdict in readme


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_verdict(name: str) -> None:
    # svt_never_halts is eps-DP up to n = 4 (its costs are n·eps/4): it needs n = 5
    r = verify(PROGRAMS / f"{name}.dp", n=5 if name == "svt_never_halts" else 4)
    assert r.verdict == EXPECTED[name], str(r)
    if r.verdict == "PROVED":
        assert r.proof is not None and "Conseq" in r.proof and r.witness is None
    else:
        w = r.witness
        assert w is not None and w.loss > w.claim
        assert w.p > 0 and (w.p_prime == 0 or math.log(w.p / w.p_prime) == pytest.approx(w.loss))


def test_dummysum_fresh_bad_loss_is_n_eps() -> None:
    r = verify(PROGRAMS / "dummysum_fresh_bad.dp", n=3)
    assert r.verdict == "REFUTED" and r.witness is not None
    assert r.witness.n == 3
    assert r.witness.loss == pytest.approx(3.0, rel=1e-9)  # n·eps at eps = 1


def test_noisy_max_value_loss() -> None:
    r = verify(PROGRAMS / "noisy_max_value.dp", n=3)
    assert r.witness is not None
    # max of 3 Laplace(2) shifted by 1 each: lower tail ratio exp(3/2)
    assert r.witness.loss == pytest.approx(1.5, rel=1e-9)


def test_histogram_bad_scale_uses_eps_below_one() -> None:
    r = verify(PROGRAMS / "histogram_bad_scale.dp", n=2)
    assert r.witness is not None
    assert r.witness.params["eps"] < 1
    assert r.witness.loss == pytest.approx(2.0, rel=1e-9)  # 1/eps at eps = 1/2
