"""Removal, expiry, compaction and re-adding keep search exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.index import HammingIndex

from tests.index.index_helpers import brute_search, fingerprint_sets, flip


def _triples(m: object) -> list[tuple[int, int, int]]:
    return list(zip(m.query.tolist(), m.id.tolist(), m.distance.tolist(), strict=False))  # type: ignore[attr-defined]


@settings(max_examples=30, deadline=None)
@given(
    fps=fingerprint_sets(),
    k=st.integers(0, 8),
    seed=st.integers(0, 2**32 - 1),
    buffer_size=st.sampled_from([1, 5, 1000]),
)
def test_remove_expire_compact(fps: list[int], k: int, seed: int, buffer_size: int) -> None:
    rng = np.random.default_rng(seed)
    n = len(fps)
    stored = np.array(fps, dtype=np.uint64)
    ids = np.arange(n, dtype=np.int64) + 100
    ts = rng.integers(0, 100, size=n)
    index = HammingIndex(k=k, buffer_size=buffer_size)
    index.add(ids[: n // 2], stored[: n // 2], timestamps=ts[: n // 2])
    index.add(ids[n // 2 :], stored[n // 2 :], timestamps=ts[n // 2 :])
    gone = rng.random(n) < 0.3
    assert index.remove(ids[gone]) == int(gone.sum())
    expired = index.expire(40)
    assert expired == int((~gone & (ts < 40)).sum())
    keep = ~gone & (ts >= 40)
    assert len(index) == int(keep.sum())
    queries = np.array(flip([fps[i] for i in rng.integers(0, n, 10)], rng, k + 1), np.uint64)
    want = brute_search(stored[keep], ids[keep], queries, k)
    assert _triples(index.search(queries)) == want
    index.compact()
    assert _triples(index.search(queries)) == want
    # removed ids can come back with new fingerprints
    back = ids[gone][:3]
    index.add(back, stored[: len(back)] ^ np.uint64(1))
    keep_ids = np.concatenate([ids[keep], back])
    keep_fps = np.concatenate([stored[keep], stored[: len(back)] ^ np.uint64(1)])
    assert _triples(index.search(queries)) == brute_search(keep_fps, keep_ids, queries, k)


def test_duplicate_ids_rejected() -> None:
    index = HammingIndex(k=3)
    index.add([1, 2], [5, 6])
    with pytest.raises(ValueError, match="id 2 is already in the index"):
        index.add([3, 2], [7, 8])
    with pytest.raises(ValueError, match="duplicate id 9 within the batch"):
        index.add([9, 9], [7, 8])
    assert len(index) == 2
    big = np.arange(100_000, dtype=np.int64) + 10
    index.add(big, np.arange(100_000, dtype=np.uint64))
    with pytest.raises(ValueError, match="already in the index"):
        index.add([50_000], [1])
    with pytest.raises(ValueError, match="already in the index"):
        index.add([1], [1])


def test_remove_unknown_and_missing_ok() -> None:
    index = HammingIndex(k=3)
    index.add([1, 2], [5, 6])
    with pytest.raises(KeyError, match="id 7"):
        index.remove([7])
    assert index.remove([7, 1], missing_ok=True) == 1
    assert index.query(5) == [(2, 2)] and len(index) == 1


def test_expire_without_timestamps_keeps_rows() -> None:
    index = HammingIndex(k=3)
    index.add([1], [5])
    index.add([2], [5], timestamps=[10])
    assert index.expire(11) == 1
    assert index.query(5) == [(1, 0)]


def test_many_single_adds_merge_runs() -> None:
    rng = np.random.default_rng(3)
    index = HammingIndex(k=3, buffer_size=16)
    fps = rng.integers(0, 2**64, size=3000, dtype=np.uint64)
    for i, f in enumerate(fps.tolist()):
        index.add([i], [f])
    runs = index.describe()["runs"]
    assert 1 <= len(runs) <= 12 and sum(runs) + index.describe()["buffer"] == 3000
    q = np.array(flip(fps[:50].tolist(), rng, 3), np.uint64)
    assert _triples(index.search(q)) == brute_search(fps, np.arange(3000), q, 3)
