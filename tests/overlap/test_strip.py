"""``neardup overlap --strip``: cleaned texts out (the copy side of each passage pair removed,
merged), and the strip rule against a brute-force character mask."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from neardup.cli import cli
from neardup.overlap.strip import merged_spans, strip_spans

from tests.overlap.test_overlap_cli import _corpus


def _invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _cut(text: str, spans: list[list[int]]) -> str:
    keep = [True] * len(text)
    for a, b in spans:
        keep[a:b] = [False] * (b - a)
    return "".join(c for c, k in zip(text, keep, strict=True) if k)


def test_strip_writes_every_document_less_what_out_reports(tmp_path: Path) -> None:
    path, docs = _corpus(tmp_path)
    out, clean = tmp_path / "out.jsonl", tmp_path / "clean.jsonl"
    res = _invoke(["overlap", str(path), "--out", str(out), "--strip", str(clean)])
    assert res.exit_code == 0, res.output
    rows = _jsonl(out)
    assert rows  # b copies a passage of a
    cleaned = _jsonl(clean)
    assert [r["id"] for r in cleaned] == list(docs)  # every document, in input order
    for r in cleaned:
        spans = [p["span"] for p in rows if p["id"] == r["id"]]
        assert r["text"] == _cut(docs[r["id"]], spans)
        assert r["stripped_chars"] == len(docs[r["id"]]) - len(r["text"])
        assert r["date"]  # the other fields as read
    assert cleaned[1]["stripped_chars"] >= 490 and cleaned[0]["stripped_chars"] == 0
    assert "strip: " in res.stderr and "characters removed" in res.stderr


def test_strip_min_length_leaves_shorter_stretches(tmp_path: Path) -> None:
    path, docs = _corpus(tmp_path)
    clean = tmp_path / "clean.parquet"
    args = ["overlap", str(path), "--out", str(tmp_path / "o.jsonl"), "--strip", str(clean)]
    assert _invoke([*args, "--strip-min-length", "100000"]).exit_code == 0
    table = pq.read_table(clean)
    assert table.column("text").to_pylist() == list(docs.values())
    assert set(table.column("stripped_chars").to_pylist()) == {0}


def test_strip_with_time_field_cuts_the_later_document(tmp_path: Path) -> None:
    path, _ = _corpus(tmp_path)  # dates run backwards: a is the later one
    clean = tmp_path / "clean.jsonl"
    args = ["overlap", str(path), "--out", str(tmp_path / "o.jsonl"), "--strip", str(clean)]
    assert _invoke([*args, "--time-field", "date"]).exit_code == 0
    got = {r["id"]: r["stripped_chars"] for r in _jsonl(clean)}
    assert got["a"] >= 490 and got["b"] == 0


def test_strip_against_a_reference(tmp_path: Path) -> None:
    path, docs = _corpus(tmp_path)
    ref = tmp_path / "ref.jsonl"
    ref.write_text(json.dumps({"id": "r", "text": docs["a"]}) + "\n", "utf-8")
    clean = tmp_path / "clean.jsonl"
    args = ["overlap", str(path), "--against", str(ref), "--out", str(tmp_path / "o.jsonl")]
    assert _invoke([*args, "--strip", str(clean)]).exit_code == 0
    got = {r["id"]: r["stripped_chars"] for r in _jsonl(clean)}
    assert (
        got["a"] >= len(docs["a"]) - 1 and got["b"] >= 490
    )  # (spans end at a word) and got["c"] == 0


def test_strip_usage_errors(tmp_path: Path) -> None:
    path, _ = _corpus(tmp_path)
    out = str(tmp_path / "o.jsonl")
    same = _invoke(["overlap", str(path), "--out", out, "--strip", out])
    assert same.exit_code == 2 and "--strip and --out name the same file" in same.output
    onto_input = _invoke(["overlap", str(path), "--out", out, "--strip", str(path)])
    assert onto_input.exit_code == 2
    spark = _invoke(["overlap", str(path), "--out", out, "--strip", "x.jsonl", "--engine", "spark"])
    assert spark.exit_code == 2 and "--strip works with --engine local" in spark.output


_spans = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=8)


@given(text=st.text(max_size=60), spans=_spans, min_length=st.integers(0, 12))
def test_strip_spans_equals_a_character_mask(
    text: str, spans: list[tuple[int, int]], min_length: int
) -> None:
    spans = [(min(a, len(text)), min(b, len(text))) for a, b in spans]
    mask = [False] * len(text)
    for a, b in spans:
        mask[a:b] = [True] * max(0, b - a)
    # brute force: maximal runs of masked characters, those of min_length or more removed
    runs, i = [], 0
    while i < len(text):
        if mask[i]:
            j = i
            while j < len(text) and mask[j]:
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    assert merged_spans(spans) == runs
    gone = [r for r in runs if r[1] - r[0] >= min_length]
    want = _cut(text, [list(r) for r in gone])
    assert strip_spans(text, spans, min_length) == (want, len(text) - len(want))


def test_strip_reads_stdin_once_and_writes_it_cleaned(tmp_path: Path) -> None:
    path, docs = _corpus(tmp_path)
    clean = tmp_path / "clean.jsonl"
    res = CliRunner().invoke(
        cli,
        ["overlap", "-", "--out", str(tmp_path / "o.jsonl"), "--strip", str(clean)],
        input=path.read_text("utf-8"),
    )
    assert res.exit_code == 0, res.output
    got = {r["id"]: r["stripped_chars"] for r in _jsonl(clean)}
    assert list(got) == list(docs) and got["b"] >= 490 and got["a"] == 0


def test_strip_cuts_templates_too_counted_apart(tmp_path: Path) -> None:
    # datelines, bylines and signatures (set aside by default, flagged with --templates keep)
    # are cut with the copies; --strip-copies-only leaves them, as before
    from tests.overlap_texts import templated

    docs = templated(n=40)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs))
    got = {}
    for flags in ([], ["--templates", "keep"], ["--strip-copies-only"]):
        out, clean = tmp_path / "out.jsonl", tmp_path / f"clean{len(got)}.jsonl"
        args = ["overlap", str(path), "--out", str(out), "--strip", str(clean), *flags]
        res = _invoke(args)
        assert res.exit_code == 0, res.output
        got[" ".join(flags)] = (_jsonl(clean), _jsonl(out), res.stderr)
    cut, rows, err = got[""]
    assert sum(r["stripped_template_chars"] for r in cut) > 1000
    assert "of them templates" in err
    # the texts less their copies and their templates: those --templates keep flags
    flagged = got["--templates keep"][1]
    for (i, text), r in zip(docs, cut, strict=True):
        spans = [x["span"] for x in flagged if x["id"] == i]
        assert r["text"] == _cut(text, spans)
        copies = [x["span"] for x in flagged if x["id"] == i and not x["template"]]
        assert r["stripped_chars"] - r["stripped_template_chars"] == len(text) - len(
            _cut(text, copies)
        )
    assert [r["text"] for r in got["--templates keep"][0]] == [r["text"] for r in cut]
    only = got["--strip-copies-only"][0]
    assert all("stripped_template_chars" not in r for r in only)
    assert sum(r["stripped_chars"] for r in only) < sum(r["stripped_chars"] for r in cut)
    for (i, text), r in zip(docs, only, strict=True):
        assert r["text"] == _cut(text, [x["span"] for x in rows if x["id"] == i])
