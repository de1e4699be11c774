"""``neardup dedup --state``: day 2 on day 1's state gives the decisions of one run over both,
a killed run leaves the previous state, another configuration is refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import click
import numpy as np
import pytest
from click.testing import CliRunner

from neardup._atomic import SLEEP_BEFORE_COMMIT, SLEEP_PER_FILE
from neardup.cli import cli
from neardup.cli._state import _check_directory
from neardup.dedup import Deduplicator
from neardup.io import parse_timestamp

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"
DECISION = ("cluster_id", "duplicate_of", "distance", "status")


def _invoke(args: list[str]) -> Any:
    return CliRunner().invoke(cli, args)


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _days(tmp_path: Path, rows: list[dict[str, Any]], cuts: list[int], extra: list[str]) -> None:
    """Run each day on one state; compare the outputs with one run over all days."""
    whole = _write(tmp_path / "all.jsonl", rows)
    r = _invoke(["dedup", str(whole), "--out", str(tmp_path / "one.jsonl"), *extra])
    assert r.exit_code == 0, r.output
    got: list[dict[str, Any]] = []
    bounds = [0, *cuts, len(rows)]
    for day, (a, b) in enumerate(pairwise(bounds)):
        part = _write(tmp_path / f"day{day}.jsonl", rows[a:b])
        out = tmp_path / f"out{day}.jsonl"
        args = ["dedup", str(part), "--out", str(out), "--state", str(tmp_path / "st"), *extra]
        r = _invoke(args)
        assert r.exit_code == 0, r.output
        assert f"{a:,} documents before this run" in r.output
        got += _read(out)
    one = _read(tmp_path / "one.jsonl")
    assert got == one
    assert sum(row["status"] != "unique" for row in one) > 0


@pytest.mark.parametrize(
    "extra", [[], ["--time-field", "date", "--window", "2d"], ["--no-verify", "--k", "6"]]
)
def test_sample_in_two_days_equals_one_run(tmp_path: Path, extra: list[str]) -> None:
    _days(tmp_path, _read(SAMPLE), [13], extra)


@pytest.mark.parametrize("window", [None, "3d"])
def test_real_corpus_in_three_days(
    tmp_path: Path, reuters_records: list[dict[str, Any]], window: str | None
) -> None:
    """A Reuters slice in date order with planted exact copies (case, spacing) and empties."""
    docs = sorted(reuters_records[:1500], key=lambda d: parse_timestamp(d["date"]))
    rows = [{"id": d["id"], "date": d["date"], "text": d["text"]} for d in docs]
    for i in range(60):  # a copy right after its source, and an empty text
        src = rows[i * 20]
        rows.insert(i * 20 + 1, {**src, "id": f"copy-{i}", "text": "  " + src["text"].upper()})
    for i in range(0, len(rows), 97):
        rows[i] = {**rows[i], "text": "  "}
    extra = [] if window is None else ["--time-field", "date", "--window", window]
    _days(tmp_path, rows, [500, 1100], extra)


def test_other_configuration_is_refused(tmp_path: Path) -> None:
    st = tmp_path / "st"
    assert _invoke(["dedup", str(SAMPLE), "--out", str(tmp_path / "a.jsonl"), "--state", str(st)])
    r = _invoke(["dedup", str(SAMPLE), "--out", str(tmp_path / "b.jsonl"), "--state", str(st)])
    assert r.exit_code == 0
    r = _invoke(
        ["dedup", str(SAMPLE), "--out", str(tmp_path / "c.jsonl"), "--state", str(st), "--k", "5"]
    )
    assert r.exit_code == 2
    line = r.output.strip().splitlines()[-1]
    assert Deduplicator().config_id in line and Deduplicator(k=5).config_id in line
    assert "new state directory" in line and not (tmp_path / "c.jsonl").exists()


def test_bad_row_says_the_state_was_left_as_it_was(tmp_path: Path) -> None:
    st, out = tmp_path / "st", tmp_path / "o.jsonl"
    assert _invoke(["dedup", str(SAMPLE), "--out", str(out), "--state", str(st)]).exit_code == 0
    live = (st / "CURRENT").read_text()
    bad = _write(tmp_path / "b.jsonl", [{"id": "x", "text": "a new text"}, {"id": "y", "text": 5}])
    r = _invoke(["dedup", str(bad), "--out", str(tmp_path / "o2.jsonl"), "--state", str(st)])
    assert r.exit_code == 1
    line = r.output.strip().splitlines()[-1]
    assert "b.jsonl:2" in line and line.endswith(f"the state {st} was left as it was")
    assert (st / "CURRENT").read_text() == live and not (tmp_path / "o2.jsonl").exists()
    again = _invoke(["dedup", str(SAMPLE), "--out", str(tmp_path / "o3.jsonl"), "--state", str(st)])
    assert again.exit_code == 0 and "already decided" in again.output


def test_keep_longest_and_foreign_directories_are_refused(tmp_path: Path) -> None:
    out = str(tmp_path / "o.jsonl")
    r = _invoke(["dedup", str(SAMPLE), "--out", out, "--state", str(tmp_path), "--keep", "longest"])
    assert r.exit_code == 2 and "--keep first" in r.output
    (tmp_path / "mine.txt").write_text("precious")
    r = _invoke(["dedup", str(SAMPLE), "--out", out, "--state", str(tmp_path)])
    assert r.exit_code == 2 and "holds other data" in r.output
    assert (tmp_path / "mine.txt").read_text() == "precious"


def _files(version: Path) -> int:
    return sum(1 for _ in version.glob("*.npy")) if version.is_dir() else -1


@pytest.mark.parametrize("kill_at", ["deciding", "after 1 file", "after 6 files", "before commit"])
def test_kill_9_leaves_previous_state(tmp_path: Path, kill_at: str) -> None:
    rows = _read(SAMPLE)
    day1, day2 = _write(tmp_path / "d1.jsonl", rows[:15]), _write(tmp_path / "d2.jsonl", rows[15:])
    st = tmp_path / "st"
    r = _invoke(["dedup", str(day1), "--out", str(tmp_path / "o1.jsonl"), "--state", str(st)])
    assert r.exit_code == 0, r.output
    before = Deduplicator.load(st).state.columns()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), SLEEP_PER_FILE: "0.3"}
    env[SLEEP_BEFORE_COMMIT] = "30"
    cmd = [sys.executable, "-m", "neardup", "dedup", str(day2), "--out", str(tmp_path / "o2.jsonl")]
    proc = subprocess.Popen([*cmd, "--state", str(st)], env=env, stderr=subprocess.DEVNULL)
    new = st / "v-2"
    ready = {
        "deciding": lambda: new.is_dir(),
        "after 1 file": lambda: _files(new) >= 1,
        "after 6 files": lambda: _files(new) >= 6,
        "before commit": lambda: (new / "manifest.json").exists(),
    }[kill_at]
    deadline = time.monotonic() + 120
    while not ready():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    after = Deduplicator.load(st)
    assert after.n_documents == 15
    for name, col in after.state.columns().items():
        assert np.array_equal(col, before[name], equal_nan=col.dtype.kind == "f")
    r = _invoke([*cmd[3:], "--state", str(st)])  # the rerun, without test sleeps
    assert r.exit_code == 0, r.output
    whole = _write(tmp_path / "all.jsonl", rows)
    assert _invoke(["dedup", str(whole), "--out", str(tmp_path / "one.jsonl")]).exit_code == 0
    got = _read(tmp_path / "o1.jsonl") + _read(tmp_path / "o2.jsonl")
    assert [[g[f] for f in DECISION] for g in got] == [
        [o[f] for f in DECISION] for o in _read(tmp_path / "one.jsonl")
    ]
    assert sorted(p.name for p in st.iterdir()) == [".lock", "CURRENT", "v-3"]


def _news(path: Path, prefix: str, n: int, day: int) -> Path:
    rows = [
        {
            "id": f"{prefix}{i}",
            "date": f"2026-11-{day:02d}T{i % 24:02d}:00:00Z",
            "text": f"{prefix} report {i % 40} on the harbour works and {i * 7919 % 500} ships",
        }
        for i in range(n)
    ]
    return _write(path, rows)


def test_two_concurrent_runs_are_serialised_and_lose_nothing(tmp_path: Path) -> None:
    st = tmp_path / "st"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), SLEEP_BEFORE_COMMIT: "2"}

    def cmd(p: str) -> list[str]:
        data = _news(tmp_path / f"{p}.jsonl", p, 400, 3)
        out = tmp_path / f"{p}.out.jsonl"
        return [sys.executable, "-m", "neardup", "dedup", str(data), "--out", str(out)]

    procs = [
        subprocess.Popen([*cmd(p), "--state", str(st)], env=env, stderr=subprocess.PIPE, text=True)
        for p in ("a", "b")
    ]
    errs = [proc.communicate(timeout=300)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], errs
    assert "waiting for another process" in "".join(errs)
    assert Deduplicator.load(st).n_documents == 800  # neither run was lost
    first = 0 if "state: 0 documents before this run" in errs[0] else 1
    order = ["a", "b"] if first == 0 else ["b", "a"]
    got = _read(tmp_path / f"{order[0]}.out.jsonl") + _read(tmp_path / f"{order[1]}.out.jsonl")
    whole = _write(
        tmp_path / "all.jsonl",
        _read(tmp_path / f"{order[0]}.jsonl") + _read(tmp_path / f"{order[1]}.jsonl"),
    )
    assert _invoke(["dedup", str(whole), "--out", str(tmp_path / "one.jsonl")]).exit_code == 0
    assert got == _read(tmp_path / "one.jsonl")


def test_a_directory_being_created_by_another_run_is_not_taken_for_other_data(
    tmp_path: Path,
) -> None:
    """The check reads the directory once: a second run starting while the first creates the
    directory and its ``.lock`` must not see "other data" (CI saw it between two looks)."""
    refused = 0
    for i in range(400):
        root = tmp_path / f"s{i}"

        def first_run(root: Path = root) -> None:
            root.mkdir()
            (root / ".lock").touch()

        writer = threading.Thread(target=first_run)
        writer.start()
        try:
            _check_directory(str(root))
        except click.UsageError:
            refused += 1
        writer.join()
    assert refused == 0
    (tmp_path / "s0" / "notes.txt").write_text("somebody else's")
    (tmp_path / "s0" / ".lock").unlink()
    with pytest.raises(click.UsageError, match="holds other data"):
        _check_directory(str(tmp_path / "s0"))


def test_late_documents_are_counted(tmp_path: Path) -> None:
    st, window = str(tmp_path / "st"), ["--time-field", "date", "--window", "1d"]
    new, old = _news(tmp_path / "new.jsonl", "n", 50, 20), _news(tmp_path / "old.jsonl", "o", 30, 2)
    r = _invoke(["dedup", str(new), "--out", str(tmp_path / "1.jsonl"), "--state", st, *window])
    assert r.exit_code == 0 and "were older" not in r.output
    r = _invoke(["dedup", str(old), "--out", str(tmp_path / "2.jsonl"), "--state", st, *window])
    assert r.exit_code == 0 and "state: 30 documents were older" in r.output
