"""The two forms of a text prepared for the per-pair step, and every branch on them.

A prepared text is a :class:`~neardup.overlap.pairs.Prepared` (numpy arrays: the Python
references) or packed ``bytes`` (one int64 buffer: the C kernels' form, see
``_csrc/overlap_kernels.h``). :class:`~neardup.overlap.finder.OverlapFinder` keeps either,
and asks here what it needs of one: the other form, its gram count, its postings in the
:class:`~neardup.overlap.index.GramIndex` and its look-ups there.

>>> from neardup.overlap.pairs import PairParams
>>> params = PairParams(ngram=4, gap=30, min_length=10)
>>> text = "a b c d e f g h"
>>> one = gram_count(prepare_form(text, params, packed=False))
>>> one == gram_count(prepare_form(text, params, packed=True)) > 0
True
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup import _backend
from neardup.features.charclass import char_classes
from neardup.overlap.index import GramIndex
from neardup.overlap.pairs import (
    PairParams,
    Prepared,
    gram_sizes,
    pack,
    prepare,
    prepare_packed,
    unpack,
)
from neardup.overlap.tokens import CJK_UNITS, WORD_UNITS, fold_table, winnow

__all__ = [
    "Form",
    "as_packed",
    "as_prepared",
    "gram_count",
    "look_up",
    "post",
    "prepare_form",
    "prepare_many",
    "reference_form",
]

Form = Prepared | bytes
_Seeds = tuple[list[int], npt.NDArray[np.int64], npt.NDArray[np.int64]]


def prepare_form(text: str, params: PairParams, packed: bool) -> Form:
    """``text`` prepared: packed (the C kernels run: no views made) or a :class:`Prepared`."""
    return prepare_packed(text, params) if packed else prepare(text, params)


def prepare_many(texts: list[str], params: PairParams) -> list[bytes]:
    """:func:`~neardup.overlap.pairs.prepare_packed` of each of ``texts`` (the C kernels run),
    in one call without the GIL, and one more after each text holding a character whose fold
    is not in the shared table yet (filled in first, as ``prepare_packed`` does).

    >>> from neardup._backend import overlap_kernels
    >>> params = PairParams(ngram=4, gap=30, min_length=10)
    >>> texts = ["a b c d e f", "Ünïcode ＡＢＣ 中文字"]
    >>> overlap_kernels() is None or prepare_many(texts, params) == [
    ...     prepare_packed(t, params) for t in texts]
    True
    """
    coarse, fine = gram_sizes(params)
    run, cls = _backend.OV.prepare_many, char_classes()
    out: list[bytes] = []
    while len(out) < len(texts):
        rest = texts[len(out) :] if out else texts
        got, _ = run(rest, cls, fold_table(), WORD_UNITS, CJK_UNITS, coarse, fine)
        out += got
        if len(out) < len(texts):
            fold_table(texts[len(out)])  # a character seen for the first time: fold them all
    return out


def as_prepared(text: str, form: Form) -> Prepared:
    """The :class:`Prepared` of ``text`` (views of the packed arrays when it is packed)."""
    return form if isinstance(form, Prepared) else unpack(text, form)


def reference_form(form: Form) -> Prepared:
    """``form`` where only the Python references run: a packed form comes only with the C
    kernels."""
    assert isinstance(form, Prepared)  # bytes only come with the kernel
    return form


def as_packed(form: Form) -> bytes:
    """The packed form (the C kernels' sources)."""
    return form if type(form) is bytes else pack(form)  # type: ignore[arg-type]


def gram_count(form: Form) -> int:
    """The text's coarse grams (what its seed budget is sized by)."""
    if isinstance(form, bytes):
        return int(np.frombuffer(form, np.int64, 3)[1])  # the packed header: n, nc, nf
    return int(form.grams.hashes.size)


def post(index: GramIndex, doc: int, form: Form, window: int) -> None:
    """Index document ``doc``: the coarse grams winnowing with ``window`` keeps."""
    if isinstance(form, bytes):
        index.add_packed(doc, form, window)
        return
    g = form.grams
    keep = winnow(g.hashes, window)
    index.add(doc, g.hashes[keep], np.stack([g.first[keep], g.last[keep]], 1))


def look_up(
    index: GramIndex,
    form: Form,
    max_df: int,
    min_seeds: int,
    window: int,
    max_seeds: int,
    cap: int = 0,
) -> _Seeds:
    """:meth:`GramIndex.seeds` of the coarse grams winnowing with ``window`` keeps (a window
    of grams shared with an indexed text has its smallest hash kept on both sides)."""
    if isinstance(form, bytes):
        return index.seeds_packed(form, max_df, min_seeds, window, max_seeds, cap)
    g = form.grams
    ask = winnow(g.hashes, window)
    hashes, first, last = g.hashes[ask], g.first[ask], g.last[ask]
    return index.seeds(hashes, first, last, max_df, min_seeds, max_seeds, cap)
