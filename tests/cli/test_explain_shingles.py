"""`explain` shows the verifier's shingles that the two texts share and that differ most (issue
38: its lists were SimHash features of weight 1 in alphabetical order, not what decided). The
shingles come from a Python reference of the kernels' shingling, checked here against them."""

from __future__ import annotations

import json
import random
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import MinHashVerifier
from neardup.cli import cli
from neardup.verify import shingle_hashes, shingle_texts

from tests.synthetic import chinese_text, edit, english_text

# words, Han runs, kana (a token per character), digits, full-width letters, punctuation, spaces
PIECES = st.sampled_from(
    [
        "storm",
        "Coast",
        "it's",
        "3.14",
        "中国",
        "人民",
        "质量很好",
        "か",
        "ｆｕｌｌ",
        "é",
        "!",
        " ",
        ", ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(PIECES, max_size=30),
    st.integers(1, 5),
    st.sampled_from(["auto", "word", "char"]),
    st.sampled_from([0, 7]),
)
def test_reference_shingles_are_the_kernels(
    pieces: list[str], n: int, mode: str, seed: int
) -> None:
    """Each text shingle hashes to a value of the kernel's set, and the sets are equal: the
    exact Jaccard of two texts from the reference is the kernel's."""
    text = "".join(pieces)
    ours = {h for _, h in shingle_texts(text, n, mode=mode, seed=seed)}
    assert ours == set(shingle_hashes(text, n, mode=mode, seed=seed).tolist())


def _explain(*args: str) -> dict[str, object]:
    r = CliRunner().invoke(cli, ["explain", *args, "--json"])
    assert r.exit_code == 0, r.output
    out: dict[str, object] = json.loads(r.stdout)
    return out


def test_explain_lists_the_shingles_that_differ() -> None:
    rng = random.Random(3)
    for make, n in ((english_text, 4), (chinese_text, 4)):
        a = make(rng, 120)
        b = edit(a, 0.1, rng)
        got = _explain(a, b, "--top", "500")["shingles"]
        assert isinstance(got, dict)
        v = MinHashVerifier()
        sa, sb = (dict(shingle_texts(t, v.ngram, mode=v.mode)) for t in (a, b))
        only_a, only_b = sa.keys() - sb.keys(), sb.keys() - sa.keys()
        assert got["shingle_size"] == n and only_a and only_b  # an edit changes shingles
        assert {s for s, _ in got["only_a"]} == only_a
        assert {s for s, _ in got["only_b"]} == only_b
        assert {s for s, _ in got["shared"]} == sa.keys() & sb.keys()
        ha, hb = set(shingle_hashes(a, n).tolist()), set(shingle_hashes(b, n).tolist())
        assert got["jaccard"] == round(len(ha & hb) / len(ha | hb), 4)  # the kernel's sets'
        top = _explain(a, b, "--top", "2")["shingles"]
        assert isinstance(top, dict) and len(top["only_b"]) == 2
        counts = [c for _, c in got["only_b"]]
        assert counts == sorted(counts, reverse=True)  # by weight: occurrences
    # no verifier: no shingles to show
    assert "shingles" not in _explain(a, b, "--no-verify")


def test_explain_file_id_shows_the_shingles_of_the_pair_it_compared(tmp_path: Path) -> None:
    rng = random.Random(4)
    a = english_text(rng, 150)
    b = edit(a, 0.05, rng)
    src = tmp_path / "docs.jsonl"
    rows = [{"id": "x", "text": english_text(rng, 80)}, {"id": "a", "text": a}]
    rows.append({"id": "b", "text": b})
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    replay = _explain(str(src), "b")
    assert replay["compared_with"] == "a"
    assert replay["shingles"] == _explain(a, b)["shingles"]
    r = CliRunner().invoke(cli, ["explain", str(src), "b"])
    assert r.exit_code == 0, r.output
    assert "verifier 4-shingles:" in r.output and "only in b:" in r.output
