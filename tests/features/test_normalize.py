"""Normalisation: the batched fast path against the one-text definition; markup stripping."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Fingerprinter
from neardup.features.normalize import (
    normalize_text,
    prepare_many,
    prepare_text,
    strip_markup,
)

# full-width forms, the ideographic space, ligatures, German sharp s, Han, kana, NUL, tags
TRICKY = "Ａｚ０　ﬁßẞΣς中文かなｶﾀ\x00\t\n <b>&amp;&lt;"
texts = st.lists(st.text(alphabet=st.sampled_from(TRICKY) | st.characters(), max_size=30))


@settings(max_examples=200, deadline=None)
@given(texts, st.booleans())
def test_prepare_many_equals_prepare_text(batch: list[str], markup: bool) -> None:
    assert prepare_many(batch, markup=markup) == [prepare_text(t, markup=markup) for t in batch]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(TRICKY) | st.characters(), max_size=40))
def test_normalize_text_definition(text: str) -> None:
    want = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    assert normalize_text(text) == want
    assert normalize_text(f"  {text}\t") == want  # surrounding whitespace never matters


def test_markup_is_stripped_before_features() -> None:
    plain = "Fish & chips are back on the menu at the harbour cafe this summer, owners say."
    html = (
        "<p class='lead'>Fish &amp; chips</p><br/>are back on the <i>menu</i> "
        "at the harbour cafe this summer, owners say."
    )
    assert strip_markup("<p>a&lt;b</p>") == " a<b "
    with_markup = Fingerprinter(markup=True)
    assert with_markup.fingerprint(html) == with_markup.fingerprint(plain)
    assert with_markup.fingerprint(html) == Fingerprinter().fingerprint(plain)
    assert Fingerprinter().fingerprint(html) != Fingerprinter().fingerprint(plain)  # tags count
    assert with_markup.config_id != Fingerprinter().config_id
    assert with_markup.feature_list(html) == Fingerprinter().feature_list(plain)
    many = with_markup.fingerprint_many([html, plain])
    assert many[0] == many[1]
