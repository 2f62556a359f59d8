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


@pytest.fixture(scope="session")
def spark_connect(spark: Any) -> Iterator[Any]:
    """A Spark Connect session served by the shared session's JVM (an ephemeral loopback port,
    so no second JVM starts).  Skipped without the Connect client (``pyspark[connect]``:
    grpcio, grpcio-status, googleapis-common-protos, zstandard, pandas, pyarrow)."""
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies()
    except ImportError as e:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but the Spark Connect client is missing: {e}")
        pytest.skip(f"no Spark Connect client: {e}")
    service = spark._jvm.org.apache.spark.sql.connect.service
    service.SparkConnectService.start(spark.sparkContext._jsc.sc())
    port = getattr(service, "SparkConnectService$").__getattr__("MODULE$").localPort()
    s = ConnectSession.builder.remote(f"sc://127.0.0.1:{port}").create()
    yield s
    s.stop()
