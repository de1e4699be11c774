"""Tight spans (issue 36): both spans of a passage pair cover text that corresponds.

A source text and a query holding an edited copy of one of its passages (word substitutions,
insertions, deletions at PAN's light/heavy rates) go through :class:`OverlapFinder`; the
reported spans are checked against the exact alignment the edits define (each copied word's
place in the source; a generic alignment such as difflib's matches stray words of a small
vocabulary all over the texts): the source words aligned to the query span lie inside the
source span, and the other way round, within a few words of slack (a passage may stop a
word or two short at a cut edit), and the two spans' lengths differ by at most 2x. Stock
phrases that recur (``stock``) make the texts repetitive, as wires and news are.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.overlap import OverlapFinder

SLACK = 3  # words a span may miss or overreach at each end against the exact alignment


def _words(rng: random.Random, n: int, vocab: int, stock: float = 0.0) -> list[str]:
    """``n`` random words, a stock phrase that recurs (repetitive text: "said the company")
    before a share ``stock`` of them."""
    phrases = [[f"s{k}{i}p" for i in range(rng.randint(2, 6))] for k in range(4)]
    out: list[str] = []
    while len(out) < n:
        out += rng.choice(phrases) if rng.random() < stock else []
        out.append(f"w{rng.randrange(vocab)}x")
    return out[:n]


def _edit(
    rng: random.Random, words: list[str], rate: float, vocab: int
) -> tuple[list[str], list[int]]:
    """The edited copy and, per word, the index in ``words`` it was copied from (-1: new)."""
    out: list[str] = []
    origin: list[int] = []
    for at, w in enumerate(words):
        r = rng.random()
        if r >= rate / 3:  # else deleted
            kept = r >= 2 * rate / 3
            out.append(w if kept else f"e{rng.randrange(vocab)}y")  # or substituted
            origin.append(at if kept else -1)
        if rng.random() < rate / 3:
            out.append(f"i{rng.randrange(vocab)}z")  # inserted
            origin.append(-1)
    return out, origin


def _offsets(words: list[str]) -> list[int]:
    """Start offset of each word in ``" ".join(words)``."""
    starts, at = [], 0
    for w in words:
        starts.append(at)
        at += len(w) + 1
    return starts


def _inside(span: tuple[int, int], starts: list[int]) -> tuple[int, int]:
    """The word range [first, last) whose starts lie in the character span."""
    idx = [i for i, s in enumerate(starts) if span[0] <= s < span[1]]
    return (idx[0], idx[-1] + 1) if idx else (0, 0)


def _check(
    src: list[str],
    qry: list[str],
    pairs: list[tuple[int, int]],
    span: tuple[int, int],
    sspan: tuple[int, int],
) -> None:
    """``pairs``: the exact alignment, (source word, query word) of each copied word."""
    qw = _inside(span, _offsets(qry))
    sw = _inside(sspan, _offsets(src))
    in_q = [i for i, j in pairs if qw[0] <= j < qw[1]]
    in_s = [j for i, j in pairs if sw[0] <= i < sw[1]]
    assert in_q and in_s, ("a passage off the copy", qw, sw)
    # the source words aligned to the query span lie in the source span, and vice versa
    assert sw[0] - SLACK <= min(in_q) and max(in_q) < sw[1] + SLACK, ("query->source", qw, sw)
    assert qw[0] - SLACK <= min(in_s) and max(in_s) < qw[1] + SLACK, ("source->query", qw, sw)
    ql, sl = qw[1] - qw[0], sw[1] - sw[0]
    assert min(ql, sl) >= 0.5 * max(ql, sl), ("length ratio", qw, sw)


def _case(
    seed: int, rate: float, vocab: int, length: int, stock: float = 0.0
) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    """A source, a query holding an edited copy of ``length`` of its words, the alignment."""
    rng = random.Random(seed)
    src = _words(rng, 300, vocab, stock)
    start = rng.randrange(len(src) - length)
    copy, origin = _edit(rng, src[start : start + length], rate, vocab)
    head = _words(rng, rng.randint(0, 80), vocab, stock)
    qry = head + copy + _words(rng, rng.randint(0, 80), vocab, stock)
    pairs = [(start + o, len(head) + j) for j, o in enumerate(origin) if o >= 0]
    return src, qry, pairs


def _spans_of(seed: int, rate: float, vocab: int, length: int, stock: float = 0.0) -> int:
    """Check every passage found for :func:`_case`; returns how many touch the copy."""
    src, qry, pairs = _case(seed, rate, vocab, length, stock)
    found = OverlapFinder().find([" ".join(src), " ".join(qry)])
    for p in found:
        assert p.source_position == 0
        _check(src, qry, pairs, p.span, p.source_span)
    return len(found)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    rate=st.sampled_from([0.0, 0.1, 0.25]),
    vocab=st.sampled_from([40, 400, 5000]),
    length=st.integers(25, 120),
)
def test_spans_cover_the_exact_alignment(seed: int, rate: float, vocab: int, length: int) -> None:
    _spans_of(seed, rate, vocab, length)


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.25])
def test_a_repeated_phrase_does_not_stretch_the_source_span(rate: float) -> None:
    # minimised from the property test with stock phrases: before aligner 8 the source span
    # began at a far repeat of "s20p ... s25p" (query 30 words, source 135: ratio 0.22)
    assert _spans_of(3, rate, 400, 28, stock=0.6) >= 1


@pytest.mark.xfail(
    strict=True,
    reason="stock phrases repeated within gap chain the passage's box (seed clustering and "
    "box merge, align._clusters), and a stock phrase whose other repeats fall outside the "
    "diagonal band matches one place there: it still sets an end (query 69 words, source "
    "249); see docs/OVERLAP.md, tight spans",
)
def test_stock_phrases_chaining_the_box_keep_spans_tight() -> None:
    _spans_of(44, 0.0, 400, 69, stock=0.3)
