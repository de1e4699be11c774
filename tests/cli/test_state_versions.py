"""``--state`` directories under damage and races (issue 22): a reader racing a commit sees the
old or the new version; a missing or dangling ``CURRENT`` is refused without deleting any
version; a failed write leaves ``--out`` and the state as they were; ids seen in earlier runs
are warned about."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from neardup.dedup import Deduplicator
from neardup.dedup.persist import StateFormatError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def _rows(prefix: str, n: int, words: int = 8) -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}{i}", "text": " ".join(f"{prefix}w{i * 31 + j}" for j in range(words))}
        for i in range(n)
    ]


def _dedup(data: Path, out: Path, state: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "neardup", "dedup", str(data), "--out", str(out)]
    return subprocess.run(
        [*cmd, "--state", str(state)], env=ENV, capture_output=True, text=True, timeout=120, **kw
    )


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A state with one committed run (v-1) of the sample."""
    st = tmp_path / "st"
    r = _dedup(SAMPLE, tmp_path / "o1.jsonl", st)
    assert r.returncode == 0, r.stderr
    assert (st / "CURRENT").read_text().strip() == "v-1"
    return st


def test_reader_during_commits_sees_a_whole_version(tmp_path: Path) -> None:
    """A process commits new versions in a loop; every load in this one must succeed."""
    st = tmp_path / "st"
    dd = Deduplicator()
    dd.feed([r["text"] for r in _rows("a", 3000)], ids=[r["id"] for r in _rows("a", 3000)])
    dd.save(st)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom neardup.dedup import Deduplicator\n"
            "dd = Deduplicator.load(sys.argv[1])\nend = time.monotonic() + 60\n"
            "while time.monotonic() < end:\n    dd.save(sys.argv[1])\n",
            str(st),
        ],
        env=ENV,
    )
    try:
        while (st / "CURRENT").read_text().strip() in ("v-1", "v-2"):  # writer is going
            assert writer.poll() is None
            time.sleep(0.01)
        failures, loads, end = [], 0, time.monotonic() + 3
        while time.monotonic() < end:
            try:
                assert Deduplicator.load(st, verify=False).n_documents == 3000
            except StateFormatError as e:
                failures.append(str(e))
            loads += 1
    finally:
        writer.kill()
        writer.wait()
    assert loads > 20 and failures == [], f"{len(failures)} of {loads} loads failed: {failures[:2]}"


def test_missing_current_is_refused_and_nothing_deleted(state: Path, tmp_path: Path) -> None:
    (state / "CURRENT").unlink()
    before = _snapshot(state)
    r = _dedup(SAMPLE, tmp_path / "o2.jsonl", state)
    assert r.returncode == 1, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert str(state / "CURRENT") in line and "v-1" in line and "echo v-1 >" in line, line
    assert _snapshot(state) == before  # v-1 kept, nothing written
    assert not (tmp_path / "o2.jsonl").exists()
    with pytest.raises(StateFormatError, match=r"CURRENT is missing.*v-1"):
        Deduplicator.load(state)
    (state / "CURRENT").write_text("v-1\n")  # the fix the message gives
    r = _dedup(SAMPLE, tmp_path / "o2.jsonl", state)
    assert r.returncode == 0 and "30 documents before this run" in r.stderr, r.stderr


def test_first_run_killed_before_manifest_is_cleaned_up(tmp_path: Path) -> None:
    """A version without its manifest (a first run killed while writing) is no data: removed."""
    st = tmp_path / "st"
    (st / "v-1").mkdir(parents=True)
    (st / "v-1" / "rep.npy").write_bytes(b"partial")
    r = _dedup(SAMPLE, tmp_path / "o.jsonl", st)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in st.iterdir()) == [".lock", "CURRENT", "v-2"]


def test_current_naming_a_gone_version_is_refused(state: Path, tmp_path: Path) -> None:
    (state / "CURRENT").write_text("v-7\n")
    before = _snapshot(state)
    r = _dedup(SAMPLE, tmp_path / "o2.jsonl", state)
    assert r.returncode == 1, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert "v-7" in line and "gone" in line and "v-1" in line, line
    assert _snapshot(state) == before
    with pytest.raises(StateFormatError, match=r"v-7.*gone"):
        Deduplicator.load(state)


def _limit(size: int) -> Any:
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


@pytest.mark.parametrize("out_name", ["o2.jsonl.gz", "o2.jsonl"])
def test_disk_full_leaves_out_and_state(state: Path, tmp_path: Path, out_name: str) -> None:
    """Files over 150 kB fail (RLIMIT_FSIZE: as a full disk): the state's arrays (.gz: the
    output is small, the state is not) or the output itself (.jsonl)."""
    rows = [{"id": f"b{i}", "text": f"b{i} " * 30} for i in range(6000)]  # gzip: 70 kB
    day2 = _write(tmp_path / "d2.jsonl", rows)
    out = tmp_path / out_name
    out.write_bytes(b"previous output\n")
    before = _snapshot(state)
    r = _dedup(day2, out, state, preexec_fn=_limit(150_000))
    assert r.returncode == 1, r.stderr  # (it was 2, a usage code)
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert out.read_bytes() == b"previous output\n"
    assert _snapshot(state) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    r = _dedup(day2, out, state)  # with room: the run goes through
    assert r.returncode == 0 and "30 documents before this run" in r.stderr, r.stderr


def test_ids_of_earlier_runs_are_warned(state: Path, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in SAMPLE.read_text("utf-8").splitlines()]
    again = [{**rows[3], "text": "a new text"}, {**rows[5], "text": "another"}, *_rows("c", 4)]
    r = _dedup(_write(tmp_path / "d2.jsonl", again), tmp_path / "o2.jsonl", state)
    assert r.returncode == 0, r.stderr
    assert "2 ids of this run were already given to documents of earlier runs" in r.stderr
    assert repr(rows[3]["id"]) in r.stderr
    r = _dedup(_write(tmp_path / "d3.jsonl", _rows("d", 4)), tmp_path / "o3.jsonl", state)
    assert r.returncode == 0 and "earlier run" not in r.stderr, r.stderr


def test_foreign_directory_check_keeps_versions(state: Path) -> None:
    """A state whose CURRENT and lock are both gone is still recognised (not "other data")."""
    (state / "CURRENT").unlink()
    (state / ".lock").unlink()
    r = _dedup(SAMPLE, state.parent / "o.jsonl", state)
    assert r.returncode == 1 and "echo v-1 >" in r.stderr, r.stderr
    assert (state / "v-1" / "manifest.json").exists()
    shutil.rmtree(state)


def test_unwritable_report_leaves_the_state(state: Path, tmp_path: Path) -> None:
    """A report path that is a file is refused before any work: the state does not advance,
    so running again (with a good path) decides as the first attempt would have."""
    before = _snapshot(state)
    blocker = tmp_path / "rep"
    blocker.write_text("a file, not a folder")
    data = _write(tmp_path / "day2.jsonl", _rows("r", 20))
    cmd = [sys.executable, "-m", "neardup", "dedup", str(data), "--out", str(tmp_path / "o.jsonl")]
    r = subprocess.run(
        [*cmd, "--state", str(state), "--summary", str(tmp_path / "no" / "s.json")],
        env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and "--summary" in r.stderr
    r = subprocess.run(
        [*cmd, "--state", str(state), "--report", str(blocker)],
        env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and "--report" in r.stderr
    assert _snapshot(state) == before and not (tmp_path / "o.jsonl").exists()
