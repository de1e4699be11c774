"""Tokens with offsets into the text as read, and the hashed n-grams built on them.

A token is a run of letters/digits in a spaced script (a word) or one Han/kana character
(Chinese and Japanese have no spaces; a single character is the unit both can share). Each
token keeps its ``[start, end)`` offsets in code points of the *original* text; its hash is
that of its NFKC + casefold form, so full-width forms and case do not hide a copy.

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

import re
import unicodedata
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import xxhash

__all__ = ["Grams", "Tokens", "grams", "tokenize", "winnow"]

# Han (with extensions and compatibility forms) and kana: one token per character.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_TOKEN = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")
WORD_UNITS = 2
CJK_UNITS = 1
_P = 0x100000001B3  # odd, so invertible modulo 2**64
_P_INV = pow(_P, -1, 1 << 64)
_cache: dict[str, int] = {}


def _token_hash(token: str) -> int:
    h = _cache.get(token)
    if h is None:
        norm = token.lower() if token.isascii() else unicodedata.normalize("NFKC", token).casefold()
        h = xxhash.xxh3_64_intdigest(norm.encode("utf-8", "surrogatepass"))
        if len(_cache) > 1 << 20:  # bounded: a long run over many vocabularies
            _cache.clear()
        _cache[token] = h
    return h


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
    """Tokens of ``text`` (see the module docstring)."""
    spans: list[int] = []
    hashes: list[int] = []
    weights: list[int] = []
    for m in _TOKEN.finditer(text):
        s, e = m.span()
        tok = m.group()
        spans += (s, e)
        hashes.append(_token_hash(tok))
        weights.append(CJK_UNITS if e - s == 1 and _is_cjk(tok) else WORD_UNITS)
    pairs = np.array(spans, dtype=np.int64).reshape(-1, 2)
    units = np.zeros(len(weights) + 1, dtype=np.int64)
    np.cumsum(np.array(weights, dtype=np.int64), out=units[1:])
    return Tokens(
        text, pairs[:, 0].copy(), pairs[:, 1].copy(), units, np.array(hashes, dtype=np.uint64)
    )


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF
        or 0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or 0xF900 <= o <= 0xFAFF
        or 0x20000 <= o <= 0x2FA1F
    )


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


def grams(tokens: Tokens, size: int) -> Grams:
    """Every gram of at least ``size`` units: the shortest token run from each token on.

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
    cw = tokens.units
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
