"""The datatrove steps in a real ``LocalPipelineExecutor`` (JsonlReader -> neardup step ->
JsonlWriter) on a small JSONL folder, compared with the CLI on the same rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup.cli import cli
from neardup.integrations.tables import DEDUP_COLUMNS

from tests.overlap_texts import synthetic
from tests.synthetic import synthetic_corpus

pytest.importorskip("datatrove")  # the extra neardup[datatrove]

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter

from neardup.integrations.datatrove import NeardupDedup, NeardupStrip


def _folder(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (folder / "part-0.jsonl").write_text(text, "utf-8")
    return folder


def _pipeline(tmp_path: Path, folder: Path, step: Any, tasks: int = 1) -> list[dict[str, Any]]:
    out = tmp_path / "out"
    LocalPipelineExecutor(
        [JsonlReader(str(folder)), step, JsonlWriter(str(out), compression=None)],
        tasks=tasks,
        logging_dir=str(tmp_path / "logs"),
    ).run()
    return [json.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.open("rb")]


def _cli(tmp_path: Path, folder: Path, *args: str) -> list[dict[str, Any]]:
    out = tmp_path / "cli.jsonl"
    res = CliRunner().invoke(cli, [args[0], str(folder), "--out", str(out), *args[1:]])
    assert res.exit_code == 0, res.output
    return [json.loads(line) for line in out.open("rb")]


def _dedup_rows() -> list[dict[str, Any]]:
    return [{"id": d["id"], "text": d["text"]} for d in synthetic_corpus(120, seed=4)]


@pytest.mark.parametrize("drop", [True, False])
def test_dedup_step_equals_the_cli(tmp_path: Path, drop: bool) -> None:
    folder = _folder(tmp_path, _dedup_rows())
    got = _pipeline(tmp_path, folder, NeardupDedup(drop=drop, threshold=0.5))
    want = _cli(tmp_path, folder, "dedup", "--threshold", "0.5")
    assert any(r["duplicate_of"] is not None for r in want)
    if drop:
        assert [r["id"] for r in got] == [r["id"] for r in want if r["duplicate_of"] is None]
        return
    assert [r["id"] for r in got] == [r["id"] for r in want]
    for g, w in zip(got, want, strict=True):
        assert g["metadata"]["neardup"] == {n: w[n] for n in DEDUP_COLUMNS}


def test_strip_step_equals_the_cli(tmp_path: Path) -> None:
    rows = [{"id": i, "text": t} for i, t in synthetic(seed=11, n=16)]
    folder = _folder(tmp_path, rows)
    got = _pipeline(tmp_path, folder, NeardupStrip())
    clean = tmp_path / "clean.jsonl"
    _cli(tmp_path, folder, "overlap", "--strip", str(clean))
    want = [json.loads(line) for line in clean.open("rb")]
    assert sum(r["stripped_chars"] for r in want) > 0
    assert [(g["id"], g["text"]) for g in got] == [(w["id"], w["text"]) for w in want]
    assert [g["metadata"]["stripped_chars"] for g in got] == [w["stripped_chars"] for w in want]


@pytest.mark.parametrize(
    ("asked", "flags"),
    [
        ({}, []),
        ({"strip_templates": False}, ["--strip-copies-only"]),
        ({"strip_templates": True}, ["--strip-templates"]),
        ({"templates": "keep"}, ["--templates", "keep"]),
    ],
)
def test_strip_step_with_templates_equals_the_cli(
    tmp_path: Path, asked: dict[str, Any], flags: list[str]
) -> None:
    """The default and every setting on a collection with templates, as the CLI."""
    from tests.overlap_texts import templated

    folder = _folder(tmp_path, [{"id": i, "text": t} for i, t in templated(n=40)])
    got = _pipeline(tmp_path, folder, NeardupStrip(**asked))
    clean = tmp_path / "clean.jsonl"
    _cli(tmp_path, folder, "overlap", "--strip", str(clean), *flags)
    want = [json.loads(line) for line in clean.open("rb")]
    assert sum(r["stripped_chars"] for r in want) > 0
    assert [(g["id"], g["text"]) for g in got] == [(w["id"], w["text"]) for w in want]
    names = ("stripped_chars", "stripped_template_chars")
    assert [{n: g["metadata"][n] for n in names if n in g["metadata"]} for g in got] == [
        {n: w[n] for n in names if n in w} for w in want
    ]
    cut = "--strip-templates" in flags or "keep" in flags  # reported templates are cut too
    assert all(("stripped_template_chars" in w) == cut for w in want)
    if cut:
        assert sum(w["stripped_template_chars"] for w in want) > 0


def test_strip_step_against_a_reference_reporting_templates_equals_the_cli(
    tmp_path: Path,
) -> None:
    """A reference saved with --templates keep reports the templates, so the strip cuts them
    (counted apart) by default, in the step as in ``--against``."""
    from tests.overlap_texts import templated

    docs = [{"id": i, "text": t} for i, t in templated(n=40)]
    ref_file, ref = tmp_path / "ref.jsonl", tmp_path / "ref"
    ref_file.write_text("".join(json.dumps(r) + "\n" for r in docs[:30]), "utf-8")
    _cli(tmp_path, ref_file, "overlap", "--templates", "keep", "--save-reference", str(ref))
    folder = _folder(tmp_path, docs[30:])
    got = _pipeline(tmp_path, folder, NeardupStrip(reference=str(ref)))
    clean = tmp_path / "clean.jsonl"
    _cli(tmp_path, folder, "overlap", "--against", str(ref), "--strip", str(clean))
    want = [json.loads(line) for line in clean.open("rb")]
    assert sum(w["stripped_template_chars"] for w in want) > 0
    assert [(g["id"], g["text"]) for g in got] == [(w["id"], w["text"]) for w in want]
    names = ("stripped_chars", "stripped_template_chars")
    assert [[g["metadata"][n] for n in names] for g in got] == [[w[n] for n in names] for w in want]


def test_more_than_one_task_is_refused_naming_the_fix() -> None:
    with pytest.raises(ValueError, match="run it with tasks=1, or pass per_task=True"):
        list(NeardupDedup().run(iter(()), rank=0, world_size=2))
    assert list(NeardupDedup(per_task=True).run(iter(()), rank=0, world_size=2)) == []


def test_bad_options_fail_when_the_pipeline_is_built() -> None:
    with pytest.raises(ValueError, match="keep='longest' needs all rows at once"):
        NeardupDedup(keep="longest")
    with pytest.raises(ValueError, match="min_length must be an integer >= 0"):
        NeardupStrip(min_length=-1)
    with pytest.raises(ValueError, match="pass strip_templates=True"):
        NeardupStrip(templates=True)


def test_dedup_step_with_a_time_window_equals_the_cli(tmp_path: Path) -> None:
    rows = [{"id": d["id"], "text": d["text"], "ts": d["ts"]} for d in synthetic_corpus(120, 6)]
    folder = _folder(tmp_path, rows)
    step = NeardupDedup(drop=False, time="ts", window=2 * 86400.0)
    got = {g["id"]: g["metadata"]["neardup"] for g in _pipeline(tmp_path, folder, step)}
    want = {
        w["id"]: w for w in _cli(tmp_path, folder, "dedup", "--time-field", "ts", "--window", "2d")
    }
    # datatrove's reader leaves out documents with an empty text (the CLI marks them empty):
    # they never match, so every other decision is the same
    assert set(want) - set(got) == {w["id"] for w in want.values() if not w["text"]}
    assert any(w["duplicate_of"] for w in want.values())
    for key, g in got.items():
        assert (g["status"], g["duplicate_of"]) == (want[key]["status"], want[key]["duplicate_of"])
