"""A large search batch split across threads returns exactly the one-thread result."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.index import HammingIndex, kernels


@pytest.mark.parametrize("threads", [2, 3, 5])
def test_threaded_search_equals_one_thread(threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(threads)
    fps = rng.integers(0, 2**64, 30_000, dtype=np.uint64)
    index = HammingIndex(k=3)
    index.add(np.arange(fps.size), fps)
    flips = np.uint64(1) << rng.integers(0, 64, fps.size).astype(np.uint64)
    queries = np.concatenate([fps ^ flips, fps[:5000]])  # >= 8192: the threaded path
    monkeypatch.setenv("NEARDUP_THREADS", "1")
    one = index.search(queries)
    monkeypatch.setenv("NEARDUP_THREADS", str(threads))
    many = index.search(queries)
    assert len(one) >= queries.size  # every query finds at least its source
    for name in ("query", "id", "distance"):
        assert np.array_equal(getattr(one, name), getattr(many, name))


def test_collect_queries_shifts_query_rows() -> None:
    def kernel(
        start: int, q: np.ndarray, a: np.ndarray, b: np.ndarray, d: np.ndarray
    ) -> tuple[int, int]:
        m = q.size - start
        a[:m] = np.arange(start, q.size)
        b[:m] = q[start:].astype(np.int64)
        d[:m] = 0
        return m, q.size

    q = np.arange(20_000, dtype=np.uint64)
    a, b, _ = kernels.collect_queries(kernel, q, capacity=1 << 15, threads=4)
    assert a.tolist() == list(range(20_000))
    assert b.tolist() == list(range(20_000))
