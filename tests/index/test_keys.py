"""Band keys, pairs sharing keys and the KeyTable against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.hashing import mix64
from neardup.index.keytable import KeyTable
from neardup.index.lsh import BandDesign, band_keys, mix64_np, pairs_sharing_keys


def _brute_pairs(keys: np.ndarray) -> set[tuple[int, int]]:
    n = keys.shape[0]
    return {
        (a, b)
        for a in range(n)
        for b in range(a + 1, n)
        if set(keys[a].tolist()) & set(keys[b].tolist())
    }


def test_mix64_matches_numba_kernel() -> None:
    xs = np.array([0, 1, 2**63, 2**64 - 1, 123456789], dtype=np.uint64)
    assert [int(v) for v in mix64_np(xs)] == [int(mix64(x)) for x in xs]


def test_band_keys_equal_exactly_when_band_values_equal() -> None:
    rng = np.random.default_rng(1)
    sk = rng.integers(0, 4, size=(300, 17), dtype=np.uint8)  # few values: many equal bands
    design = BandDesign(bands=4, rows=4)
    keys = band_keys(sk, design)
    for a in range(0, 300, 7):
        for b in range(300):
            for t in range(4):
                same = bool((sk[a, 4 * t : 4 * t + 4] == sk[b, 4 * t : 4 * t + 4]).all())
                assert (keys[a, t] == keys[b, t]) == same
    assert len(set(keys[:, 0].tolist()) & set(keys[:, 1].tolist())) == 0  # band index in key


def test_band_keys_refuse_short_sketch() -> None:
    with pytest.raises(ValueError, match="need 128 sketch values"):
        band_keys(np.zeros((2, 65), np.uint8), BandDesign(bands=32, rows=4))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 4),
    st.integers(0, 2**31),
)
def test_pairs_sharing_keys_brute_force(n: int, m: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 3 * n, size=(n, m)).astype(np.uint64)
    docs = np.repeat(np.arange(n), m)
    a, b = pairs_sharing_keys(keys.ravel(), docs)
    got = list(zip(a.tolist(), b.tolist(), strict=True))
    assert got == sorted(_brute_pairs(keys))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 6), st.integers(1, 4))
def test_keytable_lookup_brute_force(seed: int, batches: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    table = KeyTable(merge_factor=2)
    stored: list[np.ndarray] = []
    dead: set[int] = set()
    for _ in range(batches):
        n = int(rng.integers(0, 300))
        keys = mix64_np(rng.integers(0, 200, size=(n, m)).astype(np.uint64))
        table.add(keys, np.arange(len(stored), len(stored) + n))
        stored.extend(keys)
        if stored:
            kill = rng.integers(0, len(stored), size=3)
            table.kill(kill)
            dead.update(kill.tolist())
    queries = mix64_np(rng.integers(0, 200, size=(50, m)).astype(np.uint64))
    rows, slots = table.lookup(queries)
    want = sorted(
        (q, s)
        for q in range(50)
        for s, k in enumerate(stored)
        if s not in dead and set(queries[q].tolist()) & set(k.tolist())
    )
    assert list(zip(rows.tolist(), slots.tolist(), strict=True)) == want
    alive = np.array([s for s in range(len(stored)) if s not in dead], dtype=np.int64)
    if alive.size:
        back = table.keys_by_slot(alive, m)
        assert sorted(map(sorted, back.tolist())) == sorted(
            sorted(stored[s].tolist()) for s in alive.tolist()
        )


def test_recall_model() -> None:
    d = BandDesign(bands=32, rows=4)
    assert d.recall(0.8) > 0.99999
    assert 0.98 < d.recall(0.6) < 0.995
    assert d.random_pair_rate() == pytest.approx(32 * 256.0**-4, rel=1e-6)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 3000), st.integers(0, 600))
def test_key_kernels_c_equal_numba(seed: int, n: int, nq: int) -> None:
    """The C key kernels (``keys.c``) and the numba fallback give identical results."""
    native = pytest.importorskip("neardup._native")
    nb = pytest.importorskip("neardup._numba.keys")
    rng = np.random.default_rng(seed)
    pool = mix64_np(np.arange(max(n // 3, 1), dtype=np.uint64))  # repeated keys: multi-row hits
    keys = np.sort(rng.choice(pool, size=n))
    p = max(1, int(np.log2(max(n, 4) / 4)))
    offsets = np.searchsorted(
        keys >> np.uint64(64 - p), np.arange((1 << p) + 1, dtype=np.uint64)
    ).astype(np.int64)
    for mod in (native, nb):
        got_off = np.full((1 << p) + 1, -1, np.int64)
        mod.key_offsets(keys, p, got_off)
        assert got_off.tolist() == offsets.tolist()
    queries = rng.choice(np.concatenate([pool, mix64_np(pool + np.uint64(10**9))]), size=nq)
    for cap in (0, 7, 4 * nq + 16):
        got: list[object] = []
        want: list[object] = []
        for mod, out in ((native, got), (nb, want)):
            oq, oa = np.full(cap, -1, np.int64), np.full(cap, -1, np.int64)
            c = mod.key_lookup(keys, offsets, p, queries, oq, oa)
            out.append((c, oq.tolist(), oa.tolist()))
        assert got == want
    slots = rng.permutation(2 * n + 2).astype(np.uint32)
    dead = rng.random(2 * n + 2) < 0.3
    half = n // 2
    merged = []
    for mod in (native, nb):
        ok, os_ = np.zeros(n, np.uint64), np.zeros(n, np.uint32)
        m = mod.key_merge(keys[:half], slots[:half], keys[half:], slots[half:n], dead, ok, os_)
        merged.append((m, ok[:m].tolist(), os_[:m].tolist()))
    assert merged[0] == merged[1]
    live = ~dead[slots[:n]]
    assert merged[0][0] == int(live.sum())


def test_key_kernels_reject_bad_arguments() -> None:
    native = pytest.importorskip("neardup._native")
    keys = np.arange(8, dtype=np.uint64)
    out = np.zeros(4, np.int64)
    with pytest.raises(ValueError, match="2\\*\\*p \\+ 1"):
        native.key_lookup(keys, np.zeros(4, np.int64), 1, keys, out, out.copy())
    # malformed offsets (past the end, negative): clamped, never a read outside keys
    bad = np.array([-5, 5, 99], np.int64)
    c = native.key_lookup(keys, bad, 1, keys, out, out.copy())
    assert 0 <= c <= keys.size
    with pytest.raises(TypeError, match="queries"):
        native.key_lookup(keys, np.zeros(3, np.int64), 1, keys.astype(np.int32), out, out.copy())
    s = np.array([0, 9], np.uint32)
    with pytest.raises(IndexError, match="dead mask"):
        native.key_merge(keys[:2], s, keys[:0], s[:0], np.zeros(4, bool), keys.copy(), s.copy())
