"""Backend tests: the reference helpers' directory on the path, and one shared Spark session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local Spark session for the whole run (skipped cleanly without pyspark or Java)."""
    pytest.importorskip("pyspark")
    from dpcert.backends.spark import local_session

    try:
        s = local_session("local[2]")
    except Exception as e:  # no Java, no network loopback, ...
        pytest.skip(f"cannot start a local Spark session: {type(e).__name__}")
    yield s
    s.stop()
