"""Hive-style partitioned folders (``month=2/``, ``month=10/``): read in natural order (numbers
as numbers) by both engines, partition columns kept in the output, and a note when the parts
are not in time order. Lives here for the session-wide Spark fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from neardup.cli import cli
from neardup.io import iter_records

from tests.synthetic import synthetic_corpus

FIELDS = ("id", "status", "duplicate_of", "distance", "similarity", "cluster_id", "month")


def _partitioned(root: Path, docs: list[dict[str, Any]], months: list[int]) -> None:
    """``docs`` (in time order) spread over ``month=M/part-0.jsonl`` folders, in ``months``
    order: so natural order is time order, string order (10 before 2) is not."""
    per = -(-len(docs) // len(months))
    for i, month in enumerate(months):
        folder = root / f"month={month}"
        folder.mkdir(parents=True)
        chunk = docs[i * per : (i + 1) * per]
        (folder / "part-0.jsonl").write_text(
            "".join(json.dumps({k: d[k] for k in ("id", "text", "ts")}) + "\n" for d in chunk)
        )


def _run(*args: str) -> Any:
    r = CliRunner().invoke(cli, ["dedup", *args])
    assert r.exit_code == 0, r.output
    return r


def _rows(path: Path) -> list[dict[str, Any]]:
    return [{f: r.get(f) for f in FIELDS} for r in map(json.loads, path.read_text().splitlines())]


def test_partitions_in_natural_order_with_their_columns(spark: Any, tmp_path: Path) -> None:
    docs = synthetic_corpus(150, seed=5)
    months = [1, 2, 10]
    _partitioned(tmp_path / "in", docs, months)
    # natural order: month=1, 2, 10 (string order would read month=10 second)
    order = [rec["id"] for _, rec in iter_records(str(tmp_path / "in"))]
    assert order == [d["id"] for d in docs]
    month_of = {rec["id"]: rec["month"] for _, rec in iter_records(str(tmp_path / "in"))}
    assert set(month_of.values()) == {1, 2, 10}  # typed as numbers, as Spark infers them

    flat = tmp_path / "flat.jsonl"  # the same documents in one file, in time order
    flat.write_text("".join(json.dumps({**d, "month": month_of[d["id"]]}) + "\n" for d in docs))
    options = ["--time-field", "ts", "--window", "1d"]
    _run(str(flat), *options, "--out", str(tmp_path / "want.jsonl"))
    want = _rows(tmp_path / "want.jsonl")
    assert {r["status"] for r in want} >= {"duplicate", "unique"}

    _run(str(tmp_path / "in"), *options, "--out", str(tmp_path / "local.jsonl"))
    assert _rows(tmp_path / "local.jsonl") == want
    _run(str(tmp_path / "in"), *options, "--engine", "spark", "--out", str(tmp_path / "sp.jsonl"))
    assert _rows(tmp_path / "sp.jsonl") == want


def test_parts_out_of_time_order_are_named(tmp_path: Path) -> None:
    docs = synthetic_corpus(90, seed=6)
    # later documents in month=1, earlier ones in month=2: the parts are not in time order
    _partitioned(tmp_path / "in", docs[45:] + docs[:45], [1, 2])
    r = _run(str(tmp_path / "in"), "--time-field", "ts", "--window", "1d", "--out", "-")
    assert "input parts are not in time order: 1 of 2 parts" in r.output
    assert "month=2" in r.output
    in_order = tmp_path / "ordered"
    _partitioned(in_order, docs, [1, 2])
    r = _run(str(in_order), "--time-field", "ts", "--window", "1d", "--out", "-")
    assert "not in time order" not in r.output
