"""``neardup dedup --window --max-disorder``: input shuffled within the bound gets the decisions
of the sorted input (also with --state); rows beyond it are counted and named; a duration
without a unit is refused with the fix (issue 38)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup.cli import cli

from tests.synthetic import synthetic_corpus

HOUR = 3600.0
DECISION = ("cluster_id", "duplicate_of", "status")


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def _dedup(src: Path, out: Path, *extra: str) -> tuple[dict[str, dict[str, Any]], str]:
    args = ["dedup", str(src), "--out", str(out), "--time-field", "ts", "--window", "36h"]
    r = CliRunner().invoke(cli, [*args, *extra])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    return {row["id"]: {k: row[k] for k in DECISION} for row in rows}, r.output


def _hour_cycled(docs: list[dict[str, Any]], hours: int) -> list[dict[str, Any]]:
    """The rows written in blocks of ``hours``, each block by hour of the day (every row at most
    ``hours`` behind a newer one)."""
    t0 = docs[0]["ts"]
    return sorted(docs, key=lambda d: ((d["ts"] - t0) // (hours * HOUR), d["ts"] % (24 * HOUR)))


@pytest.fixture(scope="module")
def docs() -> list[dict[str, Any]]:
    rows = synthetic_corpus(400, seed=5, days=8)
    for r in rows:
        r.pop("kind")
    return rows


def test_unsorted_within_the_bound_equals_sorted(
    tmp_path: Path, docs: list[dict[str, Any]]
) -> None:
    cycled = _hour_cycled(docs, 24)
    assert cycled != docs
    want, _ = _dedup(_write(tmp_path / "sorted.jsonl", docs), tmp_path / "a.jsonl")
    got, summary = _dedup(_write(tmp_path / "cycled.jsonl", cycled), tmp_path / "b.jsonl")
    assert got == want
    assert "out of order" not in summary and "late documents" not in summary
    assert sum(v["status"] != "unique" for v in want.values()) > 50
    # what the buffer fixes: in input order (0) the same rows lose matches, counted as late
    lost, summary = _dedup(tmp_path / "cycled.jsonl", tmp_path / "c.jsonl", "--max-disorder", "0")
    assert lost != want and "out of order: " in summary


def test_rows_beyond_the_bound_are_named(tmp_path: Path, docs: list[dict[str, Any]]) -> None:
    rows = [*docs[5:], *docs[:5]]  # the first five hours come 8 days late
    _, summary = _dedup(_write(tmp_path / "late.jsonl", rows), tmp_path / "o.jsonl")
    assert "out of order: 5 documents came more than --max-disorder (48h)" in summary
    assert "'d0'" in summary


def test_state_runs_flush_the_buffer_and_equal_one_sorted_run(
    tmp_path: Path, docs: list[dict[str, Any]]
) -> None:
    want, _ = _dedup(_write(tmp_path / "sorted.jsonl", docs), tmp_path / "a.jsonl")
    got: dict[str, dict[str, Any]] = {}
    half = len(docs) // 2
    for day, part in enumerate((docs[:half], docs[half:])):
        shuffled = _hour_cycled(part, 24)
        src = _write(tmp_path / f"day{day}.jsonl", shuffled)
        out, _ = _dedup(src, tmp_path / f"o{day}.jsonl", "--state", str(tmp_path / "st"))
        got.update(out)
    assert got == want


def test_spark_engine_decides_in_the_buffers_order(
    tmp_path: Path, docs: list[dict[str, Any]]
) -> None:
    """Within the bound (a distributed sort) and beyond it (the buffer on the driver)."""
    pytest.importorskip("pyspark")
    for name, rows in (("cycled", _hour_cycled(docs, 24)), ("late", [*docs[5:], *docs[:5]])):
        src = _write(tmp_path / f"{name}.jsonl", rows)
        want, local = _dedup(src, tmp_path / f"{name}-a.jsonl")
        got, spark = _dedup(src, tmp_path / f"{name}-b.jsonl", "--engine", "spark")
        assert got == want, name
        named = [line for line in local.splitlines() if line.startswith("out of order")]
        assert named == [line for line in spark.splitlines() if line.startswith("out of order")]
        assert bool(named) == (name == "late")
        assert f"{tmp_path / f'{name}-b.jsonl'} (--out)" in spark


@pytest.mark.parametrize("option", ["--window", "--max-disorder"])
def test_a_duration_without_unit_is_refused(tmp_path: Path, option: str) -> None:
    src = _write(tmp_path / "in.jsonl", [{"id": "a", "text": "x y z", "ts": 0}])
    args = ["dedup", str(src), "--out", "-", "--time-field", "ts", "--window", "1d"]
    r = CliRunner().invoke(cli, [*args, option, "7"])
    assert r.exit_code == 2
    assert "give a unit" in r.output and "7d for days? 7s for seconds?" in r.output


@pytest.mark.corpus
def test_reuters_in_file_order_gets_the_sorted_decisions(tmp_path: Path) -> None:
    """Real news timestamps: Reuters in file order (its last rows come up to ~47 h behind a
    newer one) decides as sorted by date under the default --max-disorder, and not with 0."""
    from neardup.io import parse_timestamp

    from tests.conftest import corpus_records

    tail = [r for r in corpus_records("reuters", 21578)[-1500:] if r.get("date")]
    rows = [{"id": r["id"], "text": r["text"], "ts": r["date"]} for r in tail]
    when = [parse_timestamp(r["ts"]) for r in rows]
    ordered = [rows[i] for i in sorted(range(len(rows)), key=when.__getitem__)]
    assert ordered != rows
    want, _ = _dedup(_write(tmp_path / "sorted.jsonl", ordered), tmp_path / "a.jsonl")
    got, summary = _dedup(_write(tmp_path / "file.jsonl", rows), tmp_path / "b.jsonl")
    assert got == want and "out of order" not in summary
    _, summary = _dedup(tmp_path / "file.jsonl", tmp_path / "c.jsonl", "--max-disorder", "0")
    assert "out of order: " in summary
