"""The per-pair step of overlap detection: one query document against one source document.

This is the one place that turns the seeds two documents share into reported passages (spans
and score). :class:`~neardup.overlap.finder.OverlapFinder` calls it for every source its gram
index names; the Spark engine calls it for every (query, source) pair its join names, so both
report the same passages for the same seeds.

>>> params = PairParams(ngram=4, gap=20, min_length=5)
>>> q = prepare("so: one two three four five six seven eight nine ten", params)
>>> d = prepare("one two three four five six seven eight nine ten eleven", params)
>>> seeds = shared_seeds(q, d)
>>> [(a.span, a.source_span, a.score) for a in pair_passages(q, d, seeds, params)]
[((4, 52), (0, 48), 1.0)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.overlap.align import align, fine_seeds, gram_share
from neardup.overlap.tokens import WORD_UNITS, Grams, Tokens, grams, tokenize

__all__ = ["Found", "PairParams", "Prepared", "pair_passages", "prepare", "shared_seeds"]

# Seeds within NEAR grams of each other form a group (a lone seed is a common phrase, not a
# copy); FINE: the fine seeds are grams this many words shorter than ``ngram``.
NEAR = 1
FINE = 2


@dataclass(frozen=True)
class PairParams:
    """The finder parameters the per-pair step reads (words; a Han character is half a word)."""

    ngram: int
    gap: int
    min_length: int


@dataclass(frozen=True)
class Prepared:
    """A document ready for the per-pair step: its tokens, grams and fine grams."""

    tokens: Tokens
    grams: Grams
    fine: Grams


@dataclass(frozen=True)
class Found:
    """One passage pair: ``[start, end)`` code-point spans in the query and the source."""

    span: tuple[int, int]
    source_span: tuple[int, int]
    score: float


def coarse_grams(tokens: Tokens, params: PairParams) -> Grams:
    """The hashed grams that are indexed and looked up (``ngram`` words)."""
    return grams(tokens, params.ngram * WORD_UNITS)


def fine_grams(tokens: Tokens, params: PairParams) -> Grams:
    """The shorter grams used to fill gaps between seeds (``ngram - FINE`` words)."""
    return grams(tokens, max(1, params.ngram - FINE) * WORD_UNITS)


def prepare(text: str, params: PairParams) -> Prepared:
    """Tokenise ``text`` and hash its grams for :func:`pair_passages`."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    toks = tokenize(text)
    return Prepared(toks, coarse_grams(toks, params), fine_grams(toks, params))


def shared_seeds(query: Prepared, source: Prepared) -> npt.NDArray[np.int64]:
    """Every (query gram, source gram) pair with equal hashes, as seed rows
    ``(q_first, q_last, d_first, d_last)`` (no winnowing: a reference for tests and small
    pairs)."""
    qh, dh = query.grams.hashes, source.grams.hashes
    qi, di = np.nonzero(qh[:, None] == dh[None, :])
    q, d = query.grams, source.grams
    return np.stack([q.first[qi], q.last[qi], d.first[di], d.last[di]], axis=1).astype(np.int64)


def pair_passages(
    query: Prepared, source: Prepared, seeds: npt.NDArray[np.int64], params: PairParams
) -> list[Found]:
    """Passages of ``query`` found in ``source`` from their shared ``seeds`` (rows
    ``(q_first, q_last, d_first, d_last)`` in token units), sorted by query span."""
    qt, g, dt, dg = query.tokens, query.grams, source.tokens, source.grams
    reach = params.gap * WORD_UNITS
    fine = fine_seeds(qt, dt, query.fine, source.fine, seeds, reach) if FINE else seeds[:0]
    found = align(
        qt,
        dt,
        np.concatenate([seeds, fine]),
        strong=seeds.shape[0],
        near=NEAR * params.ngram * WORD_UNITS,
        gap=params.gap * WORD_UNITS,
        min_units=params.min_length * WORD_UNITS,
    )
    out = []
    for a in found:
        qin = (g.first >= a.q_first) & (g.last <= a.q_last)
        din = (dg.first >= a.d_first) & (dg.last <= a.d_last)
        score = gram_share(g.hashes[qin], dg.hashes[din])
        span = (int(qt.starts[a.q_first]), int(qt.ends[a.q_last - 1]))
        source_span = (int(dt.starts[a.d_first]), int(dt.ends[a.d_last - 1]))
        out.append(Found(span, source_span, round(score, 4)))
    return out
