"""``--confirm``: a refutation re-checked by running the program with the exact samplers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.cli.main import main
from dpcert.samplers import InsecureSeededSource
from dpcert.verify import parse_program, verify
from dpcert.verify.confirm import confirm

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"


def _src(name: str) -> str:
    return (PROGRAMS / f"{name}.dp").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["noisy_max_value", "svt_no_query_noise", "histogram_bad_scale"])
def test_refutation_confirmed_by_sampling(name: str) -> None:
    r = verify(_src(name))
    assert r.verdict == "REFUTED" and r.witness is not None
    c = confirm(parse_program(_src(name)), r.witness, samples=100_000,
                source=InsecureSeededSource(7))
    assert c.confirmed and c.epsilon_lower > r.witness.claim
    assert c.epsilon_lower <= r.witness.loss + 1e-9 or r.witness.loss == float("inf")


def test_correct_program_is_not_confirmed() -> None:
    # the deliberately wrong use: the witness of the bad histogram measured on the good one
    bad = verify(_src("histogram_bad_scale"))
    assert bad.witness is not None
    good = _src("histogram").replace("param eps > 0;", "param eps in (0, 1);")
    w = dataclasses.replace(bad.witness)
    c = confirm(parse_program(good), w, samples=100_000, source=InsecureSeededSource(7))
    assert not c.confirmed and c.epsilon_lower <= c.claim


def test_cli_confirm_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["verify", str(PROGRAMS / "svt_no_query_noise.dp"), "--json", "--confirm",
                 "--samples", "20000", "--seed", "3"])
    assert code == 1
    d = json.loads(capsys.readouterr().out)
    assert d["confirmation"]["confirmed"] is True
    assert d["confirmation"]["epsilon_lower"] > d["confirmation"]["claim"]


def test_bad_samples() -> None:
    from dpcert.errors import InvalidParameter

    r = verify(_src("svt_no_query_noise"))
    assert r.witness is not None
    with pytest.raises(InvalidParameter, match="samples=5"):
        confirm(parse_program(_src("svt_no_query_noise")), r.witness, samples=5)
