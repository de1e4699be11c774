"""Bucketed tables: the two-pass build equals the one-pass build; big-table search is exact."""

from __future__ import annotations

import numpy as np
from conftest import flip

from neardup.index import HammingIndex, TableDesign, kernels
from neardup.index.tables import StaticTables, permutation_arrays


def test_two_pass_build_matches_one_pass() -> None:
    rng = np.random.default_rng(11)
    n = 70_000
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    fps[:5000] = fps[0]  # a hot bucket
    design = TableDesign(k=3, blocks=2, key_blocks=1)
    run = StaticTables.build(design, fps, None, q=20)
    rsh, msk, lsh = permutation_arrays(design)
    for t in range(design.tables):
        keys = np.empty(n, np.uint64)
        pos = np.empty(n, np.uint32)
        offsets = np.empty((1 << 20) + 1, np.uint32)
        kernels._count_sort(fps, np.arange(n, dtype=np.uint32), rsh, msk, lsh, t, 20, keys, pos,
                            offsets)
        assert np.array_equal(offsets, run.offsets[t])
        assert np.array_equal(pos, run.pos[t])  # both passes are stable
        assert np.array_equal(keys, run.keys[t])
    sub = np.sort(rng.choice(n, 66_000, replace=False)).astype(np.uint32)
    part = StaticTables.build(design, fps, sub, q=19)
    assert sorted(part.pos[1].tolist()) == sub.tolist()


def test_big_index_search_is_exact() -> None:
    rng = np.random.default_rng(12)
    n = 150_000
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    fps[100_000:101_000] = flip(fps[:1000].tolist(), rng, 3)
    index = HammingIndex(k=3, design=TableDesign(k=3, blocks=2, key_blocks=1))
    index.add(np.arange(n), fps)
    queries = np.array(flip(fps[:300].tolist(), rng, 3), np.uint64)
    m = index.search(queries)
    want = sorted((q, int(d), i) for q in range(len(queries))
                  for i, d in zip(*(lambda d: (np.flatnonzero(d <= 3).tolist(),
                                               d[d <= 3].tolist()))(
                      np.bitwise_count(fps ^ queries[q])), strict=True))
    assert list(zip(m.query.tolist(), m.distance.tolist(), m.id.tolist(), strict=True)) == want
