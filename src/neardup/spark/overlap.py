"""``neardup overlap --engine spark``: the local :class:`~neardup.overlap.OverlapFinder`'s
passages, found with joins instead of one in-memory gram index.

Local, each document (input order, or ``--time-field`` order) is queried against the documents
before it, then indexed. The same on Spark (each stage a DataFrame):

1. **Order**: ``ord`` = the document's place in processing order (``(timestamp or 0, position)``
   with a time field, else the position), the local finder's position.
2. **Grams** (Python workers): :func:`neardup.overlap.pairs.prepare` of each text; the grams
   ``i`` winnowing keeps, with their hashes: an indexed document's postings (what the local
   index holds) and a query's look-ups (what the local finder asks the index for).
3. **max_df**: the documents *before* the query posting a hash (a window over the hash, by
   ``ord``); a gram posted by more than ``max_df`` of them is skipped for that query, as
   :meth:`GramIndex.lookup` skips it.
4. **Seeds**: the query's hashes under max_df joined with the earlier postings, then with the
   query's kept grams of that hash: rows ``(query, source, i, j)``; pairs with fewer than 2 are
   dropped.
5. **Pairs** (Python workers): :func:`neardup.overlap.pairs.pair_passages` with both prepared
   texts and the seeds in the local order (query gram, then source gram), ``min_score``.
6. **Templates**: each document's template keys (:class:`~neardup.overlap.templates.TemplateBatch`
   on the Python workers), counted for a query among the indexed documents before it (a window
   over the key, by ``ord``, as the local counts grow); on the driver, for the queries with
   passages, the local rule (:func:`neardup.overlap.finder.apply_templates`).

The passages come back to the driver ordered as the local engine writes them (document order,
then span, source order, source span). Limits: a hash's postings go through one window
partition (boilerplate with millions of postings is one large task), and the passages are
collected on the driver.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import groupby
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from neardup.io import ReadStats
from neardup.overlap import OverlapFinder, Passage
from neardup.overlap.finder import (
    EXAMPLES,
    SEED_FLOOR,
    apply_templates,
    cross_sourced,
    over_budget,
)
from neardup.overlap.pairs import (
    PairParams,
    pair_passages,
    prepare,
    token_arrays,
)
from neardup.overlap.templates import TemplateBatch
from neardup.overlap.tokens import winnow
from neardup.spark.reader import Fields, read_documents

__all__ = ["OverlapResult", "find_overlaps"]

GRAMS = "ord long, i int, h long, post boolean, ask boolean, n long"
KEYS = "ord long, h long, post boolean, ask boolean"
_SOURCES = 1024  # prepared source documents kept per Python worker (~10 KB each)
FOUND = "qord long, src long, s0 int, s1 int, d0 int, d1 int, score double"


@dataclass(frozen=True)
class OverlapResult:
    """Passages (dicts as the local CLI writes them, in its order) and what was read."""

    rows: list[dict[str, Any]]
    stats: ReadStats
    documents: int
    chars: int
    copied: int  # characters of the documents inside a passage
    with_copies: int
    references: int = 0  # reference documents (--against)
    templates: int = 0  # passages set aside as templates
    template_examples: tuple[tuple[Passage, str], ...] = ()  # the first few, with their text
    sources_cut: int = 0  # sources left out by max_sources (sources="all")
    over_budget: int = 0  # texts over their seed budget, trimmed (budget="trim")
    over_budget_ids: tuple[Any, ...] = ()  # the first few of them


def _params(finder: OverlapFinder) -> tuple[PairParams, tuple[int, int], int, float]:
    """The pair step's parameters, the (posting, look-up) winnowing windows, max_df, min_score."""
    p = finder.get_params()
    pair = PairParams(ngram=p["ngram"], gap=p["gap"], min_length=p["min_length"])
    windows = (int(p["window"]), int(finder.query_window_))
    return pair, windows, int(p["max_df"]), float(p["min_score"])


def _grams(params: PairParams, windows: tuple[int, int]) -> Any:
    """A ``mapInPandas`` function: (ord, text, index, ask) -> the grams winnowing keeps (ord,
    i, hash, post: kept with the posting window in an indexed document, ask: kept with the
    look-up window in a query, n: the document's grams, for its seed budget); the local finder
    posts and looks up these grams only."""

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            ords, idx, hashes, posts, asks, ns = [], [], [], [], [], []
            for o, text, index, ask in pdf[["ord", "text", "index", "ask"]].itertuples(False):
                h = prepare(text, params).grams.hashes
                post = np.zeros(h.size, dtype=bool)
                asked = np.zeros(h.size, dtype=bool)
                if index:
                    post[winnow(h, windows[0])] = True
                if ask:
                    asked[winnow(h, windows[1])] = True
                kept = np.flatnonzero(post | asked)
                ords.append(np.full(kept.size, o, dtype=np.int64))
                idx.append(kept.astype(np.int32))
                hashes.append(h[kept].view(np.int64))
                posts.append(post[kept])
                asks.append(asked[kept])
                ns.append(np.full(kept.size, h.size, dtype=np.int64))
            if ords:
                yield pd.DataFrame(
                    {
                        "ord": np.concatenate(ords),
                        "i": np.concatenate(idx),
                        "h": np.concatenate(hashes),
                        "post": np.concatenate(posts),
                        "ask": np.concatenate(asks),
                        "n": np.concatenate(ns),
                    }
                )

    return run


def _pairs(params: PairParams, min_score: float) -> Any:
    """A ``mapInPandas`` function: (qord, src, qtext, stext, seeds) -> passages."""

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        query: tuple[int, Any] = (-1, None)  # rows come sorted by qord: one query at a time
        sources: OrderedDict[int, Any] = OrderedDict()  # early documents are many queries' source
        for pdf in batches:
            out: list[tuple[Any, ...]] = []
            for row in pdf.itertuples(index=False):
                if query[0] != row.qord:
                    query = (row.qord, prepare(row.qtext, params))
                d = sources.get(row.src)
                if d is None:
                    d = sources[row.src] = prepare(row.stext, params)
                    if len(sources) > _SOURCES:
                        sources.popitem(last=False)
                else:
                    sources.move_to_end(row.src)
                q = query[1]
                ij = np.array(sorted((int(s["i"]), int(s["j"])) for s in row.seeds))
                i, j = ij[:, 0], ij[:, 1]
                g, dg = q.grams, d.grams
                seeds = np.stack([g.first[i], g.last[i], dg.first[j], dg.last[j]], axis=1)
                for f in pair_passages(q, d, seeds.astype(np.int64), params):
                    if f.score >= min_score:
                        out.append((row.qord, row.src, *f.span, *f.source_span, f.score))
            cols = ["qord", "src", "s0", "s1", "d0", "d1", "score"]
            yield pd.DataFrame(out, columns=cols)

    return run


def _keys(params: PairParams) -> Any:
    """A ``mapInPandas`` function: (ord, text, index, ask) -> the template keys of each text
    (ord, hash; post: an indexed document, ask: a query), as the local finder counts them."""

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            texts = pdf["text"].tolist()
            toks = [token_arrays(prepare(t, params)) for t in texts]
            b = TemplateBatch(texts, toks, params.ngram)
            n = np.diff(b.gram_off)
            yield pd.DataFrame(
                {
                    "ord": np.repeat(pdf["ord"].to_numpy(), n),
                    "h": b.hashes.view(np.int64),
                    "post": np.repeat(pdf["index"].to_numpy(), n),
                    "ask": np.repeat(pdf["ask"].to_numpy(), n),
                }
            )

    return run


def _template_df(docs: DataFrame, params: PairParams, qords: list[int]) -> dict[int, Any]:
    """For the queries ``qords``: their template keys' counts among the indexed documents
    before them (key hash -> count, per query)."""
    if not qords:
        return {}
    keys = docs.select("ord", "text", "index", "ask").mapInPandas(_keys(params), KEYS)
    keys = keys.distinct()
    posted = keys.where("post").select("h", "ord", F.lit(1).alias("c"), F.lit(False).alias("q"))
    asked = keys.where("ask").select("h", "ord", F.lit(0).alias("c"), F.lit(True).alias("q"))
    before = Window.partitionBy("h").orderBy("ord").rangeBetween(Window.unboundedPreceding, -1)
    counted = posted.unionByName(asked).withColumn(
        "df", F.coalesce(F.sum("c").over(before), F.lit(0))
    )
    spark = docs.sparkSession
    wanted = spark.createDataFrame([(q,) for q in qords], "ord long")
    out: dict[int, dict[int, int]] = {}
    for r in counted.where("q").join(F.broadcast(wanted), "ord").collect():
        out.setdefault(r["ord"], {})[r["h"]] = int(r["df"])
    return out


def _ordered(spark: SparkSession, docs: DataFrame, timed: bool) -> DataFrame:
    """``docs`` with ``ord``: the local engine's processing order."""
    if not timed:
        return docs.withColumn("ord", F.col("pos"))
    ranked = docs.orderBy(F.coalesce(F.col("ts"), F.lit(0.0)), F.col("pos")).rdd.zipWithIndex()
    schema = StructType([*docs.schema.fields, StructField("ord", LongType(), False)])
    return spark.createDataFrame(ranked.map(lambda x: (*x[0], x[1])), schema)


def _seeds(grams: DataFrame, max_df: int) -> DataFrame:
    """``(qord, src, i, j)``: per (query, earlier source) pair the (i, j) gram pairs of equal
    hash, leaving out hashes posted by more than ``max_df`` earlier documents."""
    posts = grams.where("post").select("h", F.col("ord").alias("src"), F.col("i").alias("j"))
    # one per (hash, document): max_df counts the documents posting a gram, not its postings
    counts = posts.select("h", F.col("src").alias("ord")).distinct()
    counts = counts.withColumn("c", F.lit(1).cast("long"))
    asked = grams.where("ask").select("h", "ord").distinct()
    asked = asked.withColumn("c", F.lit(0).cast("long"))
    both = counts.withColumn("q", F.lit(False)).unionByName(asked.withColumn("q", F.lit(True)))
    before = Window.partitionBy("h").orderBy("ord").rangeBetween(Window.unboundedPreceding, -1)
    df = F.coalesce(F.sum("c").over(before), F.lit(0))
    kept = both.withColumn("df", df).where(F.col("q") & (F.col("df") > 0))
    kept = kept.where(F.col("df") <= max_df).select("h", F.col("ord").alias("qord"))
    hits = kept.join(posts, "h").where(F.col("src") < F.col("qord"))
    query = grams.where("ask").select("h", F.col("ord").alias("qord"), "i")
    return hits.join(query, ["h", "qord"])


_Budgeted = tuple[DataFrame, int, tuple[Any, ...]]  # seeds, texts trimmed, the first few ids


def _budgeted(
    grams: DataFrame, seeds: DataFrame, docs: DataFrame, finder: OverlapFinder
) -> _Budgeted:
    """``seeds`` within the queries' budgets, as the local finder's ``_budgeted``: a query
    over it loses the seeds of its grams with more than ``max_seeds_per_gram`` postings
    (``budget="trim"``; counted, the first few named), or the first such query (processing
    order) is refused as the local finder refuses it
    (:func:`~neardup.overlap.finder.over_budget`), before any pair is aligned."""
    per_gram = finder.max_seeds_per_gram
    counts = seeds.groupBy("qord").count()
    sizes = grams.where("ask").select(F.col("ord").alias("qord"), "n").distinct()
    limit = F.lit(per_gram) * F.greatest(F.col("n"), F.lit(SEED_FLOOR))
    over = counts.join(sizes, "qord").where(F.col("count") > limit).orderBy("qord")
    first = over.limit(1 if finder.budget == "refuse" else EXAMPLES).collect()
    if not first:
        return seeds, 0, ()
    ids = {
        r["ord"]: json.loads(r["id"])
        for r in docs.where(F.col("ord").isin([r["qord"] for r in first]))
        .select("ord", "id")
        .collect()
    }
    if finder.budget == "refuse":
        qord, seeds_n, grams_n = first[0]["qord"], first[0]["count"], first[0]["n"]
        raise over_budget(ids.get(qord, qord), int(grams_n), int(seeds_n), per_gram)
    # a query gram's seeds per occurrence: the postings of its hash in the earlier documents
    postings = F.count("*").over(Window.partitionBy("qord", "h", "i"))
    marked = seeds.join(F.broadcast(over.select("qord", F.lit(True).alias("over"))), "qord", "left")
    marked = marked.withColumn("c", postings)
    kept = marked.where(F.col("over").isNull() | (F.col("c") <= per_gram)).drop("over", "c")
    return kept, over.count(), tuple(ids.get(r["qord"], r["qord"]) for r in first)


def find_overlaps(
    spark: SparkSession,
    finder: OverlapFinder,
    inputs: tuple[str, ...],
    *,
    fmt: str | None = None,
    fields: Fields | None = None,
    on_error: str = "fail",
    columns: tuple[str, ...] = (),
    against: tuple[str, ...] = (),
    against_roots: tuple[str, ...] = (),
) -> OverlapResult:
    """The passages ``neardup overlap`` finds in ``inputs`` with ``finder``'s parameters:
    every document against the ones before it, or with ``against`` (reference files) against
    the reference documents only (``against_roots``: the folders they were listed from);
    ``columns``: record fields (Hive partition columns) each row carries from its document."""
    fields = fields or Fields()
    params, windows, max_df, min_score = _params(finder)
    timed = fields.time is not None
    docs, stats = _documents(spark, inputs, fmt, fields, on_error, columns, timed)
    docs = docs.withColumn("index", F.lit(not against)).withColumn("ask", F.lit(True))
    refs = 0
    if against:  # the reference first, in (timestamp, position) order, as local sorts it
        ref_fields = replace(fields, roots=against_roots or against)
        ref, _ = _documents(spark, against, fmt, ref_fields, on_error, (), True)
        ref = ref.cache()
        refs = ref.count()
        docs = docs.withColumn("ord", F.col("ord") + refs)
        ref = ref.withColumn("index", F.lit(True)).withColumn("ask", F.lit(False))
        docs = docs.unionByName(ref)
    docs = docs.cache()
    try:
        rows, trimmed, trimmed_ids = _found(docs, params, windows, max_df, min_score, finder)
        totals = docs.where("ask").agg(F.count("*"), F.sum(F.length("text"))).first()
        found, aside, cut = _templated(docs, rows, finder, params)
    finally:
        docs.unpersist()
    stats.documents = int(totals[0] or 0) if totals else 0
    chars = int(totals[1] or 0) if totals else 0
    result = _result(found, stats, chars, columns, refs, finder.templates == "keep")
    examples = tuple(aside[:5])
    result = replace(result, over_budget=trimmed, over_budget_ids=trimmed_ids)
    return replace(result, templates=len(aside), template_examples=examples, sources_cut=cut)


def _documents(
    spark: SparkSession,
    paths: tuple[str, ...],
    fmt: str | None,
    fields: Fields,
    on_error: str,
    columns: tuple[str, ...],
    timed: bool,
) -> tuple[DataFrame, ReadStats]:
    """``(ord, id, text, record)`` of ``paths`` in processing order, and the read stats."""
    docs, stats = read_documents(spark, paths, fmt, fields, on_error)
    record = F.col("record") if columns else F.lit(None).cast("string").alias("record")
    docs = _ordered(spark, docs.select("pos", "id", "text", "ts", record), timed)
    return docs.select("ord", "id", "text", "record"), stats


def _found(
    docs: DataFrame,
    params: PairParams,
    windows: tuple[int, int],
    max_df: int,
    min_score: float,
    finder: OverlapFinder,
) -> tuple[list[Any], int, tuple[Any, ...]]:
    """The passages of the ``ask`` documents in the ``index`` documents before them, with
    both ids and the query's record, in the local engine's order; the texts over their seed
    budget (trimmed: :func:`_budgeted`) and the first few ids."""
    grams = docs.select("ord", "text", "index", "ask").mapInPandas(_grams(params, windows), GRAMS)
    seeds, trimmed, trimmed_ids = _budgeted(grams, _seeds(grams, max_df), docs, finder)
    pairs = (
        seeds.groupBy("qord", "src")
        .agg(F.collect_list(F.struct("i", "j")).alias("seeds"))
        .where(F.size("seeds") >= 2)
    )
    qtext = docs.select(F.col("ord").alias("qord"), F.col("text").alias("qtext"))
    stext = docs.select(F.col("ord").alias("src"), F.col("text").alias("stext"))
    work = pairs.join(qtext, "qord").join(stext, "src")
    work = work.repartition("qord").sortWithinPartitions("qord")
    found = work.mapInPandas(_pairs(params, min_score), FOUND)
    qid = docs.select(F.col("ord").alias("qord"), F.col("id").alias("qid"), "record")
    sid = docs.select(F.col("ord").alias("src"), F.col("id").alias("sid"))
    named = found.join(qid, "qord").join(sid, "src")
    return named.orderBy("qord", "s0", "s1", "src", "d0", "d1").collect(), trimmed, trimmed_ids


def _sourced(
    rows: list[Any], finder: OverlapFinder
) -> tuple[list[list[Passage]], dict[tuple[Any, ...], Any], int]:
    """Each query's passages after the sources rule (queries left with none dropped), each
    collected row by its passage's key, and the sources ``max_sources`` left out."""
    queries: list[list[Passage]] = []
    cut = 0
    by_key: dict[tuple[Any, ...], Any] = {}
    for _, group in groupby(rows, key=lambda r: r["qord"]):
        got = []
        for r in group:
            span, source_span = (r["s0"], r["s1"]), (r["d0"], r["d1"])
            qid, sid = json.loads(r["qid"]), json.loads(r["sid"])
            got.append(Passage(qid, span, sid, source_span, r["score"], r["qord"], r["src"]))
            by_key[(r["qord"], span, r["src"], source_span)] = r
        reported, n = cross_sourced(got, finder.sources, finder.max_sources)
        queries.append(reported)
        cut += n
    return [got for got in queries if got], by_key, cut


def _templated(
    docs: DataFrame, rows: list[Any], finder: OverlapFinder, params: PairParams
) -> tuple[list[tuple[Any, Passage]], list[tuple[Passage, str]], int]:
    """The rows (sorted by query) each query reports, as the local finder reports them (the
    sources rule, then the template rule), each with its passage; the passages set aside as
    templates, with their text; and the sources ``max_sources`` left out."""
    queries, by_key, cut = _sourced(rows, finder)
    if not queries:
        return [], [], cut
    qords = [got[0].position for got in queries]
    wanted = sorted({p.source_position for got in queries for p in got} | set(qords))
    texts: dict[int, str] = {
        r["ord"]: r["text"]
        for r in docs.where(F.col("ord").isin(wanted)).select("ord", "text").collect()
    }
    batch = TemplateBatch(
        [texts[q] for q in qords],
        [token_arrays(prepare(texts[q], params)) for q in qords],
        params.ngram,
    )
    counts = _template_df(docs, params, qords)
    keys = batch.hashes.view(np.int64).tolist()
    at = batch.gram_off.tolist()
    df = np.array(
        [counts.get(q, {}).get(h, 0) for i, q in enumerate(qords) for h in keys[at[i] : at[i + 1]]],
        dtype=np.int64,
    )

    def source_text(p: Passage) -> str:
        return texts[p.source_position][p.source_span[0] : p.source_span[1]]

    kept, aside = apply_templates(
        queries,
        batch,
        df,
        source_text,
        finder.template_min_docs,
        finder.min_length,
        finder.templates,
    )
    out = [
        (by_key[(p.position, p.span, p.source_position, p.source_span)], p)
        for got in kept
        for p in got
    ]
    examples = [
        (replace(p, template=True), batch.texts[i][p.span[0] : p.span[1]]) for i, p in aside
    ]
    return out, examples, cut


def _result(
    rows: list[tuple[Any, Passage]],
    stats: ReadStats,
    chars: int,
    columns: tuple[str, ...],
    refs: int,
    template: bool = False,
) -> OverlapResult:
    """The CLI's rows of the reported ``rows`` (each with its passage), as the local
    ``cli._overlap_write.row`` writes them (``template``: with the template field)."""
    out: list[dict[str, Any]] = []
    spans: dict[int, list[tuple[int, int]]] = {}
    for r, p in rows:
        out.append(
            {
                "id": json.loads(r["qid"]),
                "span": [r["s0"], r["s1"]],
                "source_id": json.loads(r["sid"]),
                "source_span": [r["d0"], r["d1"]],
                "score": r["score"],
                "chars": r["s1"] - r["s0"],
                "closest_id": p.closest_id,
                "closest_span": None if p.closest_span is None else list(p.closest_span),
                "closest_score": p.closest_score,
            }
        )
        if template:
            out[-1]["template"] = p.template
        if columns:  # the local rule: the record's own field, else the partition value
            rec = json.loads(r["record"])
            out[-1].update({c: rec.get(c) for c in columns})
        spans.setdefault(r["qord"], []).append((r["s0"], r["s1"]))
    copied = 0
    for got in spans.values():
        end = -1
        for lo, hi in sorted(got):
            if hi > end:
                copied += hi - max(lo, end)
                end = hi
    return OverlapResult(out, stats, stats.documents, chars, copied, len(spans), refs)
