"""Hypothesis strategies shared by several test modules (imported as ``_strategies``; the tests
directory is put on ``sys.path`` by ``tests/conftest.py``)."""

from __future__ import annotations

from hypothesis import strategies as st

values = st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=0, max_size=20)


@st.composite
def neighbours(draw: st.DrawFn) -> tuple[list[float], list[float], int]:
    """A dataset, and one obtained from it by k random insertions/deletions."""
    u = draw(values)
    v = list(u)
    k = draw(st.integers(0, 4))
    for _ in range(k):
        if v and draw(st.booleans()):
            v.pop(draw(st.integers(0, len(v) - 1)))
        else:
            v.insert(draw(st.integers(0, len(v))), draw(st.floats(-1e6, 1e6)))
    return u, v, k
