"""`neardup index add` from two real processes: the writer lock serialises them, nothing lost;
a killed add leaves the previous version usable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from neardup._atomic import SLEEP_BEFORE_COMMIT

ROOT = Path(__file__).resolve().parents[2]


def _docs(path: Path, prefix: str, n: int) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            text = f"{prefix} story {i} about {i * 7919 % 1000} things and {i % 13} places"
            f.write(json.dumps({"id": f"{prefix}{i}", "text": text}) + "\n")
    return path


def _neardup(*args: str, sleep: float = 0) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), SLEEP_BEFORE_COMMIT: str(sleep)}
    return subprocess.Popen(
        [sys.executable, "-m", "neardup", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _info(idx: Path) -> dict:  # type: ignore[type-arg]
    proc = _neardup("index", "info", str(idx))
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_two_concurrent_adds_lose_nothing(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    build = _neardup("index", "build", str(idx), str(_docs(tmp_path / "base.jsonl", "base", 50)))
    assert build.wait(timeout=300) == 0, build.communicate()[1]
    a = _neardup("index", "add", str(idx), str(_docs(tmp_path / "a.jsonl", "a", 3000)), sleep=2)
    b = _neardup("index", "add", str(idx), str(_docs(tmp_path / "b.jsonl", "b", 3000)), sleep=2)
    (_, err_a), (_, err_b) = a.communicate(timeout=300), b.communicate(timeout=300)
    assert a.returncode == 0 and b.returncode == 0, (err_a, err_b)
    assert "waiting for another process" in err_a + err_b
    assert _info(idx)["documents"] == 6050
    query = _neardup("index", "query", str(idx), "a story 5 about 595 things and 5 places")
    out, _ = query.communicate(timeout=300)
    assert "a5" in {json.loads(line)["id"] for line in out.splitlines()}
    more = _docs(tmp_path / "c.jsonl", "c", 10)
    busy = _neardup("index", "add", str(idx), str(more), sleep=60)
    _wait_for(idx / "v-4" / "manifest.json", busy)  # written, holding the lock, not committed
    no_wait = _neardup("index", "add", str(idx), str(more), "--no-wait")
    _, err = no_wait.communicate(timeout=300)
    busy.kill()
    busy.wait()
    assert no_wait.returncode == 1 and "being written by another process" in err, err
    assert _info(idx)["documents"] == 6050


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300
    while not path.exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)


def test_kill_9_during_add_leaves_the_index_usable(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    build = _neardup("index", "build", str(idx), str(_docs(tmp_path / "base.jsonl", "base", 200)))
    assert build.wait(timeout=300) == 0
    add = _neardup("index", "add", str(idx), str(_docs(tmp_path / "a.jsonl", "a", 500)), sleep=60)
    _wait_for(idx / "v-2" / "manifest.json", add)
    os.kill(add.pid, signal.SIGKILL)
    add.wait()
    assert _info(idx)["documents"] == 200
    again = _neardup("index", "add", str(idx), str(tmp_path / "a.jsonl"))
    assert again.wait(timeout=300) == 0
    assert _info(idx)["documents"] == 700
    assert sorted(p.name for p in idx.iterdir()) == [".lock", "CURRENT", "v-3"]
