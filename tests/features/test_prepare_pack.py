"""The C ``prepare_pack`` (NFKC + casefold straight to UTF-8) equals the Python path byte for byte.

The Python path (``prepare_text`` / ``prepare_many`` + encode) is the rule book and the
fallback without the extension; the C path copies or maps one character at a time through a
table built from ``unicodedata`` and sends any text where context matters (combining marks,
characters that compose with the one before) to ``prepare_text``. These tests feed it every BMP
character alone, the characters that map or need context in random mixtures, the astral ranges
it copies, and bad arguments.
"""

from __future__ import annotations

import random
import unicodedata
from typing import Any

import numpy as np
import pytest

from neardup.features import normalize as nz

native: Any = pytest.importorskip("neardup._native")


def _python(texts: list[str]) -> tuple[bytes, list[int]]:
    enc = [t.encode("utf-8", "surrogatepass") for t in nz.prepare_many(texts)]
    return b"".join(enc), np.cumsum([0] + [len(e) for e in enc]).tolist()


def _c(texts: list[str]) -> tuple[bytes, list[int]]:
    buf, off = nz.pack_prepared(texts)
    return buf.tobytes(), off.tolist()


def test_every_bmp_character_alone() -> None:
    texts = [chr(c) for c in range(0x10000)]
    assert _c(texts) == _python(texts)


def test_random_mixtures_of_mapped_and_contextual_characters() -> None:
    table, _ = nz._nfkc_table()
    special = [chr(c) for c in range(0x80, 0x10000) if table[c] != 0]
    mapped = [chr(c) for c in range(0x80, 0x10000) if table[c] not in (0, nz._UNSAFE)]
    plain = list("abcXYZ 09,.-") + [chr(c) for c in range(0x4E00, 0x4E40)] + list("가각ㄱ한é")
    rng = random.Random(24)
    texts = []
    for i in range(20000):  # half without contextual characters: the C path maps them itself
        chars = mapped if i % 2 else special
        k = rng.randint(0, 10)
        texts.append("".join(rng.choice(chars if rng.random() < 0.5 else plain) for _ in range(k)))
    assert _c(texts) == _python(texts)
    fast = texts[1::2]  # only mapped and plain characters: none may reach the fallback
    calls: list[str] = []
    off = np.empty(len(fast) + 1, dtype=np.int64)
    out = native.prepare_pack(fast, table, nz._nfkc_table()[1], calls.append, off)
    assert calls == [] and (out, off.tolist()) == _python(fast)


def test_hangul_jamo_compose_across_characters() -> None:
    # compatibility jamo map to conjoining jamo that compose with each other under NFKC
    texts = ["ㄱㅏ", "각", "각", "ﾡ﾿", "가각"]
    assert _c(texts) == _python(texts)
    assert nz.pack_prepared(["ㄱㅏ"])[0].tobytes().decode() == "가"


def test_astral_ranges_copied_as_they_are() -> None:
    copied = [*range(0x20000, 0x2F800, 7), *range(0x30000, 0x40000, 5)]
    assert all(
        unicodedata.normalize("NFKC", chr(c)).casefold() == chr(c)
        and not unicodedata.combining(chr(c))
        for c in copied
    )
    texts = ["中" + chr(c) + "Ａ" for c in copied] + ["\U0001d400x", "😀Ω", "\ud800a\udfff"]
    assert _c(texts) == _python(texts)


def test_empty_and_ascii_batches() -> None:
    for texts in ([], [""], ["Hello World", "", "ABC def"]):
        assert _c(texts) == _python(texts)


def test_bad_arguments_are_refused() -> None:
    off = np.empty(2, dtype=np.int64)
    table, pool = nz._nfkc_table()
    with pytest.raises(TypeError, match=r"texts\[0\] is bytes"):
        native.prepare_pack([b"x"], table, pool, nz.prepare_text, off)
    with pytest.raises(ValueError, match="65536"):
        native.prepare_pack(["x"], table[:10], pool, nz.prepare_text, off)
    with pytest.raises(ValueError, match="outside the pool"):
        native.prepare_pack(["x"], table, pool[:0], nz.prepare_text, off)
    with pytest.raises(ValueError, match="offsets"):
        native.prepare_pack(["x", "y"], table, pool, nz.prepare_text, off)
    with pytest.raises(TypeError, match="fallback must return a str"):
        native.prepare_pack(["\u0301"], table, pool, lambda t: 1, off)


def test_ascii_only_table_sends_every_non_ascii_text_to_the_fallback() -> None:
    texts = ["Ａb", "abc", "中文，Ｘ", "é"]  # a small batch: the table is not built for it
    calls: list[str] = []

    def fallback(text: str) -> str:
        calls.append(text)
        return nz.prepare_text(text)

    off = np.empty(len(texts) + 1, dtype=np.int64)
    out = native.prepare_pack(texts, *nz._ASCII_ONLY, fallback, off)
    assert calls == ["Ａb", "中文，Ｘ", "é"] and (out, off.tolist()) == _python(texts)
