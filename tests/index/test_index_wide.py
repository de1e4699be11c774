"""128-bit index and join against brute force."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.index import HammingIndex, WideHammingIndex, all_pairs_128

MASK = 2**64 - 1


def _as_ints(fps: np.ndarray) -> list[int]:
    return [(int(h) << 64) | int(lo) for h, lo in fps.tolist()]


def _flip(values: list[int], rng: np.random.Generator, max_bits: int) -> list[int]:
    out = []
    for v in values:
        for b in rng.choice(128, size=int(rng.integers(0, max_bits + 1)), replace=False).tolist():
            v ^= 1 << b
        out.append(v)
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(0, 9), n=st.integers(1, 80))
def test_wide_search_and_join_match_brute_force(seed: int, k: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    base = [int(x) for x in rng.integers(0, 2**63, size=n)]
    base = [(b << 65) ^ int(rng.integers(0, 2**63)) for b in base]
    values = base + _flip(base[: n // 2], rng, k + 1) + [0, 2**128 - 1]
    fps = np.array([[v >> 64, v & MASK] for v in values], dtype=np.uint64)
    index = HammingIndex(k=k, bits=128, buffer_size=7)
    assert isinstance(index, WideHammingIndex)
    ids = np.arange(len(values), dtype=np.int64) * 2
    index.add(ids, fps)
    queries = _flip(values[:10], rng, k + 1)
    m = index.search(queries)
    want = sorted(
        (q, bin(x ^ v).count("1"), int(ids[i]))
        for q, x in enumerate(queries)
        for i, v in enumerate(values)
        if bin(x ^ v).count("1") <= k
    )
    assert list(zip(m.query.tolist(), m.distance.tolist(), m.id.tolist(), strict=True)) == want
    i, j, d = all_pairs_128(fps, k=k)
    pairs = [
        (a, b, bin(values[a] ^ values[b]).count("1"))
        for a in range(len(values))
        for b in range(a + 1, len(values))
        if bin(values[a] ^ values[b]).count("1") <= k
    ]
    assert list(zip(i.tolist(), j.tolist(), d.tolist(), strict=True)) == pairs


def test_wide_remove_expire_save_load(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    fps = rng.integers(0, 2**64, size=(3000, 2), dtype=np.uint64)
    index = HammingIndex(k=6, bits=128)
    index.add(np.arange(3000), fps, timestamps=np.arange(3000))
    assert index.remove([0, 1]) == 2 and index.expire(10) == 8 and len(index) == 2990
    index.save(tmp_path / "w")
    loaded = HammingIndex.load(tmp_path / "w")
    assert isinstance(loaded, WideHammingIndex) and len(loaded) == 2990
    assert loaded.query(_as_ints(fps[20:21])[0] ^ (1 << 100) ^ 1) == [(20, 2)]
    assert loaded.query(_as_ints(fps[5:6])[0]) == []
    with pytest.raises(ValueError, match="shape"):
        loaded.search(np.zeros(4, np.uint64))
    with pytest.raises(ValueError, match="2\\*\\*128"):
        loaded.add([9999], [2**128])
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        HammingIndex(bits=32)


def test_wide_save_replaces_a_64_bit_index(tmp_path: Path) -> None:
    small = HammingIndex(k=3)
    small.add([1], [1])
    small.save(tmp_path / "ix")
    wide = HammingIndex(k=4, bits=128)
    wide.add([7], [[1, 2]])
    wide.save(tmp_path / "ix")
    assert sorted(p.name for p in (tmp_path / "ix" / "v-2").iterdir()) == [
        "hi",
        "lo",
        "manifest.json",
    ]
    assert HammingIndex.load(tmp_path / "ix").query((1 << 64) | 3) == [(7, 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ix"]
