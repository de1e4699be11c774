"""The two-tier exact-text map (issue 39) against a plain dict: same contents after any mix of
chunks, dry-run undos, drops, merges and reloads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import exact_map
from neardup.dedup.exact_map import ExactMap

KEYS = st.one_of(  # equal high halves (small keys) and any 128-bit keys
    st.sampled_from([0, 1, 5, 1 << 64, (1 << 64) + 5, (7 << 64) | 1, (1 << 128) - 1, 12345]),
    st.integers(0, (1 << 128) - 1),
)
POSITIONS = st.one_of(  # int32 in the base until one passes 2**31 (then int64, never wrapped)
    st.integers(0, 10**6), st.integers(2**31 - 2, 2**31 + 2), st.integers(0, 2**62)
)
STEP = st.tuples(
    st.sampled_from(["chunk", "dry", "drop", "freeze", "reload", "set"]),
    st.lists(st.tuples(KEYS, POSITIONS), max_size=8),
)


def contents(ex: ExactMap) -> dict[int, int]:
    arrays = ex.arrays()
    halves = zip(arrays["exact_hi"].tolist(), arrays["exact_lo"].tolist(), strict=True)
    keys = [(h << 64) | lo for h, lo in halves]
    assert len(set(keys)) == len(keys) == len(ex)  # each key in one tier only
    return dict(zip(keys, arrays["exact_pos"].tolist(), strict=True))


@settings(max_examples=300, deadline=None)
@given(st.lists(STEP, max_size=25), st.integers(0, 3), st.sampled_from([1, 2, 3, 1 << 16]))
def test_same_contents_as_a_dict(steps: list, freeze_at: int, block: int) -> None:
    old, exact_map.FREEZE_AT = exact_map.FREEZE_AT, freeze_at
    old_block, exact_map._BLOCK = exact_map._BLOCK, block  # in-place moves over many blocks
    try:
        ex, ref = ExactMap(), {}
        for op, items in steps:
            keys = [k for k, _ in items]
            if op in ("chunk", "dry"):
                ex.start_log(keys)
                seen = [ex.get(k) for k in keys]
                assert seen == [ref.get(k) for k in keys]
                for k, v in items:
                    ex[k] = v
                if op == "dry":
                    ex.undo_log()
                else:
                    assert ex.stop_log() == [v for _, v in items]
                    ref.update(items)
            elif op == "set":  # outside a chunk
                for k, v in items:
                    ex[k] = v
                ref.update(items)
            elif op == "drop":
                pos = ex.positions()
                mask = np.isin(pos, [v for _, v in items]) | (pos % 3 == 0)
                gone = {int(p) for p in pos[mask]}
                ex.drop(mask)
                ref = {k: v for k, v in ref.items() if v not in gone}
            elif op == "freeze":
                ex.freeze(force=True)
            else:
                a = ex.arrays()
                ex = ExactMap.from_arrays(a["exact_hi"], a["exact_lo"], a["exact_pos"])
            assert contents(ex) == ref
    finally:
        exact_map.FREEZE_AT, exact_map._BLOCK = old, old_block


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 50), max_size=40),
    st.lists(st.integers(0, 50), max_size=20),
    st.integers(0, 5),
    st.sampled_from([1, 2, 3, 7, 1 << 16]),
)
def test_in_place_merge_equals_numpy(base: list, new: list, room: int, block: int) -> None:
    """The in-place moves of a merge (no second copy of the base) give what ``np.insert`` and a
    boolean mask give, over any number of blocks."""
    old_block, exact_map._BLOCK = exact_map._BLOCK, block
    try:
        b = np.sort(np.array(base, np.int64))
        v = np.sort(np.array(new, np.int64))
        at = np.searchsorted(b, v)
        buf = np.concatenate([b, np.zeros(v.size + room, np.int64)])
        exact_map._insert_sorted(buf, b.size, at, v)
        assert buf[: b.size + v.size].tolist() == np.insert(b, at, v).tolist()
        keep = buf[: b.size + v.size] % 3 != 0
        want = buf[: keep.size][keep].tolist()
        assert exact_map._compact((buf,), keep) == len(want) and buf[: len(want)].tolist() == want
    finally:
        exact_map._BLOCK = old_block


def test_from_arrays_keeps_the_last_entry_of_a_key() -> None:
    hi = np.array([1, 0, 1, 1], np.uint64)
    lo = np.array([2, 9, 2, 3], np.uint64)
    ex = ExactMap.from_arrays(hi, lo, np.array([10, 11, 12, 13]))
    assert contents(ex) == {(1 << 64) | 2: 12, 9: 11, (1 << 64) | 3: 13}


@pytest.mark.parametrize("n", [1, 100_000])
def test_a_dict_entry_costs_less_than_a_python_dict(n: int) -> None:
    ex = ExactMap()
    keys = [(i * 0x9E3779B97F4A7C15 << 40) + i for i in range(n)]
    ex.start_log(keys)
    for p, k in enumerate(keys):
        ex[k] = p
    ex.stop_log()
    ex.freeze(force=True)
    assert dict.__len__(ex) == 0 and len(ex) == n
    assert sum(a.nbytes for a in (ex._hi, ex._lo, ex._pos)) == 20 * n  # int32 positions
    assert ex.nbytes <= 20 * max(n, 1024)  # a first merge takes no room beyond its rows


def test_positions_widen_past_2_31() -> None:
    """A base of int32 positions takes a position of 2**31 or more by widening (never wraps),
    in a merge and in a reload."""
    ex = ExactMap()

    def chunk(items: dict[int, int]) -> None:
        ex.start_log(list(items))
        for k, v in items.items():
            ex[k] = v
        ex.stop_log()
        ex.freeze(force=True)

    chunk({1: 5, 2: 2**31 - 1})
    assert ex._pos.dtype == np.int32
    chunk({3: 2**31})
    assert ex._pos.dtype == np.int64 and contents(ex) == {1: 5, 2: 2**31 - 1, 3: 2**31}
    a = ex.arrays()
    assert a["exact_pos"].dtype == np.int64  # saved as before (state format 4)
    back = ExactMap.from_arrays(a["exact_hi"], a["exact_lo"], a["exact_pos"])
    assert contents(back) == contents(ex) and back.get(3) is None  # in the base
    back.start_log([3, 1])
    assert (back.get(3), back.get(1)) == (2**31, 5)


@pytest.mark.parametrize("bits", [128, 62])  # xxh3_128 keys; small keys (all high halves 0)
def test_many_chunks_against_a_dict(bits: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exact_map, "FREEZE_AT", 4096)
    rng = np.random.default_rng(bits)
    ex, ref = ExactMap(), {}
    pool = [int(x) << (bits - 62) | int(y) for x, y in rng.integers(0, 2**62, (30_000, 2))]
    for c in range(40):
        keys = [pool[i] for i in rng.integers(0, len(pool), 2000)]
        ex.start_log(keys)
        assert [ex.get(k) for k in keys] == [ref.get(k) for k in keys], c
        for i, k in enumerate(keys):
            ex[k] = ref[k] = c * 2000 + i
        ex.stop_log()
    assert ex._live and contents(ex) == ref  # merged into the base, same contents


def test_a_merge_holds_no_second_copy_of_the_base() -> None:
    """Merging a tail into a base with room moves rows in place: the merge's allocations
    (numpy reports them to tracemalloc) stay far below the base (it held ~2 copies, issue 39)."""
    import tracemalloc

    ex = ExactMap()

    def chunk(first: int, n: int) -> None:
        keys = [(i * 0x9E3779B97F4A7C15 << 40) + i for i in range(first, first + n)]
        ex.start_log(keys)
        for k in keys:
            ex[k] = k & 0xFFFFFF
        ex.stop_log()
        ex.freeze(force=True)

    chunk(0, 400_000)
    chunk(400_000, 20_000)  # grows the buffers (1.5x): the next merge fits
    base = sum(a.nbytes for a in (ex._hi, ex._lo, ex._pos))
    keys = [(i * 0x9E3779B97F4A7C15 << 40) + i for i in range(420_000, 440_000)]
    ex.start_log(keys)
    for k in keys:
        ex[k] = 7
    ex.stop_log()
    tracemalloc.start()
    try:
        ex.freeze(force=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(ex) == 440_000 and ex.get(keys[0]) is None and dict.__len__(ex) == 0
    assert peak < base / 2, (peak, base)  # the tail's own temporaries: ~0.3
