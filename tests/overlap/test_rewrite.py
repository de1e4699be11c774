"""Heavy Chinese rewrites (洗稿) and the rules that keep them apart from shared phrases:
6-character Han grams, the fine-gram coverage rule, the cross-source rule (aligner 4)."""

from __future__ import annotations

import random

import pytest

from neardup._backend import overlap_kernels
from neardup.overlap import OverlapFinder
from neardup.overlap.pairs import cross_source_keep

_HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]


def _sentences(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choices(_HAN, k=rng.randint(22, 30))) + "。" for _ in range(n)]


def _rewrite(sents: list[str], rng: random.Random, rate: float) -> str:
    """About ``rate`` of the characters replaced, deleted or followed by an insertion, and two
    sentences swapped (as benchmarks/bench_overlap.py builds its heavy cases)."""
    sents = list(sents)
    sents[0], sents[1] = sents[1], sents[0]
    out = []
    for ch in "".join(sents):
        r = rng.random()
        if ch == "。" or r >= rate:
            out.append(ch)
        elif r < rate / 3:
            out.append(rng.choice(_HAN))
        elif r >= 2 * rate / 3:
            out += [ch, rng.choice(_HAN)]
    return "".join(out)


def test_heavy_chinese_rewrites_are_found() -> None:
    """Three-sentence passages with a quarter of their characters edited and two sentences
    swapped: 8-character grams (tokenizer 2, aligner 3) found 11 of these 20, now 19."""
    found = 0
    for seed in range(20):
        rng = random.Random(seed)
        before, copied, after = _sentences(rng, 3), _sentences(rng, 3), _sentences(rng, 3)
        source = "".join(before + copied + after)
        piece = _rewrite(copied, rng, 0.25)
        host = "".join(_sentences(rng, 2)) + piece + "".join(_sentences(rng, 2))
        start = host.index(piece)
        f = OverlapFinder()
        f.add(source, id="src")
        got = f.add(host, id="host")
        assert all(p.source_id == "src" for p in got)
        found += any(p.span[0] < start + len(piece) and start < p.span[1] for p in got)
    assert found >= 17


def test_two_shared_phrases_around_unrelated_text_are_not_a_passage() -> None:
    """Two 12-character phrases 30 characters apart in both texts, unrelated text between
    them: the passage they would span is not covered by shared short grams (aligner 3
    reported it)."""
    rng = random.Random(5)
    p1, p2 = "".join(rng.choices(_HAN, k=12)), "".join(rng.choices(_HAN, k=12))

    def text() -> str:
        mid = "".join(rng.choices(_HAN, k=30))
        return "".join(_sentences(rng, 2)) + p1 + mid + p2 + "".join(_sentences(rng, 2))

    f = OverlapFinder()
    f.add(text(), id="a")
    assert f.add(text(), id="b") == []


def test_a_copy_with_its_middle_intact_is_still_found() -> None:
    """The coverage rule keeps a verbatim copy and a light rewrite (sanity for the rule)."""
    rng = random.Random(9)
    copied = _sentences(rng, 4)
    source = "".join(_sentences(rng, 2) + copied + _sentences(rng, 2))
    f = OverlapFinder()
    f.add(source, id="src")
    light = _rewrite(copied, rng, 0.05)
    [p] = f.add("".join(_sentences(rng, 2)) + light, id="host")
    assert p.source_id == "src" and p.span[1] - p.span[0] >= 0.8 * len(light)


def test_cross_source_rule_drops_only_a_weaker_passage_inside_a_longer_one() -> None:
    rows = [(0, 100, 1, 0.9), (10, 40, 2, 0.3), (10, 40, 3, 0.5), (50, 150, 4, 0.1)]
    # (10, 40) from source 2 scores less than half of 0.9; source 3's 0.5 does not; the
    # passage from source 4 is not inside another one
    assert cross_source_keep(rows) == [True, False, True, True]
    assert cross_source_keep([(0, 10, 1, 1.0), (0, 10, 1, 0.1)]) == [True, True]  # one source


def _heavy_corpus() -> list[str]:
    rng = random.Random(3)
    docs: list[str] = []
    for _ in range(30):
        sents = _sentences(rng, rng.randint(3, 8))
        if docs and rng.random() < 0.7:
            src = rng.choice(docs).split("。")[:-1]
            k = rng.randint(2, min(5, len(src)))
            piece = _rewrite([s + "。" for s in src[:k]], rng, rng.choice([0.0, 0.05, 0.25]))
            sents.insert(rng.randrange(len(sents) + 1), piece)
        docs.append("".join(sents))
    return docs


def test_kernel_equals_python_on_heavy_rewrites(monkeypatch: pytest.MonkeyPatch) -> None:
    """The C kernel and the Python reference give the same passages where the coverage rule,
    the diagonal bands and the cross-source rule decide (heavy rewrites, several sources)."""
    if overlap_kernels() is None:
        pytest.skip("the C extension is not built")
    docs = _heavy_corpus()
    fast = [p.to_dict() for p in OverlapFinder().find(docs)]
    monkeypatch.setenv("NEARDUP_KERNELS", "python")
    overlap_kernels.cache_clear()
    try:
        slow = [p.to_dict() for p in OverlapFinder().find(docs)]
    finally:
        monkeypatch.delenv("NEARDUP_KERNELS")
        overlap_kernels.cache_clear()
    assert len(fast) >= 10 and fast == slow
