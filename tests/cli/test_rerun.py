"""Idempotent re-runs (issue 38): a day fed again on a ``--state`` is not added again and gets
the decisions it got the first time; a known id with another text is decided afresh."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from neardup.cli import cli
from neardup.dedup import Deduplicator

from tests.synthetic import synthetic_corpus


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def _run(src: Path, out: Path, state: Path, *extra: str) -> tuple[list[dict[str, Any]], str]:
    r = CliRunner().invoke(
        cli, ["dedup", str(src), "--out", str(out), "--state", str(state), *extra]
    )
    assert r.exit_code == 0, r.output
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()], r.output


def _docs(n: int, seed: int) -> list[dict[str, Any]]:
    rows = synthetic_corpus(n, seed=seed)
    for r in rows:
        r.pop("kind")
    return rows


def test_a_day_run_again_stays_and_keeps_its_decisions(tmp_path: Path) -> None:
    st = tmp_path / "st"
    day1, day2 = _docs(300, 1), [{**r, "id": f"x{r['id']}"} for r in _docs(200, 2)]
    _run(_write(tmp_path / "d1.jsonl", day1), tmp_path / "o1.jsonl", st)
    src2 = _write(tmp_path / "d2.jsonl", day2)
    first, _ = _run(src2, tmp_path / "o2.jsonl", st)
    again, summary = _run(src2, tmp_path / "o3.jsonl", st)
    assert again == first
    assert "state: 500 documents before this run, 500 after" in summary
    assert "already decided: 200 documents" in summary
    assert "already given to documents of earlier runs" not in summary
    assert Deduplicator.load(st).n_documents == 500
    assert sum(r["status"] != "unique" for r in first) > 20


def test_a_known_id_with_another_text_is_decided_afresh(tmp_path: Path) -> None:
    st = tmp_path / "st"
    day = _docs(50, 3)
    _run(_write(tmp_path / "d.jsonl", day), tmp_path / "o1.jsonl", st)
    changed = [{**day[0], "text": day[0]["text"] + " corrected"}, day[1]]
    rows, summary = _run(_write(tmp_path / "c.jsonl", changed), tmp_path / "o2.jsonl", st)
    assert "state: 50 documents before this run, 51 after" in summary
    assert "already decided: 1 documents" in summary
    assert "1 ids of this run were already given" in summary
    assert rows[0]["status"] == "duplicate" and rows[0]["duplicate_of"] == day[0]["id"]


def test_library_feed_and_add_are_idempotent() -> None:
    docs = _docs(120, 4)
    texts, ids = [d["text"] for d in docs], [d["id"] for d in docs]
    dd = Deduplicator()
    first = dd.feed(texts, ids=ids)
    again = dd.feed(texts, ids=ids)
    assert dd.n_documents == 120 and dd.describe()["already_decided"] == 120
    for name in ("position", "status", "duplicate_of", "cluster_id"):
        assert getattr(again, name).tolist() == getattr(first, name).tolist()
    d = dd.add(texts[5], id=ids[5])
    assert dd.n_documents == 120 and d.id == ids[5] and d.status == first.statuses[5]
