"""Corrupt and truncated gzip inputs end in the readers' one-line error, never a traceback."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

BODY = b'{"text":"hello world"}\n' * 1000


def _corrupt(path: Path, at: int) -> None:
    data = bytearray(gzip.compress(BODY, mtime=0))
    data[at] ^= 0xFF
    data[at + 1] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("at", [40, 60])
def test_corrupt_gzip_is_one_line_error(tmp_path: Path, at: int) -> None:
    src = tmp_path / "bad.jsonl.gz"
    _corrupt(src, at)
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "neardup", "dedup", str(src), "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot read" in lines[0] and str(src) in lines[0]


def test_gunzip_gives_the_stdlib_bytes(tmp_path: Path) -> None:
    from neardup.io import open_binary

    src = tmp_path / "ok.jsonl.gz"
    src.write_bytes(gzip.compress(BODY * 50))
    f = open_binary(str(src))
    try:
        assert f.read() == BODY * 50
    finally:
        f.close()


def _big_body() -> bytes:
    """JSONL whose gzip exceeds READ_AHEAD_FROM (random words: read on the read-ahead thread)."""
    import random

    rng = random.Random(7)
    return b"".join(b'{"text": "%d %x"}\n' % (i, rng.getrandbits(64)) for i in range(300_000))


def _dedup_error(src: Path, tmp_path: Path) -> str:
    """The one line a failing ``neardup dedup src`` prints (no traceback, no output)."""
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "neardup", "dedup", str(src), "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert not out.exists()
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(src) in lines[0]
    return lines[0]


@pytest.mark.parametrize("big", [False, True])
def test_truncated_gzip_is_one_line_error(tmp_path: Path, big: bool) -> None:
    """EOFError, raised on the reading thread or on the read-ahead one, reaches the reader's
    "truncated?" message."""
    from neardup.io._gunzip import READ_AHEAD_FROM

    data = gzip.compress(_big_body() if big else BODY * 50, mtime=0, compresslevel=1)
    assert (len(data) >= READ_AHEAD_FROM) == big
    src = tmp_path / "cut.jsonl.gz"
    src.write_bytes(data[:-100])
    assert "truncated" in _dedup_error(src, tmp_path)


def test_corrupt_big_gzip_is_one_line_error(tmp_path: Path) -> None:
    """A wrong checksum at the end of a file read ahead: the thread's error, raised by the
    read that reaches it, is the readers' one-line "cannot read"."""
    from neardup.io._gunzip import READ_AHEAD_FROM

    data = bytearray(gzip.compress(_big_body(), mtime=0, compresslevel=1))
    assert len(data) >= READ_AHEAD_FROM
    data[-8] ^= 0xFF  # the trailer's CRC-32: every line inflates, the end does not check
    src = tmp_path / "bad.jsonl.gz"
    src.write_bytes(bytes(data))
    assert "cannot read" in _dedup_error(src, tmp_path)


def test_read_ahead_many_blocks_and_early_close(tmp_path: Path) -> None:
    """Blocks come back in order past the read-ahead queue's depth; closing a reader half
    way, or dropping it unclosed, stops its inflating thread."""
    import gc
    import threading

    from neardup.io import open_binary
    from neardup.io._gunzip import AHEAD, BLOCK, READ_AHEAD_FROM

    body = _big_body()
    assert len(body) > (AHEAD + 2) * BLOCK
    src = tmp_path / "big.jsonl.gz"
    src.write_bytes(gzip.compress(body, compresslevel=1))
    assert src.stat().st_size >= READ_AHEAD_FROM
    before = threading.active_count()
    f = open_binary(str(src))
    try:
        assert threading.active_count() == before + 1  # the read-ahead thread
        assert f.read() == body
    finally:
        f.close()
    for drop in (False, True):
        f = open_binary(str(src))
        assert f.readline() == body[: body.index(b"\n") + 1]
        if drop:
            del f
            gc.collect()
        else:
            f.close()
        for _ in range(200):
            if threading.active_count() == before:
                break
            threading.Event().wait(0.01)
        assert threading.active_count() == before


def test_small_gzip_files_start_no_thread(tmp_path: Path) -> None:
    """A file below READ_AHEAD_FROM is inflated by the reader (a folder of many small parts
    would pay a thread start per part)."""
    import threading

    from neardup.io import open_binary
    from neardup.io._gunzip import AHEAD, BLOCK, READ_AHEAD_FROM

    body = BODY * 200  # more than a read-ahead queue holds: a thread would still be running
    assert len(body) > (AHEAD + 2) * BLOCK
    src = tmp_path / "small.jsonl.gz"
    src.write_bytes(gzip.compress(body))
    assert src.stat().st_size < READ_AHEAD_FROM
    before = threading.active_count()
    f = open_binary(str(src))
    try:
        threading.Event().wait(0.05)
        assert threading.active_count() == before
        assert f.read() == body
    finally:
        f.close()
