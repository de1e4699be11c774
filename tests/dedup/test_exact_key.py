from __future__ import annotations

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from neardup.features.normalize import normalize_text

WS = "".join(chr(c) for c in range(0x3100) if chr(c).isspace())


@given(st.text(alphabet=st.sampled_from(list(WS) + list("aB Ｆ中\u00df")), max_size=40))
def test_normalize_equals_regex_definition(text: str) -> None:
    # the documented rule: NFKC, casefold, runs of \s collapsed to one space, stripped
    want = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()
    assert normalize_text(text) == want
