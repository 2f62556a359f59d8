"""The Polars backend: the bounding rule against a unit-by-unit reference (ties and hash
collisions included), bounding limits and unit independence as properties, exact statistics."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pytest
from backend_reference import _sort_part, canon, ref_bound
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcert.backends import _hash
from dpcert.backends import polars as pb
from dpcert.backends.base import BoundSpec, FrameOps, StatSpec
from dpcert.errors import InvalidParameter, OutOfDomain, UnsafeExpression

KEY = bytes(range(16))
BE = pb.PolarsBackend()


def frame(n: int, n_units: int, n_groups: int, seed: int = 0, float_units: bool = False
          ) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    u: list[Any] = rng.integers(0, n_units, n).tolist()
    if float_units:
        u = [float(x) if x > 2 else [float("nan"), -0.0, 0.0][x] for x in u]
    u = [None if i % 17 == 0 else x for i, x in enumerate(u)]
    g = [None if i % 13 == 0 else f"g{x}é" for i, x in enumerate(rng.integers(0, n_groups, n))]
    v = rng.integers(0, 4, n).astype(float)  # few distinct values: many identical rows
    v[::11] = np.nan
    v[::7] = -0.0
    return pl.DataFrame({"u": u, "g": g, "v": v.tolist(), "w": rng.integers(0, 3, n)},
                        schema={"u": pl.Float64 if float_units else pl.Int64, "g": pl.String,
                                "v": pl.Float64, "w": pl.Int64})


def kept(df: pl.DataFrame, cols: tuple[str, ...]) -> list[tuple[Any, ...]]:
    rows = [tuple(canon(x) for x in r) for r in df.select(cols).iter_rows()]
    return sorted(rows, key=lambda t: tuple(_sort_part(v) if not isinstance(v, tuple) else (2, 0)
                                            for v in t))


def test_is_a_frame_ops() -> None:
    assert isinstance(BE, FrameOps)


@pytest.mark.parametrize(("float_units", "G", "R"), [(False, 2, 1), (True, 3, 2), (False, 1, 3)])
def test_bounding_matches_reference(float_units: bool, G: int, R: int) -> None:
    df = frame(600, 40, 12, seed=G, float_units=float_units)
    spec = BoundSpec("u", ("g",), G, R, key=KEY, value_columns=("v", "w"))
    got = BE.keyed_bound(df, spec)
    assert got.columns == ["u", "g", "v", "w"]
    want = ref_bound(df.to_dicts(), "u", ("g",), ("v", "w"), G, R, _hash.key_seed(KEY))
    assert kept(got, ("u", "g", "v", "w")) == want


def test_exact_repair_when_truncated_bits_collide(monkeypatch: pytest.MonkeyPatch) -> None:
    """With 1 pair bit and a 2-row part the packed key cannot decide: the exact re-sort must."""
    df = frame(500, 30, 9, seed=5)
    spec = BoundSpec("u", ("g",), 2, 1, key=KEY, value_columns=("v",))
    want = kept(BE.keyed_bound(df, spec), ("u", "g", "v"))
    monkeypatch.setattr(pb, "_PAIR_BITS", 1)
    monkeypatch.setattr(pb, "_UNIT_BITS", 2)
    assert kept(BE.keyed_bound(df, spec), ("u", "g", "v")) == want
    monkeypatch.setattr(pb, "_CHUNK", 7)  # chunked hashing and gathering: same rows
    assert kept(BE.keyed_bound(df, spec), ("u", "g", "v")) == want
    monkeypatch.setattr(pb, "_PART_ROWS", 64)  # unit-disjoint parts give the same rows
    assert kept(BE.keyed_bound(df, spec), ("u", "g", "v")) == want


@pytest.mark.parametrize(("pair_bits", "G", "R"), [(32, 2, 1), (1, 3, 2), (1, 1, 3)])
def test_integer_units_clustered_by_value_match_reference(monkeypatch: pytest.MonkeyPatch,
                                                          pair_bits: int, G: int, R: int) -> None:
    """Null-free integer units are clustered by value, not by hash; with one pair bit most of a
    unit's groups tie on the packed key and the exact comparison and repair decide."""
    df = frame(600, 40, 12, seed=G).with_columns(pl.col("u").fill_null(-7) * 1000 - 5)
    assert pb._unit_offsets(df["u"], 40) is not None
    monkeypatch.setattr(pb, "_EXACT_PAIR_BITS", pair_bits)
    spec = BoundSpec("u", ("g",), G, R, key=KEY, value_columns=("v", "w"))
    want = ref_bound(df.to_dicts(), "u", ("g",), ("v", "w"), G, R, _hash.key_seed(KEY))
    assert kept(BE.keyed_bound(df, spec), ("u", "g", "v", "w")) == want
    monkeypatch.setattr(pb, "_PART_ROWS", 64)  # parts: the same rows
    assert kept(BE.keyed_bound(df, spec), ("u", "g", "v", "w")) == want
    monkeypatch.setattr(pb, "_EXACT_UNITS", False)  # hashed units: the same rows
    assert kept(BE.keyed_bound(df, spec), ("u", "g", "v", "w")) == want


def test_unit_offsets_only_when_exact_and_small() -> None:
    assert pb._unit_offsets(pl.Series([5, -2, 5]), 4) is not None
    assert pb._unit_offsets(pl.Series([5, -2, 5]), 2) is None  # span 7 needs 3 bits
    assert pb._unit_offsets(pl.Series([5, None]), 8) is None  # null: hashed
    assert pb._unit_offsets(pl.Series([1.0, 2.0]), 8) is None  # floats: hashed
    assert pb._unit_offsets(pl.Series([-(2**63), 2**63 - 1]), 63) is None


def test_wrong_variant_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deliberately wrong: keep the largest hashes instead of the smallest."""
    df = frame(400, 20, 9, seed=2)
    spec = BoundSpec("u", ("g",), 2, 1, key=KEY, value_columns=("v",))
    monkeypatch.setattr(_hash, "signed_order", lambda h: ~(h ^ np.uint64(1 << 63)))
    want = ref_bound(df.to_dicts(), "u", ("g",), ("v",), 2, 1, _hash.key_seed(KEY))
    assert kept(BE.keyed_bound(df, spec), ("u", "g", "v")) != want


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(-2, 2)),
                min_size=1, max_size=80),
       st.integers(1, 3), st.integers(1, 3), st.binary(min_size=16, max_size=16))
def test_limits_hold_and_units_are_independent(rows: list[tuple[int, int, int]], G: int, R: int,
                                               key: bytes) -> None:
    df = pl.DataFrame(rows, schema=["u", "g", "x"], orient="row")
    spec = BoundSpec("u", ("g",), G, R, key=key, value_columns=("x",))
    out = BE.keyed_bound(df, spec)
    per_pair = out.group_by("u", "g").len()
    assert per_pair["len"].max() <= R  # type: ignore[operator]
    assert per_pair.group_by("u").len()["len"].max() <= G  # type: ignore[operator]
    # one unit's kept rows do not depend on the other units' rows
    alone = BE.keyed_bound(df.filter(pl.col("u") == rows[0][0]), spec)
    assert kept(alone, ("u", "g", "x")) == kept(out.filter(pl.col("u") == rows[0][0]),
                                                 ("u", "g", "x"))


def test_no_unit_and_no_groups() -> None:
    df = frame(100, 10, 3)
    assert BE.keyed_bound(df, BoundSpec(None, ("g",), 1, 1, key=KEY)).height == 100
    out = BE.keyed_bound(df, BoundSpec("u", (), 1, 2, key=KEY, value_columns=("v",)))
    assert out.group_by("u").len()["len"].max() == 2
    want = ref_bound(df.to_dicts(), "u", (), ("v",), 1, 2, _hash.key_seed(KEY))
    assert kept(out, ("u", "v")) == want


def test_sum_of_squares_of_shifted_values() -> None:
    """``shift`` squares ``x − c`` after the clamp (the variance's centred sum of squares)."""
    df = pl.DataFrame({"g": [1] * 5, "x": [0.5, 2.5, float("nan"), 10.0, -3.0]})
    q = StatSpec("q", "fixed_sum_sq", "x", Fraction(-1), Fraction(3), shift=Fraction(1))
    plain = StatSpec("p", "fixed_sum_sq", "x", Fraction(-1), Fraction(3))
    v = BE.group_stats(df, ["g"], [(1,)], [q, plain]).values
    # clamp: .5, 2.5, 3, -1 less 1: -.5, 1.5, 2, -2; squares .25→0, 2.25→2, 4, 4; NaN→0
    assert v["q"].tolist() == [10]
    assert v["p"].tolist() == [0 + 6 + 9 + 1 + 0]
    with pytest.raises(InvalidParameter, match="shift"):
        BE.group_stats(df, ["g"], [(1,)], [StatSpec("s", "fixed_sum", "x", Fraction(-1),
                                                    Fraction(3), shift=Fraction(1))])
    with pytest.raises(InvalidParameter, match="shift"):
        BE.group_stats(df, ["g"], [(1,)], [replace(q, shift=Fraction(1, 3))])


def test_stats_exact() -> None:
    df = pl.DataFrame({"u": [1, 1, 2, 3, None], "g": [1, 1, 2, 9, 1],
                       "x": [0.5, 2.5, float("nan"), 10.0, -3.0]})
    specs = [StatSpec("n", "count"), StatSpec("units", "unit_count", "u"),
             StatSpec("s", "fixed_sum", "x", Fraction(-1), Fraction(3), exponent=-1),
             StatSpec("q", "fixed_sum_sq", "x", Fraction(-1), Fraction(3), exponent=0),
             StatSpec("m", "at_most", "x", Fraction(-1), Fraction(3), candidates=(-2, 0, 1, 6))]
    st_ = BE.group_stats(df, ["g"], [(1,), (2,), (5,)], specs)
    assert st_.keys == [(1,), (2,), (5,)]
    v = {k: a.tolist() for k, a in st_.values.items()}
    assert v["n"] == [3, 1, 0] and v["units"] == [2, 1, 0]
    # fixed point in halves: 0.5→1, 2.5→5, -3→-2 (clamped); NaN→-2 (lower)
    assert v["s"] == [1 + 5 - 2, -2, 0]
    # squares: 0.25→0 (half-even), 6.25→6, clamp(-3)=-1→1; NaN→lower 0
    assert v["q"] == [0 + 6 + 1, 0, 0]
    # at_most (exponent 0): 0.5→0, 2.5→2, -3→-1; NaN→-1
    assert v["m"] == [[0, 2, 2, 3], [0, 1, 1, 1], [0, 0, 0, 0]]
    priv = BE.group_stats(df, ["g"], None, specs[:1])
    assert priv.keys == [(1,), (2,), (9,)]
    whole = BE.group_stats(df, [], None, specs[:2])
    assert whole.keys == [()] and whole.values["n"].tolist() == [5]
    assert whole.values["units"].tolist() == [4]  # null is one unit


def test_huge_sums_are_python_ints() -> None:
    df = pl.DataFrame({"x": [2.0**40] * 5000})
    s = StatSpec("s", "fixed_sum", "x", Fraction(0), Fraction(2**40), exponent=-12)
    out = BE.group_stats(df, [], None, [s]).values["s"]
    assert out.tolist() == [5000 * 2**52] and math.isfinite(float(out[0]))


def test_errors() -> None:
    df = frame(20, 5, 3)
    with pytest.raises(InvalidParameter, match="unknown column 'nope'"):
        BE.keyed_bound(df, BoundSpec("nope", (), 1, 1, key=KEY))
    with pytest.raises(InvalidParameter, match="column 'l' has type"):
        BE.keyed_bound(pl.DataFrame({"l": [[1]]}), BoundSpec("l", (), 1, 1, key=KEY))
    with pytest.raises(InvalidParameter, match="not distinct"):
        BE.group_stats(df, ["w"], [(1,), (1,)], [StatSpec("n", "count")])
    with pytest.raises(OutOfDomain, match="keys"):
        BE.group_stats(df, ["w"], [("x",)], [StatSpec("n", "count")])
    with pytest.raises(InvalidParameter, match="not numeric"):
        BE.group_stats(df, ["w"], None,
                       [StatSpec("s", "fixed_sum", "g", Fraction(0), Fraction(1))])
    with pytest.raises(UnsafeExpression):
        BE.check_predicates(["rank(u) > 1"], BE.schema(df))
    ok = BE.check_predicates(["w > 1", pl.col("u").is_null()], BE.schema(df))
    assert BE.filter(df, ok).collect().height == df.filter((pl.col("w") > 1)
                                                            & pl.col("u").is_null()).height


def test_null_units_mixed_with_null_free_gathers() -> None:
    """Regression (found by Hypothesis): a key column with nulls whose gathered slices are
    null-free on one side and not on the other must compare exactly, not crash."""
    _ne = pb._ne
    a = np.array([3.0, 0.0])
    b = pl.Series([None, 0.0], dtype=pl.Float64)
    assert _ne(a, b).tolist() == [True, False]
    assert _ne(b, a).tolist() == [True, False]
    nan_a, nan_b = np.array([np.nan]), pl.Series([float("nan")])
    assert _ne(nan_a, nan_b).tolist() == [False]
    df = pl.DataFrame({"u": [None, 3], "g": [float("nan"), 0.0], "x": [0.0, None]})
    spec = BoundSpec("u", ("g",), 1, 1, key=bytes(16), value_columns=("x",))
    out = pb.PolarsBackend().keyed_bound(df.lazy(), spec)
    assert len(pl.LazyFrame(out).collect() if isinstance(out, pl.LazyFrame) else out) == 2


def test_unchecked_predicates_and_foreign_dtypes_are_refused() -> None:
    """The protocol passes checked predicates and engine dtypes as opaque objects: anything that
    `check_predicates` / `native_schema` did not return is refused with a typed error."""
    df = frame(20, 5, 3)
    with pytest.raises(InvalidParameter, match="predicate of type int was not checked"):
        BE.filter(df, [3])
    with pytest.raises(InvalidParameter, match="predicate of type int was not checked"):
        BE.predicate_columns([3])
    with pytest.raises(InvalidParameter, match="predicate of type int was not checked"):
        BE.rename_predicates([3], {"w": "c0"}, {"c0": "int"})
    with pytest.raises(InvalidParameter, match="dtype='Int64' is not a Polars data type"):
        BE.admitted_type("w", "Int64", "key")
    ok = BE.check_predicates(["w > 1"], BE.schema(df))
    assert BE.predicate_columns(ok) == ("w",)
    assert BE.admitted_type("w", pl.Int64, "key") == "int"
    assert BE.admitted_type("w", pl.Int64(), "key") == "int"
