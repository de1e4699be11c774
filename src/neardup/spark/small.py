"""Small jobs: decide on the driver with the library's own code.

Below :data:`SMALL_JOB_DOCS` documents and :data:`SMALL_JOB_BYTES` of text, the distributed plan
(about forty Spark jobs, a dozen shuffles, three Python round trips on executors) costs far more
than the work: the Reuters-21578 job (19,043 documents) took 148 s against MLlib's 8 s on
``local[2]``, while :meth:`neardup.Deduplicator.run` decides it in 0.5 s. So the texts are
collected with Arrow and ``run`` decides them on the driver: it is the reference every engine
equals, so the decisions are the same by construction, and nothing Python runs on executors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pyspark import cloudpickle  # the serializer Spark ships dd to executors with
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from neardup.dedup.pipeline import Deduplicator

#: documents up to which :func:`neardup.spark.engine.decide` decides on the driver;
#: ``decide(small_job_docs=0)`` always runs the distributed plan
SMALL_JOB_DOCS = 200_000
#: ... and bytes of text (UTF-8) up to which it does
SMALL_JOB_BYTES = 128 << 20


def is_small(docs: DataFrame, max_docs: int, max_bytes: int = SMALL_JOB_BYTES) -> bool:
    """Whether ``docs (pos, text, ts)`` is small enough to decide on the driver (one job)."""
    if max_docs <= 0:
        return False
    row: Any = docs.agg(F.count("*"), F.sum(F.octet_length("text"))).first()
    return int(row[0]) <= max_docs and int(row[1] or 0) <= max_bytes


def decide_on_driver(docs: DataFrame, dd: Deduplicator, info: dict[str, Any]) -> DataFrame:
    """Decisions ``(pos, status, rep, distance, cluster_id, similarity)`` of
    ``docs (pos, text, ts)``, decided in this process by a fresh copy of ``dd`` (the caller's
    stays untouched)."""
    table = docs.select("pos", "text", "ts").toArrow().sort_by("pos")
    pos = np.asarray(table.column("pos").to_numpy(), np.int64)
    texts = table.column("text").to_pylist()
    timed = dd.window is not None or dd.keep == "newest"
    ts = table.column("ts").to_numpy(zero_copy_only=False) if timed else None
    blob: bytes = cloudpickle.dumps(dd)  # type: ignore[no-untyped-call]
    fresh: Deduplicator = cloudpickle.loads(blob)
    d = fresh.run(texts, None if ts is None else np.asarray(ts, np.float64).tolist())
    info["late_documents"] = int(fresh.describe()["late_documents"])
    info["documents"] = info["decided"] = int(pos.size)
    local = np.arange(pos.size)
    rep = pos[np.where(d.duplicate_of < 0, local, d.duplicate_of)]
    import pandas as pd

    frame = pd.DataFrame(
        {
            "pos": pos,
            "status": d.status.astype(np.int8),
            "rep": rep,
            "distance": d.distance.astype(np.int16),
            "cluster_id": d.cluster_id.astype(np.int64),
            "similarity": np.where(d.duplicate_of < 0, np.nan, d.similarity),
        }
    )
    schema = "pos long, status byte, rep long, distance short, cluster_id long, similarity double"
    out: DataFrame = docs.sparkSession.createDataFrame(frame, schema)
    return out
