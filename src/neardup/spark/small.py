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
import pyarrow as pa
from pyspark import cloudpickle  # the serializer Spark ships dd to executors with
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from neardup.dedup.core import verified_pairs
from neardup.dedup.pipeline import Deduplicator

#: documents up to which :func:`neardup.spark.engine.decide` decides on the driver;
#: ``decide(small_job_docs=0)`` always runs the distributed plan
SMALL_JOB_DOCS = 200_000
#: ... and bytes of text (UTF-8) up to which it does
SMALL_JOB_BYTES = 128 << 20


#: a plan whose estimated size (Spark's statistics: the cached bytes, or the files' bytes) is
#: at most SMALL_JOB_BYTES / this is collected at once, without a job to count it first: even
#: text compressed this many times over fits the byte limit
_ESTIMATE_MARGIN = 8


def is_small(docs: DataFrame, max_docs: int, max_bytes: int = SMALL_JOB_BYTES) -> bool:
    """Whether ``docs (pos, text, ts)`` is small enough to decide on the driver (one job)."""
    if max_docs <= 0:
        return False
    row: Any = docs.agg(F.count("*"), F.sum(F.octet_length("text"))).first()
    return int(row[0]) <= max_docs and int(row[1] or 0) <= max_bytes


def estimated_bytes(docs: DataFrame) -> int | None:
    """Spark's size estimate of ``docs``'s plan (no job runs), or None when it has none."""
    try:
        jdf: Any = docs._jdf  # no public API gives the optimizer's statistics
        return int(str(jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    except Exception:  # Spark Connect (no JVM here) or a Py4J error: count with a job
        return None


def collect_if_small(
    docs: DataFrame, max_docs: int, max_bytes: int = SMALL_JOB_BYTES
) -> pa.Table | None:
    """``docs (pos, text, ts)`` as an Arrow table when it is small enough to decide on the
    driver, else None. A plan Spark estimates far below ``max_bytes`` is collected in one job
    (a small job's fixed cost is its jobs: the count alone took 0.12-0.19 s of 0.45 s on
    3,080 People's Daily articles); otherwise one job counts documents and bytes first."""
    if max_docs <= 0:
        return None
    estimate = estimated_bytes(docs)
    if estimate is not None and estimate <= max_bytes // _ESTIMATE_MARGIN:
        table = docs.select("pos", "text", "ts").toArrow()
        return table if table.num_rows <= max_docs else None
    if not is_small(docs, max_docs, max_bytes):
        return None
    return docs.select("pos", "text", "ts").toArrow()


def decide_on_driver(
    docs: DataFrame, table: pa.Table, dd: Deduplicator, info: dict[str, Any], pairs: bool = False
) -> DataFrame:
    """Decisions ``(pos, status, rep, distance, cluster_id, similarity)`` of
    ``docs (pos, text, ts)``, collected as ``table``, decided in this process by a fresh copy
    of ``dd`` (the caller's stays untouched). ``pairs``: ``info["pairs"]`` gets the verified
    pairs ``(a, b, distance, similarity)`` (positions, by
    :func:`~neardup.dedup.core.verified_pairs`)."""
    table = table.sort_by("pos")
    pos = np.asarray(table.column("pos").to_numpy(), np.int64)
    texts = table.column("text").to_pylist()
    timed = dd.window is not None or dd.keep == "newest"
    ts = table.column("ts").to_numpy(zero_copy_only=False) if timed else None
    blob: bytes = cloudpickle.dumps(dd)  # type: ignore[no-untyped-call]
    fresh: Deduplicator = cloudpickle.loads(blob)
    d = fresh.run(texts, None if ts is None else np.asarray(ts, np.float64).tolist())
    info["late_documents"] = int(fresh.describe()["late_documents"])
    if pairs:
        chunk = fresh.prepare(texts)
        a, b, dist, sim = verified_pairs(
            fresh.state.decide_config, fresh.state.candidates, fresh.verifier, chunk
        )
        info["pairs"] = (pos[a], pos[b], dist, sim)
    info["documents"] = info["decided"] = int(pos.size)
    local = np.arange(pos.size)
    rep = pos[np.where(d.duplicate_of < 0, local, d.duplicate_of)]
    # an Arrow table goes to the JVM as is (a pandas frame is converted to Arrow first)
    frame = pa.table(
        {
            "pos": pos,
            "status": d.status.astype(np.int8),
            "rep": rep,
            "distance": d.distance.astype(np.int16),
            "cluster_id": d.cluster_id.astype(np.int64),
            "similarity": np.where(d.duplicate_of < 0, np.nan, d.similarity),
            "threshold": d.threshold,
        }
    )
    schema = (
        "pos long, status byte, rep long, distance short, cluster_id long, similarity double, "
        "threshold double"
    )
    out: DataFrame = docs.sparkSession.createDataFrame(frame, schema)
    return out
