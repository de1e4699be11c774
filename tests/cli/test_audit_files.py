"""Issue 12 item 11 (output files and the stdin spool): real processes, real kill -9 / SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import cli

ROOT = Path(__file__).resolve().parents[2]
TEXT = "the quick brown fox jumps over the lazy dog near the river bank today"
LINE = json.dumps({"id": 1, "text": TEXT}) + "\n"


def _spawn(args: list[str], tmpdir: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(tmpdir)}
    return subprocess.Popen(
        [sys.executable, "-m", "neardup", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmpdir,
    )


def _wait_for(folder: Path, prefix: str, proc: subprocess.Popen[bytes]) -> list[str]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = [n for n in os.listdir(folder) if n.startswith(prefix)]
        if found:
            return found
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    raise AssertionError(f"no {prefix}* file appeared in {folder}")


def _hidden(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith("."))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_kill9_temp_output_is_removed_by_the_next_run_and_sigterm_cleans_up(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    # `fingerprint -` opens its output, then blocks reading stdin: a writer caught mid-run
    proc = _spawn(["fingerprint", "-", "--out", "out.jsonl"], tmp_path)
    assert proc.stdin is not None
    proc.stdin.write(LINE.encode())
    proc.stdin.flush()
    left = _wait_for(tmp_path, ".out.jsonl.neardup-", proc)
    proc.kill()  # SIGKILL: no code runs, the temporary file stays
    proc.wait(timeout=30)
    assert _hidden(tmp_path) == left and out.read_text() == "old\n"
    src = tmp_path / "in.jsonl"
    src.write_text(LINE)
    res = CliRunner().invoke(cli, ["fingerprint", str(src), "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    assert _hidden(tmp_path) == []  # the dead run's leftover is gone
    assert json.loads(out.read_text())["id"] == 1
    before = out.read_text()
    proc = _spawn(["fingerprint", "-", "--out", "out.jsonl"], tmp_path)
    _wait_for(tmp_path, ".out.jsonl.neardup-", proc)
    proc.terminate()  # SIGTERM unwinds: temporary output removed, old output kept
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert proc.stderr is not None and b"Traceback" not in proc.stderr.read()
    assert _hidden(tmp_path) == [] and out.read_text() == before


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_stdin_spool_leftover_is_removed_and_sigterm_removes_its_own(tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    proc = _spawn(["dedup", "-", "--out", str(tmp_path / "o.jsonl")], spool_dir)
    assert proc.stdin is not None
    proc.stdin.write(LINE.encode())
    proc.stdin.flush()
    first = _wait_for(spool_dir, "neardup-stdin", proc)
    proc.kill()
    proc.wait(timeout=30)
    assert os.listdir(spool_dir) == first  # kill -9 leaves the spool ...
    proc = _spawn(["dedup", "-", "--out", str(tmp_path / "o.jsonl")], spool_dir)
    deadline = time.monotonic() + 120
    while set(os.listdir(spool_dir)) & set(first) and time.monotonic() < deadline:
        time.sleep(0.05)  # ... the next run that spools stdin removes it
    assert not set(os.listdir(spool_dir)) & set(first)
    _wait_for(spool_dir, "neardup-stdin", proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert os.listdir(spool_dir) == [] and not (tmp_path / "o.jsonl").exists()


def test_symlinked_output_is_written_through(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(LINE)
    (tmp_path / "runs").mkdir()
    target = tmp_path / "runs" / "today.jsonl"
    target.write_text("old\n")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    dangling = tmp_path / "next.jsonl"
    dangling.symlink_to(tmp_path / "runs" / "tomorrow.jsonl")
    for out in (link, dangling):
        res = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(out)])
        assert res.exit_code == 0, res.stderr
        assert out.is_symlink()  # the link stays a link ...
        assert json.loads(out.resolve().read_text())["status"] == "unique"  # ... to new data
    assert _hidden(tmp_path) == _hidden(tmp_path / "runs") == []


def test_outputs_respect_the_umask_and_keep_an_existing_mode(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(LINE)
    old = os.umask(0o027)
    try:
        for name in ("new.jsonl", "new.parquet"):
            res = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(tmp_path / name)])
            assert res.exit_code == 0, res.stderr
            assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o640
        kept = tmp_path / "private.jsonl"
        kept.write_text("")
        kept.chmod(0o600)
        assert CliRunner().invoke(cli, ["dedup", str(src), "--out", str(kept)]).exit_code == 0
        assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600
    finally:
        os.umask(old)


def test_error_in_the_final_step_still_removes_the_temporary_file(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(LINE)
    blocker = tmp_path / "out.jsonl"  # a non-empty folder where the file should go
    blocker.mkdir()
    (blocker / "keep").write_text("x")
    for out in (blocker, tmp_path / "out.parquet"):
        if out.suffix == ".parquet":
            out.mkdir()
            (out / "keep").write_text("x")
        res = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(out)])
        assert res.exit_code == 2, res.stderr
        assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
        assert _hidden(tmp_path) == [] and (out / "keep").read_text() == "x"
