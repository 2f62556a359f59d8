"""Backend tests: the reference helpers' directory on the path, and one shared Spark session."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local Spark session for the whole run.  Skipped cleanly without pyspark or Java,
    except under ``CI=true``, where the Spark tests must run (``make spark``)."""
    ci = os.environ.get("CI", "").lower() == "true"
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if ci:
            pytest.fail("CI=true but pyspark is not installed (pip install -e '.[spark]')")
        pytest.skip("pyspark is not installed")
    from dpcert.backends.spark import local_session

    try:
        s = local_session("local[2]")
    except Exception as e:  # no Java, no network loopback, ...
        if ci:
            pytest.fail(f"CI=true but no local Spark session could start: {e}")
        pytest.skip(f"cannot start a local Spark session: {type(e).__name__}")
    yield s
    s.stop()
