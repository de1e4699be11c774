"""Cleaned text: a document less the passages that an earlier document already holds.

The characters removed are the spans overlap reports (the copy side of each passage pair: the
later document), merged, each edge moved out to the sentence boundary when one is at most
:data:`SNAP_CHARS` characters away (a passage found a word or a full stop short of the copied
sentences left fragments such as ``"The ."``). Another rule that names text to remove (the
boilerplate/template rule of the partial-copies issue) hands its spans in as ``extra``: they
are merged with the passages' before anything is cut, so one document is cut once (and are cut
as given: a template is not a sentence).

One rule on every surface (``neardup overlap --strip``, ``overlap_table(strip=True)``, the
datatrove strip step): the cut removes what the report reports. The report sets templates
aside by default, so templates stay in unless asked for (:data:`STRIP_TEMPLATES`,
:func:`cuts_templates`).

>>> from neardup.overlap import OverlapFinder
>>> f = OverlapFinder(min_length=5)
>>> _ = f.add("one two three four five six seven eight nine ten eleven twelve")
>>> text = "Intro. The one two three four five six seven eight nine ten. Outro."
>>> strip_passages(text, f.query(text))
('Intro. Outro.', 54)
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

from neardup.overlap.finder import Passage

__all__ = [
    "SNAP_CHARS",
    "STRIP_TEMPLATES",
    "cuts_templates",
    "merged_spans",
    "split_templates",
    "strip_counted",
    "strip_passages",
    "strip_spans",
    "to_sentences",
]

Span = tuple[int, int]

#: how far (characters) a cut passage's edge moves out to a sentence boundary: at 12,
#: bench_strip.py (seed 1) keeps precision (en 0.8498 -> 0.8488, zh 0.8393 -> 0.8385) and
#: raises recall (0.9781 -> 0.9804, 0.9587 -> 0.9689); 24 cost 0.5 point of zh precision
SNAP_CHARS = 12
#: whether a strip cuts the templates the report sets aside, by default: no, it removes what
#: the report reports (copies; templates only when asked, ``--strip-templates``). A template is
#: not a copy: on the planted sets (bench_strip.py, seeds 5, 11, 17) cutting templates gave
#: precision en 0.80-0.86, zh 0.84-0.85; copies only en 0.98-0.99, zh 0.947-0.970
STRIP_TEMPLATES = False
_ENDS = frozenset(".!?;\u3002\uff01\uff1f\uff1b")  # . ! ? ; and the full-width 。！？；
_WIDE_ENDS = frozenset("\u3002\uff01\uff1f\uff1b")  # end a sentence with no space after
_CLOSING = frozenset("\"')]\u201d\u2019\u300d\u300f")  # after a full stop: " ' ) ] ” ’ 」 』


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


def _sentence_start(text: str, lo: int) -> int:
    """Where the sentence holding ``text[lo]`` starts, if at most :data:`SNAP_CHARS` back
    (after a line break, a wide full stop, or a full stop and a space), else ``lo``."""
    for b in range(lo, max(0, lo - SNAP_CHARS) - 1, -1):
        if b == 0:
            return 0
        c = text[b - 1]
        if c == "\n" or c in _WIDE_ENDS:
            return b
        if c.isspace():
            before = text[b - 2 : b - 1]
            if before in _CLOSING and b >= 3:
                before = text[b - 3]
            if before in _ENDS:
                return b
    return lo


def _ends_sentence(text: str, hi: int) -> bool:
    """Whether ``text[:hi]`` ends a sentence (a full stop, maybe closing quotes, then a space,
    a line break or the end; a wide full stop alone)."""
    e = hi
    while e > 0 and text[e - 1] in _CLOSING:
        e -= 1
    if e == 0 or text[e - 1] not in _ENDS:
        return hi > 0 and text[hi - 1] == "\n"
    return hi == len(text) or text[e - 1] in _WIDE_ENDS or text[hi].isspace()


def _starts_sentence(text: str, lo: int) -> bool:
    """Whether a sentence starts at ``text[lo]`` (see :func:`_sentence_start`)."""
    if lo == 0 or text[lo - 1] == "\n" or text[lo - 1] in _WIDE_ENDS:
        return True
    return text[lo - 1].isspace() and _ends_sentence(text, lo - 1)


def _sentence_end(text: str, hi: int) -> int:
    """Where the sentence holding ``text[hi - 1]`` ends (its full stop and closing quotes
    included), if at most :data:`SNAP_CHARS` on, else ``hi``."""
    e, n = hi, len(text)
    if _ends_sentence(text, hi):
        return hi
    while e < min(n, hi + SNAP_CHARS):
        c = text[e]
        if c == "\n":
            return e
        e += 1
        if c in _ENDS:
            while e < n and text[e] in _CLOSING:
                e += 1
            if e == n or c in _WIDE_ENDS or text[e].isspace():
                return e
    return n if e == n else hi


def to_sentences(text: str, lo: int, hi: int) -> Span:
    """The span ``[lo, hi)`` of ``text`` widened to the sentence boundaries around it when they
    are at most :data:`SNAP_CHARS` away, with the spaces after it when it then starts a
    sentence (so that cutting it leaves neither ``"The ."`` nor two spaces).

    >>> text = "Intro. The copied words. Outro."
    >>> lo, hi = to_sentences(text, 11, 23)
    >>> text[lo:hi], text[:lo] + text[hi:]
    ('The copied words. ', 'Intro. Outro.')
    >>> text = "Intro. The copied words and many more of them. Outro."
    >>> lo, hi = to_sentences(text, 11, 17)  # its sentence ends more than 12 characters on
    >>> text[lo:hi]
    'The copied'
    """
    start, end = _sentence_start(text, lo), _sentence_end(text, hi)
    lo = start if text[start:lo].strip() else lo
    hi = end if text[hi:end].strip() else hi
    if _starts_sentence(text, lo) and _ends_sentence(text, hi):
        while hi < len(text) and text[hi] in " \t":
            hi += 1
    return lo, hi


def strip_spans(
    text: str, spans: Iterable[Span], min_length: int = 0, extra: Iterable[Span] = ()
) -> tuple[str, int]:
    """``text`` without the merged ``spans`` (copied passages, widened to their sentences:
    :func:`to_sentences`) and ``extra`` spans (another rule's, cut as given), of the stretches
    at least ``min_length`` characters long; and the number of characters removed.

    >>> strip_spans("One two. Three four. Five six.", [(0, 2), (9, 20)], min_length=5)
    ('One two. Five six.', 12)
    >>> strip_spans("One. Two three four. Five.", [(9, 19)])
    ('One. Five.', 16)
    >>> strip_spans("One. Two three four. Five.", [], extra=[(9, 19)])  # as given
    ('One. Two . Five.', 10)
    """
    if min_length < 0:
        raise ValueError(f"min_length must be >= 0 characters, got {min_length!r}")
    spans = merged_spans(spans)
    whole = [s for s in merged_spans([*spans, *extra]) if s[1] - s[0] >= min_length]
    starts = [lo for lo, _ in whole]
    cut = list(whole)
    for lo, hi in spans:  # a passage in a stretch that goes: to its sentences' boundaries
        i = bisect_right(starts, lo) - 1
        if i >= 0 and hi <= whole[i][1]:
            cut.append(to_sentences(text, lo, hi))
    pieces: list[str] = []
    last = removed = 0
    for lo, hi in merged_spans(cut):
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
    return strip_spans(text, [p.span for p in passages], min_length, extra)


def cuts_templates(strip_templates: bool, templates: str) -> bool:
    """Whether a strip cuts templates (their characters counted apart): when asked
    (``strip_templates``: ``--strip-templates``), or when the report flags them
    (``templates="keep"``: a strip removes what the report reports).

    >>> cuts_templates(STRIP_TEMPLATES, "drop"), cuts_templates(STRIP_TEMPLATES, "keep")
    (False, True)
    >>> cuts_templates(True, "drop")
    True
    """
    return strip_templates or templates == "keep"


def split_templates(
    passages: Iterable[Passage], aside: list[Span] | None
) -> tuple[list[Span], list[Span] | None]:
    """The spans a strip cuts in one text: those of its copied ``passages``, and (when
    templates are cut: ``aside`` given, the spans the finder set aside as templates,
    :meth:`~neardup.overlap.OverlapFinder.record_template_spans`) its templates, set aside or
    flagged; ``None`` when templates are not cut.

    >>> copy = Passage("b", (0, 9), "a", (0, 9), 1.0, 1, 0)
    >>> got = [copy, Passage("b", (20, 30), "a", (5, 15), 1.0, 1, 0, template=True)]
    >>> split_templates(got, [(40, 50)])
    ([(0, 9)], [(40, 50), (20, 30)])
    >>> split_templates(got[:1], None)
    ([(0, 9)], None)
    """
    if aside is None:
        return [p.span for p in passages], None
    got = list(passages)
    return [p.span for p in got if not p.template], aside + [p.span for p in got if p.template]


def strip_counted(
    text: str, copies: Iterable[Span], templates: Iterable[Span] | None, min_length: int = 0
) -> tuple[str, int, int | None]:
    """``text`` less its ``copies`` (see :func:`strip_spans`) and, when given, its
    ``templates`` (cut as given); the characters removed, and how many of them only because of
    a template (None when ``templates`` is None: templates not cut).

    >>> strip_counted("One. Two three four. Five.", [(9, 19)], None)
    ('One. Five.', 16, None)
    >>> strip_counted("One. Two three four. Five.", [], [(9, 19)])
    ('One. Two . Five.', 10, 10)
    """
    copies = list(copies)
    if templates is None:
        cleaned, removed = strip_spans(text, copies, min_length)
        return cleaned, removed, None
    extra = list(templates)
    cleaned, removed = strip_spans(text, copies, min_length, extra)
    copied = strip_spans(text, copies, min_length)[1] if extra else removed
    return cleaned, removed, removed - copied
