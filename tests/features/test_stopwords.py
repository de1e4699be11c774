"""Stop words: the shipped lists are normalised (else they could never match a token)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Fingerprinter
from neardup.features.extract import tokens
from neardup.features.normalize import prepare_text
from neardup.features.stopwords import stopwords


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shipped_lists_are_normalised_single_tokens(lang: str) -> None:
    words = stopwords(lang)
    assert len(words) > 50
    for w in words:
        assert prepare_text(w) == w and w.strip() == w and not w.startswith("#")
    if lang == "en":  # English stop words are single tokens, so they can match one
        assert all(tokens(w) == [w] for w in words if w.isascii() and w.isalpha())
    assert stopwords("auto") >= words


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(["Ｔｈｅ", "STRASSE", "Straße", "  ", "", "oil", "ΣΑΣ"]), max_size=6)
)
def test_user_words_are_normalised_like_texts(words: list[str]) -> None:
    assert stopwords(words) == {prepare_text(w).strip() for w in words if w.strip()}


def test_stop_words_leave_the_features() -> None:
    fp = Fingerprinter(analyzer="word", stopwords="en")
    assert fp.feature_list("The oil and the gas") == ["oil", "gas"]
    zh = Fingerprinter(analyzer="word", stopwords="zh")
    assert "的" not in zh.feature_list("我的朋友的书")
    assert Fingerprinter(analyzer="word", stopwords=["OIL"]).feature_list("oil gas") == ["gas"]
    with pytest.raises(ValueError, match="unknown stop-word list 'fr'"):
        stopwords("fr")
    with pytest.raises(TypeError, match="stop words must be str"):
        stopwords(["a", 1])  # type: ignore[list-item]
