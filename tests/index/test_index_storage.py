"""save/load round trips, atomic replacement, corruption detection."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from index_helpers import brute_search, flip

from neardup.index import HammingIndex, IndexFormatError


def _triples(m: object) -> list[tuple[int, int, int]]:
    return list(zip(m.query.tolist(), m.id.tolist(), m.distance.tolist(), strict=False))  # type: ignore[attr-defined]


def _index(n: int = 5000, seed: int = 0) -> tuple[HammingIndex, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    fps[n // 2 : n // 2 + 300] = flip(fps[:300].tolist(), rng, 3)
    ids = rng.permutation(n).astype(np.int64) * 7
    index = HammingIndex(k=3, buffer_size=500)
    index.add(ids[: n - 100], fps[: n - 100], timestamps=np.arange(n - 100))
    index.add(ids[n - 100 :], fps[n - 100 :])
    return index, ids, fps


@pytest.mark.parametrize("mmap", [True, False])
def test_round_trip_then_mutate(tmp_path: Path, mmap: bool) -> None:
    index, ids, fps = _index()
    index.remove(ids[:50])
    rng = np.random.default_rng(1)
    q = np.array(flip(fps[:200].tolist(), rng, 3), np.uint64)
    before = _triples(index.search(q))
    index.save(tmp_path / "ix")
    loaded = HammingIndex.load(tmp_path / "ix", mmap=mmap)
    assert _triples(loaded.search(q)) == before
    assert len(loaded) == len(index) and loaded.describe()["design"] == index.describe()["design"]
    loaded.remove(ids[50:80])
    loaded.add([-1, -2], [int(fps[100]), 0])
    loaded.expire(10)
    alive = np.ones(len(ids), bool)
    alive[:80] = False
    alive[: len(ids) - 100] &= np.arange(len(ids) - 100) >= 10
    want_ids = np.concatenate([ids[alive], [-1, -2]])
    want_fps = np.concatenate([fps[alive], np.array([fps[100], 0], np.uint64)])
    assert _triples(loaded.search(q)) == brute_search(want_fps, want_ids, q, 3)
    with pytest.raises(ValueError, match="already in the index"):
        loaded.add([int(ids[-1])], [1])


def test_save_replaces_existing(tmp_path: Path) -> None:
    index, _, _ = _index(1000)
    index.save(tmp_path / "ix")
    small = HammingIndex(k=3)
    small.add([1], [1])
    small.save(tmp_path / "ix")
    assert len(HammingIndex.load(tmp_path / "ix")) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ix"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        small.save(tmp_path / "other")


def test_empty_index_round_trip(tmp_path: Path) -> None:
    HammingIndex(k=2).save(tmp_path / "e")
    loaded = HammingIndex.load(tmp_path / "e")
    assert len(loaded) == 0 and loaded.k == 2 and loaded.query(3) == []


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete", "manifest"])
def test_damaged_files_are_named(tmp_path: Path, damage: str) -> None:
    index, _, _ = _index(3000)
    index.save(tmp_path / "ix")
    target = tmp_path / "ix" / "run0_keys.npy"
    if damage == "truncate":
        target.write_bytes(target.read_bytes()[:-1000])
    elif damage == "flip":
        raw = bytearray(target.read_bytes())
        raw[-5] ^= 0xFF
        target.write_bytes(bytes(raw))
    elif damage == "delete":
        target.unlink()
    else:
        target = tmp_path / "ix" / "manifest.json"
        target.write_text(target.read_text()[:-20])
    with pytest.raises(IndexFormatError, match=target.name):
        HammingIndex.load(tmp_path / "ix")


def test_truncation_detected_without_verify(tmp_path: Path) -> None:
    index, _, _ = _index(3000)
    index.save(tmp_path / "ix")
    target = tmp_path / "ix" / "fps.npy"
    target.write_bytes(target.read_bytes()[:-8])
    with pytest.raises(IndexFormatError, match=r"fps\.npy"):
        HammingIndex.load(tmp_path / "ix", verify=False)


def test_not_an_index(tmp_path: Path) -> None:
    with pytest.raises(IndexFormatError, match=r"manifest\.json"):
        HammingIndex.load(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(IndexFormatError, match="unsupported format"):
        HammingIndex.load(tmp_path)


def test_unverified_garbage_does_not_crash(tmp_path: Path) -> None:
    index, _, _ = _index(3000)
    index.save(tmp_path / "ix")
    for name in ("run0_pos.npy", "run0_offsets.npy"):
        target = tmp_path / "ix" / name
        raw = bytearray(target.read_bytes())
        raw[256:] = b"\xff" * (len(raw) - 256)  # keep the .npy header, trash the data
        target.write_bytes(bytes(raw))
    with pytest.raises(IndexFormatError, match="run0"):
        HammingIndex.load(tmp_path / "ix")  # checksums catch it
    with pytest.raises(IndexFormatError, match="run0"):
        HammingIndex.load(tmp_path / "ix", verify=False)  # offsets bounds catch it


def test_unverified_bad_positions_lose_answers_but_never_invent_them(tmp_path: Path) -> None:
    index, _, fps = _index(3000)
    rng = np.random.default_rng(2)
    queries = np.array(flip(fps[:300].tolist(), rng, 3), np.uint64)
    truth = set(_triples(index.search(queries)))
    assert len(truth) >= 300
    index.save(tmp_path / "ix")
    target = tmp_path / "ix" / "run0_pos.npy"
    raw = bytearray(target.read_bytes())
    half = 128 + (len(raw) - 128) // 2
    raw[half:] = b"\xff" * (len(raw) - half)  # the second half of the positions: out of range
    target.write_bytes(bytes(raw))
    with pytest.raises(IndexFormatError, match=r"run0_pos\.npy is corrupted"):
        HammingIndex.load(tmp_path / "ix")  # what verify=True is for
    loaded = HammingIndex.load(tmp_path / "ix", verify=False)
    got = set(_triples(loaded.search(queries)))
    # out-of-range positions are skipped by the kernels: answers are lost, none invented
    assert got < truth
    assert len(got) > len(truth) // 4  # the intact half of the tables still answers
