"""The KeyTable (tags + slots + uint32 offsets) against brute force, its kernels C == numba, and
its saved layouts (the current one and state format 1's full keys)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._spill import file_map
from neardup.index import keytable
from neardup.index.keytable import KeyTable
from neardup.index.lsh import mix64_np

BITS = 37  # 32 bands of 4 bytes: what BandCandidates uses


def forced_keys(bands: np.ndarray, table_keys: np.ndarray) -> np.ndarray:
    """The band keys whose table keys are ``(band << 32) | table_keys`` (chosen collisions)."""
    k = (bands.astype(np.uint64) << np.uint64(32)) | table_keys.astype(np.uint64)
    return KeyTable(value_bits=BITS).unpack(k)


def key_pool(rng: np.random.Generator, n: int, m: int, bits: int) -> np.ndarray:
    """``(n, m)`` keys from a small pool: equal keys, equal tags in other buckets, many rows in
    one bucket (the table key's low bits and its top bits vary independently)."""
    if bits == 64:
        return mix64_np(rng.integers(0, 200, size=(n, m)).astype(np.uint64))
    if bits == 32:  # one band; 2**24 buckets of 8-bit tags (the 1-byte tag layout) vary too
        k = rng.integers(0, 16, size=(n, m)).astype(np.uint64) << np.uint64(20)
        k |= rng.integers(0, 4, size=(n, m)).astype(np.uint64) << np.uint64(8)
        k |= rng.integers(0, 8, size=(n, m)).astype(np.uint64)
        return KeyTable(value_bits=32).unpack(k.ravel()).reshape(n, m)
    hi = rng.integers(0, 16, size=(n, m)).astype(np.uint64) << np.uint64(28)
    lo = rng.integers(0, 8, size=(n, m)).astype(np.uint64)
    band = rng.integers(0, 3, size=(n, m))
    return forced_keys(band, hi | lo).reshape(n, m)


def brute(stored: list[np.ndarray], dead: set[int], queries: np.ndarray) -> list[tuple[int, int]]:
    return sorted(
        (q, s)
        for q in range(len(queries))
        for s, k in enumerate(stored)
        if s not in dead and set(queries[q].tolist()) & set(k.tolist())
    )


def hits(table: KeyTable, queries: np.ndarray) -> list[tuple[int, int]]:
    rows, slots = table.lookup(queries)
    return list(zip(rows.tolist(), slots.tolist(), strict=True))


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**31),
    st.integers(1, 6),
    st.integers(1, 4),
    st.sampled_from([64, BITS]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, 1, 200]),
)
def test_keytable_lookup_brute_force(
    seed: int,
    batches: int,
    m: int,
    bits: int,
    pieces: bool,
    wide: bool,
    order: bool,
    kills: bool,
    spill: int | None,
) -> None:
    """Against brute force; ``pieces``: runs of 64 rows and more are cut in 8 pieces (at
    scale: 2**21), ``wide``: 4-byte slots (at scale: from 2**24 slots; else 3 bytes),
    ``order``: queries probed sorted by their top bits (at scale: from 2**27 rows), ``kills``:
    slots killed between the batches (none: merges count no dead rows), ``spill``: a piece's
    slots from this many bytes live in a spill file (at scale: 8 MB; 1: all, 200: some)."""
    with pytest.MonkeyPatch.context() as mp:
        if pieces:
            mp.setattr(keytable, "_PIECE_ROWS", 64)
        if wide:
            mp.setattr(keytable, "_NARROW_SLOTS", 0)
        if order:
            mp.setattr(keytable, "_SORT_ROWS", 0)
        check_against_brute_force(np.random.default_rng(seed), batches, m, bits, kills, spill)


def check_against_brute_force(
    rng: np.random.Generator,
    batches: int,
    m: int,
    bits: int,
    kills: bool = True,
    spill: int | None = None,
) -> None:
    table = KeyTable(merge_factor=2, value_bits=bits, spill_bytes=spill)
    stored: list[np.ndarray] = []
    dead: set[int] = set()
    for _ in range(batches):
        n = int(rng.integers(0, 300))
        keys = key_pool(rng, n, m, bits)
        table.add(keys, np.arange(len(stored), len(stored) + n))
        stored.extend(keys)
        if stored and kills:
            kill = rng.integers(0, len(stored), size=3)
            table.kill(kill)
            dead.update(kill.tolist())
    queries = key_pool(rng, 50, m, bits)
    want = brute(stored, dead, queries)
    assert hits(table, queries) == want
    if spill == 1:  # every slot in a file, none in memory
        pieces = [pc for run in table._runs for pc in run.pieces if pc.size]
        assert all(file_map(pc.slots) is not None for pc in pieces)
        assert table.file_bytes == sum(pc.slots.nbytes for pc in pieces)
    again = KeyTable.from_arrays(
        table.to_arrays(), merge_factor=2, value_bits=bits, spill_bytes=spill
    )
    assert hits(again, queries) == want
    alive = np.array([s for s in range(len(stored)) if s not in dead], dtype=np.int64)
    if alive.size:
        back = table.keys_by_slot(alive, m)
        assert sorted(map(sorted, back.tolist())) == sorted(
            sorted(stored[s].tolist()) for s in alive.tolist()
        )
    table.compact(alive)  # renumbered 0..len(alive)-1
    renumbered = brute([stored[s] for s in alive.tolist()], set(), queries)
    assert hits(table, queries) == renumbered
    again.add(key_pool(rng, 5, m, bits), np.arange(len(stored), len(stored) + 5))
    again.compact()  # a loaded run (one piece over the saved arrays) merged with a new one
    assert [(q, s) for q, s in hits(again, queries) if s < len(stored)] == want


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 4))
def test_tiny_tags_give_the_exact_candidate_set(seed: int, batches: int) -> None:
    """Every run laid out with 16-bit tags whatever its size (most of the key in the bucket)
    and keys built to share tags across buckets: still the exact candidate set."""
    rng = np.random.default_rng(seed)

    def tiny(rows: int, bits: int) -> tuple[int, np.dtype[Any]]:
        return bits - 16, np.dtype(np.uint16)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(keytable, "_layout", tiny)
        table = KeyTable(merge_factor=2, value_bits=BITS)
        stored: list[np.ndarray] = []
        for _ in range(batches):
            n = int(rng.integers(1, 200))
            keys = key_pool(rng, n, 4, BITS)
            table.add(keys, np.arange(len(stored), len(stored) + n))
            stored.extend(keys)
        assert {pc.tags.dtype for r in table._runs for pc in r.pieces} == {np.dtype(np.uint16)}
        queries = key_pool(rng, 40, 4, BITS)
        assert hits(table, queries) == brute(stored, set(), queries)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 4), st.integers(1, 3), st.booleans())
def test_1_byte_tags_give_the_exact_candidate_set(
    seed: int, batches: int, m: int, pieces: bool
) -> None:
    """Every run laid out with uint8 tags (at scale: runs of ~1.6e9 rows, issue 39), keys
    sharing tags across buckets: against brute force, saved and loaded, killed, compacted."""

    def one_byte(rows: int, bits: int) -> tuple[int, np.dtype[Any]]:
        return bits - 8, np.dtype(np.uint8)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(keytable, "_layout", one_byte)
        if pieces:
            mp.setattr(keytable, "_PIECE_ROWS", 64)
        check_against_brute_force(np.random.default_rng(seed), batches, m, 32)
        table = KeyTable(value_bits=32)
        table.add(key_pool(np.random.default_rng(seed), 100, m, 32), np.arange(100))
        assert {pc.tags.dtype for r in table._runs for pc in r.pieces} == {np.dtype(np.uint8)}


def test_a_table_saved_with_4_to_8_rows_a_bucket_loads_and_merges() -> None:
    """State format 4 as written before issue 39's 8-16 rows a bucket (twice the offsets):
    read as it is, merged with new runs into the new layout, same candidate sets."""
    rng = np.random.default_rng(4)

    def four_to_eight(rows: int, bits: int) -> tuple[int, np.dtype[Any]]:
        p = min(bits - 1, max(keytable._PIECE_BITS, (max(rows, 16) // 4).bit_length() - 1))
        return p, keytable._tag_dtype(bits - p)

    old = KeyTable(value_bits=BITS)
    stored = list(key_pool(rng, 3000, 4, BITS))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(keytable, "_layout", four_to_eight)
        old.add(np.array(stored), np.arange(3000))
    saved = old.to_arrays()
    new = KeyTable.from_arrays(saved, value_bits=BITS)
    fresh = KeyTable(value_bits=BITS)
    fresh.add(np.array(stored), np.arange(3000))
    assert saved["run0_offsets"].size - 1 == 2 * (fresh.to_arrays()["run0_offsets"].size - 1)
    queries = np.concatenate([np.array(stored[::50]), key_pool(rng, 20, 4, BITS)])
    assert hits(new, queries) == brute(stored, set(), queries)
    more = key_pool(rng, 1000, 4, BITS)
    new.add(more, np.arange(3000, 4000))
    new.compact()
    stored += list(more)
    assert hits(new, queries) == brute(stored, set(), queries)


def test_equal_tags_in_other_buckets_and_bands_do_not_match() -> None:
    """Table keys that share their low 32 bits (the tag) across bands, or their bucket with
    another tag, are different keys: no hit."""
    table = KeyTable(value_bits=BITS)
    low = np.arange(64, dtype=np.uint64) << np.uint64(20)
    stored = forced_keys(np.zeros(64, np.int64), low).reshape(64, 1)
    table.add(stored, np.arange(64))
    other_band = forced_keys(np.ones(64, np.int64), low).reshape(64, 1)
    nearby = forced_keys(np.zeros(64, np.int64), low + np.uint64(1)).reshape(64, 1)
    assert hits(table, other_band) == [] and hits(table, nearby) == []
    assert hits(table, stored) == [(i, i) for i in range(64)]


def test_keys_outside_value_bits_are_refused_and_never_match() -> None:
    table = KeyTable(value_bits=BITS)
    table.add(forced_keys(np.arange(4), np.arange(4)).reshape(2, 2), [0, 1])
    outside = mix64_np(np.array([[1 << 40, 3 << 37]], np.uint64))
    with pytest.raises(ValueError, match="below 2\\*\\*37"):
        table.add(outside, [2])
    assert hits(table, outside) == []
    with pytest.raises(ValueError, match="value_bits"):
        KeyTable(value_bits=31)


def test_queries_probed_in_key_order_give_the_same_hits_with_keys_outside_value_bits() -> None:
    """A table probed in key order (from 2**27 rows) drops the queries outside value_bits and
    maps the others back to their rows: the same hits, rows as given."""
    rng = np.random.default_rng(5)
    stored = key_pool(rng, 400, 4, BITS)
    table = KeyTable(value_bits=BITS)
    table.add(stored[:300], np.arange(300))
    table.add(stored[300:], np.arange(300, 400))  # a second run
    outside = mix64_np(np.array([[1 << 40, 3 << 37, 5 << 38, 1 << 39]], np.uint64))
    queries = np.concatenate([stored[::7], outside, key_pool(rng, 30, 4, BITS), outside])
    want = brute(list(stored), set(), queries)
    assert want and hits(table, queries) == want
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(keytable, "_SORT_ROWS", 0)
        assert hits(table, queries) == want
        assert hits(table, outside) == []


def test_layout_at_scale_is_six_bytes_and_a_quarter_per_key() -> None:
    """The run of 10^6 documents x 32 bands: uint16 tags, 8-16 rows per bucket (uint32)."""
    assert keytable._layout(32 * 10**6, BITS) == (21, np.dtype(np.uint16))  # 15.3 rows a bucket
    # 10^7 documents: 2**25 buckets (9.5 rows each), 0.13 B of offsets a row (issue 39)
    assert keytable._layout(32 * 10**7, BITS) == (25, np.dtype(np.uint16))
    # 200,000 documents: 2x the buckets (offsets 1.3 B a row) make the tags uint16 (-2 B)
    assert keytable._layout(32 * 200_000, BITS) == (21, np.dtype(np.uint16))
    # 70,000: 4x the buckets would cost 3.7 B a row of offsets for the same 2 B: uint32 tags
    assert keytable._layout(32 * 70_000, BITS) == (18, np.dtype(np.uint32))
    assert keytable._layout(1000, BITS)[1] == np.dtype(np.uint32)
    assert keytable._layout(10, BITS)[1] == np.dtype(np.uint64)
    assert keytable._layout(1000, 64)[1] == np.dtype(np.uint64)
    # 10^8 documents: 2**29 buckets (5.7 rows each) make the tags uint8 (-1 B a row for +0.35
    # B of offsets: -19.6 B/doc); below ~1.6e9 rows the offsets would cost more (issue 39)
    assert keytable._layout(3_040_000_000, BITS) == (29, np.dtype(np.uint8))
    assert keytable._layout(1_700_000_000, BITS) == (29, np.dtype(np.uint8))
    assert keytable._layout(1_500_000_000, BITS) == (27, np.dtype(np.uint16))


def test_pack_and_unpack_are_inverse() -> None:
    rng = np.random.default_rng(3)
    x = (rng.integers(0, 32, 1000).astype(np.uint64) << np.uint64(32)) | rng.integers(
        0, 2**32, 1000
    ).astype(np.uint64)
    keys = mix64_np(x)
    table = KeyTable(value_bits=BITS)
    packed = table.pack(keys)
    assert np.array_equal(packed >> np.uint64(32), x >> np.uint64(32))
    assert np.unique(packed).size == np.unique(keys).size
    assert np.array_equal(table.unpack(packed), keys)


def old_layout(table: KeyTable, p_of: int = 4) -> dict[str, np.ndarray]:
    """``table`` saved as state format 1 did: sorted full keys, uint32 slots, int64 offsets on
    the keys' top bits (~rows / ``p_of`` buckets)."""
    out: dict[str, np.ndarray] = {"dead": table._dead.copy()}
    for i, run in enumerate(table._runs):
        keys = table.unpack(run.table_keys())
        order = np.argsort(keys)
        keys, slots = keys[order], run.slots[order]
        p = max(1, int(np.log2(max(keys.size, 4) / p_of)))
        out[f"run{i}_keys"], out[f"run{i}_slots"] = keys, slots
        out[f"run{i}_offsets"] = np.searchsorted(
            keys >> np.uint64(64 - p), np.arange((1 << p) + 1, dtype=np.uint64)
        ).astype(np.int64)
    return out


def test_format_1_layout_is_converted_with_the_same_lookups() -> None:
    rng = np.random.default_rng(5)
    table = KeyTable(merge_factor=2, value_bits=BITS)
    stored = [key_pool(rng, 300, 32, BITS) for _ in range(3)]
    for i, keys in enumerate(stored):
        table.add(keys, np.arange(300 * i, 300 * (i + 1)))
    table.kill(np.arange(0, 900, 5))
    queries = key_pool(rng, 60, 32, BITS)
    want = hits(table, queries)
    assert len(want) > 100
    old = old_layout(table)
    assert "run0_tags" not in old and "value_bits" not in old
    converted = KeyTable.from_arrays(old, value_bits=BITS)
    assert converted.runs == table.runs and hits(converted, queries) == want
    new = forced_keys(np.tile(np.arange(32), 10), np.arange(320) + 5 * 2**20).reshape(10, 32)
    converted.add(new, np.arange(900, 910))  # and it goes on (merging the converted runs)
    assert hits(converted, new) == [(i, 900 + i) for i in range(10)]
    assert hits(converted, queries) == want
    foreign = dict(old, run0_keys=mix64_np(np.arange(old["run0_keys"].size, dtype=np.uint64) << 40))
    with pytest.raises(ValueError, match="another design"):
        KeyTable.from_arrays(foreign, value_bits=BITS)


def test_inconsistent_saved_runs_are_refused() -> None:
    rng = np.random.default_rng(6)
    table = KeyTable(value_bits=BITS)
    table.add(key_pool(rng, 500, 32, BITS), np.arange(500))
    arrays = table.to_arrays()
    assert arrays["run0_tags"].dtype == np.uint32  # 16,000 rows: 27-bit tags
    bad_offsets = dict(arrays, run0_offsets=arrays["run0_offsets"][::-1].copy())
    narrow_tags = dict(arrays, run0_tags=arrays["run0_tags"].astype(np.uint16))
    short_slots = dict(arrays, run0_slots=arrays["run0_slots"][:-1])
    for bad in (bad_offsets, narrow_tags, short_slots):
        with pytest.raises(ValueError, match="run 0 is inconsistent"):
            KeyTable.from_arrays(bad, value_bits=BITS)
    with pytest.raises(ValueError, match="value_bits"):
        KeyTable.from_arrays(arrays, value_bits=40)
    wide_tags = dict(arrays, run0_tags=arrays["run0_tags"].astype(np.uint64))  # also exact
    queries = key_pool(rng, 20, 32, BITS)
    assert hits(KeyTable.from_arrays(wide_tags, value_bits=BITS), queries) == hits(table, queries)


def test_a_merge_that_fails_half_way_makes_the_table_refuse_every_use() -> None:
    """A merge consumes its input pieces: one that fails (here MemoryError at the third piece)
    leaves rows missing, so the table says so instead of missing candidates."""
    calls: list[int] = []
    real = keytable._k

    class FailingKernels:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def key_merge(self, *args: Any) -> int:
            calls.append(1)
            if len(calls) == 3:
                raise MemoryError("no room for a piece")
            return int(real.key_merge(*args))

    rng = np.random.default_rng(7)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(keytable, "_PIECE_ROWS", 64)
        table = KeyTable(value_bits=BITS)
        table.add(key_pool(rng, 50, 4, BITS), np.arange(50))
        mp.setattr(keytable, "_k", FailingKernels())
        with pytest.raises(MemoryError):
            table.add(key_pool(rng, 50, 4, BITS), np.arange(50, 100))
    uses: list[Callable[[], object]] = [
        lambda: table.lookup(key_pool(rng, 2, 4, BITS)),
        lambda: table.add(key_pool(rng, 1, 4, BITS), [100]),
        table.compact,
    ]
    for use in uses:
        with pytest.raises(RuntimeError, match=r"lost rows in a merge that failed \(MemoryError"):
            use()
