from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner

from neardup.eval.cli import eval_command, read_labelled_pairs
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.harness import METHODS, neardup_method, run_method
from neardup.eval.methods import Candidates, anchor_module, minhash_lsh
from neardup.eval.pan import read_alignments

BASE = (
    "the central bank raised its key interest rate by half a point on friday citing "
    "persistent inflation and strong wage growth across the economy"
)
TEXTS = [
    BASE,
    BASE.replace("economy", "country"),
    "football club signs striker for record fee after long negotiations with rivals in spain",
    "这个手机质量很好，电池也耐用，推荐购买，物流很快",
    "这个手机质量很好,电池也耐用,推荐购买,物流很快!",
    "",
]


def test_candidates_labels_threshold() -> None:
    c = Candidates(4, np.array([0, 1]), np.array([1, 2]), np.array([2, 5]), np.array([0.9, 0.3]))
    assert c.labels(3).tolist() == [0, 0, 1, 2]
    assert c.labels(5, 0.5).tolist() == [0, 0, 1, 2]
    assert c.labels(5).tolist() == [0, 0, 0, 1]


def test_methods_find_the_obvious_pairs() -> None:
    gt = GroundTruth.from_texts(TEXTS)
    assert gt.must_pairs().tolist() == [[0, 1], [3, 4]]
    for name in ("neardup", "text-dedup"):
        r = run_method(name, TEXTS, gt)
        assert r.scores.precision == 1.0, name
    assert run_method("neardup", TEXTS, gt).scores.recall == 1.0
    assert set(METHODS) >= {"neardup", "pypi-simhash", "classic", "text-dedup", "minhash-lsh"}


def test_unverified_method_labels_shape() -> None:
    labels = neardup_method(verifier=None, k=3)(TEXTS)
    assert labels.shape == (len(TEXTS),)


def test_minhash_lsh_anchor() -> None:
    pytest.importorskip("datasketch", reason="anchor of the bench extra")
    gt = GroundTruth.from_texts(TEXTS)
    assert run_method("minhash-lsh", TEXTS, gt).scores.precision == 1.0
    assert minhash_lsh(TEXTS).tolist()[:2] == [0, 0]


def test_missing_anchor_names_the_extra() -> None:
    with pytest.raises(ImportError, match=r"neardup\[bench\]"):
        anchor_module("surely_not_an_installed_module")


def test_cli_pairs(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    lines = [
        {"a": TEXTS[0], "b": TEXTS[1], "label": 1},
        {"a": TEXTS[0], "b": TEXTS[2], "label": 0},
        {"a": TEXTS[3], "b": TEXTS[4], "label": 1},
    ]
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n")
    res = CliRunner().invoke(eval_command, ["--pairs", str(path), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["pairs"] == 3 and report["default"]["f1"] == 1.0


def test_cli_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": "x"}\n')
    res = CliRunner().invoke(eval_command, ["--pairs", str(bad)])
    assert res.exit_code == 2 and "bad.jsonl:1" in res.output
    res = CliRunner().invoke(eval_command, [])
    assert res.exit_code == 2 and "exactly one" in res.output
    res = CliRunner().invoke(eval_command, ["--corpus", "nope"])
    assert res.exit_code == 2 and "unknown corpus" in res.output


def test_jsonl_readers_skip_blank_lines_and_name_the_line_of_an_error(tmp_path: Path) -> None:
    # both eval readers number lines through io.readers.text_lines: blank lines are skipped but
    # counted, so the error names the line an editor shows
    good = json.dumps({"a": TEXTS[0], "b": TEXTS[1], "label": 1})
    path = tmp_path / "pairs.jsonl"
    path.write_text(f"\n{good}\n  \n{good}\n")
    a, b, labels = read_labelled_pairs(path)
    assert a == [TEXTS[0]] * 2 and b == [TEXTS[1]] * 2 and labels.tolist() == [True, True]
    path.write_text(f"\n{good}\n\n{{broken\n")
    with pytest.raises(click.UsageError, match=r"pairs\.jsonl:4: expected a JSON object"):
        read_labelled_pairs(path)
    path.write_text(f"{good}\n\n" + json.dumps({"a": "x", "b": "y", "label": 2}) + "\n")
    with pytest.raises(click.UsageError, match=r"pairs\.jsonl:3: a and b must be strings"):
        read_labelled_pairs(path)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('\n\n{"x": 1\n')
    with pytest.raises(ValueError, match=r"rows\.jsonl:3: not JSON"):
        read_alignments(rows)
