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
from neardup.overlap.strip import SNAP_CHARS, merged_spans, strip_spans, to_sentences

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
    # another rule's spans (templates) are cut as given
    assert strip_spans(text, [], min_length, extra=spans) == (want, len(text) - len(want))


_ENDS = ".!?;\u3002\uff01\uff1f\uff1b"  # . ! ? ; 。！？；
_WIDE = _ENDS[4:]  # a sentence ends there with no space after


def _full_stop_before(text: str, i: int) -> bool:
    """``text[:i]`` ends in a full stop (closing quotes after it allowed)."""
    body = text[:i].rstrip('"')
    return bool(body) and body[-1] in _ENDS


@given(
    text=st.text(alphabet=st.sampled_from(f'ab \n"{_ENDS}'), max_size=60),
    spans=_spans,
    min_length=st.integers(0, 12),
)
def test_copied_passages_are_cut_to_their_sentences(
    text: str, spans: list[tuple[int, int]], min_length: int
) -> None:
    """Against the mask of the stretches that go: every character of a passage in one goes,
    and the characters added on each side are at most SNAP_CHARS (closing quotes and the
    spaces after a cut sentence aside), hold no line break and reach a sentence boundary."""
    spans = [(min(a, len(text)), min(b, len(text))) for a, b in spans]
    runs = [r for r in merged_spans(spans) if r[1] - r[0] >= min_length]
    gone = [False] * len(text)
    for lo, hi in runs:
        a, b = to_sentences(text, lo, hi)
        assert a <= lo <= hi <= b and lo - a <= SNAP_CHARS
        assert "\n" not in text[a:lo] + text[hi:b]
        end = len(text[:b].rstrip(" \t"))  # the widened span less the spaces after it
        assert len(text[hi:end].rstrip('"')) <= SNAP_CHARS
        if a < lo:  # to a sentence start: the text's, or after a line break or a full stop
            assert a == 0 or text[a - 1] in "\n" + _WIDE or _full_stop_before(text, a - 1)
        if text[hi:end].strip():  # to a sentence end: a full stop, then a space or the end
            assert _full_stop_before(text, end)
            assert end == len(text) or text[end].isspace() or text[:end].rstrip('"')[-1] in _WIDE
        gone[a:b] = [True] * (b - a)
    want = "".join(c for c, g in zip(text, gone, strict=True) if not g)
    assert strip_spans(text, spans, min_length) == (want, sum(gone))


def test_strip_leaves_no_fragment_of_a_copied_sentence() -> None:
    """A passage found a word and a full stop short of the sentences copied: its sentences go
    whole ("Intro. The . Outro." was left), in English and Chinese; a boundary farther than
    SNAP_CHARS is not reached."""
    text = "Intro. The one two three four five six seven eight nine ten. Outro."
    lo = text.index("one")
    assert strip_spans(text, [(lo, text.index(".", lo))]) == ("Intro. Outro.", len(text) - 13)
    zh = "前言。他说这是一个很长的复制句子内容。结尾。"
    assert strip_spans(zh, [(zh.index("这"), zh.index("内"))]) == ("前言。结尾。", 16)
    long = "Intro. A sentence whose other words are far beyond reach copied here. Outro."
    lo = long.index("copied")
    assert strip_spans(long, [(lo, lo + 6)]) == (long[:lo] + " Outro.", 12)


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


def _templated_runs(tmp_path: Path, docs: list[tuple[str, str]], *runs: list[str]) -> list[Any]:
    """``neardup overlap --strip`` on ``docs`` with each set of flags: (cleaned rows, --out
    rows, stderr) per run."""
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs))
    got = []
    for n, flags in enumerate(runs):
        out, clean = tmp_path / f"out{n}.jsonl", tmp_path / f"clean{n}.jsonl"
        res = _invoke(["overlap", str(path), "--out", str(out), "--strip", str(clean), *flags])
        assert res.exit_code == 0, res.output
        got.append((_jsonl(clean), _jsonl(out), res.stderr))
    return got


def test_default_strip_cuts_the_planted_copy_and_no_template(tmp_path: Path) -> None:
    """--strip removes what --out reports: by default the report sets the bylines, datelines
    and signatures aside, so they stay in the texts; the planted copy goes. --strip-templates
    cuts both (issue 41: templates cut by default were most of the wrong cuts)."""
    from tests.overlap_texts import PLANTED, templated

    docs = templated()
    runs = ([], ["--strip-copies-only"], ["--strip-templates"], ["--templates", "keep"])
    (cut, rows, err), only, both, (_, flagged, _) = _templated_runs(tmp_path, docs, *runs)
    templates = {(x["id"], *x["span"]) for x in flagged if x["template"]}
    assert len({i for i, *_ in templates}) > len(docs) // 2  # the bylines are templates
    assert only[0] == cut  # --strip-copies-only names the default
    copy_id, planted = docs[PLANTED[1]][0], docs[PLANTED[0]][1].split("\n")[2]
    assert planted in docs[PLANTED[1]][1] and planted in cut[PLANTED[0]]["text"]  # the source
    for (i, text), r, t in zip(docs, cut, both[0], strict=True):
        assert "stripped_template_chars" not in r
        assert r["text"] == strip_spans(text, [x["span"] for x in rows if x["id"] == i])[0]
        if i == copy_id:  # the planted copy goes, either way
            assert planted not in r["text"] and planted not in t["text"]
        for _, a, b in (s for s in templates if s[0] == i):
            assert text[a:b] in r["text"] or any(  # kept, unless a copy reported overlaps it
                x["id"] == i and x["span"][0] < b and a < x["span"][1] for x in rows
            )
    assert sum(t["stripped_template_chars"] for t in both[0]) > 1000
    assert "(0 of them templates; those set aside kept, --strip-templates cuts them)" in err
    assert "of them templates)" in both[2] and "--strip-templates cuts" not in both[2]


def test_strip_templates_cuts_templates_too_counted_apart(tmp_path: Path) -> None:
    # datelines, bylines and signatures (set aside by default, flagged with --templates keep)
    # are cut with the copies with --strip-templates; --templates keep reports them, so its
    # --strip cuts them too: the same texts
    from tests.overlap_texts import templated

    docs = templated(n=40)
    runs = (["--strip-templates"], ["--templates", "keep"], [])
    (cut, _, err), keep, only = _templated_runs(tmp_path, docs, *runs)
    assert sum(r["stripped_template_chars"] for r in cut) > 1000
    assert "of them templates" in err
    # the texts less their copies and their templates: those --templates keep flags
    flagged = keep[1]
    for (i, text), r in zip(docs, cut, strict=True):
        copies = [tuple(x["span"]) for x in flagged if x["id"] == i and not x["template"]]
        templates = [tuple(x["span"]) for x in flagged if x["id"] == i and x["template"]]
        assert (r["text"], r["stripped_chars"]) == strip_spans(text, copies, extra=templates)
        assert r["stripped_chars"] - r["stripped_template_chars"] == strip_spans(text, copies)[1]
    assert keep[0] == cut
    assert all("stripped_template_chars" not in r for r in only[0])
    assert sum(r["stripped_chars"] for r in only[0]) < sum(r["stripped_chars"] for r in cut)
    for (i, text), r in zip(docs, only[0], strict=True):
        assert r["text"] == strip_spans(text, [x["span"] for x in only[1] if x["id"] == i])[0]
