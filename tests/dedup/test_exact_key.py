from __future__ import annotations

import re
import unicodedata

import xxhash
from hypothesis import given
from hypothesis import strategies as st

from neardup.dedup.exact import exact_keys
from neardup.features.normalize import normalize_text

WS = "".join(chr(c) for c in range(0x3100) if chr(c).isspace())


@given(st.text(alphabet=st.sampled_from(list(WS) + list("aB Ｆ中\u00df")), max_size=40))
def test_normalize_equals_regex_definition(text: str) -> None:
    # the documented rule: NFKC, casefold, runs of \s collapsed to one space, stripped
    want = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()
    assert normalize_text(text) == want


@given(
    st.lists(
        st.text(
            alphabet=st.sampled_from(list(WS) + list("aB Ｆ中\u00dfǰ\uff21")),
            min_size=1,
            max_size=30,
        ),
        max_size=8,
    )
)
def test_exact_keys_hash_normalize_text(texts: list[str]) -> None:
    want = [xxhash.xxh3_128_intdigest(normalize_text(t).encode("utf-8")) for t in texts]
    assert exact_keys(texts) == want
