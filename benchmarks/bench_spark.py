"""neardup on Spark vs Spark MLlib ``MinHashLSH.approxSimilarityJoin`` on Reuters-21578.

Same Spark session (local mode), same documents, same run. Each method's clusters are scored
with :func:`neardup.eval.metrics.score` against the exact shingle-Jaccard ground truth
(:class:`neardup.eval.groundtruth.GroundTruth`: a predicted pair is correct at Jaccard >= 0.5,
recall counts the pairs at Jaccard >= 0.8), as in docs/ACCURACY.md.

- ``neardup-spark``: :func:`neardup.spark.engine.decide` with the default ``Deduplicator()``
  (fingerprints, sketches and band keys on executors, key join, accept, connected components,
  the greedy rule per component); timed from the DataFrame of texts to the cached decisions.
- ``neardup-local``: ``Deduplicator().run`` in this process (the reference: decisions must be
  identical, the script checks it).
- ``mllib-minhash``: word 5-shingles (``RegexTokenizer`` + ``NGram``), ``HashingTF`` (2^22,
  binary), ``MinHashLSH`` (``--tables`` hash tables, 5), ``approxSimilarityJoin`` at Jaccard
  distance 0.2 (similarity >= 0.8, issue 23), clusters = connected components of the pairs.
  Texts with fewer than five words have no shingle (MLlib refuses empty vectors): singletons.

    PYTHONPATH=src nice -n 10 python benchmarks/bench_spark.py reuters --master 'local[2]' \
        --corpus reuters --corpus peoples_daily
    PYTHONPATH=src nice -n 10 python benchmarks/bench_spark.py scale --data synth-1e5.parquet

(``scale``: see benchmarks/spark_scale.py.)
"""

from __future__ import annotations

import json
import time
from typing import Any

import click
import numpy as np

from neardup import Deduplicator
from neardup.dedup.clusters import connected_components
from neardup.eval.corpora import load_corpus
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.metrics import score
from neardup.spark.engine import decide
from neardup.spark.session import spark_session
from spark_scale import last_job, scale, stage_metrics, top_stages  # benchmarks/: script folder


def neardup_spark(
    spark: Any, texts: list[str], small_job_docs: int | None = None
) -> tuple[np.ndarray, float, dict[str, Any]]:
    """Cluster labels from the Spark engine, wall seconds, engine counters and the profile."""
    rows = [(i, t, None) for i, t in enumerate(texts)]
    docs = spark.createDataFrame(rows, "pos long, text string, ts double").persist()
    docs.count()
    before = last_job(spark)
    start = time.perf_counter()
    opts = {} if small_job_docs is None else {"small_job_docs": small_job_docs}
    out, info = decide(docs, Deduplicator(), **opts)
    got = sorted((r["pos"], r["cluster_id"]) for r in out.select("pos", "cluster_id").collect())
    seconds = time.perf_counter() - start
    out.unpersist()
    docs.unpersist()
    stages = stage_metrics(spark, before)
    info["jobs"] = last_job(spark) - before
    info["stages"] = stages
    info["top_stages"] = top_stages(spark, before, top=6)
    info["shuffle_bytes_per_doc"] = round(
        sum(s["shuffle_write_mb"] for s in stages.values()) * 1e6 / max(len(texts), 1), 1
    )
    return np.array([c for _, c in got]), seconds, info


def mllib_minhash(
    spark: Any, texts: list[str], tables: int, distance: float = 0.2
) -> tuple[np.ndarray, float, int]:
    """Cluster labels from MLlib MinHashLSH, wall seconds, joined pairs."""
    from pyspark.ml.feature import HashingTF, MinHashLSH, NGram, RegexTokenizer
    from pyspark.sql import functions as F

    df = spark.createDataFrame(list(enumerate(texts)), "pos long, text string").persist()
    df.count()
    start = time.perf_counter()
    words = RegexTokenizer(inputCol="text", outputCol="w", pattern="\\W+").transform(df)
    grams = NGram(n=5, inputCol="w", outputCol="g").transform(words)
    vec = HashingTF(inputCol="g", outputCol="v", numFeatures=1 << 22, binary=True).transform(grams)
    vec = vec.where(F.size("g") > 0).select("pos", "v").persist()
    model = MinHashLSH(inputCol="v", outputCol="h", numHashTables=tables, seed=1).fit(vec)
    pairs = (
        model.approxSimilarityJoin(vec, vec, distance, distCol="d")
        .where(F.col("datasetA.pos") < F.col("datasetB.pos"))
        .select(F.col("datasetA.pos").alias("a"), F.col("datasetB.pos").alias("b"))
        .collect()
    )
    i = np.array([p["a"] for p in pairs], np.int64)
    j = np.array([p["b"] for p in pairs], np.int64)
    labels = connected_components(len(texts), i, j)
    seconds = time.perf_counter() - start
    vec.unpersist()
    df.unpersist()
    return labels, seconds, len(pairs)


@click.group()
def main() -> None:
    """Spark benchmarks: ``reuters`` (accuracy anchor) and ``scale`` (10^5 / 10^6 documents)."""


@main.command()
@click.option("--master", default="local[2]", show_default=True)
@click.option("--limit", default=None, type=int, help="First N documents (default all).")
@click.option("--tables", default=5, show_default=True, help="MinHashLSH hash tables.")
@click.option("--corpus", "corpora", multiple=True, default=["reuters"], show_default=True)
@click.option(
    "--repeat",
    default=1,
    show_default=True,
    help="Run every method this many times, interleaved; report each one's best (and all).",
)
def reuters(
    master: str, limit: int | None, tables: int, corpora: tuple[str, ...], repeat: int
) -> None:
    """neardup on Spark vs MLlib MinHashLSH (issue 23's setup), F1 against the exact ground
    truth, one session for every corpus; JVM start and the Spark engine's profile reported."""
    start = time.perf_counter()
    spark = spark_session(master)
    print(json.dumps({"session_start_s": round(time.perf_counter() - start, 2)}))
    for name in corpora:
        _, texts = load_corpus(name, limit)
        runs = [_compare(spark, texts, tables) for _ in range(repeat)]
        for row in _best(runs):
            print(json.dumps({"corpus": name, "documents": len(texts), "master": master, **row}))
    spark.stop()


def _compare(spark: Any, texts: list[str], tables: int) -> list[dict[str, Any]]:
    gt = GroundTruth.from_texts(texts)
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    local = Deduplicator().run(texts)
    rows.append({"method": "neardup-local", "seconds": time.perf_counter() - start})
    rows[-1].update(score(local.cluster_id, gt).as_dict())
    for method, small in (("neardup-spark", None), ("neardup-spark-distributed", 0)):
        labels, seconds, info = neardup_spark(spark, texts, small)
        same = bool((labels == local.cluster_id).all())
        rows.append({"method": method, "seconds": seconds, "same_as_local": same})
        rows[-1].update(score(labels, gt).as_dict())
        rows[-1]["engine"] = {
            k: round(v, 2) if isinstance(v, float) else v for k, v in info.items()
        }
    labels, seconds, n_pairs = mllib_minhash(spark, texts, tables)
    rows.append({"method": f"mllib-minhash-{tables}t", "seconds": seconds, "pairs": n_pairs})
    rows[-1].update(score(labels, gt).as_dict())
    rows[-1]["spark_over_mllib"] = rows[1]["seconds"] / seconds
    rows[-1]["distributed_over_mllib"] = rows[2]["seconds"] / seconds
    return [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()} for r in rows]


def _best(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per method, the row of its fastest run, with every run's seconds and the ratios of the
    best times (a shared machine's noise only ever adds time)."""
    best = [min(rows, key=lambda r: r["seconds"]) for rows in zip(*runs, strict=True)]
    for i, row in enumerate(best):
        row["all_seconds"] = [rows[i]["seconds"] for rows in runs]
    mllib = best[-1]
    mllib["spark_over_mllib"] = round(best[1]["seconds"] / mllib["seconds"], 4)
    mllib["distributed_over_mllib"] = round(best[2]["seconds"] / mllib["seconds"], 4)
    return best


main.add_command(scale)

if __name__ == "__main__":
    main()
