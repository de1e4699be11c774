"""PAN measures (eval/pan.py) against small hand-computed cases."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from neardup.eval.pan import pan_scores, read_alignments


def _pair(span: tuple[int, int], src: tuple[int, int], id_: str = "b", source: str = "a") -> dict:
    return {"id": id_, "span": list(span), "source_id": source, "source_span": list(src)}


def test_exact_detection_scores_one() -> None:
    s = pan_scores([_pair((10, 60), (0, 50))], [_pair((10, 60), (0, 50))])
    assert (s.precision, s.recall, s.granularity, s.plagdet) == (1.0, 1.0, 1.0, 1.0)


def test_detection_larger_than_the_case() -> None:
    # detection 200 + 100 characters, 100 + 100 of them inside the case: precision 2/3
    s = pan_scores([_pair((0, 100), (0, 100))], [_pair((0, 200), (0, 100))])
    assert s.precision == pytest.approx(2 / 3) and s.recall == 1.0
    assert s.plagdet == pytest.approx(0.8)  # F1 of 2/3 and 1, granularity 1


def test_half_of_one_case_and_a_missed_case() -> None:
    cases = [_pair((0, 100), (0, 100)), _pair((0, 40), (0, 40), id_="c")]
    s = pan_scores(cases, [_pair((0, 50), (0, 50))])
    assert s.recall == pytest.approx((100 / 200 + 0) / 2) and s.precision == 1.0
    assert s.plagdet == pytest.approx(2 * 0.25 / 1.25) and s.detected_cases == 1


def test_split_detection_is_penalised_by_granularity() -> None:
    dets = [_pair((0, 50), (0, 50)), _pair((50, 100), (50, 100)), _pair((90, 100), (90, 100))]
    s = pan_scores([_pair((0, 100), (0, 100))], dets)
    assert s.granularity == 3.0 and s.recall == 1.0 and s.precision == 1.0
    assert s.plagdet == pytest.approx(1 / math.log2(4))


def test_wrong_source_or_one_sided_overlap_gets_no_credit() -> None:
    case = _pair((0, 100), (0, 100))
    s = pan_scores([case], [_pair((0, 100), (0, 100), source="x"), _pair((0, 100), (200, 300))])
    assert (s.precision, s.recall, s.plagdet, s.detected_cases) == (0.0, 0.0, 0.0, 0)


def test_empty_sets() -> None:
    assert pan_scores([], []).plagdet == 1.0
    assert pan_scores([_pair((0, 10), (0, 10))], []).plagdet == 0.0
    assert pan_scores([], [_pair((0, 10), (0, 10))]).precision == 0.0


def test_bad_rows_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="detection 0: a span ends before it starts"):
        pan_scores([], [_pair((10, 5), (0, 1))])
    with pytest.raises(ValueError, match="case 0: expected id, span"):
        pan_scores([{"id": "b"}], [])
    f = tmp_path / "d.jsonl"
    f.write_text('{"id": "b", "span": [0, 1], "source_id": "a", "source_span": [0, 1]}\nnope\n')
    with pytest.raises(ValueError, match=r"d\.jsonl:2: not JSON"):
        read_alignments(f)


def test_eval_cli_scores_overlap_output(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from neardup.cli import cli

    cases, dets = tmp_path / "cases.jsonl", tmp_path / "dets.jsonl"
    cases.write_text(json.dumps(_pair((0, 100), (0, 100))) + "\n")
    dets.write_text(json.dumps({**_pair((0, 200), (0, 100)), "score": 1.0}) + "\n")
    res = CliRunner().invoke(cli, ["eval", "--overlap", str(cases), str(dets), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["plagdet"] == pytest.approx(0.8)
    dets.write_text("{}\n")
    res = CliRunner().invoke(cli, ["eval", "--overlap", str(cases), str(dets)])
    assert res.exit_code == 1 and "dets.jsonl:1" in res.stderr
    res = CliRunner().invoke(cli, ["eval", "--overlap", str(cases), str(dets), "--corpus", "x"])
    assert res.exit_code == 2 and "exactly one" in res.stderr
