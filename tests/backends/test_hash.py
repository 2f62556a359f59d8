"""dpcert's keyed hash equals Spark's xxhash64: fixed values printed by pyspark 4.3, and an
independent scalar reference on many values (ints, extremes, floats with NaN/-0.0, nulls, UTF-8
strings of every length up to 100 bytes)."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest
from backend_reference import ref_bytes, ref_chain, ref_long, signed

from dpcert.backends import _hash as H
from dpcert.errors import InvalidParameter

# Printed by pyspark 4.3.0: spark.range(1).select(F.xxhash64(...))
SPARK_FIXED = [
    (pl.Series([1], dtype=pl.Int64), -7001672635703045582),
    (pl.Series([0], dtype=pl.Int64), -5252525462095825812),
    (pl.Series([-1], dtype=pl.Int64), 3858142552250413010),
    (pl.Series(["abc"]), 1423657621850124518),
    (pl.Series(["é"]), 2065146811275570100),
]


@pytest.mark.parametrize(("s", "expected"), SPARK_FIXED)
def test_matches_values_printed_by_spark(s: pl.Series, expected: int) -> None:
    assert int(H.as_signed(H.hash_series(s, H.SPARK_SEED))[0]) == expected


def test_longs_match_reference() -> None:
    rng = random.Random(3)
    xs = [0, 1, -1, 2**63 - 1, -(2**63)] + [rng.randint(-(2**63), 2**63 - 1) for _ in range(500)]
    seeds = np.array([rng.randint(0, 2**64 - 1) for _ in xs], dtype=np.uint64)
    got = H.hash_long(np.array(xs, dtype=np.int64), seeds)
    assert [int(v) for v in got] == [ref_long(x, int(s)) for x, s in zip(xs, seeds, strict=True)]


def test_strings_of_every_length_match_reference() -> None:
    rng = random.Random(4)
    alphabet = "ab\x00é漢😀"
    strs = ["".join(rng.choice(alphabet) for _ in range(n)) for n in range(0, 60) for _ in (0, 1)]
    strs += ["x" * n for n in range(100)]
    got = H.hash_series(pl.Series(strs), 7)
    assert [int(v) for v in got] == [ref_bytes(s.encode(), 7) for s in strs]


def test_floats_are_canonical_and_nulls_skipped() -> None:
    vals = [0.0, -0.0, float("nan"), -float("nan"), None, 1.5, float("inf")]
    got = H.hash_series(pl.Series(vals, dtype=pl.Float64), 99)
    assert got[0] == got[1] and got[2] == got[3] and got[4] == 99
    assert [int(v) for v in got] == [ref_chain([v], 99) for v in vals]
    f32 = H.hash_series(pl.Series([1.5, -0.0], dtype=pl.Float32), 99)
    assert list(f32) == list(got[[5, 0]])


def test_chain_with_key_matches_reference() -> None:
    key = bytes(range(16))
    rows = [(1, "a", 2.5), (None, "é", float("nan")), (-5, None, -0.0)]
    cols = [pl.Series([r[i] for r in rows]) for i in range(3)]
    got = H.hash_chain(cols, H.key_seed(key))
    k1, k2 = H.key_longs(key)
    assert [signed(int(v)) for v in got] == [signed(ref_chain([k1, k2, *r], 42)) for r in rows]


def test_ints_bools_dates_encode_as_longs() -> None:
    import datetime as dt

    a = H.hash_series(pl.Series([1, 0], dtype=pl.Int8), 5)
    assert list(H.hash_series(pl.Series([True, False]), 5)) == list(a)
    d = H.hash_series(pl.Series([dt.date(1970, 1, 2)]), 5)
    assert int(d[0]) == ref_long(1, 5)


def test_refuses_types_without_exact_encoding() -> None:
    with pytest.raises(InvalidParameter, match="column 'l' has type"):
        H.hash_series(pl.Series("l", [[1]]), 1)
    with pytest.raises(InvalidParameter, match="key must be 16 bytes"):
        H.key_longs(b"short")


def test_a_wrong_variant_is_caught() -> None:
    """Deliberately wrong: dropping the -0.0 normalisation changes the hash (the test above
    would fail), and the reference distinguishes a seed change."""
    bits = np.array([-0.0]).view(np.uint64)
    assert int(H.hash_long(bits, 1)[0]) != ref_chain([-0.0], 1)
    assert ref_long(5, 1) != ref_long(5, 2)
