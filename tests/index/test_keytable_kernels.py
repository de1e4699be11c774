"""The C key table kernels (``keys.c``) equal the numba fallback, and refuse bad arguments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.index.keytable import KeyTable
from neardup.index.lsh import mix64_np


def run_of(rng: np.random.Generator, n: int, p: int, dtype: Any, bits: int = 37) -> tuple:
    """A random run: ``(offsets, tags, shift, slots, sorted table keys)``."""
    pool = rng.integers(0, 2**bits, size=max(n // 3, 1), dtype=np.uint64)
    keys = np.sort(rng.choice(pool, size=n))  # repeated keys: multi-row hits
    shift = bits - p
    offsets = np.searchsorted(
        keys >> np.uint64(shift), np.arange((1 << p) + 1, dtype=np.uint64)
    ).astype(np.uint32)
    tags = (keys & np.uint64((1 << shift) - 1)).astype(dtype)
    slots = rng.permutation(2 * n + 2)[:n].astype(np.uint32)
    return offsets, tags, shift, slots, keys


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 3000), st.integers(0, 600))
def test_key_kernels_c_equal_numba(seed: int, n: int, nq: int) -> None:
    native = pytest.importorskip("neardup._native")
    nb = pytest.importorskip("neardup._numba.keys")
    rng = np.random.default_rng(seed)
    raw = mix64_np(rng.integers(0, 2**38, size=nq, dtype=np.uint64))
    for bits in (37, 40, 64):
        packed = [np.zeros(nq, np.uint64) for _ in range(2)]
        native.key_pack(raw, bits, packed[0])
        nb.key_pack(raw, bits, packed[1])
        assert np.array_equal(*packed)
    assert np.array_equal(packed[0], raw)  # bits == 64: the keys themselves
    runs = [run_of(rng, n, p, dt) for p, dt in ((21, np.uint16), (8, np.uint32), (3, np.uint64))]
    for offsets, tags, shift, _, keys in runs:
        for mod in (native, nb):
            got_off = np.full(offsets.size, 7, np.uint32)
            mod.key_offsets(keys, shift, got_off)
            assert got_off.tolist() == offsets.tolist()
        queries = rng.choice(np.concatenate([keys[:50], rng.integers(0, 2**37, 50, np.uint64)]), nq)
        queries[:3] = 2**64 - 1  # outside every bucket
        for cap in (0, 7, 4 * nq + 16):
            got: list[object] = []
            for mod in (native, nb):
                oq, oa = np.full(cap, -1, np.int64), np.full(cap, -1, np.int64)
                c = mod.key_lookup(offsets, tags, shift, queries, oq, oa)
                got.append((c, oq.tolist(), oa.tolist()))
            assert got[0] == got[1]
        want = sum(int((keys == q).sum()) for q in queries.tolist())
        assert got[0][0] == want
    dead = rng.random(2 * n + 2) < 0.3
    a, b = runs[0], runs[2]
    live = int((~dead[a[3]]).sum() + (~dead[b[3]]).sum())
    merged = []
    for mod in (native, nb):
        for p, dt in ((22, np.uint16), (2, np.uint64)):
            oo, ot, os_ = (
                np.zeros((1 << p) + 1, np.uint32),
                np.zeros(2 * n, dt),
                np.zeros(2 * n, np.uint32),
            )
            m = mod.key_merge(*a[:4], *b[:4], dead, oo, ot, 37 - p, os_)
            merged.append((m, oo.tolist(), ot[:m].tolist(), os_[:m].tolist()))
            assert m == live
    assert merged[0] == merged[2] and merged[1] == merged[3]
    back = KeyTable(value_bits=37)
    rows = np.repeat(np.arange((1 << 22), dtype=np.uint64), np.diff(merged[0][1]))
    table_keys = (rows << np.uint64(15)) | np.array(merged[0][2], np.uint64)
    both = np.concatenate([a[4][~dead[a[3]]], b[4][~dead[b[3]]]])
    assert np.array_equal(table_keys, np.sort(both)) and back.value_bits == 37


def test_key_kernels_reject_bad_arguments() -> None:
    native = pytest.importorskip("neardup._native")
    tags = np.arange(8, dtype=np.uint16)
    keys = np.arange(8, dtype=np.uint64)
    out = np.zeros(4, np.int64)
    with pytest.raises(ValueError, match="2 or more"):
        native.key_lookup(np.zeros(1, np.uint32), tags, 1, keys, out, out.copy())
    with pytest.raises(TypeError, match="uint8, uint16, uint32 or uint64"):
        native.key_lookup(np.zeros(3, np.uint32), tags.astype("S3"), 1, keys, out, out.copy())
    with pytest.raises(TypeError, match=r"^tags: expected a 1-d array of uint8"):
        native.key_lookup(np.zeros(3, np.uint32), tags.astype(np.int8), 1, keys, out, out.copy())
    # malformed offsets (past the end): clamped, never a read outside the tags
    bad = np.array([0, 5, 99], np.uint32)
    c = native.key_lookup(bad, tags, 1, keys, out, out.copy())
    assert 0 <= c <= tags.size
    with pytest.raises(TypeError, match="queries"):
        native.key_lookup(np.zeros(3, np.uint32), tags, 1, keys.astype(np.int32), out, out.copy())
    s = np.array([0, 9], np.uint32)
    off = np.array([0, 2], np.uint32)
    empty = (np.zeros(2, np.uint32), tags[:0], 4, s[:0])
    o = (np.zeros(2, np.uint32), tags.copy(), 4, s.copy())
    with pytest.raises(IndexError, match="dead mask"):
        native.key_merge(off, tags[:2], 4, s, *empty, np.zeros(4, bool), *o)
    with pytest.raises(ValueError, match="offsets of run a"):
        native.key_merge(
            np.array([0, 1], np.uint32), tags[:2], 4, s, *empty, np.zeros(10, bool), *o
        )
    with pytest.raises(ValueError, match="sorted"):
        native.key_offsets(keys[::-1].copy(), 2, np.zeros(3, np.uint32))
    with pytest.raises(ValueError, match="bits"):
        native.key_pack(keys, 31, keys.copy())


@pytest.mark.parametrize(
    ("name", "out_name", "dtype"),
    [
        ("key_pack", "out", np.uint64),
        ("key_offsets", "offsets", np.uint32),
        ("offsets_from_sorted", "offsets", np.uint32),
    ],
)
def test_keys_number_out_kernels_name_the_bad_argument(
    name: str, out_name: str, dtype: Any
) -> None:
    # the three share one argument prologue: each still names its own output argument
    f = getattr(pytest.importorskip("neardup._native"), name)
    keys, out = np.arange(8, dtype=np.uint64), np.zeros(9, dtype)
    with pytest.raises(TypeError, match=rf"^{out_name}: expected a 1-d array of uint"):
        f(keys, 40, out.astype(np.float64))
    with pytest.raises(TypeError, match=r"^keys: expected a 1-d array of uint64"):
        f(keys.astype(np.int64), 40, out)
    out.flags.writeable = False
    with pytest.raises(TypeError, match=rf"^{out_name} must be a C-contiguous writable array"):
        f(keys, 40, out)
    with pytest.raises(TypeError, match="exactly 3 arguments"):
        f(keys, 40)


def test_key_merge_names_its_output_arguments() -> None:
    native = pytest.importorskip("neardup._native")
    tags, slots = np.zeros(0, np.uint16), np.zeros(0, np.uint32)
    run = (np.zeros(2, np.uint32), tags, 4, slots)
    dead, offsets = np.zeros(1, bool), np.zeros(2, np.uint32)
    with pytest.raises(TypeError, match=r"^out_offsets: expected a 1-d array of uint32"):
        native.key_merge(*run, *run, dead, offsets.astype(np.int64), tags, 4, slots)
    with pytest.raises(TypeError, match=r"^out_tags: expected a 1-d array of uint64"):
        native.key_merge(*run, *run, dead, offsets, tags.astype(np.float64), 4, slots)
    with pytest.raises(TypeError, match=r"^out_tags must be a uint8, uint16, uint32 or uint64"):
        native.key_merge(*run, *run, dead, offsets, tags.astype("S3"), 4, slots)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 3000), st.integers(0, 400))
def test_1_byte_tags_c_equal_numba_and_the_keys(seed: int, n: int, nq: int) -> None:
    """uint8 tags (issue 39: a run of ~1.6e9 rows keeps 8 bits a row in its tags) in lookups and
    merges, in and out, against numba and the sorted keys; 12-bit keys here (at scale 37)."""
    native = pytest.importorskip("neardup._native")
    nb = pytest.importorskip("neardup._numba.keys")
    rng = np.random.default_rng(seed)
    a, b = run_of(rng, n, 4, np.uint8, bits=12), run_of(rng, n, 6, np.uint16, bits=12)
    queries = rng.choice(np.concatenate([a[4][:50], rng.integers(0, 2**12, 50, np.uint64)]), nq)
    got, merged = [], []
    for mod in (native, nb):
        oq, oa = np.full(4 * nq + 16, -1, np.int64), np.full(4 * nq + 16, -1, np.int64)
        c = mod.key_lookup(*a[:3], queries, oq, oa)
        got.append((c, oq[:c].tolist(), oa[:c].tolist()))
        dead = np.zeros(2 * n + 2, bool)
        dead[::3] = True
        for first, second in ((a, b), (b, a)):
            out = (
                np.zeros(17, np.uint32),
                np.zeros(2 * n, np.uint8),
                8,
                np.zeros(2 * n, np.uint32),
            )
            m = mod.key_merge(*first[:4], *second[:4], dead, *out)
            keys = (
                np.repeat(np.arange(16, dtype=np.uint64), np.diff(out[0])) << np.uint64(8)
            ) | out[1][:m].astype(np.uint64)
            live = np.concatenate([r[4][~dead[r[3]]] for r in (first, second)])
            assert np.array_equal(keys, np.sort(live))
            merged.append((m, out[0].tolist(), out[1][:m].tolist(), out[3][:m].tolist()))
    assert got[0] == got[1] and merged[:2] == merged[2:]
    assert got[0][0] == sum(int((a[4] == q).sum()) for q in queries.tolist())


@pytest.mark.parametrize("nq", [1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 65, 1000])
def test_lookup_pipeline_edges_give_every_pair_in_query_then_row_order(nq: int) -> None:
    """The C lookup reads bucket bounds 16 queries ahead and prefetches offsets 32 ahead: at
    lengths around those distances every (query, row) pair of an equal key comes, in query
    order then row order, against numpy; and a short output gets the first pairs and the
    count of all of them."""
    native = pytest.importorskip("neardup._native")
    rng = np.random.default_rng(nq)
    for p, dtype in ((6, np.uint16), (10, np.uint32), (1, np.uint64)):
        offsets, tags, shift, _, keys = run_of(rng, 600, p, dtype)
        queries = rng.choice(np.concatenate([keys, rng.integers(0, 2**37, 300, np.uint64)]), nq)
        queries[nq // 2] = 2**64 - 1  # outside every bucket
        want = [
            (i, int(a)) for i, q in enumerate(queries.tolist()) for a in np.flatnonzero(keys == q)
        ]
        for cap in (len(want) + 5, len(want) // 2):
            oq, oa = np.full(cap, -1, np.int64), np.full(cap, -1, np.int64)
            c = native.key_lookup(offsets, tags, shift, queries, oq, oa)
            assert c == len(want)
            assert list(zip(oq.tolist(), oa.tolist(), strict=True))[: min(c, cap)] == want[:cap]


def three_bytes(slots: np.ndarray) -> np.ndarray:
    """uint32 slots as the 3-byte layout (uint8, little-endian)."""
    return slots.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :3].reshape(-1)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 2000))
def test_merge_with_3_byte_slots_c_equal_numba_and_uint32(seed: int, n: int) -> None:
    """Any mix of 3-byte and uint32 slots in and out: the same merge, C and numba."""
    native = pytest.importorskip("neardup._native")
    nb = pytest.importorskip("neardup._numba.keys")
    rng = np.random.default_rng(seed)
    a, b = run_of(rng, n, 21, np.uint16), run_of(rng, n, 8, np.uint32)
    dead = rng.random(2 * n + 2) < 0.3
    got = set()
    for mod in (native, nb):
        for narrow_in in (False, True):
            for narrow_out in (False, True):
                out = (np.zeros((1 << 22) + 1, np.uint32), np.zeros(2 * n, np.uint16))
                slots = np.zeros(6 * n, np.uint8) if narrow_out else np.zeros(2 * n, np.uint32)
                a_in = (*a[:3], three_bytes(a[3]) if narrow_in else a[3])
                m = mod.key_merge(*a_in, *b[:4], dead, *out, 15, slots)
                if narrow_out:
                    v = slots[: 3 * m].reshape(-1, 3).astype(np.uint32)
                    slots = v[:, 0] | (v[:, 1] << 8) | (v[:, 2] << 16)
                got.add((m, tuple(out[0]), tuple(out[1][:m]), tuple(slots[:m])))
    assert len(got) == 1


def test_3_byte_slots_refuse_a_slot_of_2_24() -> None:
    native = pytest.importorskip("neardup._native")
    offsets, tags = np.array([0, 1], np.uint32), np.array([5], np.uint16)
    big = np.array([1 << 24], np.uint32)
    dead = np.zeros((1 << 24) + 1, bool)
    empty = (np.zeros(2, np.uint32), np.zeros(0, np.uint16), 15, np.zeros(0, np.uint32))
    out = (np.zeros(2, np.uint32), np.zeros(1, np.uint16), 15, np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match="too large for 3-byte"):
        native.key_merge(offsets, tags, 15, big, *empty, dead, *out)
    with pytest.raises(ValueError, match="disagree in length"):
        native.key_merge(offsets, tags, 15, np.zeros(2, np.uint8), *empty, dead, *out)
