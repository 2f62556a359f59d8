"""The curator's setup shared by the CLI tests: a table, a ledger dataset bound to it, and a way
to run ``dpcert release`` as the curator and to see that nothing was charged."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from dpcert.cli.main import main

#: The analyst's spec: the privacy unit and one query (``{eps}``, ``{col}``, ``{lo}``, ``{hi}``).
SPEC = """\
[data]
privacy_unit = "pid"

[[query]]
name = "by_region"
group_by = ["region"]
keys = ["n", "s"]
max_groups = 1
max_rows_per_group = 2
budget = {{ epsilon = {eps}, delta = 0 }}
aggregates = [
  {{ kind = "count" }},
  {{ kind = "sum", column = "{col}", bounds = [{lo}, {hi}] }},
]
"""

QUERY = """[[query]]
name = "{name}"
group_by = ["region"]
keys = ["n", "s"]
budget = {{ epsilon = {eps}, delta = 0 }}
aggregates = [ {{ kind = "count" }} ]
"""


@dataclass
class Curator:
    """A curator's directory: ``people.csv``, ``ledger.sqlite`` with dataset ``people``
    (ε = 2, δ = 1e-6) bound to the file and to ``pid``; outputs go to ``out/``."""

    root: Path

    @property
    def ledger(self) -> str:
        return str(self.root / "ledger.sqlite")

    @property
    def out(self) -> Path:
        return self.root / "out"

    def spec(self, text: str | None = None, *, name: str = "spec.toml", eps: float = 1.0,
             col: str = "income", lo: int = 0, hi: int = 100) -> Path:
        path = self.root / name
        path.write_text(text if text is not None else
                        SPEC.format(eps=eps, col=col, lo=lo, hi=hi))
        return path

    @staticmethod
    def query(name: str, eps: float) -> str:
        return QUERY.format(name=name, eps=eps)

    def queries(self, body: str, unit: str = '"pid"') -> Path:
        return self.spec(f"[data]\nprivacy_unit = {unit}\n\n{body}", name="spec2.toml")

    def release(self, spec: Path, *extra: str, dataset: str = "people") -> int:
        return main(["release", str(spec), "--ledger", self.ledger, "--dataset", dataset,
                     "--out", str(self.out), *extra])

    def history(self, dataset: str = "people") -> list[object]:
        from dpcert.accounting.ledger import Ledger

        return list(Ledger(self.ledger, read_only=True).history(dataset))

    def assert_nothing_charged(self, before: int = 0, dataset: str = "people") -> None:
        """The ledger has ``before`` charges and the output directory holds no file."""
        assert len(self.history(dataset)) == before
        assert not self.out.exists() or not any(self.out.iterdir())


def write_people(path: Path) -> None:
    rng = np.random.default_rng(0)
    pl.DataFrame({"pid": np.repeat(np.arange(200), 2),
                  "region": rng.choice(["n", "s"], 400),
                  "income": rng.uniform(0, 100, 400)}).write_csv(path)


@pytest.fixture
def curator(tmp_path: Path) -> Curator:
    write_people(tmp_path / "people.csv")
    cur = Curator(tmp_path)
    assert main(["budget", "init", cur.ledger, "people", "--data", str(tmp_path / "people.csv"),
                 "--privacy-unit", "pid", "--epsilon", "2", "--delta", "1e-6"]) == 0
    return cur
