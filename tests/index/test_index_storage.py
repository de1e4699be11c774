"""save/load round trips, versioned atomic replacement, and damage of every kind detected."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from neardup._atomic import SLEEP_BEFORE_COMMIT, current_version
from neardup._persist import checksum_json
from neardup.index import HammingIndex, IndexFormatError

from tests.index.index_helpers import brute_search, flip


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


def _live(path: Path) -> Path:
    return current_version(path)


def _rewrite_manifest(version: Path, edit: object) -> None:
    """Edit manifest fields *and* recompute its checksum (a manifest that agrees)."""
    m = json.loads((version / "manifest.json").read_text())
    m.pop("checksum")
    edit(m)  # type: ignore[operator]
    m["checksum"] = checksum_json(m)
    (version / "manifest.json").write_text(json.dumps(m))


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
    loaded.save(tmp_path / "ix")  # saving over the version it is memory-mapped from
    assert _triples(HammingIndex.load(tmp_path / "ix").search(q)) == _triples(loaded.search(q))


def test_save_replaces_existing(tmp_path: Path) -> None:
    index, _, _ = _index(1000)
    index.save(tmp_path / "ix")
    small = HammingIndex(k=3)
    small.add([1], [1])
    small.save(tmp_path / "ix")
    assert len(HammingIndex.load(tmp_path / "ix")) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ix"]
    assert sorted(p.name for p in (tmp_path / "ix").iterdir()) == [".lock", "CURRENT", "v-2"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="other data"):
        small.save(tmp_path / "other")
    assert (tmp_path / "other" / "x.txt").read_text() == "mine"


def test_files_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        _index(600)[0].save(tmp_path / "ix")
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "ix").rglob("*")}
    assert modes["CURRENT"] == 0o644 and modes["v-1"] == 0o755 and modes["fps.npy"] == 0o644


def test_empty_index_round_trip(tmp_path: Path) -> None:
    HammingIndex(k=2).save(tmp_path / "e")
    loaded = HammingIndex.load(tmp_path / "e")
    assert len(loaded) == 0 and loaded.k == 2 and loaded.query(3) == []


DAMAGE = ["truncate", "flip", "delete", "manifest_cut", "swap_ids", "edit_bits", "edit_run_hi"]


@pytest.mark.parametrize("damage", DAMAGE)
def test_damaged_files_are_named(tmp_path: Path, damage: str) -> None:
    index, _, _ = _index(3000)
    index.save(tmp_path / "ix")
    v = _live(tmp_path / "ix")
    target = v / "run0_keys.npy"
    verify_false_too = damage in ("truncate", "delete", "manifest_cut")
    if damage == "truncate":
        target.write_bytes(target.read_bytes()[:-1000])
    elif damage == "flip":
        raw = bytearray(target.read_bytes())
        raw[-5] ^= 0xFF
        target.write_bytes(bytes(raw))
    elif damage == "delete":
        target.unlink()
    elif damage == "swap_ids":  # same size, same header: only the checksum can tell
        target = v / "ids.npy"
        arr = np.load(target)
        arr[[0, 1]] = arr[[1, 0]]
        np.save(target, arr)
    else:
        target = v / "manifest.json"
        verify_false_too = True
        if damage == "manifest_cut":
            target.write_text(target.read_text()[:-20])
        else:
            m = json.loads(target.read_text())
            if damage == "edit_bits":
                m["meta"]["k"] = 5
            else:
                m["meta"]["runs"][0]["hi"] -= 1
            target.write_text(json.dumps(m))
    with pytest.raises(IndexFormatError, match=target.name):
        HammingIndex.load(tmp_path / "ix")
    if verify_false_too:
        with pytest.raises(IndexFormatError, match=target.name):
            HammingIndex.load(tmp_path / "ix", verify=False)


@pytest.mark.parametrize("name", ["fps", "ids", "alive", "timestamps"])
def test_mismatched_lengths_refused_without_verify(tmp_path: Path, name: str) -> None:
    """A shorter column with a manifest that agrees (the SIGBUS case): refused, never run."""
    index, _, _ = _index(3000)
    index.save(tmp_path / "ix")
    v = _live(tmp_path / "ix")
    arr = np.load(v / f"{name}.npy")[:-7]
    np.save(v / f"{name}.npy", arr)

    def edit(m: dict) -> None:  # type: ignore[type-arg]
        entry = m["files"][name]
        entry["shape"], entry["bytes"] = list(arr.shape), (v / f"{name}.npy").stat().st_size

    _rewrite_manifest(v, edit)
    with pytest.raises(IndexFormatError, match=f"{name}.npy"):
        HammingIndex.load(tmp_path / "ix", verify=False)


def test_truncation_detected_without_verify(tmp_path: Path) -> None:
    index, _, _ = _index(3000)
    index.save(tmp_path / "ix")
    target = _live(tmp_path / "ix") / "fps.npy"
    target.write_bytes(target.read_bytes()[:-8])
    with pytest.raises(IndexFormatError, match=r"fps\.npy"):
        HammingIndex.load(tmp_path / "ix", verify=False)


def test_not_an_index(tmp_path: Path) -> None:
    with pytest.raises(IndexFormatError, match="not a saved index"):
        HammingIndex.load(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(IndexFormatError, match="not supported"):
        HammingIndex.load(tmp_path)
    (tmp_path / "manifest.json").write_text("[1, 2]")
    with pytest.raises(IndexFormatError, match="not a manifest"):
        HammingIndex.load(tmp_path)


def test_version_1_refused_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(
        json.dumps({"format": "neardup-hamming-index", "version": 1, "arrays": {}})
    )
    with pytest.raises(IndexFormatError, match=r"version 1 is not supported.*rebuild"):
        HammingIndex.load(tmp_path)


def test_unverified_garbage_does_not_crash(tmp_path: Path) -> None:
    index, _, _ = _index(3000)
    index.save(tmp_path / "ix")
    v = _live(tmp_path / "ix")
    for name in ("run0_pos.npy", "run0_offsets.npy"):
        target = v / name
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
    target = _live(tmp_path / "ix") / "run0_pos.npy"
    raw = bytearray(target.read_bytes())
    half = 128 + (len(raw) - 128) // 2
    raw[half:] = b"\xff" * (len(raw) - half)  # the second half of the positions: out of range
    target.write_bytes(bytes(raw))
    with pytest.raises(IndexFormatError, match="run0_pos"):
        HammingIndex.load(tmp_path / "ix")  # what verify=True is for
    loaded = HammingIndex.load(tmp_path / "ix", verify=False)
    got = set(_triples(loaded.search(queries)))
    # out-of-range positions are skipped by the kernels: answers are lost, none invented
    assert got < truth
    assert len(got) > len(truth) // 4  # the intact half of the tables still answers


_SAVER = """
import sys, numpy as np
from neardup.index import HammingIndex
n = int(sys.argv[2])
ix = HammingIndex(k=3)
ix.add(np.arange(n), np.arange(n, dtype=np.uint64) * 977)
print("writing", flush=True)
ix.save(sys.argv[1])
"""


def test_kill_9_during_save_leaves_previous_version(tmp_path: Path) -> None:
    index, _, fps = _index(1000)
    index.save(tmp_path / "ix")
    env = {**os.environ, SLEEP_BEFORE_COMMIT: "30"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SAVER, str(tmp_path / "ix"), "50"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "writing\n"
    deadline = time.monotonic() + 60
    while not (tmp_path / "ix" / "v-2" / "manifest.json").exists():  # new version written
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    loaded = HammingIndex.load(tmp_path / "ix")
    assert len(loaded) == 1000 and _triples(loaded.search(fps[:50])) == _triples(
        index.search(fps[:50])
    )
    HammingIndex(k=1).save(tmp_path / "ix")  # the next writer cleans the dead one's version
    assert sorted(p.name for p in (tmp_path / "ix").iterdir()) == [".lock", "CURRENT", "v-3"]
