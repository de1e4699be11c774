from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from neardup.cli import cli
from neardup.fingerprint import Fingerprinter


def _invoke(args: list[str]):
    return CliRunner().invoke(cli, args)


def test_fingerprint_adds_hex_and_config(sample: Path) -> None:
    res = _invoke(["fingerprint", str(sample), "--out", "-"])
    assert res.exit_code == 0, res.stderr
    rows = [json.loads(x) for x in res.stdout.splitlines()]
    fp = Fingerprinter()
    assert rows[0]["fingerprint"] == f"{fp.fingerprint(rows[0]['text']):016x}"
    assert {r["config_id"] for r in rows} == {fp.config_id}
    assert rows[8]["id"] == "n09" and rows[8]["fingerprint"] is None  # empty text
    res = _invoke(["fingerprint", str(sample), "--out", "-", "--bits", "128"])
    assert len(json.loads(res.stdout.splitlines()[0])["fingerprint"]) == 32


def test_index_build_add_query_info(tmp_path: Path, sample: Path) -> None:
    idx = str(tmp_path / "idx")
    assert _invoke(["index", "build", idx, str(sample)]).exit_code == 0
    res = _invoke(["index", "build", idx, str(sample)])
    assert res.exit_code == 2 and "--force" in res.stderr
    text = json.loads(sample.read_text("utf-8").splitlines()[2])["text"]
    res = _invoke(["index", "query", idx, text])
    hits = [json.loads(x) for x in res.stdout.splitlines()]
    assert {(h["id"], h["distance"]) for h in hits} >= {("n03", 0), ("n04", 0)}
    res = _invoke(["index", "add", idx, str(sample)])  # the same ids again: refused
    assert res.exit_code == 1 and "id 'n01' is already in the index" in res.stderr
    more = tmp_path / "more.jsonl"
    rows = [json.loads(x) for x in sample.read_text("utf-8").splitlines()]
    more.write_text("".join(json.dumps({**r, "id": "b" + r["id"]}) + "\n" for r in rows))
    assert _invoke(["index", "add", idx, str(more)]).exit_code == 0
    res = _invoke(["index", "add", idx, str(sample), str(more), "--on-error", "skip"])
    assert res.exit_code == 0 and "added 0 of" in res.stderr
    info = json.loads(_invoke(["index", "info", idx]).stdout)
    assert info["documents"] == 56 and info["config_id"] == Fingerprinter().config_id
    res = _invoke(["index", "query", idx, text])
    hits = {h["id"] for h in map(json.loads, res.stdout.splitlines())}
    assert {"n03", "n04", "bn03", "bn04"} <= hits
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"bits": 64, "seed": 7}))
    res = _invoke(["index", "query", idx, "x", "--config", str(cfg)])
    assert res.exit_code == 2 and "was built with fingerprinter config" in res.stderr
    res = _invoke(["index", "query", str(tmp_path / "nope"), "x"])
    assert res.exit_code == 2 and "does not exist" in res.stderr


def test_explain_and_idf(tmp_path: Path, sample: Path) -> None:
    res = _invoke(
        [
            "explain",
            "oil prices rose on monday in vienna",
            "oil prices rose on tuesday in vienna",
            "--json",
        ]
    )
    info = json.loads(res.stdout)
    # whatever the default features are, exactly those holding the changed word differ
    assert info["only_a"] and all("monday" in f for f, _ in info["only_a"])
    assert info["only_b"] and all("tuesday" in f for f, _ in info["only_b"])
    assert info["status"] in ("unique", "duplicate") and isinstance(info["duplicate"], bool)
    res = _invoke(["explain", "...", "text"])
    assert "NOT a duplicate: dedup decides B is unique" in res.stdout
    assert "A has no features (empty)" in res.stdout
    out = tmp_path / "idf.tsv"
    res = _invoke(["idf", "fit", str(sample), "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    res = _invoke(["dedup", str(sample), "--idf", str(out), "--out", "-"])
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 30


def test_every_help_has_examples() -> None:
    for args in (
        ["fingerprint"],
        ["index"],
        ["index", "build"],
        ["index", "query"],
        ["explain"],
        ["idf", "fit"],
    ):
        res = _invoke([*args, "--help"])
        assert res.exit_code == 0 and "Examples:" in res.stdout, args


def test_index_build_force_never_deletes_other_data(tmp_path: Path, sample: Path) -> None:
    folder = tmp_path / "my-notes"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me", encoding="utf-8")
    res = _invoke(["index", "build", str(folder), str(sample), "--force"])
    assert res.exit_code == 2 and "not a neardup index directory" in res.stderr
    assert (folder / "precious.txt").read_text(encoding="utf-8") == "keep me"
    idx = str(tmp_path / "idx")
    assert _invoke(["index", "build", idx, str(sample)]).exit_code == 0
    assert _invoke(["index", "build", idx, str(sample), "--force"]).exit_code == 0
