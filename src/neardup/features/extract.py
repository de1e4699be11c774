"""Feature strings of one prepared text, from the same kernels the fingerprint uses.

The fingerprint path never builds strings; this mirror does, for ``Fingerprinter.features``,
``explain`` and IDF fitting. Both paths share ``token_spans`` and ``char_stream``, so they
cannot drift apart (a test checks that the keys agree).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from neardup.features.charclass import char_classes
from neardup.features.kernels import CHAR_MODE, WORD_MODE, char_stream, token_spans


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
    return [raw[s:e].decode("utf-8", "surrogatepass") for s, e in zip(starts[:n], ends[:n])]


def char_ngrams(text: str, n: int) -> list[str]:
    """Character ``n``-grams of a prepared text, separators collapsed to one space.

    >>> char_ngrams("ab, cd!", 3)
    ['ab ', 'b c', ' cd']
    """
    buf = _as_bytes(text)
    out = np.empty(buf.size * 2 + 8, dtype=np.uint8)
    cps = np.empty(buf.size + 2, dtype=np.int64)
    nb, ncp = char_stream(buf, 0, buf.size, char_classes(), out, cps)
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


def feature_list(
    text: str, *, mode: int, n: int, han_single: bool, stopwords: Iterable[str] = ()
) -> list[str]:
    """All features of a prepared text, in text order, repeats included."""
    if mode == CHAR_MODE:
        return char_ngrams(text, n)
    stop = set(stopwords)
    words = [t for t in tokens(text, han_single=han_single) if t not in stop]
    if mode == WORD_MODE:
        return words
    return shingles(words, n)
