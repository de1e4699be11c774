"""Feature strings of one prepared text, from the same kernels the fingerprint uses.

The fingerprint path never builds strings; this mirror does, for ``Fingerprinter.features``,
``explain`` and IDF fitting. Both paths share ``token_spans`` and ``char_stream``, so they
cannot drift apart (a test checks that the keys agree).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from neardup.features.charclass import char_classes
from neardup.features.kernels import (
    AUTO_MODE,
    CHAR_MODE,
    SHINGLE_MODE,
    WORD_MODE,
    char_stream,
    is_cjk,
    token_spans,
)


def _as_bytes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)


def tokens(text: str, *, han_single: bool = False) -> list[str]:
    """The tokens of an already prepared (normalised, segmented) text.

    >>> tokens("it's 3.14 km, 中国 人民")
    ['it', 's', '3', '14', 'km', '中国', '人民']
    """
    buf = _as_bytes(text)
    starts = np.empty(buf.size + 2, dtype=np.int64)
    ends = np.empty(buf.size + 2, dtype=np.int64)
    n = token_spans(buf, 0, buf.size, char_classes(), han_single, starts, ends)
    raw = buf.tobytes()
    return [
        raw[s:e].decode("utf-8", "surrogatepass") for s, e in zip(starts[:n], ends[:n], strict=True)
    ]


def char_ngrams(text: str, n: int, *, joined: bool = False) -> list[str]:
    """Character ``n``-grams of a prepared text, separators collapsed to one space (or dropped).

    >>> char_ngrams("ab, cd!", 3)
    ['ab ', 'b c', ' cd']
    >>> char_ngrams("质量很好！物流快", 5, joined=True)
    ['质量很好物', '量很好物流', '很好物流快']
    """
    buf = _as_bytes(text)
    out = np.empty(buf.size * 2 + 8, dtype=np.uint8)
    cps = np.empty(buf.size + 2, dtype=np.int64)
    nb, ncp = char_stream(buf, 0, buf.size, char_classes(), out, cps, joined)
    stream = out[:nb].tobytes()
    if ncp == 0:
        return []
    if ncp <= n:
        return [stream.decode("utf-8", "surrogatepass")]
    return [
        stream[cps[k] : cps[k + n]].decode("utf-8", "surrogatepass") for k in range(ncp - n + 1)
    ]


def shingles(words: list[str], n: int) -> list[str]:
    """Word ``n``-grams joined by a space (fewer than ``n`` words: all of them, joined).

    >>> shingles(["a", "b", "c"], 2)
    ['a b', 'b c']
    """
    if not words:
        return []
    width = min(n, len(words))
    return [" ".join(words[k : k + width]) for k in range(len(words) - width + 1)]


def text_is_cjk(text: str) -> bool:
    """Whether CJK characters are at least a third of the word characters (``auto`` analyzer).

    >>> text_is_cjk("质量很好，物流也快"), text_is_cjk("good quality, fast shipping")
    (True, False)
    """
    if text.isascii():
        return False
    buf = _as_bytes(text)
    return bool(is_cjk(buf, 0, buf.size, char_classes()))


def feature_list(
    text: str,
    *,
    mode: int,
    n: int,
    han_single: bool,
    stopwords: Iterable[str] = (),
    n_cjk: int = 5,
) -> list[str]:
    """All features of a prepared text, in text order, repeats included."""
    if mode == AUTO_MODE:
        if text_is_cjk(text):
            return char_ngrams(text, n_cjk, joined=True)
        mode = SHINGLE_MODE
    if mode == CHAR_MODE:
        return char_ngrams(text, n)
    stop = set(stopwords)
    words = [t for t in tokens(text, han_single=han_single) if t not in stop]
    if mode == WORD_MODE:
        return words
    return shingles(words, n)
