"""Bucketed tables: the two-pass build equals the one-pass build; big-table search is exact."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.index import HammingIndex, TableDesign
from neardup.index.join import sort_with_order
from neardup.index.tables import StaticTables

from tests.index.index_helpers import flip


def _permuted(fps: np.ndarray, design: TableDesign, t: int) -> np.ndarray:
    """Table ``t``'s permuted keys, computed bit by bit in Python (independent of kernels)."""
    sizes = design.block_sizes
    chosen = design.table_blocks()[t]
    order = list(chosen) + [b for b in range(design.blocks) if b not in chosen]
    starts = [64 - sum(sizes[: i + 1]) for i in range(design.blocks)]
    out = []
    for f in fps.tolist():
        key, top = 0, 64
        for blk in order:
            top -= sizes[blk]
            key |= ((f >> starts[blk]) & ((1 << sizes[blk]) - 1)) << top
        out.append(key)
    return np.array(out, dtype=np.uint64)


@pytest.mark.parametrize(
    ("n", "q", "subset"), [(70_000, 20, False), (70_000, 6, True), (5000, 12, True), (3, 1, False)]
)
@pytest.mark.parametrize("presorted", [False, True])
def test_build_buckets_match_reference(n: int, q: int, subset: bool, presorted: bool) -> None:
    rng = np.random.default_rng(n + q)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    fps[: n // 10] = fps[0]  # a hot bucket
    if presorted:
        fps.sort()
    design = TableDesign(k=3, blocks=3, key_blocks=1)
    positions = np.sort(rng.choice(n, n * 9 // 10, replace=False)).astype(np.uint32)
    run = StaticTables.build(design, fps, positions if subset else None, q=q, presorted=presorted)
    rows = positions if subset else np.arange(n, dtype=np.uint32)
    for t in range(design.tables):
        want_keys = _permuted(fps[rows], design, t)
        buckets = (want_keys >> np.uint64(64 - q)).astype(np.int64)
        want_off = np.searchsorted(np.sort(buckets), np.arange((1 << q) + 1))
        assert np.array_equal(run.offsets[t].astype(np.int64), want_off)
        got_b = (run.keys[t] >> np.uint64(64 - q)).astype(np.int64)
        assert bool((np.diff(got_b) >= 0).all())
        assert sorted(zip(run.pos[t].tolist(), run.keys[t].tolist(), strict=True)) == sorted(
            zip(rows.tolist(), want_keys.tolist(), strict=True)
        )


def test_big_index_search_is_exact() -> None:
    rng = np.random.default_rng(12)
    n = 150_000
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    fps[100_000:101_000] = flip(fps[:1000].tolist(), rng, 3)
    index = HammingIndex(k=3, design=TableDesign(k=3, blocks=2, key_blocks=1))
    index.add(np.arange(n), fps)
    queries = np.array(flip(fps[:300].tolist(), rng, 3), np.uint64)
    m = index.search(queries)
    want = sorted(
        (q, int(d), i)
        for q in range(len(queries))
        for i, d in zip(
            *(lambda d: (np.flatnonzero(d <= 3).tolist(), d[d <= 3].tolist()))(
                np.bitwise_count(fps ^ queries[q])
            ),
            strict=True,
        )
    )
    assert list(zip(m.query.tolist(), m.distance.tolist(), m.id.tolist(), strict=True)) == want


@pytest.mark.parametrize("n", [0, 5, 5000, 70_000])
def test_sort_with_order(n: int) -> None:
    rng = np.random.default_rng(n)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    fps[: n // 3] = rng.integers(0, 50, size=n // 3).astype(np.uint64)  # duplicates, hot bucket
    values, order = sort_with_order(fps)
    assert values.tolist() == sorted(fps.tolist())
    assert np.array_equal(fps[order], values) and sorted(order.tolist()) == list(range(n))


@pytest.mark.parametrize(
    ("k", "blocks", "key_blocks"), [(3, 2, 1), (3, 5, 0), (4, 3, 1), (2, 4, 2)]
)
def test_table_by_table_search_equals_one_pass(
    k: int, blocks: int, key_blocks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # large batches search table by table over queries sorted per table: same rows, same order
    from neardup.index import kernels
    from neardup.index.tables import SORTED_MIN_QUERIES

    if kernels.search_tables_range is None:
        pytest.skip("numba kernels: one pass only")
    rng = np.random.default_rng(k * 100 + blocks)
    n = 20_000
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    fps[10_000:12_000] = flip(fps[:2000].tolist(), rng, k)
    fps[12_000:12_050] = fps[0]  # a hot bucket
    design = TableDesign(k=k, blocks=blocks, key_blocks=key_blocks)
    run = StaticTables.build(design, fps, None, q=12)
    alive = (rng.random(n) < 0.9).astype(np.uint8)
    nq = SORTED_MIN_QUERIES + 500
    queries = np.array(flip(fps[rng.integers(0, 13_000, nq)].tolist(), rng, k + 1), np.uint64)
    got = run.search(queries, k, alive)
    monkeypatch.setattr(kernels, "search_tables_range", None)
    want = run.search(queries, k, alive)
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(g, w)
    brute = set()
    for lo in range(0, nq, 1000):
        d = np.bitwise_count(queries[lo : lo + 1000, None] ^ fps[None, :])
        qi, pi = np.nonzero((d <= k) & (alive[None, :] == 1))
        brute |= set(zip((qi + lo).tolist(), pi.tolist(), d[qi, pi].tolist(), strict=True))
    assert set(zip(*(x.tolist() for x in got), strict=True)) == brute


def test_native_permutation_of_more_than_64_blocks_is_refused() -> None:
    native = pytest.importorskip("neardup._native")
    perm = [np.zeros((1, 65), np.uint64) for _ in range(3)]  # kernels copy at most 64 blocks
    counts = np.zeros(3, np.int64)
    with pytest.raises(ValueError, match="at most 64 blocks"):
        native.top_counts(np.zeros(4, np.uint64), None, *perm, 0, 1, counts)
