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

    # no web UI (the status store still runs): less work per job in a suite of small jobs (the
    # JVM's heap is set for the whole suite in tests/conftest.py)
    session = spark_session("local[2]", shuffle_partitions=2, conf={"spark.ui.enabled": "false"})
    yield session
    session.stop()
