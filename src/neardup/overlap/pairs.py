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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup import _backend
from neardup._backend import overlap_kernels
from neardup.features.charclass import char_classes
from neardup.overlap.align import Alignment, align, fine_seeds, gram_share_counts
from neardup.overlap.tokens import (
    CJK_UNITS,
    WORD_UNITS,
    Grams,
    Tokens,
    fold_table,
    gram_units,
    grams,
    tokenize,
)

__all__ = [
    "SOURCE_MODES",
    "Found",
    "PairParams",
    "Prepared",
    "cross_source_keep",
    "pack",
    "packer",
    "pair_passages",
    "pair_passages_reference",
    "prepare",
    "prepare_packed",
    "shared_seeds",
    "source_rows",
    "token_arrays",
    "unpack",
]

# Seeds within NEAR grams of each other form a group (a lone seed is a common phrase, not a
# copy); FINE: the fine seeds are grams this many words shorter than ``ngram``.
NEAR = 1
FINE = 2
FANOUT = 4  # a fine gram repeated more often than this in the source is left out
# fine seeds are looked for within REACH * gap of the strong ones: groups of them bridge and
# extend a heavy rewrite's passage gap by gap (3: zh heavy 0.72 -> 0.76, seed 1; en the same)
REACH = 3
# grams are sized in gram units (tokens.gram_units: a word 3, a Han character 2): ngram 4 is
# 4 words or 6 Han characters, fine grams 2 words or 3 Han characters. With a quarter of the
# characters edited (洗稿) 8-character grams left too few seeds (zh heavy 0.68 -> 0.89, seed 1)
GRAM_WORD = 3
# a passage is kept when its fine grams found in the source passage (or within one gap of it)
# cover at least this share (percent) of its query tokens: two shared phrases around unrelated
# text are not a copy (heavy rewrites: 57 % or more for 95 % of them; such false passages:
# 44 % median)
MIN_COVER = 50
# cross_source_keep compares each row with each below this many rows of a query (a sweep's
# set-up costs more there: Reuters' 4,988 queries of under 10 rows took 2x as long swept)
PAIRWISE = 12


@dataclass(frozen=True)
class PairParams:
    """The finder parameters the per-pair step reads, in words (a Han character is half a word
    in ``gap``, two thirds in ``ngram`` and ``min_length``: gram units)."""

    ngram: int
    gap: int
    min_length: int


@dataclass(frozen=True)
class Prepared:
    """A document ready for the per-pair step: its tokens, grams and fine grams
    (``packed``: the same arrays in one buffer, as the C kernel reads them)."""

    tokens: Tokens
    grams: Grams
    fine: Grams
    packed: bytes | None = None


@dataclass(frozen=True)
class Found:
    """One passage pair: ``[start, end)`` code-point spans in the query and the source."""

    span: tuple[int, int]
    source_span: tuple[int, int]
    score: float


def gram_sizes(params: PairParams) -> tuple[int, int]:
    """The sizes of the coarse and fine grams, in gram units."""
    return params.ngram * GRAM_WORD, max(1, params.ngram - FINE) * GRAM_WORD


def coarse_grams(tokens: Tokens, params: PairParams) -> Grams:
    """The hashed grams that are indexed and looked up (``ngram`` words, ``1.5 * ngram`` Han
    characters: :func:`~neardup.overlap.tokens.gram_units`)."""
    return grams(tokens, gram_sizes(params)[0], gram_units(tokens))


def fine_grams(tokens: Tokens, params: PairParams) -> Grams:
    """The shorter grams used to fill gaps between seeds (``ngram - FINE`` words)."""
    return grams(tokens, gram_sizes(params)[1], gram_units(tokens))


def prepare(text: str, params: PairParams) -> Prepared:
    """Tokenise ``text`` and hash its grams for :func:`pair_passages`."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if overlap_kernels() is None:
        toks = tokenize(text)
        return Prepared(toks, coarse_grams(toks, params), fine_grams(toks, params))
    return unpack(text, prepare_packed(text, params))


def prepare_packed(text: str, params: PairParams) -> bytes:
    """The packed arrays of :func:`prepare` (see ``overlap_kernels.h``)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if overlap_kernels() is None:
        return pack(prepare(text, params))
    coarse, fine = gram_sizes(params)
    fold = fold_table()
    while True:
        packed = _backend.OV.prepare(
            text, char_classes(), fold, WORD_UNITS, CJK_UNITS, coarse, fine
        )
        if isinstance(packed, bytes):
            return packed
        fold = fold_table(text)  # a character seen for the first time: fold all of them


def packer(params: PairParams) -> Callable[[str], bytes]:
    """:func:`prepare_packed` for ``params`` with its arguments bound (C kernel; the per-text
    cost of a stream of texts)."""
    if overlap_kernels() is None:
        return lambda text: prepare_packed(text, params)
    run, cls, fold = _backend.OV.prepare, char_classes(), fold_table()  # fold: filled in place
    coarse, fine = gram_sizes(params)

    def pack_one(text: str) -> bytes:
        packed = run(text, cls, fold, WORD_UNITS, CJK_UNITS, coarse, fine)
        return packed if type(packed) is bytes else prepare_packed(text, params)

    return pack_one


def unpack(text: str, packed: bytes) -> Prepared:
    """The :class:`Prepared` whose arrays are views of ``packed`` (see ``overlap_kernels.h``)."""
    a = np.frombuffer(packed, dtype=np.int64)
    n, nc, nf = int(a[0]), int(a[1]), int(a[2])
    o = [3]
    for size in (n, n, n + 1, n, nc, nc, nc, nf, nf, nf):
        o.append(o[-1] + size)
    v = [a[o[i] : o[i + 1]] for i in range(10)]
    toks = Tokens(text, v[0], v[1], v[2], v[3].view(np.uint64))
    g, f = Grams(v[4], v[5], v[6].view(np.uint64)), Grams(v[7], v[8], v[9].view(np.uint64))
    return Prepared(toks, g, f, packed)


def token_arrays(
    prepared: Prepared | bytes,
) -> tuple[
    npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.uint64]
]:
    """The tokens' ``starts``, ``ends``, cumulative ``units`` and ``hashes`` of a prepared
    text (views of the packed bytes: no other array is made)."""
    if isinstance(prepared, Prepared):
        t = prepared.tokens
        return t.starts, t.ends, t.units, t.hashes
    a = np.frombuffer(prepared, dtype=np.int64)
    n = int(a[0])
    return (
        a[3 : 3 + n],
        a[3 + n : 3 + 2 * n],
        a[3 + 2 * n : 4 + 3 * n],
        a[4 + 3 * n : 4 + 4 * n].view(np.uint64),
    )


def pack(p: Prepared) -> bytes:
    """``p``'s arrays in the C kernel's layout (``p.packed`` when it has one)."""
    if p.packed is not None:
        return p.packed
    t, g, f = p.tokens, p.grams, p.fine
    head = np.array([len(t), g.hashes.size, f.hashes.size], dtype=np.int64)
    parts = [head, t.starts, t.ends, t.units, t.hashes, g.first, g.last, g.hashes]
    parts += [f.first, f.last, f.hashes]
    return b"".join(np.ascontiguousarray(x).astype(np.int64, copy=False).tobytes() for x in parts)


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
    ``(q_first, q_last, d_first, d_last)`` in token units), in the order of their boxes."""
    if overlap_kernels() is None:
        return pair_passages_reference(query, source, seeds, params)
    seeds = np.ascontiguousarray(seeds, dtype=np.int64).reshape(-1, 4)
    bounds = np.array([0, seeds.shape[0]], dtype=np.int64)
    rows = _backend.OV.pairs(pack(query), [pack(source)], seeds, bounds, *kernel_params(params))
    return [Found((a, b), (c, d), score(num, den)) for _, a, b, c, d, num, den in rows]


def kernel_params(params: PairParams) -> tuple[int, int, int, int, int]:
    """The C kernel's ``near, gap, min_units, reach, fanout`` (units; ``min_units`` in gram
    units) for ``params``."""
    gap = params.gap * WORD_UNITS
    near, min_units = params.ngram * NEAR * WORD_UNITS, params.min_length * GRAM_WORD
    return near, gap, min_units, REACH * gap, FANOUT


def score(num: int, den: int) -> float:
    """The reported score: ``num / den`` rounded to 4 places (0.0 without grams)."""
    return round(num / den, 4) if den else 0.0


def pair_passages_reference(
    query: Prepared, source: Prepared, seeds: npt.NDArray[np.int64], params: PairParams
) -> list[Found]:
    """:func:`pair_passages` in Python and numpy (the reference of the C kernel)."""
    if seeds.size == 0:
        return []
    qt, g, dt, dg = query.tokens, query.grams, source.tokens, source.grams
    reach = REACH * params.gap * WORD_UNITS
    fine = fine_seeds(qt, dt, query.fine, source.fine, seeds, reach, FANOUT)
    found = align(
        qt,
        dt,
        np.concatenate([seeds, fine]),
        strong=seeds.shape[0],
        near=NEAR * params.ngram * WORD_UNITS,
        gap=params.gap * WORD_UNITS,
        min_units=params.min_length * GRAM_WORD,
    )
    kept: list[_Kept] = []
    for a in found:
        qin = (g.first >= a.q_first) & (g.last <= a.q_last)
        din = (dg.first >= a.d_first) & (dg.last <= a.d_last)
        num, den = gram_share_counts(g.hashes[qin], dg.hashes[din])
        span = (int(qt.starts[a.q_first]), int(qt.ends[a.q_last - 1]))
        source_span = (int(dt.starts[a.d_first]), int(dt.ends[a.d_last - 1]))
        if 100 * _covered(query, source, a, params.gap * WORD_UNITS) < MIN_COVER * (
            a.q_last - a.q_first
        ):
            continue
        kept.append((a.q_first, a.q_last, num, den, span, source_span))
    out = []
    for i, f in enumerate(kept):
        inside = (g for j, g in enumerate(kept) if j != i and g[0] <= f[0] and f[1] <= g[1])
        if not any(_longer(g, f) for g in inside):
            out.append(Found(f[4], f[5], score(f[2], f[3])))
    return out


def _covered(query: Prepared, source: Prepared, a: Alignment, widen: int) -> int:
    """Tokens of the query passage covered by its fine grams found in the source passage or
    within ``widen`` units of it (a swapped sentence can lie just outside its span)."""
    qf, df, du = query.fine, source.fine, source.tokens.units
    qin = (qf.first >= a.q_first) & (qf.last <= a.q_last)
    din = (du[df.first] >= du[a.d_first] - widen) & (du[df.last] <= du[a.d_last] + widen)
    hit = np.isin(qf.hashes[qin], df.hashes[din])
    cover = np.zeros(a.q_last - a.q_first + 1, dtype=np.int64)
    np.add.at(cover, qf.first[qin][hit] - a.q_first, 1)
    np.add.at(cover, qf.last[qin][hit] - a.q_first, -1)
    return int((np.cumsum(cover)[:-1] > 0).sum())


def cross_source_keep(rows: Sequence[tuple[int, int, int, float]]) -> list[bool]:
    """Which of one query's passages, rows (span start, span end, source, score), to report:
    not one whose span lies inside a longer passage from another source that scores more
    than twice as much (a phrase that source also holds, inside a passage copied from
    elsewhere: zh none precision 0.965 -> 0.996, seed 1). The finder, the service and the
    Spark engine apply it to the passages left by ``min_score``.

    >>> cross_source_keep([(0, 100, 1, 1.0), (10, 30, 2, 0.2), (10, 30, 3, 0.9)])
    [True, False, True]
    """
    if len(rows) <= PAIRWISE:
        return [
            not any(
                g[2] != src and g[0] <= s0 and s1 <= g[1] and g[1] - g[0] > s1 - s0
                for g in rows
                if score * 2 < g[3]
            )
            for s0, s1, src, score in rows
        ]
    return _keep_sweep(rows)


def _keep_sweep(rows: Sequence[tuple[int, int, int, float]]) -> list[bool]:
    """:func:`cross_source_keep` by a sweep in span order (start, then the longer first): the
    spans begun so far that still reach the current start are the only ones that can hold
    it, and passages seldom nest, so few are (was: every row against every row; half of
    Reuters' pairs are in queries of 50 rows or more). Spans run forwards (start <= end).

    >>> _keep_sweep([(0, 100, 1, 1.0), (10, 30, 2, 0.2), (10, 30, 3, 0.9), (0, 100, 2, 0.1)])
    [True, False, True, True]
    """
    keep = [True] * len(rows)
    items = sorted([(r[0], -r[1], i) for i, r in enumerate(rows)])
    active: list[tuple[int, _Top]] = []  # (end, best two sources of the rows of that span)
    k = 0
    while k < len(items):
        s0, neg_end, _ = items[k]
        j = k + 1
        while j < len(items) and items[j][0] == s0 and items[j][1] == neg_end:
            j += 1  # the rows of one span: none holds another
        group = [items[x][2] for x in range(k, j)]
        active = [a for a in active if a[0] >= s0]
        if active:
            top = _best_two([e for end, t in active if end >= -neg_end for e in t])
            for i in group:
                other = top[0] if top[0][1] != rows[i][2] else top[1]
                keep[i] = not rows[i][3] * 2 < other[0]
        active.append((-neg_end, _best_two([(rows[i][3], rows[i][2]) for i in group])))
        k = j
    return keep


_Top = tuple[tuple[float, int | None], tuple[float, int | None]]
_NONE: tuple[float, int | None] = (-float("inf"), None)


def _best_two(entries: Iterable[tuple[float, int | None]]) -> _Top:
    """The best (score, source) of ``entries`` and the best of another source (``_NONE``
    where there is none): the best of a source other than any ``s`` is one of the two.

    >>> _best_two([(0.5, 1), (0.9, 1), (0.7, 2), (0.8, 3)])
    ((0.9, 1), (0.8, 3))
    """
    first = second = _NONE
    for e in entries:
        if e[0] > first[0]:
            if e[1] != first[1]:
                second = first
            first = e
        elif e[0] > second[0] and e[1] != first[1]:
            second = e
    return first, second


# "original": one row per copied passage, its earliest source (the closest named beside it);
# "best": the closest source only (aligner 7 and before); "all": every source holding it
SOURCE_MODES = ("original", "best", "all")
# a source holds a passage when its own passage covers at least HOLDS of the closest source's
# query span: a phrase inside a longer copy (a shared boilerplate line, a quote) does not make
# its document the original (at 1/2 a dateline holding 59 % of a copied paragraph did, and the
# paragraph was then set aside with it as a template)
HOLDS = 0.8
# a passage over twice as long as the closest's, holding it and scoring NEAR_COPY or more,
# is a copy of its own, reported as such: a whole article copied is not a holder of one of
# its sentences copied verbatim elsewhere (Clough & Stevenson, articles last: the whole copy
# and its link were lost). One scoring less (a rewrite or a template around the sentence), or
# not twice as long (the sentence with a matching header), still holds it (Reuters: 40 more
# passage pairs, the re-issued stories; holding nothing longer: 3,300 more, templates)
NEAR_COPY = 0.8
# a row step 6 drops inside a passage, at least PART as long, is an edited copy of a part of
# it and named with "all" (Clough & Stevenson's rewrites of a part of an article: 16-70 % of
# the passage, most over a third; the phrases PAN background texts share with a planted one:
# 6-28 %, which named cost 1-3 points of precision there)
PART = 1 / 3
# "original" names, beside the earliest, every full holder of a long passage (COPIED_BY_EACH
# code points or more) that made edits of its own, when each did: none holds it verbatim
# (VERBATIM: that one could as well be the original), their scores spread SPREAD or more, and
# one scoring like another (to 2 places) is a copy of one version (a re-issued story, a
# quote, a rewrite copied), named by the earliest as before; so is the closest (closest_id).
# The query is the one text they all differ from, each differently: likely their original,
# after them in a collection with no time order (Clough & Stevenson, articles last: heavy
# 0.211 -> 0.316 linked, shuffled 0.368 -> 0.474; Reuters 4,023 -> 4,025 rows, 20 Newsgroups
# 24,999 -> 25,014, People's Daily the same; the closest as a row of its own: 4,027, 25,034;
# without VERBATIM a verbatim copy of a rewrite named the rewrite's original as its copy)
COPIED_BY_EACH = 600
SPREAD = 0.1
VERBATIM = 0.95


def source_rows(
    rows: Sequence[tuple[int, int, int, float]], mode: str = "original", limit: int = 16
) -> tuple[list[tuple[int, int | None]], int]:
    """Which of one query's passages, rows (span start, span end, source, score; ``source``:
    the document's place, earlier first), to report under ``mode`` (:data:`SOURCE_MODES`),
    each with the row of its closest source (None: it is the closest), and how many holders
    ``"all"`` left out (at most ``limit`` rows per passage: the earliest and the closest).

    The closest sources are the rows :func:`cross_source_keep` keeps; taken by score, each
    gathers the rows not yet gathered that hold it (:func:`holders`).
    ``"original"`` reports the earliest full holder (and the :func:`edited_copies`, at most
    ``limit`` rows), ``"all"`` every holder, the full ones earliest first, then the partial
    ones.

    >>> rows = [(0, 100, 5, 0.9), (2, 98, 1, 0.4), (10, 20, 0, 0.1)]
    >>> source_rows(rows, "best"), source_rows(rows), source_rows(rows, "all")
    (([(0, None)], 0), ([(1, 0)], 0), ([(1, 0), (0, None)], 0))
    """
    keep = cross_source_keep(rows)
    if mode == "best":
        return [(i, None) for i, k in enumerate(keep) if k], 0
    closest = sorted((i for i, k in enumerate(keep) if k), key=lambda i: (-rows[i][3], i))
    taken = [False] * len(rows)
    out: list[tuple[int, int | None]] = []
    cut = 0
    for g in closest:
        if taken[g]:
            continue
        full, part = holders(rows, keep, taken, g)
        for i in full + (part if mode == "all" else []):
            taken[i] = True
        full.sort(key=lambda i: (rows[i][2], rows[i][0], i))  # the earliest source first
        if mode == "original":
            others = edited_copies(rows, full, g)  # the earliest is not one of them
            picked = full[:1] + others[: limit - 1]
            cut += len(others) + 1 - len(picked)
        else:
            part.sort(key=lambda i: (rows[i][2], rows[i][0], i))
            picked = (full + part)[:limit]
            if g not in picked:
                picked[-1] = g
            cut += len(full) + len(part) - len(picked)
        out += [(i, None if i == g else g) for i in picked]
    return out, cut


def edited_copies(
    rows: Sequence[tuple[int, int, int, float]], full: list[int], g: int
) -> list[int]:
    """The full holders of the passage of the closest source ``rows[g]`` (``full``, the
    earliest first; rows as for :func:`source_rows`) that ``"original"`` names beside the
    earliest: on a long passage (:data:`COPIED_BY_EACH`) that no holder holds verbatim
    (:data:`VERBATIM`) and whose holders' scores spread :data:`SPREAD` or more, those scoring
    unlike every other holder (each made edits of its own), but the closest (named beside
    the earliest already).

    >>> rows = [(0, 900, 1, 0.6), (0, 880, 2, 0.9), (0, 900, 3, 0.8), (0, 900, 4, 0.8)]
    >>> edited_copies(rows, [0, 1, 2], 1), edited_copies(rows, [0, 1, 2, 3], 1)
    ([2], [])
    >>> edited_copies([*rows[:2], (0, 900, 3, 1.0)], [0, 1, 2], 2)  # one holds it verbatim
    []
    """
    scores = [round(rows[i][3], 2) for i in full]
    if rows[g][1] - rows[g][0] < COPIED_BY_EACH or max(scores) >= VERBATIM:
        return []
    if max(scores) - min(scores) < SPREAD:
        return []
    return [i for i, x in zip(full[1:], scores[1:], strict=True) if i != g and scores.count(x) == 1]


def holders(
    rows: Sequence[tuple[int, int, int, float]], keep: Sequence[bool], taken: Sequence[bool], g: int
) -> tuple[list[int], list[int]]:
    """The rows not ``taken`` that hold the passage of the closest source ``rows[g]`` (rows as
    for :func:`source_rows`; ``keep``: :func:`cross_source_keep`'s), in full and in part.

    In full: their query span covers :data:`HOLDS` of its one (``g`` among them; the original
    is one of these), unless it is a passage over twice as long scoring :data:`NEAR_COPY` or
    more, a copy of its own. In part (named by ``"all"`` only): rows
    :func:`cross_source_keep` drops lying inside it (:data:`HOLDS` of their span) and at least
    :data:`PART` as long, an edited copy of a part of it: an original after its copies in
    input order names them so.

    >>> rows = [(0, 90, 3, 1.0), (5, 90, 1, 0.6), (20, 60, 0, 0.2), (0, 400, 2, 0.9)]
    >>> holders(rows, cross_source_keep(rows), [False] * 4, 0)
    ([0, 1], [2])
    """
    g0, g1 = rows[g][0], rows[g][1]
    need, least = HOLDS * (g1 - g0), PART * (g1 - g0)
    full, part = [], []
    for i, (r0, r1, _, score) in enumerate(rows):
        if taken[i]:
            continue
        shared = (r1 if r1 < g1 else g1) - (r0 if r0 > g0 else g0)  # min, max: no calls
        own = keep[i] and score >= NEAR_COPY and 2 * shared < r1 - r0  # a copy of its own
        if shared >= need and not own:
            full.append(i)
        elif not keep[i] and shared >= HOLDS * (r1 - r0) and r1 - r0 >= least:
            part.append(i)
    return full, part


_Kept = tuple[int, int, int, int, tuple[int, int], tuple[int, int]]


def _longer(g: _Kept, f: _Kept) -> bool:
    """Passage ``g`` wins over ``f`` (whose query span it holds): longer, or as long with a
    higher score (a part of the query is copied from one place; the lesser match is a
    repeated phrase)."""
    gl, fl = g[4][1] - g[4][0], f[4][1] - f[4][0]
    return gl > fl or (gl == fl and g[2] * f[3] > f[2] * g[3])
