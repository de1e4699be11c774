"""The dedup decisions of :meth:`neardup.Deduplicator.run` as a Spark plan.

Stages (``docs`` is ``(pos, text, ts)``, ``pos`` the input position):

1. prepare: fingerprints, empty mask, exact keys, sketches, lengths and candidate keys, on
   executors with :func:`neardup.spark.kernels.prepare_batch` (``mapInArrow``);
2. nodes: documents with the same exact key, fingerprint and sketch are one node (id = its
   smallest position): identical texts never meet in the key join, so no hot keys from copies;
3. candidate pairs of nodes by an equi-join on the candidate key, then the accept predicate
   without the window (:func:`~neardup.spark.kernels.accept_pairs`);
4. connected components of the accepted node graph plus "same exact key" links
   (:mod:`neardup.spark.components`);
5. the greedy rule over whole components (:func:`~neardup.spark.kernels.decide_group`),
   components hashed into buckets so one Python call decides many; documents alone in their
   component are ``unique`` without that round trip, texts without features ``empty``;
6. cluster ids: rank of each kept document in processing order (global).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from neardup.dedup.decisions import DUPLICATE, EMPTY, UNIQUE
from neardup.dedup.pipeline import Deduplicator
from neardup.spark import kernels
from neardup.spark.components import (
    DRIVER_MAX_EDGES,
    components_on_driver,
    connected_components,
)
from neardup.spark.small import SMALL_JOB_DOCS, collect_if_small, decide_on_driver

DECISIONS = T.StructType(
    [
        T.StructField("pos", T.LongType()),
        T.StructField("status", T.ByteType()),
        T.StructField("rep", T.LongType()),
        T.StructField("distance", T.ShortType()),
    ]
)


def _spark_schema(schema: pa.Schema) -> T.StructType:
    from pyspark.sql.pandas.types import from_arrow_schema

    out: T.StructType = from_arrow_schema(schema)
    return out


def prepare(docs: DataFrame, dd: Deduplicator) -> DataFrame:
    """Stage 1: ``(pos, text, ts)`` -> :data:`neardup.spark.kernels.PREPARED` rows."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows:
                yield kernels.prepare_batch(dd, batch)

    return docs.select("pos", "text", "ts").mapInArrow(run, _spark_schema(kernels.PREPARED))


#: a candidate key shared by more nodes than this is a hot key: its self-join is tiled
HOT_KEY_NODES = 1000
#: nodes per side of one tile of a hot key's self-join (tile = TILE_NODES^2 / 2 pairs at most)
TILE_NODES = 250
MAX_SALTS = 64


def _hot_keys(keys: DataFrame, hot_nodes: int) -> dict[int, int]:
    """Hot key -> salts (tiles per side), estimated from a sample of the exploded keys.

    The estimate only decides which self-joins are tiled, never which pairs exist, so a wrong
    guess costs time and never changes a decision.
    """
    fraction = min(1.0, 16 / hot_nodes)
    counted = (
        keys.select("key")
        .sample(fraction=fraction, seed=17)
        .groupBy("key")
        .count()
        .where(F.col("count") >= max(1.0, fraction * hot_nodes / 2))
        .collect()
    )
    out = {}
    for key, count in counted:
        est = count / fraction
        if est >= hot_nodes:
            out[int(key)] = int(min(MAX_SALTS, max(2, math.ceil(est / TILE_NODES))))
    return out


def _tiled_pairs(keys: DataFrame, hot: DataFrame, width: int) -> DataFrame:
    """Node pairs ``(a, b)`` of the hot keys, each hot self-join cut into ``salts^2`` tiles.

    Node u of a key with s salts sits at tile coordinate t(u) = hash(u) mod s; as the left
    side it is copied to tiles (t(u), 0..s-1), as the right side to (0..s-1, t(u)), so a pair
    (u, v) meets in exactly one tile (t(u), t(v)) and no task holds more than ~(m/s)^2 pairs.
    ``width``: the number of key columns.
    A pair sharing several keys is emitted once, under the first key column where the two
    nodes agree (pairs that agree only across columns, never seen, are all emitted; the
    ``distinct`` after the union removes repeats).
    """
    rows = keys.join(F.broadcast(hot), "key")
    salts = F.col("salts")
    t = F.pmod(F.xxhash64("node"), salts)
    spread = F.explode(F.sequence(F.lit(0), salts - 1))
    x = rows.select("key", "node", "col", "keys", t.alias("ti"), spread.alias("tj"))
    y = rows.select("key", "node", "col", "keys", spread.alias("ti"), t.alias("tj"))
    pair = x.alias("x").join(y.alias("y"), ["key", "ti", "tj"])
    xc, xk, yk = F.col("x.col"), F.col("x.keys"), F.col("y.keys")
    # plain comparisons (code-generated), not array lambdas (interpreted: ~7 us per pair)
    earlier = F.lit(False)
    for c in range(width - 1):
        earlier = earlier | ((F.lit(c) < xc) & (xk[c] == yk[c]))
    first = (xc != F.col("y.col")) | ~earlier
    return pair.where((F.col("x.node") < F.col("y.node")) & first).select(
        F.col("x.node").alias("a"), F.col("y.node").alias("b")
    )


def _key_pairs(nodes: DataFrame, hot_nodes: int | None, info: dict[str, Any]) -> DataFrame:
    """Node pairs ``(a, b)``, ``a < b``, sharing at least one candidate key (any column, as the
    local KeyTable matches), each once; hot keys' self-joins are tiled (:func:`_tiled_pairs`)."""
    keys = nodes.select("node", "keys", F.posexplode("keys").alias("col", "key"))
    hot = _hot_keys(keys, hot_nodes) if hot_nodes is not None else {}
    info["hot_keys"] = len(hot)
    cold = keys.select("node", "key")
    if hot:
        spark = nodes.sparkSession
        hot_df = spark.createDataFrame(list(hot.items()), "key long, salts int")
        cold = cold.join(F.broadcast(hot_df), "key", "left_anti")
    # one shuffle of the exploded keys (the self-join wrote them twice at 10^6; a groupBy's
    # partial aggregation builds a hash map of mostly unique keys), then each node pairs with
    # the node list of its key; single-node keys (nearly all) end there
    ns = F.collect_list("node").over(Window.partitionBy("key"))
    lists = cold.select("node", ns.alias("ns")).where(F.size("ns") > 1)
    pairs = lists.select(F.col("node").alias("a"), F.explode("ns").alias("b"))
    pairs = pairs.where(F.col("a") < F.col("b"))
    if hot:
        width: Any = nodes.select(F.size("keys").alias("w")).where(F.col("w") > 0).first()
        pairs = pairs.unionByName(_tiled_pairs(keys, hot_df, int(width[0])))
    return pairs.distinct()


def _accepted_edges(
    nodes: DataFrame, dd: Deduplicator, hot_nodes: int | None, info: dict[str, Any]
) -> DataFrame:
    """Stage 3: node pairs sharing a candidate key (and each copied node with itself), accepted."""
    pairs = _key_pairs(nodes, hot_nodes, info)
    selfs = nodes.where((F.col("n") > 1) & (F.size("keys") > 0)).select(
        F.col("node").alias("a"), F.col("node").alias("b")
    )
    attrs = nodes.select("node", "fp", "sketch")
    full = (
        pairs.unionByName(selfs)
        .join(attrs.toDF("a", "fp_a", "sk_a"), "a")
        .join(attrs.toDF("b", "fp_b", "sk_b"), "b")
    )

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows:
                yield kernels.accept_pairs(dd, batch)

    cols = full.select("a", "b", "fp_a", "fp_b", "sk_a", "sk_b")
    return cols.mapInArrow(run, _spark_schema(kernels.ACCEPTED))


def _decide_components(
    docs: DataFrame, edges: DataFrame, dd: Deduplicator, buckets: int
) -> DataFrame:
    """Stage 5: the greedy rule over whole components, many components per Python call."""

    def run(left: pa.Table, right: pa.Table) -> pa.Table:
        return kernels.decide_group(dd, left, right)

    bucket = F.pmod(F.xxhash64("comp"), F.lit(buckets))
    cols = ["bucket", "pos", "node", "ekey", "ts", "length"] + (
        ["hz"] if "hz" in docs.columns else []
    )
    d = docs.withColumn("bucket", bucket).select(*cols)
    e = edges.withColumn("bucket", bucket).select("bucket", "a", "b", "dist", "sim")
    return d.groupBy("bucket").cogroup(e.groupBy("bucket")).applyInArrow(run, DECISIONS)


#: documents per shuffle partition when the partitions are not set explicitly
DOCS_PER_PARTITION = 100_000


def _auto_partitions(spark: SparkSession, documents: int) -> None:
    """Shuffle partitions from the number of documents (one per 100,000, at least one per
    core) unless ``spark.sql.shuffle.partitions`` was set explicitly (session conf,
    ``--spark-conf``, spark-submit ``--conf``): Spark's 200 made small jobs seconds slower."""
    key = "spark.sql.shuffle.partitions"
    if not spark.sparkContext.getConf().contains(key):
        parts = max(spark.sparkContext.defaultParallelism, -(-documents // DOCS_PER_PARTITION))
        spark.conf.set(key, str(parts))


#: positions per block of the running maximum of timestamps (:func:`with_horizons`)
HORIZON_BLOCK_BITS = 16


def with_horizons(prep: DataFrame, docs: DataFrame, window: float) -> DataFrame:
    """``prep`` with ``hz`` = :func:`neardup.dedup.greedy.horizons` per document (the running
    maximum of timestamps in input order, minus the window): maxima of blocks of positions on
    the driver (a few numbers), the running maximum inside each block by a window function."""
    blk = F.shiftright("pos", HORIZON_BLOCK_BITS)
    maxima = docs.groupBy(blk.alias("blk")).agg(F.max("ts").alias("m")).collect()
    prior, newest = [], None
    for b, m in sorted((int(b), m) for b, m in maxima):
        prior.append((b, newest))
        if m is not None:
            newest = m if newest is None else max(newest, m)
    spark = prep.sparkSession
    base = spark.createDataFrame(prior or [(0, None)], "blk long, prior double")
    run = F.max("ts").over(
        Window.partitionBy("blk").orderBy("pos").rowsBetween(Window.unboundedPreceding, 0)
    )
    newest_here = F.greatest(F.col("prior"), run)
    return (
        prep.withColumn("blk", blk)
        .join(F.broadcast(base), "blk", "left")
        .withColumn("hz", F.floor(newest_here - F.lit(window)).cast("double"))
        .drop("blk", "prior")
    )


class _Phases:
    """Names the Spark jobs of each stage (job description, read back from the status store by
    benchmarks/bench_spark.py) and records each stage's wall seconds in ``info``."""

    def __init__(self, spark: SparkSession, info: dict[str, Any]) -> None:
        self.sc, self.info = spark.sparkContext, info
        self.name: str | None = None
        self.start = time.perf_counter()

    def __call__(self, name: str | None) -> None:
        now = time.perf_counter()
        if self.name is not None:
            self.info[f"{self.name.replace(' ', '_')}_s"] = now - self.start
        self.name, self.start = name, now
        sc: Any = self.sc  # None clears the description (pyspark's stub says str)
        sc.setJobDescription(None if name is None else f"neardup: {name}")


def _components(graph: DataFrame, driver_max_edges: int) -> tuple[DataFrame, int]:
    """Connected components: on the driver when the graph has at most ``driver_max_edges``
    edges (rounds reported as 0), else large-star / small-star on DataFrames."""
    if graph.count() <= driver_max_edges:
        return components_on_driver(graph), 0
    return connected_components(graph)


def decide(
    docs: DataFrame,
    dd: Deduplicator,
    *,
    buckets: int | None = None,
    driver_max_edges: int = DRIVER_MAX_EDGES,
    hot_key_nodes: int | None = HOT_KEY_NODES,
    small_job_docs: int | None = None,
    pairs: bool = False,
) -> tuple[DataFrame, dict[str, Any]]:
    """Decisions ``(pos, status, rep, distance, cluster_id)`` for ``docs (pos, text, ts)``.

    ``rep`` is the position of the kept document (the document itself when kept). Also returns
    counts and stage timings. The result is cached; unpersist it when done.
    ``driver_max_edges``: candidate graphs up to that many edges get their connected
    components on the driver (-1: always on DataFrames). ``hot_key_nodes``: keys shared by
    more nodes than that have their self-join tiled over many tasks (None: never); the pairs,
    hence the decisions, are the same either way. ``small_job_docs``: up to that many
    documents the texts are decided on the driver (:mod:`neardup.spark.small`; 0: never;
    None: the Spark setting ``spark.neardup.smallJobDocs``, else :data:`SMALL_JOB_DOCS`).
    ``pairs``: ``info["pairs"]`` gets the verified pairs ``(a, b, distance, similarity)``
    (positions, sorted; the accepted edges between nodes, collected on the driver), as
    :func:`~neardup.dedup.core.verified_pairs` gives them locally.
    """
    spark = docs.sparkSession
    info: dict[str, Any] = {}
    start = time.perf_counter()
    phase = _Phases(spark, info)
    phase("prepare")
    if small_job_docs is None:
        small_job_docs = int(spark.conf.get("spark.neardup.smallJobDocs", None) or SMALL_JOB_DOCS)
    if (table := collect_if_small(docs, small_job_docs)) is not None:
        info["path"] = "driver"
        out = decide_on_driver(docs, table, dd, info, pairs)  # a local relation: no job
        phase(None)
        info["total_s"] = time.perf_counter() - start
        return out, info
    _auto_partitions(spark, docs.count())
    buckets = buckets or int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
    prep, streaming = _prepare_all(docs, dd, info)
    phase("pairs")
    live, edges = _pairs(prep, dd, hot_key_nodes, info)
    if pairs:
        info["pairs"] = _collected_pairs(edges)
    phase("components")
    graph, comps, singles, multi = _grouped(live, edges, streaming, driver_max_edges, info)
    phase("component sizes")
    sizes: Any = multi.groupBy("comp").count().agg(F.max("count"), F.count("*")).first()
    info["largest_component"], info["components"] = int(sizes[0] or 0), int(sizes[1])
    phase("decide")
    out, ranked, decisions = _decided(prep, singles, multi, edges, comps, dd, buckets)
    info["decided"] = out.count()
    phase(None)
    info["total_s"] = time.perf_counter() - start
    for df in (live, edges, graph, comps, multi, ranked, decisions, prep):
        df.unpersist()
    return out, info


def _decided(
    prep: DataFrame,
    singles: DataFrame,
    multi: DataFrame,
    edges: DataFrame,
    comps: DataFrame,
    dd: Deduplicator,
    buckets: int,
) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Every document's decision with its cluster id and similarity (persisted), the ranked
    kept documents and the bare decisions (both to unpersist): documents alone
    (``singles``), those of the components ``multi`` (``edges`` between nodes, ``comps``
    their components) and empty ones."""
    edge_comp = edges.join(comps.withColumnRenamed("node", "a"), "a")
    decided = _decide_components(multi, edge_comp, dd, buckets)
    empty = _fixed(prep.where(F.col("empty")), EMPTY)
    # read twice below (kept documents, then the join): persisted so the Python decide runs once
    decisions = singles.unionByName(decided).unionByName(empty).persist()
    out, ranked = _cluster_ids(decisions, prep, dd.keep)
    out = out.join(_similarities(decisions, prep, dd), "pos", "left").persist()
    return out, ranked, decisions


def _prepare_all(docs: DataFrame, dd: Deduplicator, info: dict[str, Any]) -> tuple[DataFrame, bool]:
    """Prepared rows (persisted) and whether the streaming horizon applies; counts documents
    and late documents into ``info``."""
    prep = prepare(docs, dd)
    streaming = dd.window is not None and dd.keep == "first"
    if streaming:  # late documents: the streaming horizon of greedy.horizons
        prep = with_horizons(prep, docs, float(dd.window))  # type: ignore[arg-type]
    prep = prep.persist()
    info["documents"] = prep.count()
    if streaming:
        info["late_documents"] = prep.where(F.col("ts") < F.col("hz")).count()
    return prep, streaming


def _pairs(
    prep: DataFrame, dd: Deduplicator, hot_key_nodes: int | None, info: dict[str, Any]
) -> tuple[DataFrame, DataFrame]:
    """``live`` (non-empty rows with their node: the first row of equal (ekey, fp, sketch),
    and ``first``: the first node of their exact key) and the accepted ``edges`` between
    nodes, both persisted."""
    # one shuffle by exact key serves both windows (rows equal on (ekey, fp, sketch) share ekey)
    live = prep.where(~F.col("empty")).repartition("ekey")
    same = Window.partitionBy("ekey", "fp", "sketch")
    live = live.withColumn("node", F.min("pos").over(same)).withColumn("n", F.count("*").over(same))
    live = live.withColumn("first", F.min("node").over(Window.partitionBy("ekey"))).persist()
    nodes = live.where(F.col("pos") == F.col("node")).select("node", "n", "fp", "sketch", "keys")
    edges = _accepted_edges(nodes, dd, hot_key_nodes, info).persist()
    info["accepted_pairs"] = edges.where(F.col("a") != F.col("b")).count()
    return live, edges


def _collected_pairs(edges: DataFrame) -> tuple[Any, ...]:
    """The accepted edges between two nodes (a node's id is its first document: the one a
    local run searches) as sorted position arrays ``(a, b, distance, similarity)``."""
    rows = (
        edges.where(F.col("a") != F.col("b"))
        .select(F.least("a", "b").alias("a"), F.greatest("a", "b").alias("b"), "dist", "sim")
        .dropDuplicates(["a", "b"])
        .orderBy("a", "b")
        .toArrow()
    )
    a, b, dist, sim = (
        rows.column(c).to_numpy(zero_copy_only=False) for c in ("a", "b", "dist", "sim")
    )
    sim = np.array(sim, np.float64)  # a copy: Arrow's buffers are read-only
    no_verifier = np.isnan(sim)  # the Hamming distance decided: 1 - distance / 64, as locally
    sim[no_verifier] = 1.0 - np.asarray(dist, np.float64)[no_verifier] / 64.0
    return a, b, dist, sim


def _grouped(
    live: DataFrame,
    edges: DataFrame,
    streaming: bool,
    driver_max_edges: int,
    info: dict[str, Any],
) -> tuple[DataFrame, DataFrame, DataFrame, DataFrame]:
    """The candidate graph (accepted edges plus exact-key links), its components, the rows
    alone in theirs (decided unique) and the rest with their component (``multi``)."""
    links = live.where(F.col("node") == F.col("pos")).where(F.col("first") != F.col("node"))
    graph = (
        edges.select("a", "b")
        .unionByName(links.select(F.col("node").alias("a"), F.col("first").alias("b")))
        .persist()
    )
    comps, info["cc_rounds"] = _components(graph, driver_max_edges)
    comps = comps.persist()
    narrow = live.select("pos", "node", "n", "ekey", "ts", "length", *(["hz"] if streaming else []))
    grouped = narrow.join(comps, "node", "left")
    alone = F.col("comp").isNull() & (F.col("n") == 1)
    singles = _fixed(grouped.where(alone), UNIQUE)
    multi = grouped.where(~alone).withColumn("comp", F.coalesce("comp", "node")).persist()
    return graph, comps, singles, multi


def _fixed(rows: DataFrame, status: int) -> DataFrame:
    """Decisions of rows decided alone: ``status``, kept as themselves, no distance."""
    return rows.select(
        "pos",
        F.lit(status).cast("byte").alias("status"),
        F.col("pos").alias("rep"),
        F.lit(-1).cast("short").alias("distance"),
    )


def _similarities(decisions: DataFrame, prep: DataFrame, dd: Deduplicator) -> DataFrame:
    """``(pos, similarity)`` of the near duplicates: the value that decided each, from its
    sketch and its kept document's (exact duplicates get 1.0 when written)."""
    sk = prep.select("pos", "sketch")
    rep_sk = sk.select(F.col("pos").alias("rep"), F.col("sketch").alias("rep_sketch"))
    dups = decisions.where(F.col("status") == F.lit(DUPLICATE)).select("pos", "rep", "distance")
    pairs = (
        dups.join(sk, "pos").join(rep_sk, "rep").select("pos", "distance", "sketch", "rep_sketch")
    )

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows:
                yield kernels.similarity_batch(dd, batch)

    return pairs.mapInArrow(run, _spark_schema(kernels.SIMILARITY))


def _cluster_ids(decisions: DataFrame, prep: DataFrame, keep: str) -> tuple[DataFrame, DataFrame]:
    """Stage 6: cluster id = rank of the cluster's kept document in processing order.

    Without a Python round trip: the kept documents are range-sorted, each sorted partition
    numbers its rows (``monotonically_increasing_id`` = partition index << 33 | row), and the
    rank adds the sizes of the partitions before it (a few numbers collected on the driver).
    """
    kept = decisions.where(F.col("rep") == F.col("pos"))
    if keep != "first":  # position alone orders keep=first: no join with the prepared rows
        kept = kept.join(prep.select("pos", "length", "ts"), "pos")
    if keep == "longest":
        kept = kept.orderBy(F.col("length").desc(), "pos")
    elif keep == "newest":
        kept = kept.orderBy(F.col("ts").desc(), "pos")
    else:
        kept = kept.orderBy("pos")
    mid = F.monotonically_increasing_id()
    ranked = kept.select(
        F.col("pos").alias("rep"),
        F.spark_partition_id().alias("pid"),
        mid.bitwiseAND(F.lit((1 << 33) - 1)).alias("row"),
    ).persist()
    sizes: dict[int, int] = dict(ranked.groupBy("pid").count().collect())
    offsets, total = [], 0
    for pid in sorted(sizes):
        offsets.append((pid, total))
        total += sizes[pid]
    spark: SparkSession = decisions.sparkSession
    base = spark.createDataFrame(offsets or [(0, 0)], "pid int, base long")
    ids = ranked.join(F.broadcast(base), "pid").select(
        "rep", (F.col("base") + F.col("row")).alias("cluster_id")
    )
    out = decisions.join(ids, "rep").select("pos", "status", "rep", "distance", "cluster_id")
    return out, ranked
