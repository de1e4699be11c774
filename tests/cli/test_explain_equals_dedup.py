"""`neardup explain A B` says what `neardup dedup` decides for B after A with the same options,
on pairs across edit rates, in English and Chinese, with and without the verifier (issue 26:
explain judged by Hamming k=3 and disagreed with dedup on about a third of the pairs)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import cli

from tests.synthetic import chinese_text, edit, english_text


def _pairs() -> list[tuple[str, str]]:
    rng = random.Random(5)
    out = []
    for rate in (0.0, 0.02, 0.05, 0.1, 0.2, 0.4):
        for make, size in ((english_text, 40), (english_text, 160), (chinese_text, 200)):
            a = make(rng, size)
            out.append((a, edit(a, rate, rng) if rate else a.upper()))
    out.append(("", "something"))
    return out


def _dedup(tmp: Path, a: str, b: str, options: list[str]) -> dict[str, object]:
    src, out = tmp / "pair.jsonl", tmp / "out.jsonl"
    src.write_text(json.dumps({"id": "a", "text": a}) + "\n" + json.dumps({"id": "b", "text": b}))
    r = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(out), *options])
    assert r.exit_code == 0, r.output
    row: dict[str, object] = json.loads(out.read_text().splitlines()[1])
    return row


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--no-verify"],
        ["--k", "10"],
        ["--threshold", "0.45"],
        ["--shingle-size", "2", "--threshold", "0.64"],
    ],
    ids=str,
)
def test_explain_agrees_with_dedup(tmp_path: Path, options: list[str]) -> None:
    statuses, hamming_k3 = [], []
    for a, b in _pairs():
        r = CliRunner().invoke(cli, ["explain", a, b, "--json", *options])
        assert r.exit_code == 0, r.output
        info = json.loads(r.stdout)
        row = _dedup(tmp_path, a, b, options)
        assert info["status"] == row["status"], (a[:40], b[:40])
        assert info["duplicate"] == (row["status"] in ("duplicate", "exact_duplicate"))
        statuses.append(info["status"])
        if info["distance"] is not None:
            hamming_k3.append((info["distance"] <= 3) != info["duplicate"])
    assert {"unique", "exact_duplicate"} <= set(statuses)  # the pairs cover both verdicts
    if not options:  # the old rule (Hamming <= 3) would disagree with dedup on some pairs
        assert any(hamming_k3)


def _edited_file(path: Path) -> Path:
    """Originals each followed by a 12 %- and a 5 %-edited copy (the 5 % one is refused by the
    cluster the 12 % one loosened: issue 38), an exact copy, a short pair and others."""
    rng = random.Random(38)
    rows: list[dict[str, object]] = []
    for k in range(4):
        a = english_text(rng, 120)
        rows += [{"id": f"o{k}", "text": a}, {"id": f"t{k}", "text": edit(a, 0.12, rng)}]
        rows.append({"id": f"f{k}", "text": edit(a, 0.05, rng)})
    rows += [{"id": "x", "text": rows[0]["text"]}, {"id": "c", "text": chinese_text(rng, 200)}]
    rows += [{"id": "s1", "text": "Storm hits the coast!"}]
    rows += [{"id": 7, "text": "storm hits the coast"}]  # an int id: explain takes "7"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    "options", [["--threshold", "0.4", "--cluster-similarity", "0.5"], []], ids=str
)
def test_explain_file_id_replays_every_decision(tmp_path: Path, options: list[str]) -> None:
    src, out = _edited_file(tmp_path / "docs.jsonl"), tmp_path / "out.jsonl"
    r = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(out), *options])
    assert r.exit_code == 0, r.output
    outcomes = []
    for row in (json.loads(line) for line in out.read_text().splitlines()):
        r = CliRunner().invoke(cli, ["explain", str(src), str(row["id"]), "--json", *options])
        assert r.exit_code == 0, r.output
        info = json.loads(r.stdout)
        for field in ("status", "duplicate_of", "distance", "similarity", "cluster_id"):
            assert info[field] == row[field], (row["id"], field)
        outcomes += [c["outcome"] for c in info["candidates"]]
        joined = [c for c in info["candidates"] if c["outcome"] in ("joined", "closest")]
        if row["status"] == "duplicate" and joined:  # the candidate it joined is duplicate_of
            assert joined[-1]["id"] == row["duplicate_of"]
            assert joined[-1]["similarity"] == row["similarity"]
        for c in info["candidates"]:
            if c["outcome"] == "refused":  # the member that set the floor is named
                assert c["refused_by"] is not None
                assert c["similarity"] + c["floor"] < 1 + 0.5
        if info["candidates"]:  # features against the candidate compared last
            assert info["compared_with"] == info["candidates"][-1]["id"] and info["shared"]
        if row["id"] == 7:  # the short pair: similarity 1.0 at the short-text threshold
            assert (info["similarity"], info["threshold"]) == (1.0, 0.8)
    if options:
        assert {"joined", "refused", "closest"} <= set(outcomes)
    r = CliRunner().invoke(cli, ["explain", str(src), "nope"])
    assert r.exit_code == 2 and "no document of" in r.output
    r = CliRunner().invoke(cli, ["explain", str(src), "f0", *options])
    assert r.exit_code == 0 and "f0: dedup wrote duplicate of o0" in r.output, r.output
    assert "only in o0: " in r.output and "only in f0: " in r.output
