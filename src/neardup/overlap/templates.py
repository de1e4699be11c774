"""The template rule: shared text that the collection repeats as a formula is not a copy.

Collections repeat their own templates: bylines and datelines (``新华社华盛顿１月２９日电（记者…``),
quote headers (``In article <…> writes:``), signatures, legal notices, rows of figures. They are
learned from the indexed documents themselves: each document's tokens with a digit are masked
(a date or a figure is a variable slot), its grams of ``ngram`` tokens (words or Han
characters: a key of 4 Han characters fits between the slots of a dateline) are hashed on the
masked tokens and half of them, chosen by hash, are its *template keys*; every key counts the
indexed documents that hold it. A reported passage is a **template** when it is

- short (at most :data:`MAX_WORDS` words; a Han character counts 2/3) and either recurs (at
  least half of the query's template keys inside it are held by ``min_docs`` or more earlier
  indexed documents) or has its slots changed (the two sides are the same text but for their
  numbers, which differ: ``本报石家庄１月１３日电记者陈国琦报道`` against the same reporter's
  ``１月２５日``), or
- a row of figures (a quarter of its tokens hold a digit) that recurs, or
- a **frame with its slots filled in**: the text its two sides share (aligned token by token,
  in runs of at least ``ngram`` tokens) that no recurring key covers is under
  :data:`OWN_SHARE` of ``min_length``, and the sides differ somewhere (a slot:
  ``据新华社乌鲁木齐１月１９日电（记者`` against ``…蒙得维的亚…``, a wire formula with other
  parties) or it is short (the same reporter's byline on the same day). Where the sides
  differ, keys held by half of ``min_docs`` documents count as recurring, or
- a **report filled in with other figures**, of any length: figures (numbers, months,
  weekdays) of each side with no equal on the other, 3 and a quarter of them or more, or 2
  and three quarters (:data:`REFILLED`; ``fell 718 mln dlrs to 64.87 billion in the week
  ended March 4`` against ``fell 195 mln dlrs to 65.06 billion ...``: a weekly report; a
  copy keeps its figures as they were).

- a **common phrase**, at most :data:`PHRASE_LENGTH` times ``min_length`` words: either
  its two sides share under :data:`LOOSE` of their grams (its score: the same few words
  in other words, ``the Senate budget committee ... to start drafting a fiscal 1988
  budget``), or :data:`PHRASE_SHARE` of its keys are held by more earlier documents than
  hold the passage itself (more than its keys' lower quartile count, and 2 or more) and
  its sides do not hold the same numbers: its words recur as pieces in other texts, not as
  this passage (``Japan, South Korea and Taiwan to cut their trade surpluses with the
  U.S``, a quote header). A sentence copied into a few texts is held alike by each of its
  keys, a copied fact keeps its numbers: they stay copies.

A viral story copied into fifty articles recurs as much, but it is content: longer than a
formula, not made of numbers, its numbers copied as they were.

:func:`template_flags` is the rule, the one place it is written; the finder (library, CLI,
service) and the Spark engine call it with the :class:`TemplateBatch` of the queries and the
counts of their keys.

>>> from neardup.overlap.tokens import tokenize
>>> texts = [f"Reuters {d} Jan {d + 1} staff writer Smith said the council met" for d in range(6)]
>>> toks = [tokenize(t) for t in texts]
>>> batch = TemplateBatch(texts, [(t.starts, t.ends, t.units, t.hashes) for t in toks], 4)
>>> df = TemplateCounts().count(batch, add=True)  # each text's keys: the texts before it
>>> copied = [(5, 0, 40, texts[5][:40], 1.0)]  # its numbers copied: only the counts tell
>>> template_flags(batch, df, copied, 5, 10), template_flags(batch, df, copied, 6, 10)
([True], [False])
>>> template_flags(batch, df, [(5, 0, 40, texts[4][:40], 0.5)], 6, 10)  # 5 Jan 6 against 4 Jan 5
[True]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from difflib import SequenceMatcher

import numpy as np
import numpy.typing as npt

from neardup import _backend
from neardup._backend import overlap_kernels
from neardup.overlap.pairs import PairParams, packer, prepare, token_arrays
from neardup.overlap.tokens import Tokens, grams

__all__ = [
    "LOOSE",
    "MAX_FRAME_WORDS",
    "MAX_WORDS",
    "OWN_SHARE",
    "PHRASE_LENGTH",
    "PHRASE_SHARE",
    "REFILLED",
    "TemplateBatch",
    "TemplateCounts",
    "template_flags",
]

# a template is short: a byline, a quote header, a signature; 40 words (60 Han characters)
# holds them, and a copied story of that length is rarely repeated in many documents
MAX_WORDS = 40
DIGIT_SHARE = 0.25  # a passage a quarter of whose tokens hold a digit is a row of figures
HIGH_SHARE = 0.5  # share of a passage's template keys that must recur across documents
SAMPLE = 2  # one gram in SAMPLE (by hash) is a template key: half the counting work
# a passage whose two sides share less than OWN_SHARE of min_length (gram units) that no
# recurring key covers is a frame with its slots (names, clauses, dates) filled in: a dateline
# with another city, a wire formula with other parties; MAX_FRAME_WORDS bounds the alignment
OWN_SHARE = 0.8
# a passage whose sides hold other figures is a report of a series filled in with the
# period's figures (module docstring): (other figures on each side, their share of the larger
# side's figures) either of which is enough; 2 a quarter is a heavy rewrite's edge on the PAN
# zh sets (a figure of the host text beside the planted passage: zh seed 3 recall -0.005)
REFILLED = ((3, 0.25), (2, 0.75))
MAX_FRAME_WORDS = 200
# a common phrase (module docstring): at most PHRASE_LENGTH x min_length words, scoring under
# LOOSE or PHRASE_SHARE of whose keys more documents hold than hold the passage (Reuters read
# by hand, session 17: of the reported passages under 20 words, 5 in 24 were copies; 2 x
# min_length or a share of 0.5 cost the raw PAN sets a case each, en seeds 1 / 3; LOOSE 0.5
# one zh heavy case, seed 5)
PHRASE_LENGTH = 1.5
PHRASE_SHARE = 0.4
LOOSE = 0.35
_TOKENS_ONLY = PairParams(ngram=1, gap=0, min_length=1)  # a source's tokens (C kernel if built)
_MASK = np.uint64(0x9E3779B97F4A7C15)  # the hash every token with a digit is masked to
_GRAM_WORD = 3  # gram units per word (tokens.gram_units; pairs.GRAM_WORD)


_Ints = npt.NDArray[np.int64]
_TokenArrays = tuple[
    npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.uint64]
]


class TemplateBatch:
    """The template keys of a batch of texts, computed at once (a few numpy passes over the
    whole batch rather than per text). ``tokens``: each text's token ``starts``, ``ends``,
    cumulative ``units`` and ``hashes`` (:class:`~neardup.overlap.tokens.Tokens`' arrays).

    A template key is a gram of ``ngram`` tokens over the masked tokens; a key is kept when its
    hash falls in the sampled half (:data:`SAMPLE`): the same gram is kept in every text,
    whatever surrounds it, so a passage's keys are found in any other text holding it.
    """

    def __init__(self, texts: list[str], tokens: list[_TokenArrays], ngram: int) -> None:
        self.ngram = ngram
        sizes = np.array([t[0].size for t in tokens], dtype=np.int64)
        self.texts = texts
        self.tok_off = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.tok_off[1:])
        self.char_off = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(t) + 1 for t in texts], out=self.char_off[1:])
        shift = np.repeat(self.char_off[:-1], sizes)
        cat = np.concatenate
        empty = np.zeros(0, dtype=np.int64)
        self.starts = cat([empty, *(t[0] for t in tokens)]) + shift
        self.ends = cat([empty, *(t[1] for t in tokens)]) + shift
        # gram units (tokens.gram_units) of every token, cumulated over the whole batch: the
        # steps of the texts' cumulative units, less the step from one text to the next
        steps = np.diff(cat([empty, *(t[2] for t in tokens)]))
        weights = np.delete(steps, self.tok_off[1:-1] + np.arange(len(texts) - 1)) + 1
        self.units = np.zeros(weights.size + 1, dtype=np.int64)
        np.cumsum(weights, out=self.units[1:])
        self.token_hashes = cat([np.zeros(0, dtype=np.uint64), *(t[3] for t in tokens)])
        kernels = overlap_kernels()
        if kernels is None:
            self.digit, self.first, self.last, self.hashes = self._keys()
        else:  # the same in one C pass (the numpy passes were a quarter of the rule's cost)
            n = self.starts.size
            self.digit = np.empty(n, dtype=np.bool_)
            out = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
            hashes = np.empty(n, dtype=np.uint64)
            args = (texts, [tuple(t) for t in tokens], ngram, int(_MASK), SAMPLE)
            m = kernels.template_keys(*args, self.digit, *out, hashes)
            self.first, self.last, self.hashes = out[0][:m], out[1][:m], hashes[:m]
        self.gram_off = np.searchsorted(self.first, self.tok_off, "left")

    def _keys(self) -> tuple[npt.NDArray[np.bool_], _Ints, _Ints, npt.NDArray[np.uint64]]:
        """Per token: does it hold a digit; the template keys' first and last tokens and
        hashes (numpy: the reference of the C kernel ``template_keys``)."""
        # surrogatepass: a lone surrogate (JSON allows one) is one code point, as in the tokens
        cps = np.frombuffer("\n".join(self.texts).encode("utf-32-le", "surrogatepass"), np.uint32)
        is_digit = ((cps - 0x30) < 10) | ((cps - 0xFF10) < 10)  # ASCII, full-width (unsigned)
        # a digit is a word character, never between tokens: a token's run reaches the next
        digit = (
            np.logical_or.reduceat(is_digit, self.starts)
            if self.starts.size
            else np.zeros(0, dtype=np.bool_)
        )
        masked = Tokens(
            "", self.starts, self.ends, self.units, np.where(digit, _MASK, self.token_hashes)
        )
        g = grams(masked, self.ngram, np.arange(self.units.size, dtype=np.int64))
        doc = np.searchsorted(self.tok_off, g.first, "right") - 1
        # a gram that runs into the next text is not one of either
        ok = (g.last <= self.tok_off[doc + 1]) & (g.hashes % np.uint64(SAMPLE) == 0)
        return digit, g.first[ok], g.last[ok], g.hashes[ok]

    def __len__(self) -> int:
        return len(self.texts)

    def keys(self, i: int) -> list[int]:
        """Text ``i``'s template keys, in token order (repeats kept)."""
        result: list[int] = self.hashes[self.gram_off[i] : self.gram_off[i + 1]].tolist()
        return result


class TemplateCounts:
    """Template key -> number of indexed documents holding it: with the C kernels one hash
    table (``neardup._overlap.Counts``), else sorted segments merged as they grow (as
    :class:`~neardup.overlap.index.GramIndex` keeps its postings without the C kernel), a
    batch of texts counted and looked up with a few numpy passes; the same counts.

    >>> from neardup.overlap.tokens import tokenize
    >>> texts = ["one two three four five six", "so one two three four five six"]
    >>> toks = [tokenize(t) for t in texts]
    >>> b = TemplateBatch(texts, [(t.starts, t.ends, t.units, t.hashes) for t in toks], 2)
    >>> c = TemplateCounts()
    >>> first = len(b.keys(0))
    >>> df = c.count(b, add=True).tolist()  # per key of a text: the texts before it with it
    >>> df[:first] == [0] * first, df[first:].count(1) == first
    (True, True)
    >>> bool((c.count(b, add=False) >= 1).all())  # both texts counted now
    True
    """

    def __init__(self) -> None:
        self._keys: list[npt.NDArray[np.uint64]] = []
        self._docs: list[npt.NDArray[np.int64]] = []
        # a probe a key: the segments' sorts and look-ups were most of the rule's cost once
        # the alignment was in C
        self._table: _backend.OV.Counts | None = None
        if overlap_kernels() is not None:
            self._table = _backend.OV.Counts()

    def __len__(self) -> int:
        """The keys counted (each once)."""
        return len(self._table) if self._table is not None else int(self.arrays()[0].size)

    def _lookup(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        out = np.zeros(keys.size, dtype=np.int64)
        for seg, docs in zip(self._keys, self._docs, strict=True):
            at = np.minimum(np.searchsorted(seg, keys), seg.size - 1)
            out += np.where(seg[at] == keys, docs[at], 0)
        return out

    def count(self, batch: TemplateBatch, *, add: bool) -> npt.NDArray[np.int64]:
        """For every key of ``batch`` (aligned with ``batch.hashes``): the documents counted
        before its text; with ``add`` the batch's texts are counted in turn (each key once
        per text), so a text's counts include the texts before it in the batch."""
        h = batch.hashes
        if self._table is not None:
            df = np.empty(h.size, dtype=np.int64)
            self._table.count(h, batch.gram_off, add, df)
            return df
        doc = np.repeat(np.arange(len(batch)), np.diff(batch.gram_off))
        order = np.argsort(h, kind="stable")  # by key, then text (texts in batch order)
        hs, ds = h[order], doc[order]
        new_key = np.ones(hs.size, dtype=np.bool_)
        new_key[1:] = hs[1:] != hs[:-1]
        new_pair = new_key.copy()
        new_pair[1:] |= ds[1:] != ds[:-1]
        pair = np.cumsum(new_pair) - 1  # the (key, text) pair of each key, in key order
        group = np.cumsum(new_key) - 1
        first_pair = pair[new_key]
        df = self._lookup(hs)
        if add:
            df += pair - first_pair[group]  # the batch's earlier texts holding the key
            ends = np.append(first_pair[1:], pair[-1] + 1) if hs.size else first_pair
            self._append(hs[new_key], ends - first_pair)
        out = np.empty_like(df)
        out[order] = df
        return out

    def _append(self, keys: npt.NDArray[np.uint64], docs: npt.NDArray[np.int64]) -> None:
        if self._table is not None:
            self._table.put(keys, docs)
            return
        if not keys.size:
            return
        self._keys.append(keys)
        self._docs.append(docs)
        while len(self._keys) > 1 and 2 * self._keys[-1].size >= self._keys[-2].size:
            k = np.concatenate([self._keys.pop(), self._keys.pop()])
            d = np.concatenate([self._docs.pop(), self._docs.pop()])
            order = np.argsort(k, kind="stable")  # two sorted runs: one merge (timsort)
            k, d = k[order], d[order]
            new = np.ones(k.size, dtype=np.bool_)
            new[1:] = k[1:] != k[:-1]
            self._keys.append(k[new])
            self._docs.append(np.add.reduceat(d, np.flatnonzero(new)))

    def arrays(self) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
        """Keys and counts, sorted by key (a saved reference's form)."""
        if self._table is not None:
            keys, counts = self._table.arrays()
            k, d = np.frombuffer(keys, dtype=np.uint64), np.frombuffer(counts, dtype=np.int64)
            order = np.argsort(k)
            return k[order], d[order]
        if not self._keys:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        k, d = np.concatenate(self._keys), np.concatenate(self._docs)
        merged, inverse = np.unique(k, return_inverse=True)
        return merged, np.bincount(inverse, weights=d).astype(np.int64)

    @classmethod
    def from_arrays(
        cls, keys: npt.NDArray[np.uint64], counts: npt.NDArray[np.int64]
    ) -> TemplateCounts:
        """The counts saved by :meth:`arrays`."""
        out = cls()
        out._append(np.asarray(keys, dtype=np.uint64), np.asarray(counts, dtype=np.int64))
        return out


def template_flags(
    batch: TemplateBatch,
    df: npt.NDArray[np.int64],
    rows: list[tuple[int, int, int, str, float]],
    min_docs: int,
    min_length: int,
) -> list[bool]:
    """For each passage ``(text, start, end, source, score)`` (a text of ``batch``, a
    code-point span of it, the source passage's text, the passage's score): is it a template
    (module docstring)? ``df``: the counts of ``batch``'s keys in the documents before their
    texts (:meth:`TemplateCounts.count`); ``min_length``: the finder's, in words (a frame
    leaves less than :data:`OWN_SHARE` of it, a common phrase is at most
    :data:`PHRASE_LENGTH` times it)."""
    if not rows:
        return []
    doc, a, b = np.array([r[:3] for r in rows], dtype=np.int64).reshape(-1, 3).T
    shift = batch.char_off[doc]
    t0 = np.searchsorted(batch.starts, a + shift, "left")
    t1 = np.maximum(np.searchsorted(batch.ends, b + shift, "right"), t0)
    # keys are grams in token order and a gram's end grows with its start: the keys inside a
    # span are a run
    g0 = np.searchsorted(batch.first, t0, "left")
    g1 = np.maximum(np.searchsorted(batch.last, t1, "right"), g0)
    common = np.zeros(df.size + 1, dtype=np.int64)
    np.cumsum(df >= min_docs, out=common[1:])
    digits = np.zeros(batch.digit.size + 1, dtype=np.int64)
    np.cumsum(batch.digit, out=digits[1:])
    n = g1 - g0
    recurs = (n > 0) & (common[g1] - common[g0] >= HIGH_SHARE * n)
    short = batch.units[t1] - batch.units[t0] <= MAX_WORDS * _GRAM_WORD
    figures = (t1 > t0) & (digits[t1] - digits[t0] >= DIGIT_SHARE * (t1 - t0))
    texts = batch.texts
    slots = np.zeros(len(rows), dtype=np.bool_)
    for k in np.flatnonzero(short & ~recurs).tolist():  # only where it can decide
        r = rows[k]
        slots[k] = _slots_changed(texts[r[0]][r[1] : r[2]], r[3])
    flags = (short & (recurs | slots)) | (figures & recurs)
    # common phrases: a short passage is a copy only if its sides mostly match and its words
    # are its own (the pieces held by other documents are the collection's)
    brief = batch.units[t1] - batch.units[t0] <= PHRASE_LENGTH * min_length * _GRAM_WORD
    flags |= brief & (np.array([r[4] for r in rows]) < LOOSE)
    for k in np.flatnonzero(~flags & brief & (g1 > g0)).tolist():
        r = rows[k]
        flags[k] = _common_phrase(df[g0[k] : g1[k]].tolist()) and not _numbers_kept(
            texts[r[0]][r[1] : r[2]], r[3]
        )
    # the frame test (C) before the figures rule (two regular expressions a side): each
    # decides only where the other has not, and the frame test sets aside more (Reuters:
    # ~5,000 passages against 1,176) at two thirds of the cost a passage
    framed = batch.units[t1] - batch.units[t0] <= MAX_FRAME_WORDS * _GRAM_WORD
    own_units = _own_units(batch, df, min_docs)
    for k in np.flatnonzero(~flags & framed & (t1 > t0)).tolist():
        own, differ = own_units(int(t0[k]), int(t1[k]), rows[k][3])
        flags[k] = own < OWN_SHARE * min_length * _GRAM_WORD and (differ or bool(short[k]))
    for k in np.flatnonzero(~flags).tolist():  # refilled: only where it can decide
        r = rows[k]
        flags[k] = _figures_refilled(texts[r[0]][r[1] : r[2]], r[3])
    out: list[bool] = flags.tolist()
    return out


def _common_phrase(counts: list[int]) -> bool:
    """A passage whose keys' counts are ``counts`` (earlier documents holding each) is a common
    phrase: :data:`PHRASE_SHARE` of its keys are held by more documents than the passage
    itself, which its keys' lower quartile count stands for (the keys it shares with its
    source are held by the documents holding it, or more), and by 2 or more (a key only the
    source holds is the copy's own).

    >>> _common_phrase([7, 1, 3, 4, 4]), _common_phrase([3, 3, 3, 3, 3, 1])  # phrase; a quote
    (True, False)
    >>> _common_phrase([1, 1, 1, 1, 2]), _common_phrase([0, 0, 0])
    (False, False)
    """
    held = sorted(c for c in counts if c >= 1)
    if not held:
        return False
    more = max(2, held[(len(held) - 1) // 4] + 1)
    return sum(c >= more for c in counts) >= PHRASE_SHARE * len(counts)


def _own_units(
    batch: TemplateBatch, df: npt.NDArray[np.int64], min_docs: int
) -> Callable[[int, int, str], tuple[int, bool]]:
    """A function of a query's token range ``[t0, t1)`` and its source passage: the gram
    units of the query's tokens that the source holds too (aligned token by token, in runs of
    at least ``ngram`` tokens: a shorter run between slots is the frame's glue) and that no
    recurring key covers -- the text the two sides share that is theirs alone -- and
    whether the sides differ anywhere (a slot). A key recurs in ``min_docs`` documents, in
    half as many where the sides differ: a frame whose slots were filled in differently."""
    strict = _covered(batch, df >= min_docs)
    loose = _covered(batch, df >= max(2, (min_docs + 1) // 2))
    weights = np.diff(batch.units)
    kernels = overlap_kernels()
    if kernels is not None:  # the same blocks and sums in C (difflib was most of the rule's cost)
        frame, pack, hashes = kernels.frame_units, packer(_TOKENS_ONLY), batch.token_hashes

        def own_c(t0: int, t1: int, source: str) -> tuple[int, bool]:
            s = token_arrays(pack(source))[3]
            q, w = hashes[t0:t1], weights[t0:t1]
            out: tuple[int, bool] = frame(q, s, w, strict[t0:t1], loose[t0:t1], batch.ngram)
            return out

        return own_c

    def own(t0: int, t1: int, source: str) -> tuple[int, bool]:
        q = batch.token_hashes[t0:t1].tolist()
        s = token_arrays(prepare(source, _TOKENS_ONLY))[3].tolist()
        shared = np.zeros(t1 - t0, dtype=np.bool_)
        matched = 0
        for i, _, n in SequenceMatcher(None, q, s, autojunk=False).get_matching_blocks():
            shared[i : i + n] = n >= batch.ngram  # a shorter run is a frame's glue
            matched += n
        differ = matched < max(len(q), len(s))
        covered = (loose if differ else strict)[t0:t1]
        return int(weights[t0:t1][shared & ~covered].sum()), differ

    return own


def _covered(batch: TemplateBatch, keys: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Per token of ``batch``: does one of the chosen ``keys`` (a mask over its keys) hold it?"""
    edge = np.zeros(batch.token_hashes.size + 1, dtype=np.int64)
    np.add.at(edge, batch.first[keys], 1)
    np.add.at(edge, batch.last[keys], -1)
    out: npt.NDArray[np.bool_] = np.cumsum(edge[:-1]) > 0
    return out


# a number: digits, a part of a series (（上）/（中）/（下）), or Han numerals before 年/月/日 (a
# date written 一月四日)
_NUMBER = re.compile(
    "[0-9\uff10-\uff19]+|(?<=[\uff08(])[\u4e0a\u4e2d\u4e0b]+(?=[\uff09)])|[\u3007\u4e00\u4e8c\u4e09\u56db\u4e94\u516d\u4e03\u516b\u4e5d\u5341]+(?=[\u5e74\u6708\u65e5])"
)
# a figure: digits (ASCII or full-width) with the separators inside a number, or the name of
# a month or a weekday (a date's slot in English; Chinese dates are digits or Han numerals)
_NAMES = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
    "|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
)
_FIGURE_DIGITS = re.compile("[0-9\uff10-\uff19]+(?:[.,/][0-9\uff10-\uff19]+)*")
_FIGURE_NAME = re.compile(f"\\b(?:{_NAMES})\\b")
# a name without its word boundaries: re scans for its first letters fast (a pattern opening
# with \b is tried at every position: most of the rule's cost on Reuters)
_ANY_NAME = re.compile(_NAMES)
_ASCII = str.maketrans("\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19", "0123456789")
# an ASCII text with every character but a figure's (a number's) made a space: its runs are
# the only places a figure (number) can match, and split or searched the text is a tenth as
# long (a pattern is tried at every position: most of these rules' cost on Reuters)
_FIGURE_CHARS = str.maketrans({c: " " for c in map(chr, range(128)) if c not in "0123456789.,/"})
_DIGIT_CHARS = str.maketrans({c: " " for c in map(chr, range(128)) if c not in "0123456789"})
# _frame of an ASCII text: its word characters (\w there) lowered, every digit "0" (a run is
# then one "#"), "#" kept, the rest a space (dropped after the runs are joined)
_FRAME_CHARS = str.maketrans(
    {
        c: c.lower() if c.isalpha() else "0" if c.isdigit() else c if c == "#" else " "
        for c in map(chr, range(128))
    }
)
_DIGIT_RUN = re.compile("0+")


def _slots_changed(query: str, source: str) -> bool:
    """The two sides of a passage are the same text but for their numbers, which differ.

    >>> _slots_changed("本报北京１月４日讯记者", "本报北京1月15日讯 记者")
    True
    >>> _slots_changed("本报北京一月四日讯记者", "本报北京１月２３日讯记者")
    True
    >>> _slots_changed("商业（上）本报记者田俊荣", "商业（下）本报记者田俊荣")  # a series
    True
    >>> _slots_changed("a 1 b", "a 1 b"), _slots_changed("a 1 b", "a 2 c")
    (False, False)
    """
    if _ascii_numbers(query) == _ascii_numbers(source):
        return False
    return _frame(query) == _frame(source)


def _numbers_kept(query: str, source: str) -> bool:
    """The passage holds numbers and its two sides hold the same: a copied fact (``profit
    fell to 122 mln marks in 1986 from 150 mln``), whatever its words' frequency.

    >>> _numbers_kept("fell to 122 mln in 1986", "fell to 122 mln in 1986")
    True
    >>> _numbers_kept("fell to 122 mln", "fell to 95 mln"), _numbers_kept("a b", "a b")
    (False, False)
    """
    q = _ascii_numbers(query)
    return bool(q) and q == _ascii_numbers(source)


def _ascii_numbers(text: str) -> list[str]:
    """The numbers of ``text`` (:func:`_number_list`), full-width digits made ASCII."""
    return [n.translate(_ASCII) for n in _number_list(text)]


def _figures_refilled(query: str, source: str) -> bool:
    """The two sides of a passage hold other figures: enough of each side's figures (a
    run of digits with its separators: ``4,200``, ``1.25``, ``5-1/8`` counts as ``5`` and
    ``1/8``; a month's or weekday's name) have no equal on the other side, in number and as a
    share of the figures of the side holding more (:data:`REFILLED`). A
    report of a series (weekly loans, monthly sales, a bond's terms, a stake filing) is the
    same frame filled in with the period's figures; a copy, even rewritten, keeps its figures
    as they were (a re-issued story with one figure corrected is still a copy).

    >>> _figures_refilled("loans fell 718 mln dlrs to 64.87 billion in the week ended March 4",
    ...                   "loans fell 195 mln dlrs to 65.06 billion in the week ended February 25")
    True
    >>> _figures_refilled("sales rose 600 units to 4,200, up 12 pct in March",
    ...                   "sales rose 500 units to 4,200, up 12 pct in March")  # corrected
    False
    >>> _figures_refilled("rose 2.71 pct in March", "rose 2.03 pct in February")  # a date
    True
    >>> _figures_refilled("paid 12 dlrs", "paid 12.5 dlrs as 3 lots")  # one changed, one new
    False
    >>> _figures_refilled("１９８年前后增长１５％", "１９９８年前后增长１２５％")  # digits dropped
    False
    """
    # the figures with no equal are at most the smaller side's: most passages (Reuters: 7 in
    # 11) end here, with no counting, and over half before the source is searched
    found = _figures(query)
    if len(found) < min(least for least, _ in REFILLED):
        return False
    other = _figures(source)
    most = max(len(found), len(other))
    if not _refilled(min(len(found), len(other)), most):
        return False
    mine, theirs = Counter(found), Counter(other)
    ours, others = mine - theirs, theirs - mine
    if not _refilled(min(ours.total(), others.total()), most):
        return False  # even all of them changed would not be enough: no need to pair them
    # a figure inside one of the other side's (digits dropped, a character put into it) is
    # that figure edited, not another figure: a rewrite's edits are not slots (the two sides'
    # own figures differ, so one inside another is the shorter: the others are not tried)
    changed = min(
        sum(
            k for n, k in ours.items() if not any(_inside(n, m) for m in others if len(m) > len(n))
        ),
        sum(
            k for m, k in others.items() if not any(_inside(m, n) for n in ours if len(n) > len(m))
        ),
    )
    return _refilled(changed, most)


def _refilled(changed: int, most: int) -> bool:
    """``changed`` figures of ``most`` are enough (:data:`REFILLED`)."""
    return any(changed >= max(least, share * most) for least, share in REFILLED)


def _figures(text: str) -> list[str]:
    """The figures of ``text`` (:func:`_figures_refilled`), digits in ASCII, in order found
    (digits, then names; counted by the caller only where it must pair them).

    >>> sorted(_figures("On Monday, 1,250 (１２５０) shares; Mondays 3.5 and 5-1/8"))
    ['1,250', '1/8', '1250', '3.5', '5', 'Monday']
    """
    # digits translated first: the same figures (one character for one, word characters
    # both); digits and names are never in one figure, so they are found apart. An ASCII
    # text (isascii: a flag, not a scan) has no full-width digit to translate
    if text.isascii():
        found: list[str] = _FIGURE_DIGITS.findall(" ".join(text.translate(_FIGURE_CHARS).split()))
    else:
        text = text.translate(_ASCII)
        found = _FIGURE_DIGITS.findall(text)
    if _ANY_NAME.search(text):
        found += _FIGURE_NAME.findall(text)
    return found


def _inside(part: str, whole: str) -> bool:
    """``part``'s characters are in ``whole``, in order (``198`` in ``1998``)."""
    rest = iter(whole)
    return all(c in rest for c in part)


def _frame(text: str) -> str:
    """``text`` without its numbers, spaces and punctuation, case folded."""
    if text.isascii():  # letters lowered, a digit run one "#", "#" kept, the rest dropped
        return _DIGIT_RUN.sub("#", text.translate(_FRAME_CHARS)).replace(" ", "")
    return _NOT_WORD.sub("", _NUMBER.sub("#", text).casefold())


def _number_list(text: str) -> list[str]:
    """The numbers of ``text`` (:data:`_NUMBER`), in order.

    >>> _number_list("Qtly div 25 cts, 1,250"), _number_list("一月四日")
    (['25', '1', '250'], ['一', '四'])
    """
    if text.isascii():  # the runs of digits: the ASCII branch's matches
        return text.translate(_DIGIT_CHARS).split()
    found: list[str] = _NUMBER.findall(text)
    return found


_NOT_WORD = re.compile("[^\\w#]|_")
