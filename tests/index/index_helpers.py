"""Shared strategies and brute-force references for the index tests."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from hypothesis import strategies as st

ALL_ONES = 2**64 - 1


def brute_search(
    stored: npt.NDArray[np.uint64],
    ids: npt.NDArray[np.int64],
    queries: npt.NDArray[np.uint64],
    k: int,
) -> list[tuple[int, int, int]]:
    """(query row, id, distance) sorted by (query, distance, id), by full popcount."""
    out = []
    for qi, x in enumerate(queries.tolist()):
        for fid, f in zip(ids.tolist(), stored.tolist(), strict=False):
            d = bin(x ^ f).count("1")
            if d <= k:
                out.append((qi, d, fid))
    out.sort()
    return [(q, i, d) for q, d, i in out]


def brute_pairs(fps: npt.NDArray[np.uint64], k: int) -> list[tuple[int, int, int]]:
    """Every (i, j, distance) with i < j within k, row by row with numpy popcounts."""
    out: list[tuple[int, int, int]] = []
    for i in range(len(fps) - 1):
        d = np.bitwise_count(fps[i + 1 :] ^ fps[i])
        js = np.flatnonzero(d <= k)
        out += zip([i] * len(js), (js + i + 1).tolist(), d[js].tolist(), strict=False)
    return out


@st.composite
def fingerprint_sets(draw: st.DrawFn, max_size: int = 120, max_flip: int = 9) -> list[int]:
    """Random fingerprints plus planted neighbours, duplicates, 0 and all-ones."""
    base = draw(st.lists(st.integers(0, ALL_ONES), min_size=1, max_size=max_size // 3))
    out = list(base)
    for b in draw(st.lists(st.sampled_from(base), max_size=max_size // 3)):
        bits = draw(st.sets(st.integers(0, 63), max_size=max_flip))
        out.append(b ^ sum(1 << i for i in bits))
    out += draw(st.lists(st.sampled_from([0, ALL_ONES, *base]), max_size=max_size // 6))
    return draw(st.permutations(out))


def flip(values: list[int], rng: np.random.Generator, max_bits: int) -> list[int]:
    """Each value with 0..max_bits random bits flipped."""
    out = []
    for v in values:
        n = int(rng.integers(0, max_bits + 1))
        for b in rng.choice(64, size=n, replace=False).tolist():
            v ^= 1 << b
        out.append(v)
    return out
