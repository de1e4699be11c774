"""all_pairs against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.index import all_pairs, duplicate_groups

from tests.index.index_helpers import brute_pairs, fingerprint_sets, flip


@settings(max_examples=60, deadline=None)
@given(fps=fingerprint_sets(max_size=150), k=st.integers(0, 8))
def test_all_pairs_matches_brute_force(fps: list[int], k: int) -> None:
    arr = np.array(fps, dtype=np.uint64)
    i, j, d = all_pairs(arr, k=k)
    assert list(zip(i.tolist(), j.tolist(), d.tolist(), strict=False)) == brute_pairs(arr, k)


def test_all_pairs_larger_planted() -> None:
    rng = np.random.default_rng(5)
    base = rng.integers(0, 2**64, size=4000, dtype=np.uint64)
    base[3000:3400] = flip(base[:400].tolist(), rng, 4)
    base[3400:3500] = base[0]
    for k in (0, 3, 6):
        i, j, d = all_pairs(base, k=k)
        assert list(zip(i.tolist(), j.tolist(), d.tolist(), strict=False)) == brute_pairs(base, k)


def test_hot_identical_group_is_not_quadratic_in_work() -> None:
    fps = np.full(3000, 12345, dtype=np.uint64)
    fps[::2] = 2**63
    i, j, d = all_pairs(fps, k=3)
    assert len(i) == 2 * (1500 * 1499 // 2) and not d.any()
    assert bool((i < j).all())
    values, inverse, counts = duplicate_groups(fps)
    assert counts.tolist() == [1500, 1500] and values.tolist() == [12345, 2**63]
    assert inverse.tolist() == [1, 0] * 1500


def test_all_pairs_empty_and_single() -> None:
    for fps in ([], [7]):
        i, j, d = all_pairs(np.array(fps, dtype=np.uint64))
        assert len(i) == len(j) == len(d) == 0


def test_self_join_with_probe_radius() -> None:
    from neardup.index import TableDesign
    from neardup.index.tables import StaticTables

    rng = np.random.default_rng(9)
    fps = np.unique(rng.integers(0, 2**64, size=3000, dtype=np.uint64))
    fps = np.unique(np.concatenate([fps, np.array(flip(fps[:600].tolist(), rng, 5), np.uint64)]))
    for design in (TableDesign(k=4, blocks=2, key_blocks=1), TableDesign(k=4, blocks=3)):
        run = StaticTables.build(design, fps, None, q=9)
        a, b, d = run.self_join(4)
        got = sorted(
            (min(x, y), max(x, y), z)
            for x, y, z in zip(a.tolist(), b.tolist(), d.tolist(), strict=True)
        )
        assert got == brute_pairs(fps, 4)


def test_hot_non_identical_buckets_recurse(monkeypatch: object) -> None:
    from neardup.index import join

    monkeypatch.setattr(join, "_HOT", 40)  # type: ignore[attr-defined]
    rng = np.random.default_rng(21)
    low = np.unique(rng.integers(0, 2**20, size=3000)).astype(np.uint64)  # low-entropy values
    mixed = np.concatenate(
        [low, rng.integers(0, 2**64, size=500, dtype=np.uint64), low[:200] << np.uint64(40)]
    )
    for k in (1, 3, 5):
        i, j, d = all_pairs(mixed, k=k)
        assert list(zip(i.tolist(), j.tolist(), d.tolist(), strict=True)) == brute_pairs(mixed, k)


def test_low_entropy_values_are_packed() -> None:
    fps = np.arange(2500, dtype=np.uint64) * np.uint64(3) + np.uint64(2**63)
    for k in (2, 4):
        i, j, d = all_pairs(fps, k=k)
        assert list(zip(i.tolist(), j.tolist(), d.tolist(), strict=True)) == brute_pairs(fps, k)


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.sets(st.tuples(st.integers(0, 2**28 - 1), st.integers(0, 2**28 - 1)), max_size=80),
    seed=st.integers(0, 2**32 - 1),
)
def test_sort_pairs_packed_equals_lexsort(pairs: set[tuple[int, int]], seed: int) -> None:
    from neardup.index.join import sort_pairs

    rng = np.random.default_rng(seed)
    i, j = (np.array([p[x] for p in pairs], dtype=np.int64) for x in (0, 1))
    d = np.asarray(rng.integers(0, 65, i.shape[0]), dtype=np.int64)
    want = sorted(zip(i.tolist(), j.tolist(), d.tolist(), strict=True))
    for n in (2**28, 2**28 + 1):  # packed into one int64, and the lexsort beyond it
        got = sort_pairs(i, j, d, n)
        assert list(zip(*(x.tolist() for x in got), strict=True)) == want
