"""`neardup dedup ... | head`: the reader leaving early is normal use, not an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_closed_stdout_ends_quietly_with_status_zero(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    with src.open("w", encoding="utf-8") as f:
        for i in range(4000):  # ~1 MB of output: far more than a pipe buffer holds
            f.write(json.dumps({"id": i, "text": f"document number {i} " * 12}) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "neardup", "dedup", str(src), "--out", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # like `head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert json.loads(first)["id"] == 0
    assert "Traceback" not in err and "error" not in err
