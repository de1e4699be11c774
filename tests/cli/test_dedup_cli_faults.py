"""``neardup dedup`` on a full disk (issue 40's follow-up), as real processes: RLIMIT_FSIZE
stands in for the disk. Whichever output does not fit (``--out``, ``--summary``,
``--clusters``, ``--pairs``, ``--report``, ``--state``), the run exits 1 (bad data or I/O; 2
is for usage) with one line naming that output and the cause, and the previous ``--out`` and
the other files are byte for byte as they were (it was exit 2 with a bare "File too large")."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _dedup(*args: Any, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "neardup", "dedup", *map(str, args)]
    pre = (
        None if limit is None else (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit,) * 2))
    )
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=120, preexec_fn=pre)


def _corpus(path: Path, n: int) -> Path:
    """``n`` near-copies of one text under 3 kB ids: the gzipped ``--out`` is ~1 kB, the
    cluster table and pairs (ids written out plainly) are 18-180 kB."""
    rows = [{"id": "x" * 3000 + str(i), "text": "the same text again " * 20 + str(i % 3)}
            for i in range(n)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def _files(root: Path) -> dict[str, bytes]:
    """The files under ``root`` but a state's writer lock (made by the first writer, kept)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p.name != ".lock"
    }


# (option, its value, rows of input, file size limit): the limit fits --out.gz but not it;
# --out itself as JSONL (the fast writer) and CSV (the generic one)
CASES = [
    ("--out", "o.jsonl", 60, 5_000),
    ("--out", "o.csv", 60, 5_000),
    ("--summary", "s.json", 1, 300),  # one document: a 118-byte --out, a 410-byte summary
    ("--clusters", "c.jsonl", 60, 5_000),
    ("--pairs", "p.jsonl", 60, 5_000),
    ("--report", "rep", 60, 5_000),
    ("--state", "st", 60, 5_000),
]


@pytest.mark.parametrize(("option", "name", "n", "limit"), CASES, ids=[c[1] for c in CASES])
def test_an_output_that_does_not_fit_exits_1_naming_it(
    tmp_path: Path, option: str, name: str, n: int, limit: int
) -> None:
    data = _corpus(tmp_path / "in.jsonl", n)
    work = tmp_path / "w"
    work.mkdir()
    out = work / (name if option == "--out" else "o.jsonl.gz")
    out.write_bytes(b"previous output\n")
    target = work / name
    if option in ("--summary", "--clusters", "--pairs"):
        target.write_bytes(b"previous\n")
    before = _files(work)
    extra = [] if option == "--out" else [option, target]
    r = _dedup(data, "--out", out, *extra, limit=limit)
    assert r.returncode == 1, r.stderr
    [line] = r.stderr.strip().splitlines()
    cause = "a short write" if option == "--state" else "File too large"
    if option == "--out":
        assert line == f"neardup: error: cannot write {out}: {cause}; {out} was left as it was"
    elif option == "--state":
        assert line.startswith(f"neardup: error: cannot save the state {target}: ")
        assert cause in line and line.endswith(f"; {out} and {target} were left as they were")
    else:
        assert line == (
            f"neardup: error: cannot write {option} {target}: {cause}; {out} was left as it was"
        )
    after = _files(work)
    if option == "--report":  # (a folder: written file by file, report.md last)
        after = {k: v for k, v in after.items() if not k.startswith("rep/")}
    assert after == before  # --out, the output and the state as they were, no temp left
    r = _dedup(data, "--out", out, *extra)  # with room: it goes through
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() != b"previous output\n" and target.exists()
