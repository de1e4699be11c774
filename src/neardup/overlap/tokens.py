"""Tokens with offsets into the text as read, and the hashed n-grams built on them.

A token is a run of letters, digits and marks (a word) or one Han, kana, Thai, ... character
(scripts written without spaces; a single character is the unit two texts can share), by the
frozen character-class table of :mod:`neardup.features.charclass`, so tokens do not change with
the Python version. Each token keeps its ``[start, end)`` offsets in code points of the
*original* text; its hash is that of its characters folded one by one (:func:`fold_of`: NFKC +
casefold), so full-width forms and case do not hide a copy.

The C kernel ``neardup._overlap.prepare`` computes the same tokens, grams and hashes (used by
:func:`neardup.overlap.pairs.prepare` when built); the functions here are its reference.

Lengths are counted in *units*: a word is 2 units, a Han character 1 (two Han characters
carry about as much as one English word), so one gram size and one minimum length serve
English, Chinese and mixed text.

>>> t = tokenize("Ｔhe cat 在北京 sat.")
>>> [t.text[s:e] for s, e in zip(t.starts, t.ends)]
['Ｔhe', 'cat', '在', '北', '京', 'sat']
>>> t.units.tolist()  # cumulative units before each token, then the total
[0, 2, 4, 5, 6, 7, 9]
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup import _backend
from neardup._backend import overlap_kernels
from neardup.features.charclass import WORD, char_classes

__all__ = [
    "Grams",
    "Tokens",
    "fold_of",
    "fold_table",
    "gram_units",
    "grams",
    "tokenize",
    "winnow",
    "winnow_reference",
]

WORD_UNITS = 2
CJK_UNITS = 1
_P = 0x100000001B3  # odd, so invertible modulo 2**64
_P_INV = pow(_P, -1, 1 << 64)
_MASK = (1 << 64) - 1
UNKNOWN = 0xFFFFFFFF  # a fold not computed yet
_fold = np.full(0x110000, UNKNOWN, dtype=np.uint32)
_fold[:128] = np.frombuffer(bytes(range(128)).lower(), dtype=np.uint8)
_fold[0x4E00:0xA000] = np.arange(0x4E00, 0xA000, dtype=np.uint32)  # NFKC + casefold: same


def fold_of(ch: str) -> int:
    """The code point ``ch`` is hashed as: its NFKC + casefold form when that is one code
    point (full-width and case forms meet), else its NFKC form when that is, else itself.

    >>> chr(fold_of("Ｔ")), chr(fold_of("中")), chr(fold_of("ß"))
    ('t', '中', 'ß')
    """
    norm = unicodedata.normalize("NFKC", ch)
    folded = norm.casefold()
    return ord(folded) if len(folded) == 1 else ord(norm) if len(norm) == 1 else ord(ch)


def fold_table(text: str = "") -> npt.NDArray[np.uint32]:
    """The shared fold table (:func:`fold_of` by code point), filled for ``text``'s
    characters; entries never needed stay ``UNKNOWN``."""
    cls = char_classes()
    for ch in set(text):
        o = ord(ch)
        if _fold[o] == UNKNOWN and cls[o]:
            _fold[o] = fold_of(ch)
    return _fold


@dataclass(frozen=True)
class Tokens:
    """The tokens of one text: offsets, cumulative units (n + 1 values) and hashes."""

    text: str
    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]
    units: npt.NDArray[np.int64]
    hashes: npt.NDArray[np.uint64]

    def __len__(self) -> int:
        return int(self.starts.size)


def tokenize(text: str) -> Tokens:
    """Tokens of ``text`` (see the module docstring): the Python reference of the C kernel
    ``neardup._overlap.prepare``, which :func:`neardup.overlap.pairs.prepare` uses when built."""
    cls = char_classes()
    fold = fold_table(text)
    spans: list[int] = []
    hashes: list[int] = []
    weights: list[int] = []
    i, n = 0, len(text)
    while i < n:
        k = int(cls[ord(text[i])])
        if not k:
            i += 1
            continue
        e = i + 1
        if k == WORD:
            while e < n and cls[ord(text[e])] == WORD:
                e += 1
        h = 0
        for ch in text[i:e]:
            h = (h * _P + int(fold[ord(ch)])) & _MASK
        spans += (i, e)
        hashes.append((h + e - i) & _MASK)
        weights.append(WORD_UNITS if k == WORD else CJK_UNITS)
        i = e
    pairs = np.array(spans, dtype=np.int64).reshape(-1, 2)
    units = np.zeros(len(weights) + 1, dtype=np.int64)
    np.cumsum(np.array(weights, dtype=np.int64), out=units[1:])
    mixed = _splitmix(np.array(hashes, dtype=np.uint64))
    return Tokens(text, pairs[:, 0].copy(), pairs[:, 1].copy(), units, mixed)


@dataclass(frozen=True)
class Grams:
    """Hashed grams of a text: gram ``i`` covers tokens ``[first[i], last[i])``."""

    first: npt.NDArray[np.int64]
    last: npt.NDArray[np.int64]
    hashes: npt.NDArray[np.uint64]


def _splitmix(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    out: npt.NDArray[np.uint64] = x ^ (x >> np.uint64(31))
    return out


def gram_units(tokens: Tokens) -> npt.NDArray[np.int64]:
    """Cumulative *gram units* before each token (then the total): a word 3, a Han character
    2, so a gram of ``3 * k`` gram units is ``k`` words or ``1.5 * k`` Han characters. Grams
    are sized in these (:mod:`neardup.overlap.pairs`): with a quarter of the characters
    edited (洗稿) an intact run of 8 Han characters is rare, one of 6 almost twice as common.

    >>> gram_units(tokenize("ab 北京")).tolist()
    [0, 3, 5, 7]
    """
    return tokens.units + np.arange(len(tokens) + 1, dtype=np.int64)


def grams(tokens: Tokens, size: int, units: npt.NDArray[np.int64] | None = None) -> Grams:
    """Every gram of at least ``size`` units (``tokens.units``, or ``units`` when given: the
    cumulative weights to size the grams in): the shortest token run from each token on.

    >>> g = grams(tokenize("a b c d"), 4)  # two words = 4 units
    >>> g.first.tolist(), g.last.tolist()
    ([0, 1, 2], [2, 3, 4])
    >>> bool(grams(tokenize("x a b"), 4).hashes[1] == g.hashes[0])
    True
    """
    n = len(tokens)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Grams(empty, empty, np.zeros(0, dtype=np.uint64))
    cw = tokens.units if units is None else units
    stop = np.searchsorted(cw, cw[:-1] + size, side="left")
    ok = stop <= n
    first = np.flatnonzero(ok).astype(np.int64)
    last = stop[ok].astype(np.int64)
    with np.errstate(over="ignore"):
        powers = np.ones(n + 1, dtype=np.uint64)
        powers[1:] = np.uint64(_P)
        powers = np.cumprod(powers, dtype=np.uint64)
        inv = np.ones(n + 1, dtype=np.uint64)
        inv[1:] = np.uint64(_P_INV)
        inv = np.cumprod(inv, dtype=np.uint64)
        prefix = np.zeros(n + 1, dtype=np.uint64)
        np.cumsum(tokens.hashes * powers[:n], out=prefix[1:], dtype=np.uint64)
        raw = (prefix[last] - prefix[first]) * inv[first]
        hashes = _splitmix(raw + (last - first).astype(np.uint64))
    return Grams(first, last, hashes)


def winnow(hashes: npt.NDArray[np.uint64], window: int) -> npt.NDArray[np.int64]:
    """Indices of the grams winnowing keeps: the smallest hash of every ``window`` grams
    (rightmost on ties, each kept once). Any run of ``window`` grams shared by two texts
    shares a kept gram (Schleimer et al., 2003).

    >>> winnow(np.array([5, 3, 9, 1, 7], dtype=np.uint64), 2).tolist()
    [1, 3]
    """
    if overlap_kernels() is not None:
        out = np.empty(hashes.size, dtype=np.int64)
        count = _backend.OV.winnow(np.ascontiguousarray(hashes, dtype=np.uint64), window, out)
        return out[:count]
    return winnow_reference(hashes, window)


def winnow_reference(hashes: npt.NDArray[np.uint64], window: int) -> npt.NDArray[np.int64]:
    """:func:`winnow` in numpy (the reference of the C kernel)."""
    n = hashes.size
    if window <= 1 or n <= window:
        if window <= 1 or n == 0:
            return np.arange(n, dtype=np.int64)
        return np.array([n - 1 - int(np.argmin(hashes[::-1]))], dtype=np.int64)
    view = np.lib.stride_tricks.sliding_window_view(hashes[::-1], window)
    # argmin on the reversed array finds the rightmost minimum of each window
    rev = np.argmin(view, axis=1)
    picks = n - 1 - (np.arange(view.shape[0]) + rev)
    return np.unique(picks).astype(np.int64)
