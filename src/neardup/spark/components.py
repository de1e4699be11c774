"""Connected components on DataFrames: alternating large-star / small-star (Kiveris et al., 2014).

GraphFrames' jar is not available everywhere, and its algorithm is the same family. Each round
is two shuffles on the edge list; the number of rounds is O(log^2 n) in theory and a handful in
practice (it shrinks every path by a constant factor). The edge list is checkpointed each round
(a reliable checkpoint when the SparkContext has a checkpoint directory, else a local one) so
lineage stays short. The result labels every node with the smallest node of its component.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from neardup.dedup.clusters import connected_components as numpy_components

MAX_ROUNDS = 64
#: graphs with at most this many edges are solved on the driver (16 B per edge collected)
DRIVER_MAX_EDGES = 2_000_000


def _normalised(edges: DataFrame) -> DataFrame:
    """Undirected edges as ``(lo, hi)``, ``lo < hi``, without duplicates or self loops."""
    return (
        edges.select(F.least("lo", "hi").alias("lo"), F.greatest("lo", "hi").alias("hi"))
        .where(F.col("lo") != F.col("hi"))
        .distinct()
    )


def _large_star(edges: DataFrame) -> DataFrame:
    """Every node links its larger neighbours to the smallest node of its neighbourhood."""
    both = edges.select(F.col("lo").alias("src"), F.col("hi").alias("dst")).unionByName(
        edges.select(F.col("hi").alias("src"), F.col("lo").alias("dst"))
    )
    mins = both.groupBy("src").agg(F.min("dst").alias("m"))
    mins = mins.select("src", F.least("src", "m").alias("m"))
    out = both.where(F.col("dst") > F.col("src")).join(mins, "src")
    return _normalised(out.select(F.col("dst").alias("lo"), F.col("m").alias("hi")))


def _small_star(edges: DataFrame) -> DataFrame:
    """Every node links itself and its smaller neighbours to the smallest of them."""
    mins = edges.groupBy("hi").agg(F.min("lo").alias("m"))
    joined = edges.join(mins, "hi")
    out = joined.select(F.col("lo"), F.col("m").alias("hi")).unionByName(
        mins.select(F.col("hi").alias("lo"), F.col("m").alias("hi"))
    )
    return _normalised(out)


def _is_star_forest(edges: DataFrame) -> bool:
    """Each larger endpoint has one edge, and no smaller endpoint is anybody's larger one."""
    multi = edges.groupBy("hi").count().where(F.col("count") > 1)
    if not multi.isEmpty():
        return False
    centers = edges.select(F.col("lo").alias("hi")).distinct()
    return edges.select("hi").join(centers, "hi").isEmpty()


def _checkpoint(df: DataFrame) -> DataFrame:
    sc: Any = df.sparkSession.sparkContext
    if sc.getCheckpointDir():
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def connected_components(
    edges: DataFrame, src: str = "a", dst: str = "b", *, max_rounds: int = MAX_ROUNDS
) -> tuple[DataFrame, int]:
    """``(node, comp)`` for every node of ``edges`` (comp = smallest node of its component),
    and the number of rounds it took. Nodes are longs; self loops are allowed.

    Raises RuntimeError after ``max_rounds`` rounds without convergence (never seen; the bound
    keeps a bug from running forever).
    """
    nodes = edges.select(F.col(src).alias("node")).unionByName(
        edges.select(F.col(dst).alias("node"))
    )
    e = _checkpoint(_normalised(edges.select(F.col(src).alias("lo"), F.col(dst).alias("hi"))))
    rounds = 0
    while not _is_star_forest(e):
        if rounds == max_rounds:
            raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
        e = _checkpoint(_small_star(_large_star(e)))
        rounds += 1
    labels = e.select(F.col("hi").alias("node"), F.col("lo").alias("comp"))
    out = (
        nodes.distinct()
        .join(labels, "node", "left")
        .select("node", F.coalesce("comp", "node").alias("comp"))
    )
    return out, rounds


def components_on_driver(edges: DataFrame, src: str = "a", dst: str = "b") -> DataFrame:
    """:func:`connected_components` for a graph small enough to collect: the edges go to the
    driver (Arrow), :func:`neardup.dedup.clusters.connected_components` labels them, and the
    ``(node, comp)`` table comes back. Same result, without a Spark job per star round; the
    engine uses it below :data:`DRIVER_MAX_EDGES` edges."""
    table = edges.select(F.col(src).alias("a"), F.col(dst).alias("b")).toArrow()
    a = table.column("a").to_numpy()
    b = table.column("b").to_numpy()
    nodes, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    labels = numpy_components(nodes.size, inverse[: a.size], inverse[a.size :])
    smallest = np.full(int(labels.max(initial=-1)) + 1, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(smallest, labels, nodes)
    comp = smallest[labels]
    import pandas as pd

    spark: Any = edges.sparkSession
    frame = pd.DataFrame({"node": nodes.astype(np.int64), "comp": comp.astype(np.int64)})
    out: DataFrame = spark.createDataFrame(frame, "node long, comp long")
    return out
