"""The CLI on ``memory://`` and ``file://`` URLs (in-process: the in-memory store is this
process's) and the commands that refuse URLs with a usage error."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import fsspec
from click.testing import CliRunner

from neardup.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"


def _invoke(args: list[str]) -> Any:
    return CliRunner().invoke(cli, args)


def test_memory_and_file_urls_equal_local(tmp_path: Path) -> None:
    mem = f"memory://cli-{uuid.uuid4().hex}"
    fs = fsspec.filesystem("memory")
    fs.pipe_file(f"{mem}/in.jsonl", SAMPLE.read_bytes())
    r = _invoke(["dedup", str(SAMPLE), "--out", str(tmp_path / "local.csv")])
    assert r.exit_code == 0, r.output
    r = _invoke(["dedup", f"{mem}/in.jsonl", "--out", f"{mem}/out.csv", "--state", f"{mem}/st"])
    assert r.exit_code == 0, r.output
    r = _invoke(["dedup", f"file://{SAMPLE}", "--out", f"file://{tmp_path}/file.csv"])
    assert r.exit_code == 0, r.output
    local = (tmp_path / "local.csv").read_bytes()
    assert fs.cat_file(f"{mem}/out.csv") == local == (tmp_path / "file.csv").read_bytes()
    assert fs.cat_file(f"{mem}/st/CURRENT") == b"v-1\n"


def test_out_equal_to_a_file_url_input_is_refused(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(SAMPLE.read_bytes())
    r = _invoke(["dedup", f"file://{tmp_path}/in.jsonl", "--out", str(tmp_path / "in.jsonl")])
    assert r.exit_code == 2 and "it would be overwritten" in r.output
    assert (tmp_path / "in.jsonl").read_bytes() == SAMPLE.read_bytes()


def test_index_directories_are_local_only() -> None:
    for args in (["build", "memory://x/idx", str(SAMPLE)], ["query", "memory://x/idx", "q.txt"]):
        r = _invoke(["index", *args])
        assert r.exit_code == 2, r.output
        assert (
            "an index is a local folder (memory-mapped, with a writer lock), not a URL" in r.output
        )


def test_idf_and_index_with_url_patterns_equal_local(tmp_path: Path) -> None:
    mem = f"memory://cli-{uuid.uuid4().hex}"
    fs = fsspec.filesystem("memory")
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    for i, chunk in enumerate((lines[:12], lines[12:])):
        fs.pipe_file(f"{mem}/in/part-{i}.jsonl", b"".join(chunk))
        (tmp_path / f"part-{i}.jsonl").write_bytes(b"".join(chunk))
    local = [str(tmp_path / f"part-{i}.jsonl") for i in range(2)]
    pattern = f"{mem}/in/part-*.jsonl"
    for args in (
        ["idf", "fit", *local, "--out", str(tmp_path / "idf.tsv")],
        ["idf", "fit", pattern, "--out", f"{mem}/idf.tsv"],
        ["dedup", *local, "--out", str(tmp_path / "o.jsonl"), "--idf", str(tmp_path / "idf.tsv")],
        ["dedup", pattern, "--out", f"{mem}/o.jsonl", "--idf", f"{mem}/idf.tsv"],
        ["index", "build", str(tmp_path / "i1"), *local],
        ["index", "build", str(tmp_path / "i2"), pattern],
    ):
        r = _invoke(args)
        assert r.exit_code == 0, (args, r.output)
    assert fs.cat_file(f"{mem}/idf.tsv") == (tmp_path / "idf.tsv").read_bytes()
    assert fs.cat_file(f"{mem}/o.jsonl") == (tmp_path / "o.jsonl").read_bytes()
    queries = [_invoke(["index", "query", str(tmp_path / i), str(SAMPLE)]) for i in ("i1", "i2")]
    assert queries[0].exit_code == 0 and queries[0].output == queries[1].output
