"""Cleaned text: a document less the passages that an earlier document already holds.

The characters removed are the spans overlap reports (the copy side of each passage pair: the
later document), merged; nothing else decides. Another rule that names text to remove (the
boilerplate/template rule of the partial-copies issue) hands its spans in as ``extra``: they
are merged with the passages' before anything is cut, so one document is cut once.

>>> from neardup.overlap import OverlapFinder
>>> f = OverlapFinder(min_length=5)
>>> _ = f.add("one two three four five six seven eight nine ten eleven twelve")
>>> text = "Intro. one two three four five six seven eight nine ten. Outro."
>>> strip_passages(text, f.query(text))
('Intro. . Outro.', 48)
"""

from __future__ import annotations

from collections.abc import Iterable

from neardup.overlap.finder import Passage

__all__ = ["merged_spans", "strip_passages", "strip_spans"]

Span = tuple[int, int]


def merged_spans(spans: Iterable[Span]) -> list[Span]:
    """The union of the ``[start, end)`` spans, sorted; overlapping or touching spans joined.

    >>> merged_spans([(5, 9), (0, 3), (3, 4), (8, 12), (20, 20)])
    [(0, 4), (5, 12)]
    """
    out: list[Span] = []
    for lo, hi in sorted(spans):
        if hi <= lo:
            continue
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def strip_spans(text: str, spans: Iterable[Span], min_length: int = 0) -> tuple[str, int]:
    """``text`` without the merged ``spans`` at least ``min_length`` characters long, and the
    number of characters removed.

    >>> strip_spans("aaaXXbbbYYYYccc", [(3, 5), (8, 12)], min_length=3)
    ('aaaXXbbbccc', 4)
    """
    if min_length < 0:
        raise ValueError(f"min_length must be >= 0 characters, got {min_length!r}")
    pieces: list[str] = []
    last = removed = 0
    for lo, hi in merged_spans(spans):
        if hi - lo < min_length:
            continue
        pieces.append(text[last:lo])
        removed += hi - lo
        last = hi
    if not removed:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), removed


def strip_passages(
    text: str, passages: Iterable[Passage], min_length: int = 0, extra: Iterable[Span] = ()
) -> tuple[str, int]:
    """``text`` (the query side of ``passages``) without its copied passages and ``extra``
    spans (another rule's, e.g. templates), merged, those under ``min_length`` characters left
    in; and the number of characters removed (see :func:`strip_spans`)."""
    spans = [p.span for p in passages]
    spans.extend(extra)
    return strip_spans(text, spans, min_length)
