"""The decision core (dedup/core.py): the one accept test, searched rows, candidate order and
greedy step that the library, Spark and eval all call (issue 19)."""

from __future__ import annotations

import numpy as np

from neardup import Deduplicator
from neardup.dedup.core import (
    DecideConfig,
    Ledger,
    accept,
    candidate_csr,
    decide,
    processing_order,
    searched_rows,
)

from tests.synthetic import synthetic_corpus


def test_accept_applies_radius_window_and_threshold() -> None:
    cfg = DecideConfig(radius=3, keep="first", window=10.0, threshold=0.5)
    dist = np.array([3, 4, 1, 1])
    tq, tp = np.array([0.0, 0.0, 0.0, 0.0]), np.array([10.0, 0.0, 11.0, 0.0])
    sim = np.array([0.5, 0.9, 0.9, 0.49])
    assert accept(cfg, dist, tq, tp, sim).tolist() == [True, False, False, False]
    # None skips a test that is applied elsewhere (Spark: the window per document pair)
    assert accept(cfg, dist, None, None, sim).tolist() == [True, False, True, False]
    no_verifier = DecideConfig(radius=3, keep="first", window=None, threshold=None)
    assert accept(no_verifier, dist, tq, tp, sim).tolist() == [True, False, True, True]


def test_searched_rows_skip_later_copies_without_window() -> None:
    keys = [5, 5, 6, 7]
    order = np.array([3, 2, 1, 0])
    plain = DecideConfig(radius=3, keep="first", window=None, threshold=None)
    assert searched_rows(plain, order, keys).tolist() == [1, 2, 3]  # first copy in order: 1
    assert searched_rows(plain, order, keys, seen={6}).tolist() == [1, 3]
    windowed = DecideConfig(radius=3, keep="first", window=5.0, threshold=None)
    assert searched_rows(windowed, order, keys, seen={6}).tolist() == [0, 1, 2, 3]


def test_candidate_csr_orders_by_distance_then_position() -> None:
    q, p, d = np.array([0, 0, 0, 2]), np.array([9, 4, 7, 1]), np.array([2, 2, 1, 0])
    assert candidate_csr(q, p, d, 3) == ([0, 3, 3, 4], [7, 4, 9, 1], [1, 2, 2, 0], None)


def test_processing_order_ties_by_position() -> None:
    pos, length, ts = np.arange(4), np.array([1, 5, 5, 2]), np.array([3.0, 1.0, 3.0, 0.0])
    assert processing_order("first", pos, length, ts).tolist() == [0, 1, 2, 3]
    assert processing_order("longest", pos, length, ts).tolist() == [1, 2, 3, 0]
    assert processing_order("newest", pos, length, ts).tolist() == [0, 2, 1, 3]


def test_decide_keeps_the_nearest_kept_candidate() -> None:
    cfg = DecideConfig(radius=5, keep="first", window=None, threshold=None)
    ledger = Ledger.empty(3)
    # row 2 has candidates 0 (d=4) and 1 (d=2); 1 is a duplicate of 0, so 2 joins 0
    csr = candidate_csr(np.array([1, 2, 2]), np.array([0, 0, 1]), np.array([1, 4, 2]), 3)
    new = decide(cfg, ledger, np.arange(3), [False] * 3, [1, 2, 3], csr)
    assert new == [0]
    assert ledger.statuses() == ["unique", "duplicate", "duplicate"]
    assert ledger.rep.tolist() == [0, 0, 0] and ledger.distance.tolist() == [-1, 1, 4]


def test_deduplicator_exposes_the_config_it_decides_with() -> None:
    dd = Deduplicator(k=4, candidate_k=6, window=60.0)
    assert dd.state.decide_config == DecideConfig(
        radius=6, keep="first", window=60.0, threshold=0.6, cluster_similarity=0.25
    )
    plain = Deduplicator(verifier=None, k=3).state.decide_config
    assert plain.threshold is None and plain.cluster_similarity is None


def test_core_decides_as_the_deduplicator_on_a_synthetic_corpus() -> None:
    # one batch through the core functions by hand = Deduplicator.run (the facade adds nothing)
    docs = synthetic_corpus(300, seed=3)
    texts = [d["text"] for d in docs]
    dd = Deduplicator(verifier=None, k=8)
    want = dd.replace().run(texts)
    assert {"duplicate", "exact_duplicate", "empty"} <= set(want.statuses)
    chunk = dd.prepare(texts)
    cfg, n = dd.state.decide_config, len(texts)
    order = processing_order(cfg.keep, np.arange(n), chunk.lengths, chunk.ts)
    live = searched_rows(cfg, order[~chunk.empty[order]], chunk.keys)
    i, j, dist = dd.state.candidates.pairs(chunk.fps[live], None)
    q, p, d = np.concatenate([live[i], live[j]]), np.concatenate([live[j], live[i]]), dist
    d = np.concatenate([d, d]).astype(np.int64)
    ok = accept(cfg, d, None, None, None)
    ledger = Ledger.empty(n)
    decide(
        cfg, ledger, order, chunk.empty.tolist(), chunk.keys, candidate_csr(q[ok], p[ok], d[ok], n)
    )
    assert ledger.status.tolist() == want.status.tolist()
    assert (
        ledger.rep.tolist()
        == np.where(want.duplicate_of < 0, want.position, want.duplicate_of).tolist()
    )
