"""Tokens and character n-grams from the frozen Unicode 14 class table, against references."""

from __future__ import annotations

import importlib.util
import itertools
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from neardup.features.charclass import HAN, SEPARATOR, SINGLE, char_classes
from neardup.features.extract import char_ngrams, shingles, text_is_cjk, tokens

ROOT = Path(__file__).resolve().parents[2]
MIXED = "ab1 中文字かなカナไทย-ǘß,'. \t한국어Ωω٣"
texts = st.text(alphabet=st.sampled_from(MIXED) | st.characters(), max_size=40)


def klass(ch: str) -> int:
    return int(char_classes()[ord(ch)])


def reference_tokens(text: str, han_single: bool) -> list[str]:
    """Maximal runs of one word class; kana/Thai-like characters (and Han when ``han_single``)
    are tokens of their own."""
    out: list[str] = []
    for c, run in itertools.groupby(text, key=klass):
        chars = "".join(run)
        if c == SEPARATOR:
            continue
        if c == SINGLE or (c == HAN and han_single):
            out.extend(chars)
        else:
            out.append(chars)
    return out


def reference_char_ngrams(text: str, n: int, joined: bool) -> list[str]:
    """Separator runs become one space (none when ``joined``), leading/trailing ones vanish;
    then every window of ``n`` code points (a shorter stream is one n-gram)."""
    words = [
        "".join(g)
        for sep, g in itertools.groupby(text, key=lambda ch: klass(ch) == SEPARATOR)
        if not sep
    ]
    stream = ("" if joined else " ").join(words)
    if not stream:
        return []
    if len(stream) <= n:
        return [stream]
    return [stream[i : i + n] for i in range(len(stream) - n + 1)]


@settings(max_examples=300, deadline=None)
@given(texts, st.booleans())
def test_tokens_match_reference(text: str, han_single: bool) -> None:
    assert tokens(text, han_single=han_single) == reference_tokens(text, han_single)


# long, mostly ASCII texts: the tokenizer classifies ASCII 64 bytes at a time (issue 24), so
# tokens cross block edges, and non-ASCII characters end a block anywhere in it
long_texts = st.text(alphabet=st.sampled_from("abcXYZ09 ,.-'\t\n" * 8 + "é中文ω한カ\u0301"),
                     min_size=40, max_size=400)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(long_texts, st.booleans())
@example("a" * 64 + " " + "b" * 63 + "é" + "c" * 200, False)
@example(" " * 63 + "x" + "y" * 64 + " ", True)
def test_long_tokens_match_reference(text: str, han_single: bool) -> None:
    assert tokens(text, han_single=han_single) == reference_tokens(text, han_single)
    word = [ch for ch in text if klass(ch) != SEPARATOR]
    cjk = [ch for ch in word if is_cjk_char(ch)]
    assert text_is_cjk(text) == (bool(cjk) and 3 * len(cjk) >= len(word))


@settings(max_examples=300, deadline=None)
@given(texts, st.integers(1, 6), st.booleans())
def test_char_ngrams_match_reference(text: str, n: int, joined: bool) -> None:
    assert char_ngrams(text, n, joined=joined) == reference_char_ngrams(text, n, joined)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "dd"]), max_size=8), st.integers(1, 4))
def test_shingles_are_word_ngrams(words: list[str], n: int) -> None:
    got = shingles(words, n)
    if not words:
        assert got == []
    elif len(words) <= n:
        assert got == [" ".join(words)]
    else:
        assert got == [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def is_cjk_char(ch: str) -> bool:
    return klass(ch) in (HAN, SINGLE) or "\uac00" <= ch <= "\ud7a3"  # Hangul syllables too


@settings(max_examples=300, deadline=None)
@given(texts)
@example("한")
@example("한국어 ab cd")
@example("中文 abc def ghi jkl")
def test_cjk_detection_is_a_third_of_word_characters(text: str) -> None:
    word = [ch for ch in text if klass(ch) != SEPARATOR]
    cjk = [ch for ch in word if is_cjk_char(ch)]
    assert text_is_cjk(text) == (bool(cjk) and 3 * len(cjk) >= len(word))


@pytest.mark.skipif(
    unicodedata.unidata_version != "14.0.0", reason="the table is Unicode 14.0 by design"
)
def test_frozen_table_equals_its_generator_on_unicode_14() -> None:
    spec = importlib.util.spec_from_file_location("gen_charclass", ROOT / "tools/gen_charclass.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    want = np.frombuffer(bytes(gen.char_class(cp) for cp in range(0x110000)), np.uint8)
    assert np.array_equal(char_classes(), want)
