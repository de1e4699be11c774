"""The saved dedup state with the tag layout of the key table (state format 2): a round trip
decides as the state that was saved, a format-1 state (full keys) is read with the same
decisions, and an unknown version is refused with a clear message."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from neardup import Deduplicator
from neardup._atomic import atomic_directory, read_current
from neardup._backend import backend
from neardup._persist import read_bundle, write_bundle
from neardup._spill import drop_pages
from neardup.dedup.persist import FORMAT, VERSION, StateFormatError
from neardup.index import keytable
from neardup.index.keytable import KeyTable
from neardup.index.lsh import mix64_np

from tests.index.test_keytable import old_layout

WORDS = [f"w{i}" for i in range(400)]


def texts(n: int, seed: int) -> list[str]:
    """Synthetic documents, every fourth a near-copy of an earlier one."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        if i % 4 == 3:
            words = rng.choice(out).split()
            words[rng.randrange(len(words))] = rng.choice(WORDS)
        else:
            words = [rng.choice(WORDS) for _ in range(40)]
        out.append(" ".join(words))
    return out


def rewrite_as_format(path: Path, target: Path, version: int) -> None:
    """The live version of state ``path`` written again as format 1 (full keys), 3 (whole
    runs, uint32 slots) or 4 (the same arrays: no 1-byte tags below ~1.6e9 rows) wrote it."""
    live = path / str(read_current(path))
    meta, arrays = read_bundle(live, FORMAT, VERSION, mmap=False)
    if version == 4:
        assert all(v.dtype != np.uint8 for k, v in arrays.items() if k.endswith("_tags"))
        with atomic_directory(target) as out:
            write_bundle(out, FORMAT, version, meta, arrays)
        return
    cand = {k[11:]: v for k, v in arrays.items() if k.startswith("cand_table_")}
    table = KeyTable.from_arrays(cand, value_bits=int(cand["value_bits"][0]))
    arrays = {k: v for k, v in arrays.items() if not k.startswith("cand_table_")}
    if version == 1:
        arrays.update({f"cand_table_{k}": v for k, v in old_layout(table).items()})
    else:
        arrays.update(
            {"cand_table_dead": cand["dead"], "cand_table_value_bits": cand["value_bits"]}
        )
        for i, run in enumerate(table._runs):
            for part, arr in zip(("tags", "slots", "offsets"), run.layout(), strict=True):
                arrays[f"cand_table_run{i}_{part}"] = arr
    with atomic_directory(target) as out:
        write_bundle(out, FORMAT, version, meta, arrays)


def decide(dd: Deduplicator, batch: list[str]) -> list[tuple[str, int]]:
    d = dd.feed(batch)
    return list(zip(d.statuses, d.duplicate_of.tolist(), strict=True))


@pytest.mark.parametrize(("pieces", "spill"), [(False, False), (True, False), (True, True)])
def test_state_round_trip_and_formats_1_3_and_4_decide_as_the_saved_state(
    tmp_path: Path, pieces: bool, spill: bool
) -> None:
    """``pieces``: runs of 64 rows and more are cut in 8 pieces (at scale: 2**21) and saved as
    pieces (format 4); formats 1 and 3 (whole runs) and 4 (before 1-byte tags, issue 39) of the
    same state decide the same. ``spill``: every slot in a spill file (at scale: a piece's from
    8 MB) decides as slots in memory, before and after a save and load."""
    docs = texts(1400, seed=11)
    with pytest.MonkeyPatch.context() as mp:
        if pieces:
            mp.setattr(keytable, "_PIECE_ROWS", 64)
        plain = Deduplicator()  # slots in memory
        if spill:
            mp.setattr(keytable, "SLOT_SPILL_BYTES", 1)
        dd = Deduplicator()
        for s in range(0, 1000, 150):  # several runs in the key table
            assert decide(dd, docs[s : s + 150]) == decide(plain, docs[s : s + 150])
        assert (dd.state.candidates._table.file_bytes > 0) == spill  # type: ignore[attr-defined]
        dd.state.forget(list(range(0, 1000, 9)))
        plain.state.forget(list(range(0, 1000, 9)))
        dd.save(tmp_path / "state")
        saved = read_bundle(tmp_path / "state" / str(read_current(tmp_path / "state")), FORMAT, 5)
        assert any("_piece" in k for k in saved[1]) == pieces
        for version in (1, 3, 4):
            rewrite_as_format(tmp_path / "state", tmp_path / f"v{version}", version)
        old_meta, _ = read_bundle(
            tmp_path / "v1" / str(read_current(tmp_path / "v1")), FORMAT, 1, mmap=False
        )
        assert old_meta["config_id"] == dd.config_id
        want = decide(dd, docs[1000:])
        assert sum(s == "duplicate" for s, _ in want) > 50 and want == decide(plain, docs[1000:])
        for where in ("state", "v1", "v3", "v4"):
            again = Deduplicator.load(tmp_path / where)
            assert decide(again, docs[1000:]) == want, where


def test_a_state_of_an_unknown_version_is_refused(tmp_path: Path) -> None:
    dd = Deduplicator()
    dd.feed(texts(50, seed=2))
    dd.save(tmp_path / "state")
    version = tmp_path / "state" / str(read_current(tmp_path / "state"))
    meta, arrays = read_bundle(version, FORMAT, VERSION, mmap=False)
    with atomic_directory(tmp_path / "future") as out:
        write_bundle(out, FORMAT, VERSION + 1, meta, arrays)
    with pytest.raises(
        StateFormatError, match=r"version 6 is not supported.*version 1 or 2 or 3 or 4 or 5"
    ):
        Deduplicator.load(tmp_path / "future")


def test_band_candidates_memory_per_key_at_scale() -> None:
    """The key table's bytes per stored key: 4-byte tags (2-byte ones from ~262,000 documents
    in a run, see test_keytable.py), 3-byte slots (below 2**24 slots), uint32 offsets (<= 1
    byte a key); it was 8 + 4 + 1-2, then 4 + 4 + 1. No timestamps given: none stored."""
    from neardup.dedup.candidates import BandCandidates

    rng = np.random.default_rng(1)
    n = 70_000  # 2.24M keys in one run: cut in 8 pieces
    sk = rng.integers(0, 256, size=(n, 129), dtype=np.uint8)
    bc = BandCandidates()
    bc.add(np.arange(n), np.arange(n, dtype=np.uint64), sk, None)
    per_key = bc._table.nbytes / (n * 32)
    assert bc._table.runs == [n * 32] and per_key < 8.1, per_key
    assert {pc.slots.dtype for pc in bc._table._runs[0].pieces} == {np.dtype(np.uint8)}
    assert bc._ts.nbytes == 0
    q, p, _ = bc.query(np.arange(5, dtype=np.uint64), sk[:5])
    assert q.tolist() == list(range(5)) and p.tolist() == list(range(5))


def test_timestamps_are_stored_from_the_first_ones_given() -> None:
    """Slots added before any timestamp read 0 (as when zeros were stored for them)."""
    from neardup.dedup.candidates import BandCandidates

    rng = np.random.default_rng(2)
    sk = rng.integers(0, 256, size=(30, 129), dtype=np.uint8)
    fps = np.arange(30, dtype=np.uint64)
    bc = BandCandidates()
    bc.add(np.arange(10), fps[:10], sk[:10], None)
    assert bc._ts.nbytes == 0 and "slot_timestamps" not in bc.to_arrays()
    bc.add(np.arange(10, 20), fps[10:20], sk[10:20], np.full(10, 50, np.int64))
    bc.add(np.arange(20, 30), fps[20:], sk[20:], None)
    assert bc.to_arrays()["slot_timestamps"].tolist() == [0] * 10 + [50] * 10 + [0] * 10
    assert bc.expire(1) == 20 and len(bc) == 10
    _, p, _ = bc.query(fps, sk)
    assert p.tolist() == list(range(10, 20))


def test_a_merge_holds_one_piece_more_than_the_runs() -> None:
    """Merging two large runs allocates about one piece (1/8) beyond the runs, not a second
    copy of them (tracemalloc sees numpy's allocations)."""
    import tracemalloc

    rng = np.random.default_rng(3)
    table = KeyTable(value_bits=37)
    band = np.arange(32, dtype=np.uint64) << np.uint64(32)
    tracemalloc.start()
    try:
        for n, first in ((200_000, 0), (40_000, 200_000)):  # 5x smaller: stays a second run
            x = band | rng.integers(0, 2**32, size=(n, 32), dtype=np.uint64)
            table.add(mix64_np(x), np.arange(first, first + n))
        assert len(table.runs) == 2
        before, start = table.nbytes, tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        table.compact()
        peak = tracemalloc.get_traced_memory()[1] - start
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        arrays = table.to_arrays()  # what a save writes: the pieces as they are, no copy
        saving = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert table.runs == [240_000 * 32]
    assert peak < 0.3 * before, (peak, before)
    assert saving < 0.01 * before and arrays["run0_piece7_slots"].dtype == np.uint8, saving
    again = KeyTable.from_arrays(arrays, value_bits=37)
    queries = mix64_np(band | rng.integers(0, 2**32, size=(100, 32), dtype=np.uint64))
    queries[:50] = mix64_np(x[:50])  # 50 stored documents (the last batch's first ones)
    want = [(i, 200_000 + i) for i in range(50)]
    for t in (table, again):
        rows, slots = t.lookup(queries)
        assert list(zip(rows.tolist(), slots.tolist(), strict=True)) == want


def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(f"{key}:"))


def _maps_under(directory: Path) -> int:
    with open("/proc/self/maps") as f:
        return sum(str(directory) in line for line in f)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc (Linux)")
def test_spilled_slots_live_in_files_out_of_resident_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slots of pieces from ``spill_bytes`` live in unlinked spill files, one a piece and freed
    with it (a merge frees its inputs'): the merge allocates no slots in memory, dropping the
    pages after a pass over every slot takes them out of resident memory again, and look-ups
    read their few slots without mapping any; a save writes them in blocks, dropping each."""
    import gc
    import tracemalloc

    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setenv("NEARDUP_SPILL_DIR", str(spill))
    rng = np.random.default_rng(5)
    band = np.arange(32, dtype=np.uint64) << np.uint64(32)
    queries = mix64_np(band | rng.integers(0, 2**32, size=(100, 32), dtype=np.uint64))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        table = KeyTable(value_bits=37, spill_bytes=1 << 20)
        for n, first in ((200_000, 0), (40_000, 200_000)):  # 5x smaller: stays a second run
            x = band | rng.integers(0, 2**32, size=(n, 32), dtype=np.uint64)
            table.add(mix64_np(x), np.arange(first, first + n))
        queries[:50] = mix64_np(x[:50])  # 50 stored documents (the last batch's first ones)
        del x
        assert len(table.runs) == 2 and _maps_under(spill) == 8 + 1  # pieces, a whole run
        tracemalloc.reset_peak()
        table.compact()
        held, peak = (m - base for m in tracemalloc.get_traced_memory())
    finally:
        tracemalloc.stop()
    rows = 240_000 * 32
    assert table.runs == [rows] and table.file_bytes == 3 * rows  # 3-byte slots, all in files
    assert _maps_under(spill) == 8  # the merged runs' files are freed
    # in memory: the tags and offsets (table.nbytes), not the slots, nor at the merge's peak
    # (its inputs' tags and one output piece's: anonymous slots would add 23 MB); numba's
    # first compilation allocates in this window too
    if backend() == "native":
        assert held < 1.05 * table.nbytes and peak < held + 0.5 * table.file_bytes
    before = _status("RssFile")
    assert sum(int(pc.slots.sum()) for pc in table._runs[0].pieces) > 0  # every page read
    read = _status("RssFile")
    assert all([drop_pages(pc.slots) for pc in table._runs[0].pieces])  # each in a file
    dropped = _status("RssFile")
    assert min(read - before, read - dropped) > 0.8 * table.file_bytes, (before, read, dropped)
    rows_hit, slots = table.lookup(queries)  # a few slots a piece: read with pread
    assert list(zip(rows_hit.tolist(), slots.tolist(), strict=True)) == [
        (i, 200_000 + i) for i in range(50)
    ]
    assert _status("RssFile") - dropped < 0.05 * table.file_bytes  # no folio mapped
    with open("/proc/self/clear_refs", "w") as f:  # VmHWM := VmRSS: the peak of the save
        f.write("5")
    start = _status("VmRSS")
    write_bundle(tmp_path / "saved", "t", 1, {}, table.to_arrays())  # slots: from the files
    assert _status("VmHWM") - start < 0.2 * table.file_bytes  # blocks, each dropped
    _, arrays = read_bundle(tmp_path / "saved", "t", 1)  # verified: hashed in blocks
    again = KeyTable.from_arrays(arrays, value_bits=37)
    assert again.file_bytes == table.file_bytes  # mapped from the saved files
    start = _status("RssFile")
    assert [t.tolist() for t in again.lookup(queries)] == [rows_hit.tolist(), slots.tolist()]
    # the tags and offsets, mapped too, are read by every look-up; the slots with pread
    assert _status("RssFile") - start < again.nbytes + 0.05 * again.file_bytes
    del arrays, again
    del table, rows_hit, slots
    gc.collect()
    assert _maps_under(spill) == 0
