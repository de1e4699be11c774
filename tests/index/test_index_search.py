"""HammingIndex.search against brute force: recall 1.0 and exact ordering."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.index import HammingIndex, TableDesign

from tests.index.index_helpers import brute_search, fingerprint_sets, flip

DESIGNS = [
    "auto",
    TableDesign(k=3, blocks=4),
    TableDesign(k=3, blocks=2, key_blocks=1),
    TableDesign(k=3, blocks=5),
    TableDesign(k=3, blocks=3, key_blocks=2),
]


def _as_triples(m: object) -> list[tuple[int, int, int]]:
    return list(zip(m.query.tolist(), m.id.tolist(), m.distance.tolist(), strict=False))  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None)
@given(
    fps=fingerprint_sets(),
    k=st.integers(0, 8),
    buffer_size=st.sampled_from([1, 7, 4096]),
    seed=st.integers(0, 2**32 - 1),
)
def test_search_matches_brute_force(fps: list[int], k: int, buffer_size: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    stored = np.array(fps, dtype=np.uint64)
    ids = rng.permutation(len(fps)).astype(np.int64) * 3 - 5
    index = HammingIndex(k=k, buffer_size=buffer_size)
    for chunk in np.array_split(np.arange(len(fps)), 3):
        index.add(ids[chunk], stored[chunk])
    picked = [fps[i] for i in rng.integers(0, len(fps), 20)]
    queries = np.array([*flip(picked, rng, k + 1), 0, 2**64 - 1], dtype=np.uint64)
    assert _as_triples(index.search(queries)) == brute_search(stored, ids, queries, k)


@pytest.mark.parametrize("design", DESIGNS)
@settings(max_examples=15, deadline=None)
@given(fps=fingerprint_sets(max_size=90), seed=st.integers(0, 2**32 - 1))
def test_designs_are_exact(design: object, fps: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    stored = np.array(fps, dtype=np.uint64)
    ids = np.arange(len(fps), dtype=np.int64)
    index = HammingIndex(k=3, design=design, buffer_size=8)  # type: ignore[arg-type]
    index.add(ids, stored)
    index.flush()
    picked = [fps[i] for i in rng.integers(0, len(fps), 15)]
    queries = np.array(flip(picked, rng, 4), dtype=np.uint64)
    for k in range(4):
        assert _as_triples(index.search(queries, k=k)) == brute_search(stored, ids, queries, k)


def test_search_above_index_k_probes_wider() -> None:
    rng = np.random.default_rng(1)
    stored = rng.integers(0, 2**64, size=3000, dtype=np.uint64)
    ids = np.arange(3000, dtype=np.int64)
    index = HammingIndex(k=2, design=3)
    index.add(ids, stored)
    queries = np.array(flip(stored[:30].tolist(), rng, 5), dtype=np.uint64)
    assert _as_triples(index.search(queries, k=5)) == brute_search(stored, ids, queries, 5)


def test_larger_random_set_with_runs() -> None:
    rng = np.random.default_rng(7)
    stored = rng.integers(0, 2**64, size=20000, dtype=np.uint64)
    stored[10000:10500] = flip(stored[:500].tolist(), rng, 4)
    ids = rng.permutation(20000).astype(np.int64)
    index = HammingIndex(k=4, buffer_size=1000)
    for chunk in np.array_split(np.arange(20000), 13):
        index.add(ids[chunk], stored[chunk])
    assert len(index.describe()["runs"]) >= 1
    queries = np.array(flip(stored[:200].tolist(), rng, 5), dtype=np.uint64)
    assert _as_triples(index.search(queries)) == brute_search(stored, ids, queries, 4)


def test_query_single_and_empty_index() -> None:
    index = HammingIndex(k=3)
    assert index.query(5) == []
    assert len(index.search(np.zeros(3, np.uint64))) == 0
    index.add([4, 9], [2**64 - 1, 0])
    assert index.query(2**64 - 1) == [(4, 0)]
    assert index.query(np.uint64(1)) == [(9, 1)]
    assert len(index) == 2 and 4 in index and 5 not in index
