"""``neardup overlap --engine spark`` finds the local engine's passages, row for row (real Spark
local mode, synthetic texts: copies, rewrites, repeated passages, boilerplate above max_df,
time order)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup.cli import cli
from neardup.cli._overlap_write import row
from neardup.overlap import OverlapFinder
from neardup.spark.overlap import find_overlaps
from neardup.spark.reader import Fields

from tests.overlap_texts import (
    article_last,
    copy_chain,
    datelines,
    edited_copies,
    phrases,
    reports,
    synthetic,
)


def write_input(path: Path, n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    recs = [{"id": i, "text": t, "t": rng.randrange(6)} for i, t in synthetic(seed=seed, n=n)]
    recs[5]["id"] = None  # no id: the position names it, on both engines
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))
    return recs


def local_rows(recs: list[dict[str, Any]], timed: bool, **params: Any) -> list[dict[str, Any]]:
    ids = [r["id"] if r["id"] is not None else k for k, r in enumerate(recs)]
    times = [float(r["t"]) for r in recs] if timed else None
    found = OverlapFinder(**params).find([r["text"] for r in recs], ids, times)
    return [row(p, params.get("templates") == "keep") for p in found]  # the CLI's rows


def test_spark_passages_equal_the_local_finder(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    recs = write_input(src, 36, seed=21)
    # max_df=4: the boilerplate line (in every text) is skipped once 4 earlier texts hold it,
    # but still found by the first queries; time order: sources are the earlier timestamps
    # (ties in input order)
    # templates kept: the boilerplate line is a template, set aside by default
    params = {"max_df": 4, "min_score": 0.5, "templates": "keep"}
    want = local_rows(recs, True, **params)
    got = find_overlaps(spark, OverlapFinder(**params), (str(src),), fields=Fields(time="t"))
    assert got.rows == want
    assert got.documents == len(recs)
    assert len({r["id"] for r in want}) >= 10
    assert any(r["score"] < 1.0 for r in want)
    assert len(local_rows(recs, True, **{**params, "max_df": 100})) > len(want)  # max_df acts
    assert local_rows(recs, False, **params) != local_rows(recs, True, **params)
    # look-ups of every gram (query_window=1; the default looks up those winnowing with 2
    # keeps) find the boilerplate through grams only some texts post, near its ends: on both
    # engines, and this set tells the two apart
    every = find_overlaps(
        spark, OverlapFinder(**params, query_window=1), (str(src),), fields=Fields(time="t")
    )
    assert every.rows == local_rows(recs, True, **params, query_window=1) != want


def test_cli_engine_spark_writes_what_local_writes(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    (folder / "month=2").mkdir(parents=True)
    (folder / "month=10").mkdir()
    recs = write_input(folder / "month=2" / "part-0.jsonl", 20, seed=9)
    more = synthetic(seed=9, n=24)[20:]  # later texts, copying from the first part
    (folder / "month=10" / "part-0.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": t, "t": 0}) + "\n" for i, t in more)
    )
    assert recs
    outs = []
    for engine in ("local", "spark"):  # input order: month=2 before month=10 (natural order)
        out = tmp_path / f"{engine}.jsonl"
        args = ["overlap", str(folder), "--out", str(out), "--engine", engine, "--min-length", "8"]
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 0, r.output
        assert "with copied passages" in r.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert outs[0].count(b"\n") >= 20
    months = {json.loads(line)["month"] for line in outs[0].splitlines()}
    assert months == {2, 10}  # each row carries its document's partition column
    # --against: the month=10 texts checked against the month=2 part only (not indexed)
    against = ["--against", str(folder / "month=2"), "--time-field", "t"]
    outs = []
    for engine in ("local", "spark"):
        out = tmp_path / f"{engine}-against.jsonl"
        args = ["overlap", str(folder / "month=10"), "--out", str(out), "--engine", engine]
        r = CliRunner().invoke(cli, [*args, *against])
        assert r.exit_code == 0, r.output
        assert "against 20 reference documents" in r.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert {json.loads(line)["id"] for line in outs[0].splitlines()} <= {i for i, _ in more}
    # one row per passage, its original (sources=original); doc-20's sentence, repeated twice
    # in the query against one copy in the source, is not reported since aligner 9 (OVERLAP.md)
    assert outs[0].count(b"\n") >= 1
    saved = tmp_path / "ref"
    args = ["overlap", str(folder), "--out", str(tmp_path / "x.jsonl"), "--save-reference"]
    assert CliRunner().invoke(cli, [*args, str(saved)]).exit_code == 0
    bad = CliRunner().invoke(
        cli, ["overlap", str(folder), "--out", str(tmp_path / "x.jsonl"), "--engine", "spark",
              "--against", str(saved)],
    )  # fmt: skip
    assert bad.exit_code == 2 and "saved references" in bad.output


def test_spark_counts_documents_for_max_df_as_local(spark: Any, tmp_path: Path) -> None:
    """A text repeating a sentence 12 times (its grams posted 12 times, by one document) and
    its copy, with max_df 4: found on both engines (max_df counts documents), and a sentence in
    6 earlier documents is skipped as boilerplate on both (issue 40)."""
    sentence = "The committee met again on Tuesday to discuss the budget for the parks. "
    common = "Our readers may write to the editor at the usual postal address every week. "
    texts = [f"Filler number {i} about weather and sports. " + common for i in range(6)]
    texts += [sentence * 12, "Intro words here. " + sentence * 12 + "Outro. " + common]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    recs = [{"id": i, "text": t, "t": 0} for i, t in enumerate(texts)]
    want = local_rows(recs, False, max_df=4)
    got = find_overlaps(spark, OverlapFinder(max_df=4), (str(src),), fields=Fields())
    assert got.rows == want
    assert [(r["id"], r["source_id"]) for r in want if r["id"] == 7] == [(7, 6)]


def test_spark_sets_the_local_templates_aside(spark: Any, tmp_path: Path) -> None:
    # the template rule (datelines, bylines, signatures set aside; the viral story and the
    # planted copy reported), in input order and in time order, dropped and kept
    from tests.overlap_texts import templated

    docs = templated(n=80)
    src = tmp_path / "templated.jsonl"
    recs = [{"id": i, "text": t, "t": k % 7} for k, (i, t) in enumerate(docs)]
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    for timed in (False, True):
        fields = Fields(time="t") if timed else Fields()
        for mode in ("drop", "keep"):
            want = local_rows(recs, timed, templates=mode)
            got = find_overlaps(spark, OverlapFinder(templates=mode), (str(src),), fields=fields)
            assert got.rows == want
        local = OverlapFinder()
        local.find([r["text"] for r in recs], [r["id"] for r in recs],
                   [float(r["t"]) for r in recs] if timed else None)  # fmt: skip
        assert got.rows != local_rows(recs, timed)  # "keep" reports more
        dropped = find_overlaps(spark, OverlapFinder(), (str(src),), fields=fields)
        assert dropped.templates == local.templates_set_aside[0] > 50  # one per passage
        assert [t for _, t in dropped.template_examples] == [
            t for _, t in local.templates_set_aside[1]
        ]


def test_spark_trims_or_refuses_a_text_over_its_seed_budget_as_local(
    spark: Any, tmp_path: Path
) -> None:
    """Two words repeated, then a copy of it with a copied sentence: the copy's look-ups find
    more postings than max_seeds_per_gram allows. Both engines compare it without its grams
    of too many postings (the same rows: the sentence found, the same summary line naming
    it); with --budget refuse both refuse the same text with the same numbers, in one line,
    before aligning it; under the default budget both find the same passages."""
    rng = random.Random(4)
    text = " ".join(rng.choices(["ab", "cde"], k=2_000))
    sentence = " ".join(f"w{k}" for k in range(40))
    recs = [{"id": "a", "text": text}, {"id": "s", "text": sentence}]
    recs.append({"id": "b", "text": "Intro. " + text + " " + sentence})
    recs += [{"id": f"x{k}", "text": t} for k, t in synthetic(seed=3, n=4)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    lines, notes, trimmed = [], [], []
    for engine in ("local", "spark"):
        out = tmp_path / f"{engine}.jsonl"
        args = ["overlap", str(src), "--out", str(out), "--engine", engine]
        r = CliRunner().invoke(cli, [*args, "--max-seeds-per-gram", "1"])
        assert r.exit_code == 0, (engine, r.output)
        notes.append([x for x in r.output.splitlines() if "seed budget" in x])
        trimmed.append(out.read_text())
        out.unlink()
        r = CliRunner().invoke(cli, [*args, "--max-seeds-per-gram", "1", "--budget", "refuse"])
        assert r.exit_code == 1 and not out.exists(), (engine, r.output)
        lines.append(r.output.strip())
        assert CliRunner().invoke(cli, args).exit_code == 0
    assert notes[0] == notes[1] and len(notes[0]) == 1 and "(e.g. 'b';" in notes[0][0]
    assert trimmed[0] == trimmed[1] and '"source_id": "s"' in trimmed[0]
    assert '"source_id": "a"' not in trimmed[0]
    assert lines[0] == lines[1] and lines[0].startswith("neardup: error: text 'b': its ")
    assert (tmp_path / "local.jsonl").read_text() == (tmp_path / "spark.jsonl").read_text()
    assert '"source_id": "a"' in (tmp_path / "local.jsonl").read_text()


def test_spark_names_the_sources_the_local_finder_names(spark: Any, tmp_path: Path) -> None:
    # the article, its rewrite and copies of the rewrite, in input and in time order: the
    # same original, closest and every holder (bounded, counted) on both engines
    docs = copy_chain(copies=4)
    src = tmp_path / "chain.jsonl"
    recs = [{"id": i, "text": t, "t": [2, 1, 3, 4, 5, 6][k]} for k, (i, t) in enumerate(docs)]
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    seen = []
    for timed in (False, True):
        fields = Fields(time="t") if timed else Fields()
        for sources in ("original", "best", "all"):
            params = {"sources": sources, "max_sources": 3}
            want = local_rows(recs, timed, **params)
            got = find_overlaps(spark, OverlapFinder(**params), (str(src),), fields=fields)
            assert got.rows == want
            assert got.sources_cut == (3 if sources == "all" and not timed else got.sources_cut)
            seen.append(want)
    assert any(r["closest_id"] == "rewrite" for r in seen[0])  # the original named first
    assert len({json.dumps(w) for w in seen}) == 6  # every mode and order tells them apart


def test_spark_names_near_copies_and_parts_as_the_local_finder(spark: Any, tmp_path: Path) -> None:
    # the original last, a whole near copy, a sentence and a heavy rewrite of a part before it
    # (aligner 10): the same rows on both engines, in both modes
    recs = [{"id": i, "text": t} for i, t in article_last()]
    src = tmp_path / "last.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    for sources in ("original", "all"):
        want = local_rows(recs, False, sources=sources)
        got = find_overlaps(spark, OverlapFinder(sources=sources), (str(src),))
        assert got.rows == want
        named = {r["source_id"] for r in want if r["id"] == "orig"}
        assert named == (
            {"heavy", "sentence", "whole"} if sources == "all" else {"sentence", "whole"}
        )


def test_spark_names_edited_copies_as_the_local_finder(spark: Any, tmp_path: Path) -> None:
    # the original last after six copies each edited in its own way (aligner 13): the same
    # rows on both engines, each copy named
    recs = [{"id": i, "text": t} for i, t in edited_copies()]
    src = tmp_path / "edited.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    want = local_rows(recs, False)
    got = find_overlaps(spark, OverlapFinder(), (str(src),))
    assert got.rows == want
    assert {r["source_id"] for r in want if r["id"] == "orig"} == {r["id"] for r in recs[:-1]}


@pytest.mark.parametrize(("texts", "least"), [("datelines", 10), ("reports", 0), ("phrases", 0)])
def test_spark_sets_dateline_frames_aside_as_local(
    spark: Any, tmp_path: Path, texts: str, least: int
) -> None:
    # the frame rule (aligner 11): datelines whose city or reporter differs are templates on
    # both engines, the one copied story is reported; "reports": a report filled in with
    # other figures (aligner 12); "phrases": a common phrase of recurring pieces (aligner 14)
    made = {"datelines": datelines, "reports": reports, "phrases": phrases}
    recs = [{"id": f"d-{i}", "text": t} for i, t in made[texts]()]
    src = tmp_path / f"{texts}.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))
    for mode in ("drop", "keep"):
        want = local_rows(recs, False, templates=mode)
        got = find_overlaps(spark, OverlapFinder(templates=mode), (str(src),), fields=Fields())
        assert got.rows == want
    assert sum(r["template"] for r in want) > least
