from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.eval.pairs import brute_force_pairs


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=40), st.integers(0, 64), st.integers(1, 2))
def test_brute_force_pairs(values: list[int], k: int, words: int) -> None:
    # few distinct high bits so that small distances actually occur
    fps = np.array(values, dtype=np.uint64).reshape(-1)
    fps = (
        np.stack([fps & np.uint64(0xFF)] * words, axis=1) if words == 2 else fps & np.uint64(0xFFF)
    )
    i, j, d = brute_force_pairs(fps, k)
    rows = fps[:, None] if fps.ndim == 1 else fps
    want = []
    for a, b in itertools.combinations(range(len(rows)), 2):
        dist = sum(bin(int(x) ^ int(y)).count("1") for x, y in zip(rows[a], rows[b], strict=False))
        if dist <= k:
            want.append((a, b, dist))
    assert sorted(zip(i.tolist(), j.tolist(), d.tolist(), strict=False)) == want


def test_all_pairs_agrees_with_brute_force_for_64_and_128_bits() -> None:
    from neardup.eval.pairs import all_pairs

    rng = np.random.default_rng(3)
    fps = rng.integers(0, 2**63, 400, dtype=np.uint64)
    fps[10] = fps[20] ^ np.uint64(0b1011)
    fps[30] = fps[20]
    for k in (0, 3, 18):
        got = all_pairs(fps, k)
        want = brute_force_pairs(fps, k)
        assert all((g == w).all() for g, w in zip(got, want, strict=True))
    wide = np.stack([fps, fps ^ np.uint64(0xFF00)], axis=1)  # distances double
    i, j, _d = all_pairs(wide, 6)
    assert (10, 20) in set(zip(i.tolist(), j.tolist(), strict=False))
