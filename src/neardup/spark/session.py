"""One place that builds the SparkSession the engine runs on (local mode or a cluster).

The executors' Python is the driver's (``spark.pyspark.python``) in local mode; on a cluster
the deployment decides (spark-submit ``--conf spark.pyspark.python=...`` or an archive). Without
the C extension the numba kernels are cached per machine: set ``NUMBA_CACHE_DIR`` on executors
(``spark.executorEnv.NUMBA_CACHE_DIR``) to a writable directory, so each executor compiles them
at most once (see docs/SCALE.md for the measured cost).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from neardup.spark import require_pyspark


def spark_session(
    master: str | None = "local[*]",
    *,
    app_name: str = "neardup-dedup",
    shuffle_partitions: int | None = None,
    conf: dict[str, str] | None = None,
) -> Any:
    """Get or create a SparkSession with the settings the engine relies on.

    ``master=None`` leaves the master to spark-submit. Arrow batches of 4,096 rows keep the
    per-batch Python overhead small and the memory of a text batch bounded.
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
        # local mode: workers must import this neardup, i.e. run this interpreter
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    settings = {
        "spark.sql.execution.arrow.maxRecordsPerBatch": "4096",
        "spark.sql.execution.arrow.pyspark.enabled": "true",  # toPandas / createDataFrame
        "spark.sql.adaptive.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
    }
    # shuffle_partitions None: the job picks them from the input size (job.shuffle_partitions)
    if shuffle_partitions is not None:
        settings["spark.sql.shuffle.partitions"] = str(shuffle_partitions)
    cache = os.environ.get("NUMBA_CACHE_DIR")
    if cache:
        settings["spark.executorEnv.NUMBA_CACHE_DIR"] = cache
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
