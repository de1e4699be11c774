"""One typo'd year (9999-12-31) must not move the window for every later document (issue 22)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from neardup.cli import cli

from tests.synthetic import synthetic_corpus


def _run(args: list[str]) -> Any:
    return CliRunner().invoke(cli, ["dedup", *args])


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _statuses(path: Path) -> dict[Any, tuple[Any, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["id"]: (r["status"], r["duplicate_of"]) for r in rows}


def test_far_future_timestamp_is_a_bad_row_not_a_window_move(tmp_path: Path) -> None:
    rows = synthetic_corpus(200, seed=9)  # epoch seconds within six days
    typo = {**rows[50], "id": "typo", "ts": "9999-12-31T00:00:00Z"}
    clean = _write(tmp_path / "clean.jsonl", rows)
    dirty = _write(tmp_path / "dirty.jsonl", [*rows[:51], typo, *rows[51:]])
    opts = ["--time-field", "ts", "--window", "2d"]
    res = _run([dirty, "--out", str(tmp_path / "o.jsonl"), *opts])
    assert res.exit_code == 1
    assert "dirty.jsonl:52" in res.stderr and "--max-future" in res.stderr
    assert not (tmp_path / "o.jsonl").exists()
    # skipped: every other document decided as without it
    assert _run([clean, "--out", str(tmp_path / "a.jsonl"), *opts]).exit_code == 0
    res = _run([dirty, "--out", str(tmp_path / "b.jsonl"), *opts, "--on-error", "skip"])
    assert res.exit_code == 0 and "skipped: 1" in res.stderr
    a, b = _statuses(tmp_path / "a.jsonl"), _statuses(tmp_path / "b.jsonl")
    assert a == b and sum(s == "duplicate" for s, _ in a.values()) > 5
    # accepted on request: decided in time order (last) by the --max-disorder buffer, so it
    # moves no window; in input order (--max-disorder 0) it moves the window, as documented
    res = _run([dirty, "--out", str(tmp_path / "c.jsonl"), *opts, "--max-future", "none"])
    assert res.exit_code == 0
    assert _statuses(tmp_path / "c.jsonl") == {**a, "typo": ("unique", None)}
    no_buffer = [*opts, "--max-future", "none", "--max-disorder", "0"]
    assert _run([dirty, "--out", str(tmp_path / "d.jsonl"), *no_buffer]).exit_code == 0
    assert _statuses(tmp_path / "d.jsonl") != {**a, "typo": ("unique", None)}


def test_max_future_only_matters_with_a_window(tmp_path: Path) -> None:
    rows = [{"id": 1, "text": "a b c d e f", "ts": "9999-01-01"}]
    src = _write(tmp_path / "in.jsonl", rows)
    res = _run([src, "--out", str(tmp_path / "o.jsonl"), "--time-field", "ts"])
    assert res.exit_code == 0, res.stderr
    res = _run([src, "--out", "-", "--time-field", "ts", "--window", "1d", "--max-future", "x"])
    assert res.exit_code == 2 and "x" in res.stderr
