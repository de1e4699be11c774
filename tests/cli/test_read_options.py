"""``neardup dedup`` and ``neardup overlap`` read their documents with one set of options
(:func:`neardup.cli._common.read_options`): the same names, order and help, and one
``ReadOptions`` handed to each command."""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.testing import CliRunner

from neardup.cli import cli
from neardup.cli.dedup import dedup_command
from neardup.cli.overlap import overlap_command

READ = ["inputs", "fmt", "text_field", "id_field", "on_error", "out", "time_field", "epoch_unit"]


def _read_params(command: click.Command) -> list[click.Parameter]:
    return [p for p in command.params if p.name in READ]


def test_both_commands_declare_the_read_options_alike() -> None:
    dedup, overlap = _read_params(dedup_command), _read_params(overlap_command)
    assert [p.name for p in dedup] == [p.name for p in overlap] == READ
    for a, b in zip(dedup, overlap, strict=True):
        same = ("opts", "default", "required", "multiple", "nargs")
        assert [getattr(a, k) for k in same] == [getattr(b, k) for k in same], a.name
        if a.name != "time_field":  # its help says what time means to each command
            assert getattr(a, "help", None) == getattr(b, "help", None), a.name
    # the read options lead both --help listings, in that order
    assert [p.name for p in dedup_command.params[: len(READ)]] == READ
    assert [p.name for p in overlap_command.params[: len(READ)]] == READ


def test_read_options_reach_both_commands(tmp_path: Path) -> None:
    body = " ".join(f"word{i}" for i in range(60))  # long enough for a passage
    # rows out of time order: both commands must read "at" (newest kept; the earlier the source)
    rows = [{"key": "b", "body": body, "at": 2}, {"key": "a", "body": body, "at": 1}]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    common = ["--text-field", "body", "--id-field", "key", "--time-field", "at"]
    out = tmp_path / "dedup.jsonl"
    res = CliRunner().invoke(
        cli, ["dedup", str(src), "--out", str(out), *common, "--keep", "newest"]
    )
    assert res.exit_code == 0, res.output
    got = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    assert [(g["key"], g["duplicate_of"]) for g in got] == [("b", None), ("a", "b")]
    out = tmp_path / "overlap.jsonl"
    res = CliRunner().invoke(cli, ["overlap", str(src), "--out", str(out), *common])
    assert res.exit_code == 0, res.output
    got = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    assert got and {(g["id"], g["source_id"]) for g in got} == {("b", "a")}
