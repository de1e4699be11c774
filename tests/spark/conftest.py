"""One real Spark local-mode session for all Spark tests (skipped without PySpark or Java)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip(
    "pyspark", reason="the Spark tests need the spark extra: pip install 'neardup[spark]'"
)
if shutil.which("java") is None:
    pytest.skip("the Spark tests need Java 17 on PATH", allow_module_level=True)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from neardup.spark.session import spark_session

    # no web UI (the status store still runs): less work per job in a suite of small jobs.
    # One JVM runs every Spark test's jobs for the whole suite (~20 minutes on 2 cores): its
    # default 1 GiB heap ran out once there (OutOfMemoryError in a test that passes alone)
    conf = {"spark.ui.enabled": "false", "spark.driver.memory": "2g"}
    session = spark_session("local[2]", shuffle_partitions=2, conf=conf)
    yield session
    session.stop()
