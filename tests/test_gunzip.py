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
