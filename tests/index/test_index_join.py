"""all_pairs against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import brute_pairs, fingerprint_sets, flip
from neardup.index import all_pairs, duplicate_groups


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
    _values, inverse, counts = duplicate_groups(fps)
    assert counts.tolist() == [1500, 1500] and len(inverse) == 3000


def test_all_pairs_empty_and_single() -> None:
    for fps in ([], [7]):
        i, j, d = all_pairs(np.array(fps, dtype=np.uint64))
        assert len(i) == len(j) == len(d) == 0
