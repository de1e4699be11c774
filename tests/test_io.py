from __future__ import annotations

import gzip
import io
import json
import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from neardup.io import (
    FormatError,
    InputError,
    ReadStats,
    detect_format,
    iter_documents,
    iter_records,
    open_writer,
    parse_timestamp,
    parse_window,
)

ROWS = [{"id": 1, "text": "alpha beta"}, {"id": 2, "text": "gamma δέλτα 中文"}]


def _docs(path: str, fmt: str | None = None, **kw):
    return [(d.id, d.text) for d in iter_documents(iter_records(path, fmt), **kw)]


def _write_jsonl(path: Path, lines: list[str], gz: bool = False) -> str:
    data = ("\n".join(lines) + "\n").encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


@pytest.mark.parametrize("name, gz", [("d.jsonl", False), ("d.jsonl.gz", True)])
def test_jsonl_plain_and_gz(tmp_path: Path, name: str, gz: bool) -> None:
    p = _write_jsonl(tmp_path / name, [json.dumps(r, ensure_ascii=False) for r in ROWS], gz)
    assert _docs(p) == [(1, "alpha beta"), (2, "gamma δέλτα 中文")]


def test_csv_and_parquet(tmp_path: Path) -> None:
    c = tmp_path / "d.csv"
    c.write_text('id,text\n1,"alpha beta"\n2,"multi\nline"\n', encoding="utf-8")
    assert _docs(str(c)) == [("1", "alpha beta"), ("2", "multi\nline")]
    p = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), p, row_group_size=1)
    assert _docs(str(p)) == [(1, "alpha beta"), (2, "gamma δέλτα 中文")]


def test_txt_folder_ids_are_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.txt").write_text("bee", encoding="utf-8")
    (tmp_path / "sub" / "a.txt").write_text("ay", encoding="utf-8")
    (tmp_path / "skip.md").write_text("not text", encoding="utf-8")
    assert _docs(str(tmp_path)) == [("b.txt", "bee"), ("sub/a.txt", "ay")]


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = io.TextIOWrapper(io.BytesIO(b'{"id": "s", "text": "from stdin"}\n'))
    monkeypatch.setattr(sys, "stdin", fake)
    assert _docs("-") == [("s", "from stdin")]


@pytest.mark.parametrize(
    "line, msg",
    [
        ("{not json", "malformed JSON"),
        ('{"id": 3}', "missing text field 'text'"),
        ('{"id": 3, "text": 5}', "must be a string, got int"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path: Path, line: str, msg: str) -> None:
    p = _write_jsonl(tmp_path / "bad.jsonl", [json.dumps(ROWS[0]), line])
    with pytest.raises(InputError, match=msg) as info:
        _docs(p)
    assert f"{p}:2" in str(info.value)
    stats = ReadStats()
    assert _docs(p, on_error="skip", stats=stats) == [(1, "alpha beta")]
    assert stats.skipped == 1 and stats.documents == 1


def test_invalid_utf8_names_line(tmp_path: Path) -> None:
    p = tmp_path / "u.jsonl"
    p.write_bytes(b'{"text": "ok"}\n{"text": "\xff\xfe"}\n')
    with pytest.raises(InputError, match=r"u.jsonl:2: invalid UTF-8"):
        _docs(str(p))


def test_formats_and_missing(tmp_path: Path) -> None:
    assert detect_format("a.ndjson.gz") == "jsonl"
    with pytest.raises(FormatError, match="--format"):
        detect_format("data.xml")
    with pytest.raises(FormatError, match="unknown format"):
        detect_format("a.jsonl", "xml")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        iter_records(str(tmp_path / "nope.jsonl"))


def test_time_field(tmp_path: Path) -> None:
    p = _write_jsonl(
        tmp_path / "t.jsonl",
        ['{"text": "a", "t": "2026-11-21T00:00:00Z"}', '{"text": "b", "t": "yesterday"}'],
    )
    with pytest.raises(InputError, match=r"t.jsonl:2: cannot read timestamp 'yesterday'"):
        list(iter_documents(iter_records(p), time_field="t"))
    assert parse_timestamp("2026-11-21T01:00:00+01:00") == parse_timestamp("2026-11-21")
    assert parse_window("2w") == 14 * 86400
    with pytest.raises(ValueError, match="bad window"):
        parse_window("7 days")


@pytest.mark.parametrize("name", ["o.jsonl", "o.jsonl.gz", "o.parquet"])
def test_writers_round_trip(tmp_path: Path, name: str) -> None:
    out = str(tmp_path / name)
    rows = [{"id": 1, "dup": None}, {"id": 2, "dup": "a"}]
    with open_writer(out, type_hints={"dup": pa.string()}) as w:
        for r in rows:
            w.write(r)
    got = [r for _, r in iter_records(out)]
    assert got == rows
    assert os.listdir(tmp_path) == [name]


def test_parquet_null_first_batch_uses_hint(tmp_path: Path) -> None:
    out = str(tmp_path / "o.parquet")
    with open_writer(out, type_hints={"dup": pa.int64()}) as w:
        w.batch_rows = 2
        for i in range(5):
            w.write({"id": i, "dup": None if i < 2 else i})
    assert pq.read_table(out).column("dup").to_pylist() == [None, None, 2, 3, 4]


def test_parquet_list_of_nulls_is_written_as_text(tmp_path: Path) -> None:
    """A column whose lists hold only nulls has no usable Arrow type (pyarrow fails reading
    it back from the spool): it is written as JSON text with a note; mixed lists keep theirs."""
    out = str(tmp_path / "o.parquet")
    with open_writer(out) as w:
        w.write({"id": 1, "extra": [None, None], "mixed": [1, None]})
    table = pq.read_table(out)
    assert table.column("extra").to_pylist() == ["[null, null]"]
    assert table.column("mixed").to_pylist() == [[1, None]]
    assert any("extra" in note for note in w.notes)


def test_parquet_null_field_inside_a_list_or_struct_is_written_as_text(tmp_path: Path) -> None:
    """The same for a null-typed field of a struct, inside a list or not (found by the reader
    fuzz test: ``[null, {"": null}]`` failed reading back with "Struct child array #0 has
    length smaller than expected"); a struct with a typed field keeps its type."""
    out = str(tmp_path / "o.parquet")
    with open_writer(out) as w:
        w.write({"id": 1, "a": [None, {"": None}], "b": {"x": None}, "c": {"x": 1}})
    table = pq.read_table(out)
    assert table.column("a").to_pylist() == ['[null, {"": null}]']
    assert table.column("b").to_pylist() == ['{"x": null}']
    assert table.column("c").to_pylist() == [{"x": 1}]


def test_interrupted_write_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    with pytest.raises(RuntimeError), open_writer(str(out)) as w:
        w.write({"id": 1})
        raise RuntimeError("disk on fire")
    assert os.listdir(tmp_path) == []
    out.write_text("old\n")
    with pytest.raises(RuntimeError), open_writer(str(out)) as w:
        w.write({"id": 1})
        raise RuntimeError("again")
    assert out.read_text() == "old\n"  # the previous file is untouched


def test_compact_iso_dates_are_dates_not_epoch_seconds() -> None:
    from neardup.io import parse_timestamp

    day = 86400.0
    assert parse_timestamp("20261125") - parse_timestamp("20261101") == 24 * day
    assert parse_timestamp("20261102") == parse_timestamp("2026-11-02")
    assert parse_timestamp("20261102093000") == parse_timestamp("2026-11-02T09:30:00Z")
    assert parse_timestamp(20261102, "auto") == parse_timestamp("2026-11-02")
    assert parse_timestamp(20261102, "s") == 20261102.0  # an explicit unit is respected
    assert parse_timestamp("1700000000", "auto") == 1700000000.0  # 10 digits: epoch seconds
    with pytest.raises(ValueError, match=r"compact date \(YYYYMMDD\) but is not a valid one"):
        parse_timestamp("20261399")


def test_writers_keep_ids_apart_and_say_what_they_replaced(tmp_path: Path) -> None:
    """CSV writes a lone surrogate as U+FFFD, as its note says (it wrote "?"); Parquet writes
    an id column of ints and floats as strings, noted (1 and 1.0 were one double, 1.0)."""
    notes: list[str] = []
    with open_writer(str(tmp_path / "o.csv"), notes=notes) as w:
        w.write({"id": 1, "text": "a\ud800b"})
    assert (tmp_path / "o.csv").read_text("utf-8") == "id,text\n1,a\ufffdb\n"
    assert notes == ["column 'text' has lone surrogates: written as U+FFFD"]
    notes = []
    out = tmp_path / "o.parquet"
    with open_writer(str(out), notes=notes, id_columns=("id",)) as w:
        for i, v in enumerate([1, 1.0, 2]):
            w.write({"id": v, "n": i, "x": float(i) if i else 0})
    got = pq.read_table(out).to_pylist()
    assert [r["id"] for r in got] == ["1", "1.0", "2"]
    assert [r["x"] for r in got] == [0.0, 1.0, 2.0]  # not an id: one double column
    assert notes == ["column 'id' mixes double and int64 values: written as strings"]
