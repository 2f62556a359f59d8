"""Every example program gets its expected verdict (examples/programs/README.md).

Without ``n`` the verifier first tries an all-sizes proof: every target program must be PROVED
for *all* sizes (``sizes == "all"``); every broken variant must be REFUTED with a witness.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.verify import verify

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"

#: name -> (verdict, sizes of the verdict when run without n; None: run in bounded mode)
EXPECTED: dict[str, tuple[str, object]] = {
    "laplace": ("PROVED", "all"),
    "dlap_count": ("PROVED", "all"),
    "mean": ("PROVED", "all"),  # divides by the size: all sizes n ≥ 1
    "dummysum_fresh": ("PROVED", "all"),
    "dummysum_prefix": ("PROVED", "all"),
    "histogram": ("PROVED", "all"),
    "noisy_sum": ("PROVED", "all"),
    "noisy_max": ("PROVED", "all"),
    "noisy_max_expo": ("PROVED", "all"),
    "noisy_max_gap": ("PROVED", "all"),  # free-gap argmax rule: prophecy D = M' − M
    "noisy_max_gap_monotone": ("PROVED", "all"),
    "noisy_max_gap_bad": ("REFUTED", 2),  # Lap(1/eps) without monotonicity
    "svt": ("PROVED", "all"),
    "svt_c2": ("PROVED", "all"),
    "svt_monotone": ("PROVED", "all"),
    "gap_svt": ("PROVED", "all"),
    "numeric_svt": ("PROVED", "all"),
    "svt_redraw": ("PROVED", "all"),  # Lyu Alg. 2: a potential pays the threshold re-draws
    "svt_alg2": ("PROVED", "all"),  # the same as written by Lyu et al.: the last draw is dead
    "smart_sum": ("PROVED", "all"),  # a potential pays the block noise once, later
    "smart_sum_bad": ("REFUTED", 2),
    "dummysum_fresh_bad": ("REFUTED", 2),
    "noisy_max_value": ("REFUTED", 3),
    "svt_no_query_noise": ("REFUTED", 2),
    "histogram_bad_scale": ("REFUTED", 1),
    "histogram_small_eps": ("REFUTED", 1),  # parameter grid after the proofs; smallest size
    "gaussian": ("PROVED", "all"),
    "gaussian_sum": ("PROVED", "all"),  # μ² = Σ s²/σ² bounded by induction
    "gaussian_histogram": ("PROVED", "all"),
    "gaussian_sum_clip": ("PROVED", "all"),  # branches on the data only
    "gaussian_sum_clip_bad": ("UNKNOWN", 5),  # not proved; the Gaussian refuter needs one path
    "gaussian_vector_bad": ("REFUTED", 2),  # μ² = n/16 grows with n
    "gaussian_bad_sigma": ("REFUTED", "all"),  # δ(ε) too large: proven-enclosure witness
    "gaussian_sum_bad_sensitivity": ("REFUTED", 1),  # sensitivity 2 calibrated as 1
    "svt_never_halts": ("REFUTED", None),  # needs n = 5; checked in bounded mode below
    "bad_gap_svt": ("REFUTED", None),  # needs n = 5; checked in bounded mode below
}


def test_every_example_is_listed() -> None:
    assert {p.stem for p in PROGRAMS.glob("*.dp")} == set(EXPECTED)
    readme = (PROGRAMS / "README.md").read_text(encoding="utf-8")
    for name, (verdict, _) in EXPECTED.items():
        assert f"`{name}.dp`" in readme and verdict in readme


def _check(r: object, verdict: str) -> None:
    from dpcert.verify import VerificationResult

    assert isinstance(r, VerificationResult)
    assert r.verdict == verdict, str(r)
    if r.verdict == "PROVED":
        assert r.proof is not None and r.witness is None
        assert "Conseq" in r.proof or "Conv" in r.proof
    elif r.verdict == "UNKNOWN":
        assert r.reason is not None and r.witness is None
    else:
        w = r.witness
        assert w is not None and w.loss > w.claim
        if w.claim_delta is None:
            assert w.p > 0 and (w.p_prime == 0 or
                                math.log(w.p / w.p_prime) == pytest.approx(w.loss))
        else:  # (ε, δ): P − e^ε·P' > δ, proven for Gaussian programs
            assert w.delta_enclosure is None or w.delta_enclosure[0] > w.claim_delta


@pytest.mark.parametrize("name", sorted(k for k, v in EXPECTED.items() if v[1] is not None))
def test_example_verdict_all_sizes_first(name: str) -> None:
    verdict, sizes = EXPECTED[name]
    r = verify(PROGRAMS / f"{name}.dp")
    _check(r, verdict)
    assert r.sizes == sizes, str(r)
    if verdict == "PROVED" and sizes == "all" and name not in {"laplace", "dlap_count", "gaussian"}:
        assert r.proof is not None and "[all sizes]" in r.proof
        assert "loop invariant" in r.proof and "by induction" in r.proof


def test_svt_never_halts_is_refuted_at_five() -> None:
    # its costs are n·eps/4: private up to n = 4, a witness at n = 5
    r = verify(PROGRAMS / "svt_never_halts.dp", n=5)
    _check(r, "REFUTED")
    assert r.witness is not None and r.witness.n == 5


def test_bad_gap_svt_refuted_at_five_with_loss_five_quarters() -> None:
    import time

    from dpcert.verify import parse_program
    from dpcert.verify.refute import refute

    prog = parse_program((PROGRAMS / "bad_gap_svt.dp").read_text(encoding="utf-8"))
    w, _ = refute(prog, 5, time.monotonic() + 120, first=5, vary_params=False)
    assert w is not None and w.n == 5
    assert w.loss == pytest.approx(1.25, rel=1e-6)  # 1.25·eps at eps = 1
    # thresholds and inputs relative to each other: the queries sit below T = 0
    assert w.params["T"] == 0 and set(w.x["q"]) | set(w.x_prime["q"]) != {0}


def test_dummysum_fresh_bad_loss_is_n_eps() -> None:
    import time

    from dpcert.verify import parse_program
    from dpcert.verify.refute import _refute_at
    from dpcert.verify.symexec import unroll

    r = verify(PROGRAMS / "dummysum_fresh_bad.dp", n=3)
    assert r.verdict == "REFUTED" and r.witness is not None
    assert r.witness.n == 2  # the smallest broken size is reported
    assert r.witness.loss == pytest.approx(2.0, rel=1e-9)  # n·eps at eps = 1
    prog = parse_program((PROGRAMS / "dummysum_fresh_bad.dp").read_text(encoding="utf-8"))
    w, _ = _refute_at(unroll(prog, 3), 3, r.witness.params, time.monotonic() + 60)
    assert w is not None and w.loss == pytest.approx(3.0, rel=1e-9)


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


def test_private_only_for_large_eps() -> None:
    src = (PROGRAMS / "histogram_small_eps.dp").read_text(encoding="utf-8")
    low = verify(src)
    assert low.verdict == "REFUTED" and low.witness is not None
    assert low.witness.params["eps"] < 1
    high = verify(src.replace("param eps in (0, 10);", "param eps in (1, 10);"))
    assert high.verdict == "PROVED" and high.sizes == "all", str(high)


def test_gaussian_mechanism_proof_names_the_conversion() -> None:
    r = verify(PROGRAMS / "gaussian.dp")
    assert r.verdict == "PROVED" and r.proof is not None
    assert "ρ = 1/32" in r.proof and "Balle & Wang" in r.proof
    bad = verify(PROGRAMS / "gaussian_bad_sigma.dp")
    assert bad.verdict == "REFUTED" and bad.reason is not None and "0.1269" in bad.reason


def test_gaussian_needs_a_delta() -> None:
    src = (PROGRAMS / "gaussian.dp").read_text(encoding="utf-8")
    r = verify(src.replace("claim 1, 0.00001;", "claim 1;"))
    assert r.verdict == "UNKNOWN" and r.reason is not None and "claim eps, delta" in r.reason
