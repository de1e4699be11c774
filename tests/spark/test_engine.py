"""The Spark engine decides exactly as :meth:`Deduplicator.run` (real Spark, local mode)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup import Deduplicator
from neardup.spark.engine import decide

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_news.jsonl"


def spark_decisions(
    spark: Any, texts: list[str], ts: list[float] | None, engine: dict[str, Any], **opts: Any
) -> Any:
    """(status, rep, distance, cluster_id) arrays in input order from the Spark engine."""
    rows = [(i, t, None if ts is None else ts[i]) for i, t in enumerate(texts)]
    docs = spark.createDataFrame(rows, "pos long, text string, ts double")
    out, info = decide(docs, Deduplicator(**opts), **engine)
    got = sorted(out.collect())
    out.unpersist()
    assert [r["pos"] for r in got] == list(range(len(texts)))
    cols = ("status", "rep", "distance", "cluster_id")
    return tuple(np.array([r[c] for r in got]) for c in cols), info


def assert_same(
    spark: Any,
    texts: list[str],
    ts: list[float] | None = None,
    engine: dict[str, Any] | None = None,
    **opts: Any,
) -> Any:
    """Spark decisions (``engine``: options of :func:`decide`) equal ``Deduplicator.run``'s."""
    ref = Deduplicator(**opts).run(texts, ts)
    engine = {"small_job_docs": 0, **(engine or {})}  # the distributed plan unless asked
    (status, rep, distance, cluster), info = spark_decisions(spark, texts, ts, engine, **opts)
    ref_rep = np.where(ref.duplicate_of < 0, np.arange(len(texts)), ref.duplicate_of)
    assert status.tolist() == ref.status.tolist()
    assert rep.tolist() == ref_rep.tolist()
    assert distance.tolist() == ref.distance.tolist()
    assert cluster.tolist() == ref.cluster_id.tolist()
    return ref, info


def planted(base: list[str], seed: int) -> tuple[list[str], list[float]]:
    """``base`` plus edited copies (a few words dropped), exact copies, re-cased copies and
    empty texts, shuffled; timestamps one hour apart so a window cuts some pairs."""
    rng = random.Random(seed)
    texts = list(base)
    for t in rng.sample(base, len(base) // 3):
        words = t.split()
        for _ in range(max(1, len(words) // 40)):
            words.pop(rng.randrange(len(words)))
        texts.append(" ".join(words))
    texts += rng.sample(base, len(base) // 10) + [t.upper() for t in base[:5]] + ["", "  ", "!!"]
    rng.shuffle(texts)
    return texts, [3600.0 * i for i in range(len(texts))]


def test_sample_default_design(spark: Any) -> None:
    with open(SAMPLE) as f:
        texts = [json.loads(line)["text"] for line in f]
    texts += [*texts[:4], ""]
    ref, _ = assert_same(spark, texts)
    assert {"duplicate", "exact_duplicate", "empty"} <= set(ref.statuses)


def test_corpus_slice_with_planted_copies(spark: Any, reuters: list[str]) -> None:
    """Components on DataFrames (large-star / small-star), not on the driver."""
    texts, _ = planted(reuters[:150], seed=1)
    ref, info = assert_same(spark, texts, engine={"driver_max_edges": -1})
    counts = ref.counts()
    assert counts["duplicate"] > 20 and counts["exact_duplicate"] > 10
    assert info["accepted_pairs"] > 20 and info["cc_rounds"] >= 1


@pytest.mark.parametrize(
    "opts",
    [
        {"window": 30 * 3600.0},
        {"verifier": None, "keep": "longest"},
        {"k": 14, "keep": "newest"},
    ],
    ids=["window", "hamming-longest", "hamming-radius-newest"],
)
def test_options(spark: Any, reuters: list[str], opts: dict[str, Any]) -> None:
    texts, ts = planted(reuters[150:250], seed=2)
    ref, _ = assert_same(spark, texts, ts, **opts)
    assert ref.counts()["duplicate"] > 0


WORDS = st.sampled_from(
    ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
)


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    base=st.lists(st.lists(WORDS, min_size=0, max_size=14), min_size=1, max_size=12),
    picks=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 13)), max_size=12),
)
def test_property_random_chains(spark: Any, base: list[list[str]], picks: list[Any]) -> None:
    """Chains of one-word edits over a tiny vocabulary: dense candidate graphs, long components,
    exact copies and empty texts; the engine must still equal the library."""
    texts = [" ".join(words) for words in base]
    for src, drop in picks:
        words = base[src % len(base)]
        texts.append(" ".join(w for i, w in enumerate(words) if i != drop % max(len(words), 1)))
    assert_same(spark, texts, verifier=None, k=6)


def test_hot_keys_tiled(spark: Any, reuters: list[str]) -> None:
    """Templated near-copies (one word changed each) make hot band keys; with a low threshold
    their self-joins are tiled, and the decisions still equal the library's."""
    rng = random.Random(3)
    base = next(t for t in reuters if len(t.split()) > 120).split()[:120]
    vocab = sorted({w for t in reuters[:50] for w in t.split()})
    texts = list(reuters[300:340])
    for _ in range(60):
        words = list(base)
        words[rng.randrange(len(words))] = rng.choice(vocab)
        texts.append(" ".join(words))
    rng.shuffle(texts)
    ref, info = assert_same(spark, texts, engine={"hot_key_nodes": 10})
    assert info["hot_keys"] > 0 and info["largest_component"] >= 50
    assert ref.counts()["duplicate"] >= 50


def test_small_job_limit_decides_on_the_driver_or_distributed_alike(spark: Any) -> None:
    """A small plan is collected without a count job (Spark's size estimate); above the
    document limit the same input goes the distributed way; both equal the library."""
    with open(SAMPLE) as f:
        texts = [json.loads(line)["text"] for line in f]
    _, small = assert_same(spark, texts, engine={"small_job_docs": len(texts)})
    _, large = assert_same(spark, texts, engine={"small_job_docs": len(texts) - 1})
    assert (small["path"], large.get("path")) == ("driver", None)


@pytest.mark.parametrize("small_job_docs", [0, 10**6], ids=["executors", "driver"])
@pytest.mark.parametrize("opts", [{}, {"threshold": 0.4}, {"k": 6, "verifier": None}], ids=str)
def test_verified_pairs_equal_the_local_engines(
    spark: Any, small_job_docs: int, opts: dict[str, Any]
) -> None:
    """``--pairs`` (issue 38): the accepted edges between nodes are the local engine's
    verified pairs (first copies of each text, both engines' accept test)."""
    from neardup.dedup.core import verified_pairs

    with open(SAMPLE) as f:
        base = [json.loads(line)["text"] for line in f]
    texts, _ = planted(base, seed=3)
    dd = Deduplicator(**opts)
    want = verified_pairs(
        dd.state.decide_config, dd.state.candidates, dd.verifier, dd.prepare(texts)
    )
    assert want[0].size >= 5
    rows = [(i, t, None) for i, t in enumerate(texts)]
    docs = spark.createDataFrame(rows, "pos long, text string, ts double")
    out, info = decide(docs, dd, small_job_docs=small_job_docs, pairs=True)
    out.unpersist()
    got = info["pairs"]
    for w, g in zip(want[:3], got[:3], strict=True):
        assert np.asarray(g).tolist() == w.tolist()
    assert np.round(np.asarray(got[3], np.float64), 4).tolist() == np.round(want[3], 4).tolist()
