"""``audit(mechanism, pairs, AuditOptions(...))``: the options object and its keyword form."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dpcert as dp
from dpcert.audit import AuditOptions, audit
from dpcert.audit.options import FIELDS, with_keywords
from dpcert.errors import InvalidParameter


def _laplace(seed: int) -> Any:
    rng = np.random.Generator(np.random.SFC64(seed))

    def f(x: float, n: int) -> np.ndarray:
        return x + rng.laplace(0.0, 1.0, n)
    return f


def test_options_and_keywords_give_the_same_audit() -> None:
    kw: dict[str, Any] = {"claimed": dp.PureDP(1.0), "samples": 4_000, "seed": 3}
    a = audit(_laplace(7), [(0.0, 1.0)], AuditOptions(**kw)).to_dict()
    b = audit(_laplace(7), [(0.0, 1.0)], **kw).to_dict()
    a.pop("seconds"), b.pop("seconds")
    assert a == b and a["epsilon_lower"] > 0


def test_keywords_replace_the_options_fields() -> None:
    base = AuditOptions(samples=1_000, seed=1, confidence=0.9)
    o = with_keywords(base, {"seed": 2})
    assert (o.seed, o.samples, o.confidence) == (2, 1_000, 0.9) and base.seed == 1
    assert with_keywords(base, {}) is base


def test_an_unknown_keyword_is_refused_by_name_before_any_draw() -> None:
    calls: list[int] = []

    def f(x: float, n: int) -> list[float]:
        calls.append(n)
        return [x] * n

    with pytest.raises(InvalidParameter, match=r"no option 'sample'.*samples"):
        audit(f, [(0.0, 1.0)], sample=1_000)  # type: ignore[call-arg]
    with pytest.raises(InvalidParameter, match=r"options=.*AuditOptions"):
        audit(f, [(0.0, 1.0)], {"samples": 1_000})  # type: ignore[arg-type]
    assert calls == []


def test_every_field_has_a_keyword_and_a_default() -> None:
    from dpcert.audit.options import AuditKeywords

    assert set(FIELDS) == set(AuditKeywords.__annotations__)
    assert AuditOptions().search.name == "standard"


def test_a_bad_search_is_refused() -> None:
    with pytest.raises(InvalidParameter, match="search="):
        audit(lambda x, n: [x] * n, [(0.0, 1.0)],
              AuditOptions(samples=1_000, search=object()))  # type: ignore[arg-type]
