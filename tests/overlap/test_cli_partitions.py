"""``neardup overlap`` over Hive-style folders (``month=10/part-0.jsonl``): the partition
columns are fields of the records (so one can be the ``--time-field``) and each output row
carries its document's values, as ``neardup dedup`` rows do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from neardup.cli import cli

from tests.overlap_texts import synthetic


def _write(path: Path, recs: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))


def test_partition_columns_are_read_and_written(tmp_path: Path) -> None:
    docs = synthetic(seed=3, n=6, boilerplate="")
    a, b = docs[0][1], docs[1][1]
    root = tmp_path / "parts"
    # month=10 sorts after month=2 (natural order); its copy of `a` names `a` as the source
    _write(root / "month=10" / "part-0.jsonl", [{"id": "copy", "text": "so: " + a[:400]}])
    _write(root / "month=2" / "part-0.jsonl", [{"id": "a", "text": a}, {"id": "b", "text": b}])
    _write(root / "month=2" / "part-1.jsonl", [{"id": "own", "text": b[:300], "month": "x"}])
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(cli, ["overlap", str(root), "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["source_id"], r["month"]) for r in rows] == [
        ("own", "b", "x"),  # the record's own field wins over the folder's value
        ("copy", "a", 10),
    ]
    assert list(rows[0]) == ["id", "span", "source_id", "source_span", "score", "chars",
                             "closest_id", "closest_span", "closest_score", "month"]  # fmt: skip
    # the partition column as the time field: month=2 documents come first
    _write(root / "month=1" / "part-0.jsonl", [{"id": "z", "text": "hello " + b[:350]}])
    res = CliRunner().invoke(
        cli, ["overlap", str(root), "--out", str(out), "--time-field", "month"]
    )
    assert res.exit_code == 1 and "month" in res.output  # "x" is no timestamp: a data error
    (root / "month=2" / "part-1.jsonl").unlink()
    res = CliRunner().invoke(
        cli, ["overlap", str(root), "--out", str(out), "--time-field", "month"]
    )
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["source_id"], r["month"]) for r in rows] == [
        ("b", "z", 2),  # month=1's z is older than b: b is the copy now
        ("copy", "a", 10),
    ]
