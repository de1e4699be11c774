"""``dedup --pairs FILE`` (issue 38): every verified candidate pair with its similarity, against
a brute force over all pairs, equal to the CLI's file and consistent with the decisions."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Deduplicator
from neardup.cli import cli
from neardup.cli._pairs import pair_rows
from neardup.verify import MinHashVerifier

from tests.synthetic import edit, english_text

_RNG = random.Random(41)
_BASES = [english_text(_RNG, 60) for _ in range(3)] + ["Storm hits the coast!"]


def _texts(docs: list[tuple[int, float, int]]) -> list[str]:
    return [
        _BASES[b] if rate == 0 else edit(_BASES[b], rate, random.Random(s)) for b, rate, s in docs
    ]


def _brute(texts: list[str], threshold: float) -> list[tuple[int, int, float]]:
    """Every pair of first copies whose estimate reaches the threshold that applies."""
    v = MinHashVerifier(threshold=threshold)
    sk = v.sketch_many(texts)
    first = [i for i, t in enumerate(texts) if t not in texts[:i]]
    out = []
    for x, a in enumerate(first):
        for b in first[x + 1 :]:
            est = float(v.estimate(sk[a : a + 1], sk[b : b + 1])[0])
            if est >= float(v.thresholds(sk[a : a + 1], sk[b : b + 1])[0]):
                out.append((a, b, round(est, 4)))
    return out


@settings(max_examples=30, deadline=None)
@given(
    docs=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from([0.0, 0.05, 0.1, 0.3]), st.integers(0, 9)),
        min_size=2,
        max_size=10,
    ),
    threshold=st.sampled_from([0.4, 0.6, 0.8]),
)
def test_pairs_equal_brute_force(docs: list[tuple[int, float, int]], threshold: float) -> None:
    texts = _texts(docs)
    dd = Deduplicator(k=63, threshold=threshold)  # radius 63: every pair is a candidate
    rows = pair_rows(dd, texts, list(range(len(texts))))
    assert [(r["id_a"], r["id_b"], r["similarity"]) for r in rows] == _brute(texts, threshold)
    d = dd.run(texts)
    found = {(r["id_a"], r["id_b"]) for r in rows}
    for g, r in enumerate(d.duplicate_of.tolist()):  # a first copy joined through a pair
        if r >= 0 and texts[g] not in texts[:g]:
            assert (r, g) in found


def test_cli_pairs_file(tmp_path: Path) -> None:
    texts = _texts([(b, rate, s) for b in range(4) for rate, s in ((0.0, 0), (0.05, 1), (0.1, 2))])
    texts.append(texts[0])  # an exact copy: no pair
    src = tmp_path / "in.jsonl"
    src.write_text(
        "".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts))
    )
    ids = [f"d{i}" for i in range(len(texts))]
    want = pair_rows(Deduplicator(threshold=0.5), texts, ids)
    assert want and all(r["id_b"] != ids[-1] for r in want)
    for name in ("pairs.jsonl", "pairs.csv"):
        pairs = tmp_path / name
        args = ["dedup", str(src), "--out", str(tmp_path / "o.jsonl"), "--threshold", "0.5"]
        r = CliRunner().invoke(cli, [*args, "--pairs", str(pairs)])
        assert r.exit_code == 0, r.output
        assert f"pairs: {len(want)} verified candidate pairs -> {pairs}" in r.output
    got = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    assert got == want
    csv_lines = (tmp_path / "pairs.csv").read_text().splitlines()
    assert csv_lines[0] == "id_a,id_b,similarity,distance" and len(csv_lines) == len(want) + 1
    for extra, msg in (
        (["--time-field", "ts", "--window", "1d"], "drop --window or --pairs"),
        (["--pairs", str(src)], "it would be overwritten"),
        (["--pairs", "-"], "--pairs needs a file path of its own"),
    ):
        r = CliRunner().invoke(cli, ["dedup", str(src), "--out", "-", "--pairs", "p.jsonl", *extra])
        assert r.exit_code == 2 and msg in r.output, r.output
    assert np.isfinite([r["similarity"] for r in want]).all()
