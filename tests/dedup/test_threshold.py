"""``threshold=`` (library) / ``--threshold`` and ``--shingle-size`` (CLI): the similarity above
which two documents are duplicates, stated in the user's terms (issue 20). The surfaces'
equality with these options: tests/spark/test_surfaces_equal.py and
tests/cli/test_explain_equals_dedup.py."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from neardup import Deduplicator
from neardup.cli import cli
from neardup.dedup.persist import StateFormatError
from neardup.verify import MinHashVerifier

from tests.synthetic import edit, english_text


def _texts() -> list[str]:
    rng = random.Random(3)
    out = []
    for rate in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3):
        for _ in range(6):
            a = english_text(rng, 120)
            out += [a, edit(a, rate, rng) if rate else a + " update"]
    return out


def test_threshold_is_the_verifiers_threshold() -> None:
    texts = _texts()
    for t in (0.3, 0.5, 0.8):
        got = Deduplicator(threshold=t).run(texts)
        same = Deduplicator(verifier=MinHashVerifier(threshold=t)).run(texts)
        assert got.statuses == same.statuses
        assert np.array_equal(got.duplicate_of, same.duplicate_of)
        dup = np.asarray(got.statuses) == "duplicate"
        assert dup.any() and (got.similarity[dup] >= t).all()


def test_a_lower_threshold_finds_more_edited_copies() -> None:
    texts = _texts()
    counts = [
        sum(s == "duplicate" for s in Deduplicator(threshold=t).run(texts).statuses)
        for t in (0.8, 0.6, 0.4)
    ]
    assert counts[0] < counts[1] < counts[2], counts


def test_threshold_is_part_of_the_configuration(tmp_path: Path) -> None:
    dd = Deduplicator(threshold=0.5)
    assert dd.config_id != Deduplicator().config_id
    assert Deduplicator(threshold=0.6).config_id == Deduplicator().config_id  # 0.6 is the default
    assert dd.replace().config_id == dd.config_id and dd.get_params()["threshold"] == 0.5
    dd.run(_texts()[:10])
    dd.save(tmp_path / "state")
    assert Deduplicator.load(tmp_path / "state").config_id == dd.config_id
    with pytest.raises(StateFormatError, match=dd.config_id):
        Deduplicator.load(tmp_path / "state", Deduplicator())


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        ({"threshold": 0.5, "verifier": None}, "pass k="),
        ({"threshold": 1.5}, r"threshold must be in \[0, 1\]"),
        ({"threshold": "high"}, "threshold must be a number"),
    ],
)
def test_bad_threshold(kw: dict[str, object], msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        Deduplicator(**kw)  # type: ignore[arg-type]


def test_cli_threshold_equals_library(tmp_path: Path) -> None:
    texts = _texts()
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    cases = {
        ("--threshold", "0.45"): Deduplicator(threshold=0.45),
        ("--shingle-size", "2", "--threshold", "0.64"): Deduplicator(
            verifier=MinHashVerifier(ngram=2, band_ngram=3, threshold=0.64)
        ),
        ("--shingle-size", "3", "--threshold", "0.4"): Deduplicator(
            verifier=MinHashVerifier(ngram=3), threshold=0.4
        ),
    }
    default = Deduplicator().run(texts).statuses
    for options, dd in cases.items():
        assert dd.replace().run(texts).statuses != default, options  # each option matters here
        out = tmp_path / "out.jsonl"
        r = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(out), *options])
        assert r.exit_code == 0, r.output
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [row["status"] for row in rows] == dd.run(texts).statuses, options


@pytest.mark.parametrize(
    ("options", "msg"),
    [
        (["--no-verify", "--threshold", "0.5"], "--no-verify turns the verifier off"),
        (["--no-verify", "--shingle-size", "2"], "--no-verify turns the verifier off"),
        (["--threshold", "1.2"], "0.0<=x<=1.0"),
        (["--shingle-size", "0"], "1<=x<=8"),
    ],
)
def test_cli_bad_threshold_options(tmp_path: Path, options: list[str], msg: str) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": 1, "text": "a b c"}\n')
    r = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(tmp_path / "o.jsonl"), *options])
    assert r.exit_code == 2 and msg in r.output, r.output
    assert not (tmp_path / "o.jsonl").exists()


def test_edited_preset_is_one_configuration(tmp_path: Path) -> None:
    """Issue 38: the edited-copies setting has one name and one config_id in the library and
    the CLI (the 3-shingle band rule is the verifier's, not the CLI's)."""
    preset = Deduplicator(preset="edited")
    spelled = [
        Deduplicator(verifier=MinHashVerifier(ngram=2), threshold=0.64),
        Deduplicator(verifier=MinHashVerifier(ngram=2, band_ngram=3, threshold=0.64)),
        preset.replace(),
    ]
    assert {d.config_id for d in spelled} == {preset.config_id}
    assert preset.config_id != Deduplicator(threshold=0.64).config_id
    assert MinHashVerifier(ngram=2).split and not MinHashVerifier(ngram=2, band_ngram=2).split
    texts = _texts()
    want = Deduplicator(verifier=MinHashVerifier(ngram=2, band_ngram=3), threshold=0.64)
    assert preset.run(texts).statuses == want.run(texts).statuses
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    for options in (["--preset", "edited"], ["--shingle-size", "2", "--threshold", "0.64"]):
        state = tmp_path / options[0]
        args = ["dedup", str(src), "--out", str(tmp_path / "o.jsonl"), "--state", str(state)]
        r = CliRunner().invoke(cli, [*args, *options])
        assert r.exit_code == 0, r.output
        assert Deduplicator.load(state).config_id == preset.config_id
        Deduplicator.load(state, Deduplicator(preset="edited"))  # not refused
    for options, msg in (
        (["--preset", "edited", "--threshold", "0.5"], "pass preset or verifier/threshold"),
        (["--preset", "edited", "--shingle-size", "3"], "pass preset or verifier/threshold"),
        (["--preset", "tight"], "'tight' is not 'edited'"),
    ):
        r = CliRunner().invoke(cli, ["dedup", str(src), "--out", "-", *options])
        assert r.exit_code == 2 and msg in r.output, r.output
    with pytest.raises(ValueError, match="preset must be one of"):
        Deduplicator(preset="loose")
