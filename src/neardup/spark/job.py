"""The end-to-end Spark dedup job: read -> decide -> write, shared by the CLI and spark-submit.

Output: every record with ``cluster_id``, ``duplicate_of`` (id of the kept document),
``distance`` and ``status``, as ``neardup dedup`` writes them. Targets:

- ``*.parquet``: a Parquet *directory* written by the executors (the form for large runs;
  columns inferred from the output records);
- a path ending in ``/``: a directory of JSON-lines part files written by the executors;
- ``*.jsonl``, ``*.jsonl.gz`` or ``-``: one file written by the driver in input order through
  :func:`neardup.io.open_writer` (byte-identical to the local engine; for small runs).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup.dedup.decisions import STATUS_NAMES
from neardup.dedup.disorder import release_order
from neardup.dedup.pairs import pair_records
from neardup.dedup.pipeline import Deduplicator
from neardup.io import ReadStats, open_writer
from neardup.spark.engine import decide, with_horizons
from neardup.spark.reader import Fields, read_documents


@dataclass(frozen=True)
class JobResult:
    """What the job did: counts per status, read stats, timings and engine counters."""

    counts: dict[str, int]
    stats: ReadStats
    seconds: float
    info: dict[str, Any]
    clusters: dict[str, Any] | None = None  # counts and the largest sizes, as the local summary
    members: list[tuple[int, int, int, str]] | None = None  # (pos, kept pos, cluster, id JSON)


def output_kind(out: str) -> str:
    """``parquet-dir``, ``jsonl-dir`` or ``file`` (see the module docs).

    >>> output_kind("s3a://bucket/out.parquet"), output_kind("hdfs:///x/"), output_kind("a.jsonl")
    ('parquet-dir', 'jsonl-dir', 'file')
    """
    if out.rstrip("/").endswith(".parquet"):
        return "parquet-dir"
    if out.endswith("/"):
        return "jsonl-dir"
    return "file"


def _with_decisions(docs: DataFrame, decisions: DataFrame, drop: bool) -> DataFrame:
    """Docs joined with their decision and the kept document's id (JSON)."""
    ids = docs.select(F.col("pos").alias("rep"), F.col("id").alias("rep_id"))
    out = docs.select("pos", "record").join(decisions, "pos").join(ids, "rep", "left")
    if drop:
        out = out.where(F.col("rep") == F.col("pos"))
    return out


def _fields(row: Any) -> dict[str, Any]:
    kept = row["rep"] == row["pos"]
    return {
        "cluster_id": row["cluster_id"],
        "duplicate_of": None if kept else json.loads(row["rep_id"]),
        "distance": None if kept else row["distance"],
        "similarity": None if kept else _similarity(row),
        "threshold": None if kept or _nan(row["threshold"]) else row["threshold"],
        "status": STATUS_NAMES[row["status"]],
    }


def _nan(x: Any) -> bool:
    return x is None or x != x


def _similarity(row: Any) -> float | None:
    """4 decimals, as the local engine writes it; 1.0 for an exact duplicate."""
    if STATUS_NAMES[row["status"]] == "exact_duplicate":
        return 1.0
    sim = row["similarity"]
    return None if sim is None or sim != sim else round(float(sim), 4)


def _line(row: Any) -> str:
    rec = {**json.loads(row["record"]), **_fields(row)}
    return json.dumps(rec, ensure_ascii=False, default=str)


def write_output(spark: SparkSession, joined: DataFrame, out: str) -> None:
    """Write the decided records to ``out`` (see :func:`output_kind`)."""
    kind = output_kind(out)
    if kind == "file":
        first = joined.select("rep_id").where(F.col("rep_id").isNotNull()).take(1)
        int_ids = bool(first) and isinstance(json.loads(first[0][0]), int)
        hints = _parquet_hints(int_ids)
        with open_writer(out, type_hints=hints) as writer:
            for row in joined.orderBy("pos").toLocalIterator():
                writer.write({**json.loads(row["record"]), **_fields(row)})
        return
    lines = joined.orderBy("pos").rdd.map(_line)
    if kind == "jsonl-dir":
        lines.saveAsTextFile(out.rstrip("/"))
        return
    spark.read.json(lines).write.mode("overwrite").parquet(out)


def _parquet_hints(int_ids: bool) -> dict[str, Any]:
    import pyarrow as pa

    return {
        "duplicate_of": pa.int64() if int_ids else pa.string(),
        "distance": pa.int64(),
        "similarity": pa.float64(),
        "threshold": pa.float64(),
    }


#: input bytes per shuffle partition (the shuffle is about the input's size: ~1.3 kB a document)
BYTES_PER_PARTITION = 128 << 20
#: compressed inputs (.gz, Parquet) hold about this many times their size in text
COMPRESSED = 3


def input_bytes(spark: SparkSession, inputs: tuple[str, ...]) -> int:
    """Total size of the inputs on any Hadoop file system (compressed ones scaled up)."""
    jvm: Any = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    total = 0
    for name in inputs:
        path = jvm.org.apache.hadoop.fs.Path(name)
        size = int(path.getFileSystem(conf).getContentSummary(path).getLength())
        packed = name.endswith((".gz", ".parquet", "/")) or not name.endswith((".jsonl", ".json"))
        total += size * (COMPRESSED if packed else 1)
    return total


def shuffle_partitions(nbytes: int, parallelism: int) -> int:
    """Shuffle partitions for an input of ``nbytes``: one per 128 MB, at least one per core
    (Spark's default 200 made a 150-document job on a 2-core standalone cluster 3x slower).

    >>> shuffle_partitions(10**6, 2), shuffle_partitions(10**12, 16)
    (2, 7451)
    """
    return max(parallelism, -(-nbytes // BYTES_PER_PARTITION))


def pick_shuffle_partitions(spark: SparkSession, inputs: tuple[str, ...]) -> int:
    """Set ``spark.sql.shuffle.partitions`` from the input size unless it was set explicitly
    (``--spark-conf`` / spark-submit ``--conf``); returns the value in force."""
    key = "spark.sql.shuffle.partitions"
    if not spark.sparkContext.getConf().contains(key):
        try:
            nbytes = input_bytes(spark, inputs)
        except Exception:
            nbytes = None
        if nbytes is not None:
            parts = shuffle_partitions(nbytes, spark.sparkContext.defaultParallelism)
            spark.conf.set(key, str(parts))
    return int(spark.conf.get(key) or 200)


def run_job(
    spark: SparkSession,
    dd: Deduplicator,
    inputs: tuple[str, ...],
    out: str,
    *,
    fmt: str | None = None,
    fields: Fields | None = None,
    on_error: str = "fail",
    drop_duplicates: bool = False,
    members: bool = False,
    pairs_out: str | None = None,
    max_disorder: float | None = None,
) -> JobResult:
    """Read ``inputs``, decide with ``dd``'s configuration, write ``out``; raises InputError.
    ``members``: also collect the members of every cluster with duplicates (``--clusters``);
    ``pairs_out``: write the verified pairs there (``--pairs``; rows of
    :func:`~neardup.dedup.pairs.pair_records`, as the local engine writes them).
    ``max_disorder`` (seconds, with a window): decide in the order of the local engine's
    buffer (:mod:`neardup.dedup.disorder`); ``info["out_of_order"]`` names its late rows."""
    start = time.perf_counter()
    partitions = pick_shuffle_partitions(spark, inputs)
    docs, stats = read_documents(spark, inputs, fmt, fields or Fields(), on_error)
    docs = docs.persist()
    if max_disorder is not None and dd.window is not None and dd.keep == "first":
        order, late = _buffer_order(docs, max_disorder)  # the local --max-disorder buffer's
        order = order.persist()
        decided, info = decide(_renumbered(docs, order, "pos"), dd)
        info["out_of_order"] = late
        decisions = _renumbered(decided, order, "pos", back=True)
        decisions = _renumbered(decisions, order, "rep", back=True)
        decisions = decisions.persist()
        # computed before ``decided`` goes: recomputing it would rank the kept documents again
        # over other range partitions than the offsets already taken (cluster ids renumbered
        # or shared)
        decisions.count()
        decided.unpersist()
        order.unpersist()
    else:  # (--pairs is refused with --window: the pairs are of this branch only)
        decisions, info = decide(docs, dd, pairs=pairs_out is not None)
        if pairs_out is not None:
            info["pairs_note"] = _write_pairs(docs, info.pop("pairs"), pairs_out)
    info["shuffle_partitions"] = int(spark.conf.get("spark.sql.shuffle.partitions") or partitions)
    counted = decisions.groupBy("status").count().collect()
    counts = {name: 0 for name in STATUS_NAMES}
    counts.update({STATUS_NAMES[r["status"]]: r["count"] for r in counted})
    stats.documents = sum(counts.values())
    total: Any = docs.agg(F.sum(F.octet_length("text"))).first()
    stats.bytes = int(total[0] or 0)
    write_output(spark, _with_decisions(docs, decisions, drop_duplicates), out)
    clusters = _cluster_counts(decisions)
    rows = _cluster_members(docs, decisions) if members else None
    decisions.unpersist()
    docs.unpersist()
    return JobResult(counts, stats, time.perf_counter() - start, info, clusters, rows)


def _write_pairs(docs: DataFrame, pairs: tuple[Any, ...], out: str) -> str:
    """Write the verified pairs (positions) with their documents' ids; the summary's note."""
    a, b, dist, sim = pairs
    wanted = np.unique(np.concatenate([a, b]).astype(np.int64))
    spark = docs.sparkSession
    at = spark.createDataFrame(pa.table({"pos": wanted}), "pos long")
    ids = {
        int(r["pos"]): json.loads(r["id"])
        for r in docs.select("pos", "id").join(at, "pos").collect()
    }
    rows = pair_records(a, b, dist, sim, ids)
    with open_writer(out) as w:
        for row in rows:
            w.write(row)
    return f"pairs: {len(rows):,} verified candidate pairs -> {out}"


def _buffer_order(docs: DataFrame, bound: float) -> tuple[DataFrame, dict[str, Any]]:
    """``(pos, at)``: ``at`` is the document's place in the order the local ``--max-disorder``
    buffer decides it, and the buffer's late rows (count, first ids). When no row is more than
    ``bound`` behind the newest one before it (the running maximum of :func:`with_horizons`),
    that order is (timestamp, position): a distributed sort. Otherwise the buffer itself runs
    on the driver over (position, timestamp) (16 bytes a document), the same code as local."""
    timed = docs.select("pos", "ts")
    behind = with_horizons(timed, timed, bound).where(F.col("ts") < F.col("hz") + 1)
    if behind.limit(1).count() == 0:  # (floored horizon: + 1 keeps the test conservative)
        ranked = timed.orderBy("ts", "pos").rdd.zipWithIndex()
        rows = ranked.map(lambda r: (int(r[0]["pos"]), int(r[1])))
        return docs.sparkSession.createDataFrame(rows, "pos long, at long"), {"count": 0}
    table = timed.orderBy("pos").collect()
    pos = np.fromiter((r[0] for r in table), np.int64, len(table))
    order, late = release_order([r[1] for r in table], bound)
    pairs = list(zip(pos[order].tolist(), range(len(order)), strict=True))
    first = pos[late[:3]].tolist()
    ids: dict[int, str] = dict(docs.where(F.col("pos").isin(first)).select("pos", "id").collect())
    examples = [json.loads(ids[p]) for p in first]
    frame = docs.sparkSession.createDataFrame(pairs, "pos long, at long")
    return frame, {"count": int(late.size), "examples": examples}


def _renumbered(df: DataFrame, order: DataFrame, column: str, back: bool = False) -> DataFrame:
    """``df`` with ``column`` (a position) moved to time order (``back``: the reverse)."""
    old, new = ("at", "pos") if back else ("pos", "at")
    pairs = order.select(F.col(old).alias(column), F.col(new).alias("_to"))
    return df.join(pairs, column).drop(column).withColumnRenamed("_to", column)


def _cluster_counts(decisions: DataFrame) -> dict[str, Any]:
    """``clusters``, ``clusters_with_duplicates`` and ``largest_clusters`` (sizes of the five
    largest with duplicates, ties by cluster id), the keys of the local summary."""
    sizes = decisions.groupBy("cluster_id").count()
    agg: Any = sizes.agg(
        F.count("*").alias("n"), F.sum((F.col("count") > 1).cast("long")).alias("multi")
    ).first()
    top = sizes.where("count > 1").orderBy(F.desc("count"), "cluster_id").limit(5).collect()
    return {
        "clusters": int(agg["n"] or 0),
        "clusters_with_duplicates": int(agg["multi"] or 0),
        "largest_clusters": [int(r["count"]) for r in top],
    }


def _cluster_members(docs: DataFrame, decisions: DataFrame) -> list[tuple[int, int, int, str]]:
    """Every member of a cluster with duplicates, collected on the driver (as many rows as
    such members: the local engine holds them too)."""
    multi = decisions.groupBy("cluster_id").count().where("count > 1").select("cluster_id")
    rows = (
        decisions.join(multi, "cluster_id")
        .join(docs.select("pos", "id"), "pos")
        .select("pos", "rep", "cluster_id", "id")
        .collect()
    )
    return [(int(r["pos"]), int(r["rep"]), int(r["cluster_id"]), r["id"]) for r in rows]
