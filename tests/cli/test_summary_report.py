"""Issue 38 (and 40): the summary names where the outputs went; with --state it counts a
cluster whose kept document came from an earlier run; cluster_sizes.png shows its smallest
bar and counts what the summary counts."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup.cli import cli
from neardup.dedup import Deduplicator

from tests.synthetic import english_text

BASE = "the city council approved a new budget for public schools on tuesday night after debate"


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def _run(*args: str) -> str:
    r = CliRunner().invoke(cli, ["dedup", *args])
    assert r.exit_code == 0, r.output
    return str(r.output)


def test_summary_names_out_and_report(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    src = _write(tmp_path / "in.jsonl", [{"id": "a", "text": BASE}, {"id": "b", "text": BASE}])
    out, report, summary = tmp_path / "o.jsonl", tmp_path / "rep", tmp_path / "s.json"
    text = _run(str(src), "--out", str(out), "--report", str(report), "--summary", str(summary))
    assert f"{out} (--out)" in text and f"{report / 'report.md'} (--report)" in text
    assert json.loads(summary.read_text())["outputs"]["--out"] == str(out)
    assert "written: stdout (--out)" in _run(str(src), "--out", "-")


def test_state_run_counts_the_cluster_of_an_earlier_kept_document(tmp_path: Path) -> None:
    """Issue 40: "clusters with duplicates: 0" was printed beside a duplicate."""
    st = str(tmp_path / "st")
    _run(
        str(_write(tmp_path / "1.jsonl", [{"id": "a", "text": BASE}])), "--out", "-", "--state", st
    )
    copy = BASE.upper()
    day2 = _write(tmp_path / "2.jsonl", [{"id": "b", "text": copy}, {"id": "c", "text": "x y"}])
    text = _run(str(day2), "--out", "-", "--state", st, "--summary", str(tmp_path / "s.json"))
    assert "exact duplicates: 1" in text
    assert "clusters with duplicates: 1  largest: [2]" in text
    assert json.loads((tmp_path / "s.json").read_text())["clusters"] == 2


def test_cluster_plot_shows_the_smallest_bar_and_the_summarys_count() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    from neardup.cli.report import cluster_figure

    matplotlib.use("Agg")
    rng = random.Random(1)
    a, b, c, d1, e, f = (english_text(rng, 80) for _ in range(6))
    texts = [a, a.upper(), a.title(), b, b.upper(), c, c.upper(), d1, d1.upper(), e, f]
    d = Deduplicator().feed(texts)  # one cluster of 3, three of 2 (copies), 2 alone
    ax = cluster_figure(d).axes[0]
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == [1, 3]  # the size with one cluster has a bar to see
    assert ax.get_ylim()[0] < 1
    assert ": 4 clusters with duplicates\n(2 documents alone" in ax.get_title()
