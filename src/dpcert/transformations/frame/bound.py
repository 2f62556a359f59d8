"""Contribution bounding: UnitDistance → GroupDistance, ``d ↦ (d, d·G, d·R, d·G·R)``
(proof: ``docs/proofs/frame_bound.md``).

The backend keeps, for each privacy unit, at most ``G = max_groups`` groups and at most
``R = max_rows_per_group`` rows in each (so at most ``G·R`` rows in all), chosen by a keyed
hash of the unit's own rows (so the choice is uniformly scattered, never "first rows", and
depends on no other unit).  Units are
separated exactly (every NaN, -0.0 and null is one unit); the hash only orders.  With
``unit=None`` every row is its own unit: nothing is dropped and ``d ↦ (d, d, d, d)``.

Given a fixed ``key`` the transformation is deterministic; with ``key=None`` a fresh 16-byte key
is drawn from the CSPRNG on every call (``randomized``), which is how releases use it.

Examples
--------
>>> from dpcert.core.frames import FrameDomain, UnitDistance
>>> space = (FrameDomain((("pid", "int"), ("g", "str")), dict), UnitDistance("pid"))
>>> t = make_bound_contributions(*space, by=("g",), max_groups=2, max_rows_per_group=3,
...                              backend=None, key=bytes(16))
>>> t.map(1), t.map(2)
((1, 2, 3, 6), (2, 4, 6, 12))
"""

from __future__ import annotations

from collections.abc import Sequence

from dpcert._validate import check_int
from dpcert.backends.base import BoundSpec, FrameOps
from dpcert.core.domains import Domain
from dpcert.core.frames import FrameDomain, GroupDistance
from dpcert.core.metrics import Metric
from dpcert.core.partial import PartialConstructor, partial
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.samplers import EntropySource, default_source
from dpcert.transformations.frame.filter import check_frame_space

__all__ = ["KEY_BYTES", "make_bound_contributions", "then_bound_contributions"]

#: Bytes of the bounding key.
KEY_BYTES = 16


def _check_key(key: object) -> bytes | None:
    if key is None:
        return None
    if not isinstance(key, bytes) or len(key) != KEY_BYTES:
        raise InvalidParameter(f"key=<{type(key).__name__}> must be {KEY_BYTES} bytes or None")
    return key


def make_bound_contributions(input_domain: Domain, input_metric: Metric, by: Sequence[str],
                             max_groups: int, max_rows_per_group: int, *,
                             backend: FrameOps | None, key: bytes | None = None,
                             value_columns: Sequence[str] = (),
                             source: EntropySource | None = None) -> Transformation:
    """Keep at most ``max_groups`` groups (of columns ``by``) and ``max_rows_per_group`` rows
    per group for each privacy unit.

    Parameters
    ----------
    input_domain : FrameDomain
    input_metric : UnitDistance
    by : column names of the groups (``()``: one group)
    max_groups, max_rows_per_group : int ≥ 1
    backend : FrameOps (``None`` only to read the map)
    key : 16 bytes, or None for a fresh key per call
    value_columns : columns whose values decide which of a unit's rows in a group are kept
    source : entropy for fresh keys (tests pass an insecure seeded source)

    Returns
    -------
    Transformation
        Frame → bounded frame; ``UnitDistance → GroupDistance``,
        ``d ↦ (d, d·G, d·R, d·G·R)``.
    """
    domain, metric = check_frame_space("make_bound_contributions", input_domain, input_metric)
    cols = domain.columns
    by_t = tuple(by)
    for c in (*by_t, *value_columns, *([metric.unit] if metric.unit else [])):
        if c not in cols:
            raise InvalidParameter(f"column {c!r} is not in the schema {sorted(cols)}")
    G = check_int(max_groups, "max_groups", minimum=1)
    R = check_int(max_rows_per_group, "max_rows_per_group", minimum=1)
    k = _check_key(key)
    if metric.unit is None:
        G, R = 1, 1  # each row is a unit: one row in one group, nothing to bound
    out = FrameDomain(domain.schema, domain.schema_of, bounds=(by_t, G, R))  # no examples
    unit = metric.unit
    vals = tuple(value_columns)

    def function(frame: object) -> object:
        if unit is None:
            return frame
        if backend is None:
            raise InvalidParameter("make_bound_contributions was built without a backend")
        kk = k
        if kk is None:
            src = default_source() if source is None else source
            kk = src.random_uint64(2).tobytes()
        return backend.keyed_bound(frame, BoundSpec(unit, by_t, G, R, key=kk,
                                                    value_columns=vals))

    return Transformation(
        domain, metric, out, GroupDistance(),
        function=function,
        stability_map=lambda d: (d, d * G, d * R, d * G * R),
        name="bound_contributions",
        params={"unit": unit, "by": list(by_t), "max_groups": G, "max_rows_per_group": R,
                "key": "per call" if k is None else "fixed"},
        randomized=k is None and unit is not None,
        proof="frame_bound.md",
    )


def then_bound_contributions(by: Sequence[str], max_groups: int, max_rows_per_group: int, *,
                             backend: FrameOps | None, key: bytes | None = None,
                             value_columns: Sequence[str] = (),
                             source: EntropySource | None = None) -> PartialConstructor:
    """Partial form of `make_bound_contributions`."""
    return partial(make_bound_contributions, "bound_contributions", by, max_groups,
                   max_rows_per_group, backend=backend, key=key, value_columns=value_columns,
                   source=source)
