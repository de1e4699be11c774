"""`neardup serve` option errors are usage errors (exit 2, one line), never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from neardup.cli import main; import sys; sys.argv = ['neardup', *sys.argv[1:]]; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "serve", "--port", "0", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--k", "64"], "64 is not in the range"),
        (["--window", "7x"], "window"),
        (["--retention", "1d"], "--retention needs a --window"),
    ],
)
def test_bad_options_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    r = _serve("--data", str(tmp_path / "d"), *args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr


def test_configuration_the_dedup_refuses_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "fp.json"
    config.write_text(json.dumps({"bits": 128}))
    r = _serve("--data", str(tmp_path / "d"), "--config", str(config))
    assert r.returncode == 2, r.stderr
    assert "64-bit" in r.stderr and "Traceback" not in r.stderr
