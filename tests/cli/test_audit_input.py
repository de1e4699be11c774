"""Issue 12 (hostile input), items 2-5, 8-10: each test reproduces one finding with real files."""

from __future__ import annotations

import decimal
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

from neardup import Deduplicator, Fingerprinter
from neardup.cli import cli
from neardup.io import InputError, iter_documents, iter_records, parse_timestamp

A = "the quick brown fox jumps over the lazy dog near the river bank today"
B = "a completely different sentence about stock markets and bonds"


def _run(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def _jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return str(path)


def _rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _one_line_error(res: Result, code: int, *needles: str) -> None:
    assert res.exit_code == code, (res.exit_code, res.stderr)
    err = res.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, (n, err)


# ---------------------------------------------------------------- 2. timestamps
@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", float("nan"), float("inf"), 1e30, "1e30"])
def test_non_finite_and_out_of_range_timestamps_are_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match=r"not a finite number|out of range"):
        parse_timestamp(bad)
    with pytest.raises(ValueError, match=r"not a finite number|out of range"):
        parse_timestamp(bad, "auto")


def test_epoch_units() -> None:
    sec = 1_763_800_000.0
    assert parse_timestamp(sec * 1000, "ms") == parse_timestamp(sec * 1000, "auto") == sec
    assert parse_timestamp(int(sec * 1e6), "us") == parse_timestamp(int(sec * 1e6), "auto")
    assert parse_timestamp(str(int(sec)), "auto") == sec
    assert parse_timestamp(decimal.Decimal("1763800000.5")) == sec + 0.5
    with pytest.raises(ValueError, match="--epoch-unit ms"):
        parse_timestamp(sec * 1000, "s")  # year 55,000 as seconds: refused, with the fix
    assert parse_timestamp("2202-01-01T00:00:00Z") > 7e9  # a future date is a valid date


def test_bad_timestamp_row_fails_or_is_skipped(tmp_path: Path) -> None:
    t0 = 1_763_800_000
    src = _jsonl(
        tmp_path / "t.jsonl",
        [
            {"id": "a", "text": A, "t": t0},
            {"id": "b", "text": A, "t": "nan"},
            {"id": "c", "text": A, "t": t0 + 60},
        ],
    )
    res = _run("dedup", src, "--out", "-", "--time-field", "t", "--window", "1d")
    _one_line_error(res, 1, "t.jsonl:2", "'nan' is not a finite number")
    res = _run(
        "dedup", src, "--out", "-", "--time-field", "t", "--window", "1d", "--on-error", "skip"
    )
    assert res.exit_code == 0, res.stderr
    assert [r["id"] for r in _rows(res.stdout)] == ["a", "c"]
    assert "skipped: 1" in res.stderr


def test_epoch_milliseconds_detected_and_reported(tmp_path: Path) -> None:
    t0 = 1_763_800_000_000  # milliseconds
    rows = [{"id": "a", "text": A, "t": t0}, {"id": "b", "text": A, "t": t0 + 3 * 3600 * 1000}]
    src = _jsonl(tmp_path / "ms.jsonl", rows)
    res = _run("dedup", src, "--out", "-", "--time-field", "t", "--window", "1d")
    assert res.exit_code == 0, res.stderr
    assert [r["status"] for r in _rows(res.stdout)] == ["unique", "exact_duplicate"]
    assert "epoch timestamps (auto): 2 as ms" in res.stderr
    # read as seconds they are out of range: a clear row error, not a 1000x window
    res = _run("dedup", src, "--out", "-", "--time-field", "t", "--epoch-unit", "s")
    _one_line_error(res, 1, "ms.jsonl:1", "--epoch-unit ms")


# ---------------------------------------------------------------- 3. folders, nothing read
def test_folder_of_jsonl_parts_is_read_as_parts(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    _jsonl(d / "part-1.jsonl", [{"id": "p1", "text": A}])
    _jsonl(d / "part-0.jsonl", [{"id": "p0", "text": A}, {"id": "q0", "text": B}])
    (d / "_SUCCESS").write_text("")
    (d / ".part-0.jsonl.crc").write_text("x")
    prev = tmp_path / "prev.jsonl"
    prev.write_text('{"old": 1}\n')
    res = _run("dedup", str(d), "--out", str(prev))
    assert res.exit_code == 0, res.stderr
    out = _rows(prev.read_text())
    assert [(r["id"], r["status"]) for r in out] == [
        ("p0", "unique"),
        ("q0", "unique"),
        ("p1", "exact_duplicate"),
    ]


def test_folder_of_parquet_parts_and_format_flag(tmp_path: Path) -> None:
    d = tmp_path / "pq"
    d.mkdir()
    pq.write_table(pa.Table.from_pylist([{"id": 1, "text": A}]), d / "part-00000.snappy.parquet")
    pq.write_table(pa.Table.from_pylist([{"id": 2, "text": A}]), d / "part-00001.snappy.parquet")
    res = _run("dedup", str(d), "--out", "-")
    assert res.exit_code == 0, res.stderr
    assert [r["duplicate_of"] for r in _rows(res.stdout)] == [None, 1]
    plain = tmp_path / "plain"
    plain.mkdir()
    _jsonl(plain / "part-00000", [{"text": A}])  # no extension: needs --format
    _one_line_error(_run("dedup", str(plain), "--out", "-"), 2, "--format")
    res = _run("dedup", str(plain), "--out", "-", "--format", "jsonl")
    assert res.exit_code == 0 and len(_rows(res.stdout)) == 1


def test_empty_or_mixed_folder_is_a_usage_error_and_keeps_output(tmp_path: Path) -> None:
    prev = tmp_path / "prev.jsonl"
    prev.write_text('{"old": 1}\n')
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_line_error(_run("dedup", str(empty), "--out", str(prev)), 2, "holds no")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    _jsonl(mixed / "a.jsonl", [{"text": A}])
    (mixed / "b.txt").write_text(B)
    _one_line_error(_run("dedup", str(mixed), "--out", str(prev)), 2, "mixes formats")
    assert prev.read_text() == '{"old": 1}\n'


def test_every_row_failing_the_same_way_fails(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "x.jsonl", [{"id": i, "text": A, "date": 1} for i in range(30)])
    prev = tmp_path / "prev.jsonl"
    prev.write_text('{"old": 1}\n')
    for cmd in (
        ["dedup", src, "--out", str(prev), "--time-field", "dat", "--on-error", "skip"],
        ["fingerprint", src, "--out", str(prev), "--text-field", "txt", "--on-error", "skip"],
    ):
        res = _run(*cmd)
        _one_line_error(res, 1, "all 30 rows were skipped", "all of them: missing")
        assert prev.read_text() == '{"old": 1}\n'
        assert sorted(os.listdir(tmp_path)) == ["prev.jsonl", "x.jsonl"]


# ---------------------------------------------------------------- 4. --out is an input
def test_out_equal_to_input_is_refused(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": A}, {"id": "b", "text": A}])
    before = Path(src).read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(src)
    hard = tmp_path / "hard.jsonl"
    os.link(src, hard)
    os.chdir(tmp_path)
    for out in (src, "./in.jsonl", str(link), str(hard)):
        res = _run("dedup", src, "--out", out, "--drop-duplicates")
        _one_line_error(res, 2, "would be overwritten")
    _one_line_error(_run("fingerprint", str(link), "--out", src), 2, "would be overwritten")
    d = tmp_path / "parts"
    d.mkdir()
    _jsonl(d / "p.jsonl", [{"text": A}])
    _one_line_error(_run("dedup", str(d), "--out", str(d / "o.jsonl")), 2, "inside the input")
    assert Path(src).read_bytes() == before


# ---------------------------------------------------------------- 5. Parquet output schema
def test_parquet_output_schema_covers_every_row(tmp_path: Path) -> None:
    # distinct short texts: few candidate pairs, so the test stays fast
    rows: list[dict] = [{"id": i, "text": f"n{i} m{i * 7919} k{i * 104729}"} for i in range(9500)]
    for r in rows[9000:]:
        r["late"] = "here"
    src = _jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "o.parquet"
    res = _run("dedup", src, "--out", str(out), "--no-verify")
    assert res.exit_code == 0, res.stderr
    late = pq.read_table(out, columns=["late"]).column("late").to_pylist()
    assert late.count("here") == 500 and late[:9000] == [None] * 9000


def test_parquet_output_ids_changing_type_and_objects(tmp_path: Path) -> None:
    rows = [{"id": 1, "text": A}, {"id": "two", "text": A}, {"id": [3], "text": B}]
    src = _jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "o.parquet"
    res = _run("dedup", src, "--out", str(out))
    assert res.exit_code == 0, res.stderr
    got = pq.read_table(out).to_pylist()
    assert [r["id"] for r in got] == ["1", "two", "[3]"]
    assert got[1]["duplicate_of"] == "1"  # as its id column: strings (issue 40)
    assert "column 'id' mixes" in res.stderr
    rows = [{"id": {"src": "x", "n": i}, "text": t} for i, t in enumerate([A, A, B])]
    res = _run("dedup", _jsonl(tmp_path / "obj.jsonl", rows), "--out", str(out))
    assert res.exit_code == 0, res.stderr
    assert pq.read_table(out).to_pylist()[1]["duplicate_of"] == {"src": "x", "n": 0}


def test_decimal_columns_in_and_out(tmp_path: Path) -> None:
    price = pa.array([decimal.Decimal("1.50"), decimal.Decimal("2.25")], pa.decimal128(5, 2))
    src = tmp_path / "dec.parquet"
    pq.write_table(pa.table({"id": [1, 2], "text": [A, B], "price": price}), src)
    res = _run("dedup", str(src), "--out", "-")
    assert res.exit_code == 0, res.stderr
    assert [r["price"] for r in _rows(res.stdout)] == ["1.50", "2.25"]  # exact, as text
    out = tmp_path / "o.parquet"
    assert _run("dedup", str(src), "--out", str(out)).exit_code == 0
    price_out = pq.read_table(out).column("price")
    assert pa.types.is_decimal(price_out.type) and price_out.to_pylist() == price.to_pylist()
    res = _run("fingerprint", str(src), "--out", "-")
    assert res.exit_code == 0, res.stderr


# ---------------------------------------------------------------- 8. ambiguous ids
def test_duplicate_ids_warned_with_counts_and_null_ids_named_by_position(tmp_path: Path) -> None:
    rows = [
        {"id": None, "text": A},
        {"id": "x", "text": A},
        {"id": "x", "text": B},
        {"id": "y", "text": B},
    ]
    src = _jsonl(tmp_path / "ids.jsonl", rows)
    for extra in ([], ["--on-error", "skip"]):  # the fast and the generic writer
        res = _run("dedup", src, "--out", "-", *extra)
        assert res.exit_code == 0, res.stderr
        got = _rows(res.stdout)
        assert got[1]["duplicate_of"] == 0  # not null: the kept document's position
        assert got[0]["id"] is None  # the record itself is written as it came
        assert "warning: 2 documents share their id with another (1 ids repeated)" in res.stderr
        assert "1 documents have no 'id' (or null)" in res.stderr


# ---------------------------------------------------------------- 9. tracebacks
def test_lone_surrogates_are_written(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(
        '{"id": "\\ud800", "text": "' + A + ' \\udc00"}\n{"id": 2, "text": "' + A + ' \\udc00"}\n'
    )
    for cmd in (
        ["fingerprint", str(src), "--out", "-"],
        ["dedup", str(src), "--out", "-"],
        ["dedup", str(src), "--out", "-", "--on-error", "skip"],
    ):
        res = _run(*cmd)
        assert res.exit_code == 0, (cmd, res.stderr)
        got = _rows(res.stdout)
        assert got[0]["id"] == "\ud800" and got[0]["text"].endswith("\udc00")  # lossless
    res = _run("dedup", str(src), "--out", "-", "--report", str(tmp_path / "rep"))
    assert res.exit_code == 0, res.stderr
    assert _rows(res.stdout)[1]["duplicate_of"] == "\ud800"
    assert "\\ud800" in (tmp_path / "rep" / "report.md").read_text("utf-8")
    # Parquet and CSV have no form for it: the id is a bad row (issue 40: "\ud800" and
    # "\udfff" both became U+FFFD there), a text gets U+FFFD, noted
    for name in ("o.parquet", "o.csv"):
        out = tmp_path / name
        res = _run("dedup", str(src), "--out", str(out))
        assert res.exit_code == 1 and "s.jsonl:1: id '\\ud800' holds a lone surrogate" in res.stderr
        assert not out.exists()
        res = _run("dedup", str(src), "--out", str(out), "--on-error", "skip")
        assert res.exit_code == 0, res.stderr
        if name == "o.parquet":
            [row] = pq.read_table(out).to_pylist()
            assert (row["id"], row["text"]) == (2, A + " \ufffd")
            assert "strings with lone surrogates (invalid Unicode) got U+FFFD" in res.stderr
        else:  # U+FFFD as the note says (it was "?")
            assert out.read_text("utf-8").splitlines()[1].startswith(f"2,{A} \ufffd,")
            assert "column 'text' has lone surrogates: written as U+FFFD" in res.stderr


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--k", "64"], "64 is not in the range 0<=x<=63"),
        (["-j", "0"], "not a worker count"),
        (["-j", "-5"], "not a worker count"),
    ],
)
def test_bad_numbers_are_usage_errors(tmp_path: Path, args: list[str], needle: str) -> None:
    src = _jsonl(tmp_path / "in.jsonl", [{"text": A}])
    _one_line_error(_run("dedup", src, "--out", "-", *args), 2, needle)


def test_empty_batches_and_a_string_for_texts() -> None:
    assert Fingerprinter().fingerprint_many([]).shape == (0,)
    assert len(Deduplicator().feed([])) == 0
    with pytest.raises(TypeError, match="one string"):
        Fingerprinter().fingerprint_many("a string")  # type: ignore[arg-type]


def test_bad_config_files(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", [{"text": A}])
    cfg = tmp_path / "cfg.json"
    cfg.write_text('{"ngram_size": 3, "ngram_sise": 4}')
    _one_line_error(_run("fingerprint", src, "--out", "-", "--config", str(cfg)), 2, "ngram_sise")
    cfg.write_text("[1, 2]")
    _one_line_error(_run("dedup", src, "--out", "-", "--config", str(cfg)), 2, "JSON object")


# ---------------------------------------------------------------- 10. encodings
def test_utf8_bom_jsonl_and_csv(tmp_path: Path) -> None:
    j = tmp_path / "bom.jsonl"
    j.write_bytes(b"\xef\xbb\xbf" + json.dumps({"id": "a", "text": A}).encode() + b"\n")
    res = _run("dedup", str(j), "--out", "-")
    assert res.exit_code == 0 and _rows(res.stdout)[0]["id"] == "a", res.stderr
    c = tmp_path / "bom.csv"
    c.write_bytes(b"\xef\xbb\xbfid,text\nx1," + A.encode() + b"\nx2," + A.encode() + b"\n")
    res = _run("dedup", str(c), "--out", "-")
    assert res.exit_code == 0, res.stderr
    assert [(r["id"], r["duplicate_of"]) for r in _rows(res.stdout)] == [("x1", None), ("x2", "x1")]


def test_utf16_is_refused_with_the_fix(tmp_path: Path) -> None:
    p = tmp_path / "u16.jsonl"
    p.write_bytes(json.dumps({"text": A}).encode("utf-16"))
    for extra in ([], ["--on-error", "skip"]):
        _one_line_error(_run("dedup", str(p), "--out", "-", *extra), 1, "UTF-16", "iconv")


def test_csv_unterminated_quote_and_extra_column(tmp_path: Path) -> None:
    c = tmp_path / "q.csv"
    c.write_text(f'id,text\n1,"{A}\n2,{B}\n3,{B}\n')
    _one_line_error(_run("dedup", str(c), "--out", "-"), 1, "q.csv:2", "unterminated quote")
    c.write_text(f"id,text\n1,{A}\n2,{B},extra\n3,{A}\n")
    _one_line_error(_run("dedup", str(c), "--out", "-"), 1, "q.csv:3", "3 fields")
    res = _run("dedup", str(c), "--out", "-", "--on-error", "skip")
    assert res.exit_code == 0, res.stderr
    got = _rows(res.stdout)
    assert [r["id"] for r in got] == ["1", "3"] and all("null" not in r for r in got)


def test_on_error_skip_skips_invalid_utf8_lines(tmp_path: Path) -> None:
    j = tmp_path / "bad.jsonl"
    j.write_bytes(
        b'{"id": 1, "text": "ok one"}\n{"id": 2, "text": "\xff\xfe"}\n{"id": 3, "text": "ok"}\n'
    )
    c = tmp_path / "bad.csv"
    c.write_bytes(b"id,text\n1,ok one\n2,bad \xff\n3,ok\n")
    t = tmp_path / "txt"
    t.mkdir()
    (t / "a.txt").write_bytes(b"ok one")
    (t / "b.txt").write_bytes(b"bad \xff")
    for src in (j, c, t):
        _one_line_error(_run("dedup", str(src), "--out", "-"), 1, "invalid UTF-8")
        res = _run("dedup", str(src), "--out", "-", "--on-error", "skip")
        assert res.exit_code == 0 and "skipped: 1" in res.stderr, (src, res.stderr)
    stats_docs = list(iter_documents(iter_records(str(j)), on_error="skip"))
    assert [d.id for d in stats_docs] == [1, 3]
    with pytest.raises(InputError, match=r"bad\.jsonl:2: invalid UTF-8"):
        list(iter_documents(iter_records(str(j))))
