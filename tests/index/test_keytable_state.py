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
from neardup._persist import read_bundle, write_bundle
from neardup.dedup.persist import FORMAT, VERSION, StateFormatError
from neardup.index.keytable import KeyTable

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


def rewrite_as_format_1(path: Path, target: Path) -> None:
    """The live version of state ``path`` written again as format 1 wrote it (full keys)."""
    version = path / str(read_current(path))
    meta, arrays = read_bundle(version, FORMAT, VERSION, mmap=False)
    cand = {k[11:]: v for k, v in arrays.items() if k.startswith("cand_table_")}
    table = KeyTable.from_arrays(cand, value_bits=int(cand["value_bits"][0]))
    arrays = {k: v for k, v in arrays.items() if not k.startswith("cand_table_")}
    arrays.update({f"cand_table_{k}": v for k, v in old_layout(table).items()})
    with atomic_directory(target) as out:
        write_bundle(out, FORMAT, 1, meta, arrays)


def decide(dd: Deduplicator, batch: list[str]) -> list[tuple[str, int]]:
    d = dd.feed(batch)
    return list(zip(d.statuses, d.duplicate_of.tolist(), strict=True))


def test_state_round_trip_and_format_1_decide_as_the_saved_state(tmp_path: Path) -> None:
    docs = texts(1400, seed=11)
    dd = Deduplicator()
    for s in range(0, 1000, 150):  # several runs in the key table
        dd.feed(docs[s : s + 150])
    dd.state.forget(list(range(0, 1000, 9)))
    dd.save(tmp_path / "state")
    rewrite_as_format_1(tmp_path / "state", tmp_path / "old")
    old_meta, _ = read_bundle(
        tmp_path / "old" / str(read_current(tmp_path / "old")), FORMAT, 1, mmap=False
    )
    assert old_meta["config_id"] == dd.config_id
    want = decide(dd, docs[1000:])
    assert sum(s == "duplicate" for s, _ in want) > 50
    for where in ("state", "old"):
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
    with pytest.raises(StateFormatError, match=r"version 4 is not supported.*version 1 or 2 or 3"):
        Deduplicator.load(tmp_path / "future")


def test_band_candidates_memory_per_key_at_scale() -> None:
    """The key table's bytes per stored key: 4-byte tags (2-byte ones from ~262,000 documents
    in a run, see test_keytable.py), 4-byte slots, uint32 offsets (<= 1 byte a key); it was
    8 + 4 + 1-2."""
    from neardup.dedup.candidates import BandCandidates

    rng = np.random.default_rng(1)
    n = 70_000  # 2.24M keys in one run
    sk = rng.integers(0, 256, size=(n, 129), dtype=np.uint8)
    bc = BandCandidates()
    bc.add(np.arange(n), np.arange(n, dtype=np.uint64), sk, None)
    per_key = bc._table.nbytes / (n * 32)
    assert bc._table.runs == [n * 32] and per_key < 9.1, per_key
    q, p, _ = bc.query(np.arange(5, dtype=np.uint64), sk[:5])
    assert q.tolist() == list(range(5)) and p.tolist() == list(range(5))
