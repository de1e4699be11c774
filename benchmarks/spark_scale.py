"""The Spark engine at 10^5 / 10^6 documents: wall time, shuffle bytes, where the time goes.

``bench_spark.py scale --data FILE.parquet`` (a file from benchmarks/spark_synth.py) runs, in one
SparkSession:

1. ``neardup-spark``: :func:`neardup.spark.engine.decide` with the default ``Deduplicator()``
   on the Parquet ``(pos, text, ts)`` read by Spark, timed from the read to the cached decisions;
2. ``neardup-local``: ``Deduplicator().run`` in this process (the anchor; the decisions must be
   identical, checked);
3. ``mllib-minhash`` (``--mllib``): MLlib ``MinHashLSH.approxSimilarityJoin`` (word 5-shingles,
   ``HashingTF`` 2^20, 5 tables, Jaccard distance < 0.5), pairs counted, cancelled after
   ``--mllib-timeout`` seconds.

Shuffle bytes and stage times are read from Spark's status store through its REST API
(``/api/v1/applications/<id>/jobs`` and ``/stages``) and attributed to the engine's stages by
job description (``neardup: prepare`` ...). Peak memory comes two ways: Spark's own executor
peaks (``/executors`` ``peakMemoryMetrics``: JVM heap, off-heap, the process-tree RSS of the JVM
and of the Python workers, polled every 250 ms), and this script's sampler of the RSS summed over
its whole process tree (the JVM that holds the driver and the ``local[N]`` executor, and every
Python worker), every 200 ms. Prints one JSON line per method.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from collections import defaultdict
from typing import Any

import click
import numpy as np
import pyarrow.parquet as pq

from neardup import Deduplicator
from neardup.spark.engine import HOT_KEY_NODES, decide
from neardup.spark.session import spark_session


def _rest(spark: Any, what: str) -> list[dict[str, Any]]:
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/{what}"
    with urllib.request.urlopen(url, timeout=60) as r:
        out: list[dict[str, Any]] = json.load(r)
    return out


def stage_metrics(spark: Any, after_job: int) -> dict[str, dict[str, float]]:
    """Per job description (jobs with id > ``after_job``): stages, executor run seconds, shuffle
    read / write bytes and spilled bytes, summed over completed stages (skipped ones excluded)."""
    jobs = [j for j in _rest(spark, "jobs") if j["jobId"] > after_job]
    owner: dict[int, str] = {}
    for j in sorted(jobs, key=lambda j: j["jobId"]):
        for sid in j["stageIds"]:
            owner.setdefault(sid, j.get("description") or "other")
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for st in _rest(spark, "stages"):
        if st["stageId"] not in owner or st["status"] != "COMPLETE":
            continue
        row = out[owner[st["stageId"]]]
        row["stages"] += 1
        row["tasks"] += st["numTasks"]
        row["run_s"] += st["executorRunTime"] / 1000
        row["shuffle_write_mb"] += st["shuffleWriteBytes"] / 1e6
        row["shuffle_read_mb"] += st["shuffleReadBytes"] / 1e6
        row["spill_mb"] += st["diskBytesSpilled"] / 1e6
    return {k: {m: round(v, 2) for m, v in d.items()} for k, d in out.items()}


def top_stages(spark: Any, after_job: int, top: int = 8) -> list[dict[str, Any]]:
    """The ``top`` completed stages (of jobs after ``after_job``) by executor run time, with
    their job description, records and bytes shuffled."""
    jobs = [j for j in _rest(spark, "jobs") if j["jobId"] > after_job]
    owner = {sid: j.get("description") or "other" for j in jobs for sid in j["stageIds"]}
    done = [s for s in _rest(spark, "stages") if s["stageId"] in owner]
    done = [s for s in done if s["status"] == "COMPLETE"]
    done.sort(key=lambda s: -s["executorRunTime"])
    return [
        {
            "job": owner[s["stageId"]],
            "stage": s["name"][:40],
            "run_s": round(s["executorRunTime"] / 1000, 1),
            "in_rec": s["shuffleReadRecords"] + s["inputRecords"],
            "out_rec": s["shuffleWriteRecords"] + s["outputRecords"],
            "write_mb": round(s["shuffleWriteBytes"] / 1e6, 1),
            "tasks": s["numTasks"],
            "max_task_s": _max_task_s(spark, s),
        }
        for s in done[:top]
    ]


def _max_task_s(spark: Any, stage: dict[str, Any]) -> float:
    """The longest task of a stage (executor run time): the skew a hot key makes."""
    what = f"stages/{stage['stageId']}/{stage['attemptId']}/taskSummary?quantiles=1.0"
    summary: Any = _rest(spark, what)
    return round(float(summary["executorRunTime"][0]) / 1000, 1)


class TreeRss:
    """Peak RSS summed over this process and all its descendants, sampled on a thread."""

    def __init__(self, every: float = 0.2) -> None:
        self.peak = 0
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self.peak = max(self.peak, tree_rss(os.getpid()))


def tree_rss(root: int) -> int:
    """Bytes of RSS of ``root`` and every process descending from it (read from /proc)."""
    parent: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        parent[int(name)] = int(fields[1])
        rss[int(name)] = int(fields[21]) * page
    total, todo = 0, [root]
    children: dict[int, list[int]] = defaultdict(list)
    for pid, ppid in parent.items():
        children[ppid].append(pid)
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def executor_peaks(spark: Any) -> dict[str, float]:
    """Spark's peak memory metrics of its executors (MB), max over executors."""
    out: dict[str, float] = {}
    for ex in _rest(spark, "allexecutors"):
        for name, value in (ex.get("peakMemoryMetrics") or {}).items():
            if name in PEAK_METRICS:
                out[name] = max(out.get(name, 0.0), round(value / 1e6, 1))
    return out


PEAK_METRICS = (
    "JVMHeapMemory",
    "JVMOffHeapMemory",
    "OnHeapExecutionMemory",
    "OnHeapStorageMemory",
    "ProcessTreeJVMRSSMemory",
    "ProcessTreePythonRSSMemory",
)


def last_job(spark: Any) -> int:
    return max((j["jobId"] for j in _rest(spark, "jobs")), default=-1)


def run_spark(
    spark: Any, data: str, hot: int | None, small: int = 0
) -> tuple[dict[str, Any], np.ndarray]:
    """The engine on the Parquet file: result row and cluster ids in position order."""
    before = last_job(spark)
    with TreeRss() as memory:
        start = time.perf_counter()
        docs = spark.read.parquet(data).select("pos", "text", "ts")
        out, info = decide(docs, Deduplicator(), hot_key_nodes=hot, small_job_docs=small)
        seconds = time.perf_counter() - start
        got = out.select("pos", "cluster_id").toArrow().sort_by("pos")
        out.unpersist()
    stages = stage_metrics(spark, before)
    heaviest = top_stages(spark, before)
    n = info["documents"]
    row = {
        "method": "neardup-spark",
        "documents": n,
        "seconds": seconds,
        "us_per_doc": 1e6 * seconds / n,
        "shuffle_write_mb": sum(s["shuffle_write_mb"] for s in stages.values()),
        "shuffle_read_mb": sum(s["shuffle_read_mb"] for s in stages.values()),
        "peak_tree_rss_mb": round(memory.peak / 1e6, 1),
        "executor_peaks_mb": executor_peaks(spark),
        "engine": {k: round(v, 2) if isinstance(v, float) else v for k, v in info.items()},
        "stages": stages,
        "top_stages": heaviest,
    }
    row["shuffle_bytes_per_doc"] = round(row["shuffle_write_mb"] * 1e6 / n, 1)
    return row, got.column("cluster_id").to_numpy()


def run_mllib(spark: Any, data: str, timeout: float) -> dict[str, Any]:
    """MLlib MinHashLSH self-join on the same file; cancelled after ``timeout`` seconds."""
    from pyspark.ml.feature import HashingTF, MinHashLSH, NGram, RegexTokenizer
    from pyspark.sql import functions as F

    before = last_job(spark)
    result: dict[str, Any] = {"method": "mllib-minhash-5t"}

    def job() -> None:
        try:
            df = spark.read.parquet(data).select("pos", "text")
            words = RegexTokenizer(inputCol="text", outputCol="w", pattern="\\W+").transform(df)
            grams = NGram(n=5, inputCol="w", outputCol="g").transform(words)
            tf = HashingTF(inputCol="g", outputCol="v", numFeatures=1 << 22, binary=True)
            vec = tf.transform(grams).where(F.size("g") > 0).select("pos", "v").persist()
            model = MinHashLSH(inputCol="v", outputCol="h", numHashTables=5, seed=1).fit(vec)
            pairs = model.approxSimilarityJoin(vec, vec, 0.2, distCol="d")  # issue 23
            result["pairs"] = pairs.where(F.col("datasetA.pos") < F.col("datasetB.pos")).count()
            vec.unpersist()
        except Exception as exc:  # cancelled by the timeout
            result["error"] = str(exc).splitlines()[0][:200]

    start = time.perf_counter()
    sc = spark.sparkContext
    sc.setJobDescription("mllib")
    worker = threading.Thread(target=job, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        sc.cancelAllJobs()
        worker.join(120)
        result["timed_out_after_s"] = timeout
    result["seconds"] = time.perf_counter() - start
    sc.setJobDescription(None)
    stages = stage_metrics(spark, before)
    result["shuffle_write_mb"] = sum(s["shuffle_write_mb"] for s in stages.values())
    return result


@click.command()
@click.option("--data", required=True, help="Parquet (pos, text, ts) from spark_synth.py.")
@click.option("--master", default="local[2]", show_default=True)
@click.option("--partitions", default=None, type=int, help="spark.sql.shuffle.partitions.")
@click.option("--local/--no-local", "with_local", default=True, help="Run the local anchor.")
@click.option("--mllib/--no-mllib", default=False)
@click.option("--mllib-timeout", default=300.0, show_default=True)
@click.option("--driver-memory", default="6g", show_default=True)
@click.option("--neardup/--no-neardup", "with_neardup", default=True, help="Run the engine.")
@click.option(
    "--hot-key-nodes", default=HOT_KEY_NODES, show_default=True, help="0: no hot-key tiling."
)
@click.option(
    "--small-job-docs",
    default=0,
    show_default=True,
    help="Decide on the driver up to this many documents (0: the distributed plan).",
)
def scale(
    data: str,
    master: str,
    partitions: int | None,
    with_local: bool,
    mllib: bool,
    mllib_timeout: float,
    driver_memory: str,
    with_neardup: bool,
    hot_key_nodes: int,
    small_job_docs: int,
) -> None:
    """The engine at scale on a Parquet file, with the local engine as anchor."""
    conf = {
        "spark.driver.memory": driver_memory,
        "spark.sql.files.maxPartitionBytes": str(16 << 20),
        "spark.ui.retainedJobs": "10000",
        "spark.ui.retainedStages": "10000",
        "spark.executor.processTreeMetrics.enabled": "true",
        "spark.executor.metrics.pollingInterval": "250ms",
    }
    spark = spark_session(master, shuffle_partitions=partitions, conf=conf)
    print(f"data: {data}  master: {master}  ", end="")
    print(f"shuffle partitions: {spark.conf.get('spark.sql.shuffle.partitions')}")
    if not with_neardup:
        print(json.dumps(_rounded(run_mllib(spark, data, mllib_timeout))))
        spark.stop()
        return
    row, labels = run_spark(spark, data, hot_key_nodes or None, small_job_docs)
    if with_local:
        texts = pq.read_table(data, columns=["text"]).column("text").to_pylist()
        start = time.perf_counter()
        local = Deduplicator().run(texts)
        seconds = time.perf_counter() - start
        row["same_as_local"] = bool((labels == local.cluster_id).all())
        loc = {"method": "neardup-local", "documents": len(texts), "seconds": seconds}
        loc["us_per_doc"] = 1e6 * seconds / len(texts)
        loc["counts"] = local.counts()
        print(json.dumps(_rounded(loc)))
        del texts
    print(json.dumps(_rounded(row)))
    if mllib:
        print(json.dumps(_rounded(run_mllib(spark, data, mllib_timeout))))
    spark.stop()


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}
