"""``neardup overlap`` on real files: JSONL/CSV out, --time-field, --against, saved references."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

from click.testing import CliRunner, Result

from neardup.cli import cli


def _text(rng: random.Random, words: int) -> str:
    return " ".join("".join(rng.choices("abcdefghijklmnop", k=7)) for _ in range(words)) + "."


def _invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def _corpus(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    rng = random.Random(4)
    a = _text(rng, 120)
    head = _text(rng, 30) + " "
    b = head + a[200:700] + " " + _text(rng, 30)
    docs = {"a": a, "b": b, "c": _text(rng, 100), "d": "中文" + _text(rng, 50)}
    path = tmp_path / "docs.jsonl"
    rows = [
        {"id": k, "text": v, "date": f"2026-01-0{9 - i}"} for i, (k, v) in enumerate(docs.items())
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path, docs


def _rows(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def test_overlap_writes_one_row_per_passage_pair(tmp_path: Path) -> None:
    path, docs = _corpus(tmp_path)
    out = tmp_path / "out.jsonl"
    res = _invoke(["overlap", str(path), "--out", str(out)])
    assert res.exit_code == 0, res.output
    [row] = _rows(out)
    assert (row["id"], row["source_id"]) == ("b", "a")
    (s, e), (ss, se) = row["span"], row["source_span"]  # type: ignore[misc]
    assert docs["b"][s:e] == docs["a"][ss:se] and e - s >= 490 and row["score"] == 1.0
    assert "4 documents: 1 with copied passages, 1 passage pairs" in res.stderr


def test_time_field_makes_the_earlier_document_the_source(tmp_path: Path) -> None:
    path, _ = _corpus(tmp_path)  # dates run backwards: b is older than a
    out = tmp_path / "out.jsonl"
    assert _invoke(["overlap", str(path), "--out", str(out), "--time-field", "date"]).exit_code == 0
    assert [(r["id"], r["source_id"]) for r in _rows(out)] == [("a", "b")]


def test_csv_output(tmp_path: Path) -> None:
    path, _ = _corpus(tmp_path)
    out = tmp_path / "out.csv"
    assert _invoke(["overlap", str(path), "--out", str(out)]).exit_code == 0
    [row] = list(csv.DictReader(out.open(encoding="utf-8")))
    assert row["id"] == "b" and json.loads(row["span"])[1] > 0


def test_against_a_saved_reference(tmp_path: Path) -> None:
    _, docs = _corpus(tmp_path)
    ref_file = tmp_path / "ref.jsonl"
    ref_file.write_text(json.dumps({"id": "src", "text": docs["a"]}) + "\n", "utf-8")
    query = tmp_path / "q.jsonl"
    query.write_text(json.dumps({"id": "q", "text": "x " + docs["a"][100:600]}) + "\n", "utf-8")
    out1, out2, ref = tmp_path / "o1.jsonl", tmp_path / "o2.jsonl", tmp_path / "refdir"
    res = _invoke(["overlap", str(query), "--against", str(ref_file), "--save-reference",
                   str(ref), "--out", str(out1)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert [(r["id"], r["source_id"]) for r in _rows(out1)] == [("q", "src")]
    assert "against 1 reference documents" in res.stderr
    res = _invoke(["overlap", str(query), "--against", str(ref), "--out", str(out2)])
    assert res.exit_code == 0, res.output
    assert _rows(out2) == _rows(out1)
    # a reference built with other parameters is refused, naming both config ids
    res = _invoke(["overlap", str(query), "--against", str(ref), "--min-length", "5",
                   "--out", str(out2)])  # fmt: skip
    assert res.exit_code == 2 and "was built with config ov1-" in res.stderr
    assert "Traceback" not in res.output
    # so is one whose look-ups differ (every gram against the winnowed ones)
    res = _invoke(["overlap", str(query), "--against", str(ref), "--query-window", "1",
                   "--out", str(out2)])  # fmt: skip
    # the saved value as it runs (issue 38: it printed None where the docs say 2)
    assert res.exit_code == 2 and "'query_window': 2" in res.stderr
    assert "query_window: 2 -> 1" in res.stderr and "'query_window': None" not in res.stderr


def test_bad_input_is_one_line_with_exit_codes(tmp_path: Path) -> None:
    res = _invoke(["overlap", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and "does not exist" in res.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "fine text"}\n{"id": 2, "text": 3}\n', "utf-8")
    out = tmp_path / "o.jsonl"
    res = _invoke(["overlap", str(bad), "--out", str(out)])
    assert res.exit_code == 1 and "bad.jsonl" in res.stderr and not out.exists()
    res = _invoke(["overlap", str(bad), "--out", str(out), "--on-error", "skip"])
    assert res.exit_code == 0 and out.read_text() == ""
    res = _invoke(["overlap", str(bad), "--out", str(out), "--ngram", "0"])
    assert res.exit_code == 2 and "ngram" in res.stderr
    res = _invoke(["overlap", str(bad), "--out", str(out), "--query-window", "5"])
    assert res.exit_code == 2 and "query_window must be an integer in [1, window=4]" in res.stderr


def test_parquet_output(tmp_path: Path) -> None:
    pq = __import__("pytest").importorskip("pyarrow.parquet")
    path, _ = _corpus(tmp_path)
    out = tmp_path / "out.parquet"
    assert _invoke(["overlap", str(path), "--out", str(out)]).exit_code == 0
    [row] = pq.read_table(out).to_pylist()
    assert (row["id"], row["source_id"]) == ("b", "a") and len(row["span"]) == 2


def test_jsonl_lines_are_the_writers_rows_byte_for_byte(tmp_path: Path) -> None:
    # the JSONL fast path formats the lines itself: same bytes as json.dumps of each row,
    # whatever the ids (non-ASCII, numbers, quotes, a lone surrogate, None)
    from neardup.cli._overlap_write import row
    from neardup.io.writers import dumps_utf8
    from neardup.overlap import OverlapFinder

    rng = random.Random(7)
    base = [_text(rng, 80) for _ in range(3)]
    ids: list[object] = ["é文", 17, 'q"uo\\te', "\ud800x", None, 2.5, "plain"]
    texts = [base[i % 3] + " " + _text(rng, 20) for i in range(len(ids))]
    path = tmp_path / "docs.jsonl"
    recs = [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    for sources, pairs in (("original", 4), ("all", 5)):
        out = tmp_path / f"out-{sources}.jsonl"
        got = _invoke(["overlap", str(path), "--out", str(out), "--sources", sources])
        assert got.exit_code == 0, got.output
        found = OverlapFinder(sources=sources).find(texts, ids)
        # 3 <- 0, 4 <- 1, 5 <- 2, 6 <- 0 (and 3, named with its closest source, with "all")
        assert len(found) == pairs
        assert out.read_bytes() == b"".join(dumps_utf8(row(p)) + b"\n" for p in found)
        for keep in ("keep", "drop"):  # the template field only with --templates keep
            out = tmp_path / f"out-{sources}-{keep}.jsonl"
            got = _invoke(["overlap", str(path), "--out", str(out), "--sources", sources,
                           "--templates", keep])  # fmt: skip
            assert got.exit_code == 0, got.output
            rows = [dumps_utf8(row(p, keep == "keep")) + b"\n" for p in found]
            assert out.read_bytes() == b"".join(rows)


def test_overlap_names_near_copies_and_parts_as_the_library(tmp_path: Path) -> None:
    # the original last (aligner 10): the CLI's rows are the library's, in both modes
    from neardup.cli._overlap_write import row
    from neardup.io.writers import dumps_utf8
    from neardup.overlap import OverlapFinder

    from tests.overlap_texts import article_last

    docs = article_last()
    path = tmp_path / "last.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs))
    for sources in ("original", "all"):
        out = tmp_path / f"out-{sources}.jsonl"
        got = _invoke(["overlap", str(path), "--out", str(out), "--sources", sources])
        assert got.exit_code == 0, got.output
        found = OverlapFinder(sources=sources).find([t for _, t in docs], [i for i, _ in docs])
        assert out.read_bytes() == b"".join(dumps_utf8(row(p)) + b"\n" for p in found)
        named = {p.source_id for p in found if p.id == "orig"}
        assert named == (
            {"heavy", "sentence", "whole"} if sources == "all" else {"sentence", "whole"}
        )


def test_overlap_names_edited_copies_as_the_library(tmp_path: Path) -> None:
    # the original last after six copies each edited in its own way (aligner 13): the CLI
    # names each of them, as the library does
    from neardup.cli._overlap_write import row
    from neardup.io.writers import dumps_utf8
    from neardup.overlap import OverlapFinder

    from tests.overlap_texts import edited_copies

    docs = edited_copies()
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs))
    out = tmp_path / "out.jsonl"
    got = _invoke(["overlap", str(path), "--out", str(out)])
    assert got.exit_code == 0, got.output
    found = OverlapFinder().find([t for _, t in docs], [i for i, _ in docs])
    assert out.read_bytes() == b"".join(dumps_utf8(row(p)) + b"\n" for p in found)
    assert {p.source_id for p in found if p.id == "orig"} == {i for i, _ in docs[:-1]}


def test_repeated_ids_are_warned_in_overlap_words(tmp_path: Path) -> None:
    """The warning names overlap's fields (id, source_id), not dedup's duplicate_of."""
    _, docs = _corpus(tmp_path)
    path = tmp_path / "same.jsonl"
    rows = [{"id": "x", "text": docs["a"]}, {"id": "x", "text": docs["b"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    res = _invoke(["overlap", str(path), "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 0, res.output
    assert "2 documents share their id with another (1 ids repeated), so a passage's id or " \
        "source_id is ambiguous for them" in res.stderr  # fmt: skip
    assert "duplicate_of" not in res.stderr
