"""The analyst's spec is strict: unknown and misspelled keys, curator keys and wrong types are
refused with their line before any data is read; the published JSON Schema is up to date."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpcert.cli.main import main
from dpcert.cli.spec import SpecError, json_schema, parse_spec

DOCS_SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "spec.schema.json"

GOOD = """\
[data]
privacy_unit = "pid"

[[query]]
name = "a"
budget = { epsilon = 1.0, delta = 0 }
aggregates = [ { kind = "count" } ]
"""


def _error(text: str) -> str:
    with pytest.raises(SpecError) as e:
        parse_spec(text, "s.toml")
    return str(e.value)


@pytest.mark.parametrize(("old", "new", "line", "needle"), [
    ('privacy_unit = "pid"', 'privacy_units = "pid"', 2,
     "unknown key 'privacy_units' (did you mean 'privacy_unit'?)"),
    ('name = "a"', 'name = "a"\nmax_group = 2', 6,
     "unknown key 'max_group' (did you mean 'max_groups'?)"),
    ("delta = 0", "detla = 0", 6, "unknown key 'detla' (did you mean 'delta'?)"),
    ('{ kind = "count" }', '{ kind = "count", alais = "n" }', 7,
     "unknown key 'alais' (did you mean 'alias'?)"),
    ('{ kind = "count" }', '{ kind = "cuont" }', 7, "query 'a' aggregates[0].kind"),
    ('name = "a"', 'name = "a"\nmax_groups = "2"', 6, "an integer >= 1"),
    ('name = "a"', 'name = "a"\nmax_groups = 0', 6, "an integer >= 1"),
])
def test_a_misspelled_or_mistyped_key_is_refused_with_its_line(
        old: str, new: str, line: int, needle: str) -> None:
    err = _error(GOOD.replace(old, new))
    assert needle in err
    assert f"s.toml:{line}:" in err


def test_privacy_unit_is_required() -> None:
    err = _error(GOOD.replace('privacy_unit = "pid"\n', ""))
    assert "'privacy_unit' is required" in err
    spec = parse_spec(GOOD.replace('"pid"', "false"), "s.toml")
    assert spec.data.privacy_unit is False


@pytest.mark.parametrize(("extra", "needle"), [
    ('[budget]\nepsilon = 1000\n', "'budget' is not for a spec: the total budget is the "
                                   "curator's"),
    ('ledger = "x.sqlite"\n', "'ledger' is not for a spec"),
    ('dataset = "people-again"\n', "'dataset' is not for a spec"),
    ('create = true\n', "'create' is not for a spec"),
    ('[output]\ndir = "../../x"\n', "'output' is not for a spec: the output directory is the "
                                    "curator's: --out DIR"),
])
def test_keys_of_the_curator_are_refused(extra: str, needle: str) -> None:
    top = extra if extra.startswith("[") else ""
    err = _error((extra if not top else "") + GOOD + top)
    assert needle in err


@pytest.mark.parametrize("key", ['path = "other.csv"', 'engine = "spark"',
                                 'remote = "sc://elsewhere:15002"', 'types = { x = "int" }'])
def test_the_data_source_and_how_it_is_read_are_the_curators(key: str) -> None:
    err = _error(GOOD.replace('privacy_unit = "pid"', f'privacy_unit = "pid"\n{key}'))
    assert "is not for a spec" in err and "s.toml:3:" in err


def test_every_problem_is_listed_in_line_order() -> None:
    err = _error(GOOD.replace('privacy_unit = "pid"', 'privacy_units = "pid"')
                 .replace("delta = 0", "detla = 0"))
    lines = [ln.split(":")[1] for ln in err.splitlines()]
    assert lines == sorted(lines, key=int) and len(lines) == 2  # reported once each
    assert "is required" not in err


def test_a_misspelled_spec_is_refused_before_any_data_is_read(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    (curator.root / "people.csv").unlink()  # nothing may need the data to refuse this
    spec = curator.spec(GOOD.replace("privacy_unit", "privacy_units"))
    assert curator.release(spec) == 2
    assert "did you mean 'privacy_unit'" in capsys.readouterr().err
    curator.assert_nothing_charged()


def test_an_unbound_unit_cannot_be_chosen_by_the_spec(
        curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    spec = curator.spec(GOOD.replace('"pid"', '"region"'))
    assert curator.release(spec) == 1
    assert "protects privacy_unit='pid'" in capsys.readouterr().err
    curator.assert_nothing_charged()
    assert curator.release(curator.spec(GOOD.replace('"pid"', "false"))) == 1
    curator.assert_nothing_charged()


def test_the_published_schema_is_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec-schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json_schema()
    assert json.loads(DOCS_SCHEMA.read_text()) == printed, (
        "regenerate with: dpcert spec-schema > docs/spec.schema.json")
    assert printed["additionalProperties"] is False
    assert printed["required"] == ["data", "query"]


def test_the_example_spec_is_valid() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "people_release.toml"
    spec = parse_spec(example.read_text(), str(example))
    assert spec.data.privacy_unit == "person_id" and len(spec.query) == 2
