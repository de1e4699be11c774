"""128-bit index and join (one HammingIndex / all_pairs API with a width) against brute force."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.index import HammingIndex, Matches, Pairs, all_pairs

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


def _brute_search(
    stored: list[int], ids: list[int], queries: list[int], k: int
) -> list[tuple[int, int, int]]:
    """(query, distance, id) for every stored value within k, sorted."""
    return sorted(
        (q, (x ^ v).bit_count(), ids[i])
        for q, x in enumerate(queries)
        for i, v in enumerate(stored)
        if (x ^ v).bit_count() <= k
    )


def _triples(m: Matches) -> list[tuple[int, int, int]]:
    return list(zip(m.query.tolist(), m.distance.tolist(), m.id.tolist(), strict=True))


def _brute_pairs(values: list[int], k: int) -> list[tuple[int, int, int]]:
    return [
        (a, b, (values[a] ^ values[b]).bit_count())
        for a in range(len(values))
        for b in range(a + 1, len(values))
        if (values[a] ^ values[b]).bit_count() <= k
    ]


def _planted(seed: int, n: int, k: int) -> tuple[list[int], np.random.Generator]:
    rng = np.random.default_rng(seed)
    base = [(int(rng.integers(0, 2**63)) << 65) ^ int(rng.integers(0, 2**63)) for _ in range(n)]
    values = base + _flip(base[: n // 2], rng, k + 1) + [0, 2**128 - 1]
    values += [values[0]] * 2  # identical fingerprints pair at distance 0
    return values, rng


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(0, 24), n=st.integers(1, 80))
def test_wide_search_join_and_removal_match_brute_force(seed: int, k: int, n: int) -> None:
    values, rng = _planted(seed, n, k)
    fps = np.array([[v >> 64, v & MASK] for v in values], dtype=np.uint64)
    index = HammingIndex(k=k, bits=128, buffer_size=7)
    assert type(index) is HammingIndex and index.bits == 128 and index.k == k
    ids = [2 * i for i in range(len(values))]
    index.add(ids, fps)
    queries = _flip(values[:10], rng, k + 1)
    m = index.search(queries)
    assert isinstance(m, Matches)
    assert _triples(m) == _brute_search(values, ids, queries, k)
    # a smaller radius at query time, and ints or [hi, lo] rows for one query
    if k:
        small = index.search(fps[:5], k=k - 1)
        assert _triples(small) == _brute_search(values, ids, values[:5], k - 1)
    assert index.query(values[0]) == [
        (i, d) for _, d, i in _brute_search(values, ids, [values[0]], k)
    ]
    # removal: every remaining row is still found, the removed ones are not
    gone = ids[::3]
    assert index.remove(gone) == len(gone) and len(index) == len(ids) - len(gone)
    left = [i for i in range(len(values)) if ids[i] not in set(gone)]
    want = _brute_search([values[i] for i in left], [ids[i] for i in left], queries, k)
    assert _triples(index.search(queries)) == want
    pairs = all_pairs(fps, k=k)
    assert isinstance(pairs, Pairs)
    got = list(zip(pairs.i.tolist(), pairs.j.tolist(), pairs.distance.tolist(), strict=True))
    assert got == _brute_pairs(values, k)
    assert all_pairs(values, k=k, bits=128).i.tolist() == pairs.i.tolist()  # ints: bits=128


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(0, 6))
def test_both_widths_return_the_same_types(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    fps64 = rng.integers(0, 2**64, size=50, dtype=np.uint64)
    fps64[1] = fps64[0] ^ np.uint64(3)
    fps128 = np.stack([fps64, fps64], axis=1)  # distances double on 128 bits
    small, wide = HammingIndex(k=k), HammingIndex(k=2 * k, bits=128)
    small.add(np.arange(50), fps64)
    wide.add(np.arange(50), fps128)
    a, b = small.search(fps64[:5]), wide.search(fps128[:5])
    assert type(a) is type(b) is Matches
    assert a.id.tolist() == b.id.tolist() and (2 * a.distance).tolist() == b.distance.tolist()
    p, q = all_pairs(fps64, k), all_pairs(fps128, 2 * k)
    assert type(p) is type(q) is Pairs
    assert p.i.tolist() == q.i.tolist() and (2 * p.distance).tolist() == q.distance.tolist()


def test_wide_remove_expire_save_load(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    fps = rng.integers(0, 2**64, size=(3000, 2), dtype=np.uint64)
    index = HammingIndex(k=6, bits=128)
    index.add(np.arange(3000), fps, timestamps=np.arange(3000))
    assert index.remove([0, 1]) == 2 and index.expire(10) == 8 and len(index) == 2990
    assert 20 in index and 5 not in index and index.memory_bytes() > 0
    assert index.describe()["bits"] == 128 and "bits=128" in repr(index)
    index.save(tmp_path / "w")
    loaded = HammingIndex.load(tmp_path / "w")
    assert type(loaded) is HammingIndex and loaded.bits == 128 and len(loaded) == 2990
    assert loaded.query(_as_ints(fps[20:21])[0] ^ (1 << 100) ^ 1) == [(20, 2)]
    assert loaded.query(_as_ints(fps[5:6])[0]) == []
    with pytest.raises(ValueError, match="shape"):
        loaded.search(np.zeros(4, np.uint64))
    with pytest.raises(ValueError, match="2\\*\\*128"):
        loaded.add([9999], [2**128])
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        HammingIndex(bits=32)
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        all_pairs(fps, bits=32)
    with pytest.raises(ValueError, match="k must be in \\[0, 127\\]"):
        HammingIndex(k=128, bits=128)


def test_wide_save_replaces_a_64_bit_index(tmp_path: Path) -> None:
    small = HammingIndex(k=3)
    small.add([1], [1])
    small.save(tmp_path / "ix")
    wide = HammingIndex(k=4, bits=128)
    wide.add([7], [[1, 2]])
    wide.save(tmp_path / "ix")
    assert sorted(p.name for p in (tmp_path / "ix").iterdir()) == ["hi", "lo", "manifest.json"]
    assert HammingIndex.load(tmp_path / "ix").query((1 << 64) | 3) == [(7, 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ix"]
