"""Ids in every output format, for dedup and overlap (issue 40): an id either comes back as it
was read, or its row is a bad row (named, ``--on-error``), or the summary says how it was
written; two sources never silently become one id."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

from neardup.cli import cli

TEXT = "the quick brown fox jumps over the lazy dog near the river bank today again"


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _input(path: Path, ids: list[Any]) -> str:
    """One text per id, each a copy of the first with a new word in front (all related)."""
    rows = [{"id": i, "text": f"w{k} {TEXT}"} for k, i in enumerate(ids)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return str(path)


def _ids(out: Path, column: str) -> list[Any]:
    if out.suffix == ".parquet":
        return list(pq.read_table(out).column(column).to_pylist())
    if out.suffix == ".csv":
        with out.open(encoding="utf-8", newline="") as f:
            return [r[column] for r in csv.DictReader(f)]
    return [json.loads(line)[column] for line in out.read_text("utf-8").splitlines()]


@pytest.mark.parametrize("command", ["dedup", "overlap"])
@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_lone_surrogate_ids_round_trip_or_are_bad_rows(
    tmp_path: Path, command: str, fmt: str
) -> None:
    """``"\\ud800"`` and ``"\\udfff"`` (legal JSON escapes): JSONL keeps both apart; CSV and
    Parquet cannot (they became one ``?`` / U+FFFD, with no note): a bad row naming the row and
    the fix, skipped and listed with ``--on-error skip``; the other ids come back exactly."""
    src = _input(tmp_path / "in.jsonl", ["a", "\ud800", "b", "\udfff", "c"])
    out = tmp_path / f"o.{fmt}"
    column = "id" if command == "dedup" else "source_id"
    res = _run(command, src, "--out", str(out))
    if fmt == "jsonl":
        assert res.exit_code == 0, res.stderr
        got = set(_ids(out, "id")) | set(_ids(out, column))
        assert "\ud800" in got and "\udfff" in got
        return
    assert res.exit_code == 1 and not out.exists(), res.stderr
    assert "in.jsonl:2: id '\\ud800' holds a lone surrogate" in res.stderr
    assert "write JSONL" in res.stderr and "Traceback" not in res.stderr
    res = _run(command, src, "--out", str(out), "--on-error", "skip")
    assert res.exit_code == 0, res.stderr
    assert "skipped: " in res.stderr and "in.jsonl:4: id '\\udfff'" in res.stderr
    assert set(_ids(out, "id")) | set(_ids(out, column)) == {"a", "b", "c"}


@pytest.mark.parametrize("command", ["dedup", "overlap"])
@pytest.mark.parametrize("ids", [[7, "7", "x"], [1, "1", 1.0], [1, 1.0, 2]])
def test_mixed_id_types_in_parquet_are_noted(tmp_path: Path, command: str, ids: list[Any]) -> None:
    """Ids of several types in one Parquet column are written as strings and the summary
    says so, in overlap as in dedup (overlap said nothing); ints and floats are not merged
    into one double column (1 and 1.0 were both 1.0, with no note)."""
    out = tmp_path / "o.parquet"
    every = ["--sources", "all"] if command == "overlap" else []  # both earlier sources named
    res = _run(command, _input(tmp_path / "in.jsonl", ids), "--out", str(out), *every)
    assert res.exit_code == 0, res.stderr
    column = "id" if command == "dedup" else "source_id"  # the sources: the first two texts
    assert f"column {column!r} mixes " in res.stderr and ": written as strings" in res.stderr
    got = _ids(out, column)
    assert got and all(isinstance(v, str) for v in got)
    if 1.0 in ids:  # the float keeps its JSON text apart from the int's
        assert "1.0" in got + _ids(out, "id")


@pytest.mark.parametrize("ids", [[12, "12", 12.0], ["a", 7, "b"]])
def test_parquet_duplicate_of_has_the_type_of_id(tmp_path: Path, ids: list[Any]) -> None:
    """Ids ``12``, ``"12"``, ``12.0`` of one text: the note names every kind the column mixed
    (it said "int64 and double", not the string), and ``duplicate_of`` is written as strings
    as ``id`` is (it stayed int64, so the kept id and its duplicates' ``duplicate_of`` did not
    compare equal)."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "text": TEXT}) + "\n" for i in ids), "utf-8")
    out = tmp_path / "o.parquet"
    res = _run("dedup", str(src), "--out", str(out))
    assert res.exit_code == 0, res.stderr
    kinds = sorted({{int: "int64", float: "double", str: "string"}[type(i)] for i in ids})
    [note] = [line for line in res.stderr.splitlines() if "written as strings" in line]
    assert note == (
        f"column 'id' mixes {', '.join(kinds[:-1])} and {kinds[-1]} values: written as strings"
        " (so is 'duplicate_of')"
    )
    table = pq.read_table(out)
    assert str(table.schema.field("id").type) == str(table.schema.field("duplicate_of").type)
    got = table.to_pylist()
    assert [r["id"] for r in got] == [i if isinstance(i, str) else json.dumps(i) for i in ids]
    kept = got[0]["id"]  # one text: the first is kept, the others name it
    assert [r["duplicate_of"] for r in got] == [None] + [kept] * (len(ids) - 1)
