"""Chinese word segmentation, run by run.

Only maximal runs of Han characters go to the segmenter (jieba's dictionary and HMM); Latin
words, numbers and everything else stay with neardup's own tokenizer. Because the segmenter
never sees non-Han text, ``rjieba`` (Rust) and ``jieba`` (Python) give the same cuts, so the
choice between them is a speed choice, not part of the fingerprint.

>>> segment_han_runs("今天天气不错, iPhone降价了", segmenter("jieba"))
'今天天气 不错, iPhone降价 了'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from neardup.errors import BadInputError
from neardup.features.charclass import han_run_pattern

Cutter = Callable[[str], list[str]]
SEGMENTERS = ("auto", "rjieba", "jieba")


@lru_cache(maxsize=4)
def segmenter(name: str) -> Cutter:
    """A cutter by name: ``"rjieba"``, ``"jieba"`` or ``"auto"`` (rjieba if installed)."""
    if name == "auto":
        try:
            return segmenter("rjieba")
        except ImportError:
            return segmenter("jieba")
    if name == "rjieba":
        import rjieba

        return rjieba.cut  # type: ignore[no-any-return,unused-ignore]
    if name == "jieba":
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        return jieba.lcut  # type: ignore[no-any-return,unused-ignore]
    raise BadInputError(f"unknown segmenter {name!r}; use one of {SEGMENTERS} or None")


# UTF-8 lead bytes of every Han block (U+3400-9FFF, U+F900-FAFF, planes 2-3): a byte string
# with none of them has no Han character, which ``bytes.__contains__`` (memchr) finds fast.
_HAN_PROBES = (b"\xe3", b"\xe4", b"\xe5", b"\xe6", b"\xe7", b"\xe8", b"\xe9", b"\xef", b"\xf0")


def may_contain_han(encoded: bytes) -> bool:
    """False only if the UTF-8 bytes certainly contain no Han character."""
    return any(probe in encoded for probe in _HAN_PROBES)


# jieba's dictionary and HMM see only U+4E00-U+9FD5; it yields every other Han character (CJK
# Extension A/B.., compatibility ideographs) as a word of its own, while rjieba may join them.
# Splitting them off before either cutter runs gives both the same cuts (jieba's).
_OUTSIDE_JIEBA = re.compile("([^\u4e00-\u9fd5])")


def _cut_run(run: str, cut: Cutter) -> str:
    """One Han run cut into words, characters outside jieba's range each a word of its own."""
    words: list[str] = []
    for i, piece in enumerate(_OUTSIDE_JIEBA.split(run)):
        if piece:
            words.extend([piece] if i % 2 else cut(piece))
    return " ".join(words)


def segment_han_runs(text: str, cut: Cutter) -> str:
    """Insert a space between the words of every Han run of ``text`` (other text unchanged)."""
    if text.isascii():  # O(1) in CPython; skips the regex scan for most non-Chinese text
        return text
    parts = han_run_pattern().split(text)
    if len(parts) == 1:
        return text
    runs = parts[1::2]
    if any(_OUTSIDE_JIEBA.search(run) for run in runs):  # rare: the run-by-run path
        parts[1::2] = [_cut_run(run, cut) for run in runs]
        return "".join(parts)
    cuts = " ".join(cut("\n".join(runs))).split(" \n ")
    if len(cuts) != len(runs):  # a segmenter that merged across the separator: cut run by run
        cuts = [" ".join(cut(run)) for run in runs]
    parts[1::2] = cuts
    return "".join(parts)
