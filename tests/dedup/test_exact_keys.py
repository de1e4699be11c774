"""Exact-duplicate keys equal Python's own ``" ".join(text.split())`` rule on random text."""

from __future__ import annotations

import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.exact import exact_keys

ALPHABET = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyz0123456789 ,.!-'\n\t")
    + list("中国人民新闻北京上海经济")
    + ["\U0001f600", "\u200b", "\ud800", "é"]
)
TEXT = st.text(ALPHABET, max_size=60)

SPACES = st.sampled_from(
    [
        " ",
        "\t",
        "\n",
        "\x0b",
        "\x1c",
        "\x85",
        "\xa0",
        "\u1680",
        "\u2003",
        "\u2028",
        "\u202f",
        "\u205f",
        "\u3000",
        "\u200b",
    ]
)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.one_of(TEXT, SPACES), max_size=12))
def test_exact_keys_c_equal_python_split(parts: list[str]) -> None:
    text = "".join(parts)
    want = xxhash.xxh3_128_intdigest(" ".join(text.split()).encode("utf-8", "surrogatepass"))
    assert exact_keys([text, "x"], prepared=True)[0] == want
