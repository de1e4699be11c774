"""Output options a user expects (issue 26): CSV output, the summary as JSON, a cluster table."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

from click.testing import CliRunner

from neardup.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"
OPTS = ["--time-field", "date", "--window", "7d"]


def _dedup(*args: str) -> None:
    r = CliRunner().invoke(cli, ["dedup", str(SAMPLE), *OPTS, *args])
    assert r.exit_code == 0, r.output


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_csv_output_equals_jsonl(tmp_path: Path) -> None:
    _dedup("--out", str(tmp_path / "o.jsonl"))
    _dedup("--out", str(tmp_path / "o.csv"))
    _dedup("--out", str(tmp_path / "o.csv.gz"))
    want = _jsonl(tmp_path / "o.jsonl")
    for text in (
        (tmp_path / "o.csv").read_text(),
        gzip.decompress((tmp_path / "o.csv.gz").read_bytes()).decode(),
    ):
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == len(want) == 30
        for got, w in zip(rows, want, strict=True):
            assert list(got) == list(w)  # every column, in the input's order, ours last
            assert got["text"] == w["text"]  # commas, quotes and newlines survive
            assert got["status"] == w["status"]
            assert got["duplicate_of"] == (
                "" if w["duplicate_of"] is None else str(w["duplicate_of"])
            )
            assert got["cluster_id"] == str(w["cluster_id"])


def test_summary_json_and_cluster_table(tmp_path: Path) -> None:
    out, summary, table = tmp_path / "o.jsonl", tmp_path / "s.json", tmp_path / "c.csv"
    _dedup("--out", str(out), "--summary", str(summary), "--clusters", str(table))
    rows = _jsonl(out)
    s = json.loads(summary.read_text())
    assert s["documents"] == 30 and s["duplicate"] + s["exact_duplicate"] == sum(
        r["status"] in ("duplicate", "exact_duplicate") for r in rows
    )
    clusters = list(csv.DictReader(io.StringIO(table.read_text())))
    by_cluster: dict[int, list[object]] = {}
    for r in rows:
        by_cluster.setdefault(int(r["cluster_id"]), []).append(r["id"])  # type: ignore[arg-type]
    multi = {c: ids for c, ids in by_cluster.items() if len(ids) > 1}
    assert len(clusters) == len(multi) == s["clusters_with_duplicates"]
    for c in clusters:
        members = json.loads(c["members"])
        assert members == multi[int(c["cluster_id"])] and members[0] == c["kept_id"]
        assert int(c["size"]) == len(members)


def test_unwritable_outputs_fail_before_the_state_moves(tmp_path: Path) -> None:
    state, out = tmp_path / "state", tmp_path / "o.jsonl"
    _dedup("--out", str(out), "--state", str(state))
    current = (state / "CURRENT").read_text()
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for extra in (
        ["--report", str(blocker)],
        ["--summary", str(tmp_path / "missing-dir" / "s.json")],
        ["--clusters", str(tmp_path)],
    ):
        r = CliRunner().invoke(
            cli, ["dedup", str(SAMPLE), *OPTS, "--out", str(out), "--state", str(state), *extra]
        )
        assert r.exit_code == 2, (extra, r.output)
        assert (state / "CURRENT").read_text() == current  # the state did not advance


def test_an_output_that_is_the_input_names_the_option_that_gave_it(tmp_path: Path) -> None:
    """Issue 38: "--out ... is the input" was said for a path given with --clusters or
    --pairs (and --strip of overlap) too; the message names the option given."""
    src = tmp_path / "in.jsonl"
    src.write_bytes(SAMPLE.read_bytes())
    out = str(tmp_path / "o.jsonl")
    for command, option in (
        (["dedup", "--out", out], "--clusters"),
        (["dedup", "--out", out], "--pairs"),
        (["overlap", "--out", out], "--strip"),
    ):
        r = CliRunner().invoke(cli, [command[0], str(src), *command[1:], option, str(src)])
        assert r.exit_code == 2, (option, r.output)
        assert f"{option} {str(src)!r} is the input" in r.output, r.output
        assert "--out" not in r.output.split("Error:")[-1], r.output
