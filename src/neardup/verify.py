"""Verification: a compact second sketch that confirms SimHash candidates.

SimHash at a small Hamming radius misses edited copies; at a wide radius it admits unrelated
short texts. The cure measured in ``docs/ACCURACY.md``: find candidates at a wider radius
(``candidate_k``) and keep only those whose estimated shingle Jaccard similarity clears a
threshold. The estimate comes from a b-bit MinHash sketch (Li & König, 2010) stored per
document: ``num_hashes`` values of ``bits`` bits each (192 x 8 bits + a 1-byte short-text
flag = 193 bytes by default; 128 before issue 20: the estimate's noise put pairs of similarity
0.45-0.5 above a 0.6 threshold, docs/ACCURACY.md).

Shingles are word n-grams for alphabetic text and character n-grams (over letters and digits,
punctuation and whitespace dropped) for CJK text, chosen per document by script, after NFKC
normalisation and case folding. Hashing is xxh3 with a fixed seed plus a splitmix64 mixer, so
sketches are identical across processes and machines.

>>> v = MinHashVerifier(num_hashes=64)
>>> s = v.sketch_many(["the quick brown fox jumps over the lazy dog today",
...                    "the quick brown fox jumps over the lazy dog today",
...                    "an entirely different sentence about monetary policy and rates"])
>>> s.shape, s.dtype.name
((3, 65), 'uint8')
>>> v.estimate(s[:2], s[1:]).round(2).tolist()
[1.0, 0.0]
>>> v.confirm(s[:2], s[1:]).tolist()  # texts under 50 characters: >= short_threshold
[True, False]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

from neardup import _backend
from neardup._params import FrozenParams
from neardup.errors import BadInputError
from neardup.features.charclass import char_classes
from neardup.features.extract import text_is_cjk, tokens
from neardup.features.normalize import pack_prepared, prepare_many
from neardup.hashing import _GOLDEN, _M64, _mix64

__all__ = ["MinHashVerifier", "shingle_hashes", "shingle_hashes_many", "shingle_texts"]

_MODES = {"auto": 0, "word": 1, "char": 2}


def _packed(
    texts: Sequence[str], n: int, mode: str
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], npt.NDArray[np.int8]]:
    """The kernels' input: prepared texts as one UTF-8 buffer, offsets, per-text modes."""
    if n < 1:
        raise BadInputError(f"shingle size n must be >= 1, got {n}")
    if mode not in _MODES:
        raise BadInputError(f"shingle mode must be 'auto', 'word' or 'char', got {mode!r}")
    buf, offsets = pack_prepared(texts)
    return buf, offsets, np.full(len(offsets) - 1, _MODES[mode], dtype=np.int8)


def shingle_hashes_many(
    texts: Sequence[str], n: int = 5, *, mode: str = "auto", seed: int = 0
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Shingle hash sets of many texts, ``(flat, off)``: text d owns ``flat[off[d]:off[d+1]]``.

    >>> flat, off = shingle_hashes_many(["a b c d e f", "", "x"])
    >>> np.diff(off).tolist()
    [2, 0, 1]
    """
    buf, offsets, modes = _packed(texts, n, mode)
    flat = np.empty(buf.shape[0] + len(offsets), dtype=np.uint64)
    out_off = np.empty(len(offsets), dtype=np.int64)
    # kernels: C (_csrc/verify.c) or numba (neardup._numba.verify), bit-identical
    size = _backend.C.shingles(buf, offsets, modes, char_classes(), n, seed, flat, out_off)
    return flat[:size].copy(), out_off


def shingle_hashes(
    text: str, n: int = 5, *, mode: str = "auto", seed: int = 0
) -> npt.NDArray[np.uint64]:
    """Sorted unique 64-bit hashes of the text's n-shingles.

    ``mode="auto"`` uses word n-grams, or character n-grams when the text is mostly CJK.
    Units (words or characters) are hashed with XXH3-64 of their UTF-8 bytes; an n-gram is an
    order-sensitive combination of its unit hashes, finalised by splitmix64. A text with fewer
    than ``n`` units yields one shingle (the whole unit sequence); a text without letters or
    digits yields an empty array.

    >>> len(shingle_hashes("a b c d e f g")), len(shingle_hashes("a b")), len(shingle_hashes("!?"))
    (3, 1, 0)
    >>> bool((shingle_hashes("A  b c d e") == shingle_hashes("a b\\nc d e")).all())
    True
    """
    flat, _ = shingle_hashes_many([text], n, mode=mode, seed=seed)
    return flat


def shingle_texts(
    text: str, n: int = 5, *, mode: str = "auto", seed: int = 0
) -> list[tuple[str, int]]:
    """The text's n-shingles as text, in text order (repeats included), each with its hash as
    :func:`shingle_hashes` makes it: the Python reference of the kernels' shingling (for
    ``explain``; ``set(hashes) == set(shingle_hashes(text, n))``). Word shingles are tokens
    joined by a space; character shingles (mostly-CJK text, ``mode="char"``) the characters of
    the tokens, joined.

    >>> [s for s, _ in shingle_texts("The cat, the hat!", 2)]
    ['the cat', 'cat the', 'the hat']
    >>> [s for s, _ in shingle_texts("质量很好，物流快", 3)]
    ['质量很', '量很好', '很好物', '好物流', '物流快']
    >>> text = "a b c a b"
    >>> {h for _, h in shingle_texts(text, 2)} == set(shingle_hashes(text, 2).tolist())
    True
    """
    _packed([], n, mode)  # the kernels' checks of n and mode
    prepared = prepare_many([text])[0]
    words = tokens(prepared)
    char = mode == "char" or (mode == "auto" and text_is_cjk(prepared))
    units = [c for w in words for c in w] if char else words
    hashes = [xxhash.xxh3_64_intdigest(u.encode("utf-8", "surrogatepass"), seed) for u in units]
    width, joiner, out = min(n, len(units)), "" if char else " ", []
    for start in range(len(units) - width + 1 if units else 0):
        acc = hashes[start]
        for h in hashes[start + 1 : start + width]:  # as _csrc/verify.c nd_unit_shingles
            acc = (acc * _GOLDEN + h) & _M64
        out.append((joiner.join(units[start : start + width]), _mix64(acc)))
    return out


@dataclass(unsafe_hash=True)  # hashable: FrozenParams makes the fields read-only
class MinHashVerifier(FrozenParams):
    """b-bit MinHash over shingles: confirms a candidate pair by estimated Jaccard similarity.

    **The similarity.** ``threshold`` (default 0.6) is a minimum *Jaccard similarity of the
    two texts' shingle sets*, estimated from ``num_hashes`` b-bit MinHash values: shingles are
    word ``ngram``-grams (default 4) or, for mostly-CJK text, character ``ngram``-grams over
    letters and digits only (each Han character a unit), after NFKC and case folding
    (:func:`shingle_hashes`). A pair where either text has fewer than ``short_length``
    characters (default 50) must reach ``short_threshold`` (default 0.8; None: no short-text
    rule): very short texts share most of their few shingles by chance ("好好好" / "好好好，
    好好好"). Texts of 50 characters and more get the plain rule since issue 20 (it was 300:
    a 5 %-edited 150-character paragraph has 4-shingle Jaccard ~0.68 and was never confirmed).

    Keyword parameters: ``num_hashes`` (values per document), ``bits`` (8 or 16 bits kept per
    value), ``ngram``, ``mode`` ("auto", "word", "char"), ``threshold``, ``short_threshold``,
    ``short_length``, ``seed``, ``band_ngram`` (None: the LSH band keys are cut from the
    similarity values; an int != ``ngram``: each row starts with a second block of
    ``num_hashes`` values over ``band_ngram``-shingles that only the band keys use, e.g.
    ``MinHashVerifier(ngram=2, band_ngram=3, threshold=0.64, short_threshold=None)``, the
    edited-copies setting measured in docs/ACCURACY.md). The defaults are the measured
    recommendation. Parameters are read-only after construction; :meth:`replace` makes a
    changed verifier.

    A sketch row holds [the band block,] ``num_hashes`` similarity values and one flag
    byte/word (1 = short text): shape ``(n, width)``; memory is :attr:`bytes_per_doc`.
    :meth:`similarity` is the decision score: the Jaccard estimate, lowered by
    ``short_threshold - threshold`` for short pairs, so ``similarity >= threshold`` applies the
    length-aware rule; :meth:`estimate` is the plain estimate.

    >>> MinHashVerifier().bytes_per_doc
    193
    """

    num_hashes: int = 192
    bits: int = 8
    ngram: int = 4
    mode: str = "auto"
    threshold: float = 0.6
    short_threshold: float | None = 0.8
    short_length: int = 50
    seed: int = 0
    band_ngram: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.num_hashes, int) or not 1 <= self.num_hashes <= 4096:
            raise BadInputError(f"num_hashes must be an int in 1..4096, got {self.num_hashes!r}")
        if self.bits not in (8, 16):
            raise BadInputError(f"bits must be 8 or 16, got {self.bits!r}")
        for name in ("threshold", "short_threshold"):
            if name == "short_threshold" and self.short_threshold is None:
                continue
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise BadInputError(f"{name} must be a number in [0, 1], got {value!r}")
            if not 0.0 <= value <= 1.0:
                raise BadInputError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        if self.mode not in ("auto", "word", "char"):
            raise BadInputError(f"mode must be 'auto', 'word' or 'char', got {self.mode!r}")
        if not isinstance(self.ngram, int) or self.ngram < 1:
            raise BadInputError(f"ngram must be an int >= 1, got {self.ngram!r}")
        if self.band_ngram is not None and (
            not isinstance(self.band_ngram, int) or self.band_ngram < 1
        ):
            raise BadInputError(f"band_ngram must be None or an int >= 1, got {self.band_ngram!r}")
        if not isinstance(self.short_length, int) or self.short_length < 0:
            raise BadInputError(f"short_length must be an int >= 0, got {self.short_length!r}")
        self._freeze()

    @property
    def band_ngram_(self) -> int | None:
        """The band keys' shingle size as resolved: ``band_ngram`` when it differs from
        ``ngram``; with ``band_ngram=None`` and ``ngram`` below 3, 3 (below 3-shingles
        unrelated texts share a band ~100x more often: docs/ACCURACY.md); else None (the band
        keys are cut from the similarity values; ``band_ngram=ngram`` asks for that).

        >>> MinHashVerifier(ngram=2).band_ngram_, MinHashVerifier(ngram=2, band_ngram=2).band_ngram_
        (3, None)
        """
        if self.band_ngram is None:
            return 3 if self.ngram < 3 else None
        return self.band_ngram if self.band_ngram != self.ngram else None

    def get_config(self) -> dict[str, Any]:
        """What the sketches are, for a ``config_id``: the parameters with ``band_ngram``
        resolved (:attr:`band_ngram_`), so that ``MinHashVerifier(ngram=2)`` and
        ``MinHashVerifier(ngram=2, band_ngram=3)`` name one configuration."""
        return {**self.get_params(), "band_ngram": self.band_ngram_}

    @property
    def split(self) -> bool:
        """Whether rows carry a separate band part (:attr:`band_ngram_` set)."""
        return self.band_ngram_ is not None

    @property
    def width(self) -> int:
        """Columns of a sketch row: [band part,] the similarity values, the short-text flag."""
        return self.num_hashes * (2 if self.split else 1) + 1

    @property
    def bytes_per_doc(self) -> int:
        """Sketch size in bytes per document."""
        return self.width * self.bits // 8

    @property
    def dtype(self) -> type[np.unsignedinteger]:
        """Numpy dtype of a sketch row."""
        return np.uint8 if self.bits == 8 else np.uint16

    def _salts(self) -> npt.NDArray[np.uint64]:
        seeds = [
            xxhash.xxh3_64_intdigest(f"neardup-minhash-{i}".encode(), self.seed)
            for i in range(self.num_hashes)
        ]
        return np.array(seeds, dtype=np.uint64)

    def sketch_many(self, texts: Sequence[str]) -> npt.NDArray[np.unsignedinteger]:
        """One sketch row per text, shape ``(len(texts), width)``.

        A text without letters or digits gets an all-ones row (it still compares equal to
        other empty texts; callers flag empty texts before verification).
        """
        if isinstance(texts, str):
            raise TypeError(
                "sketch_many expects a sequence of texts, got a single str; wrap it in a list"
            )
        buf, offsets, _ = _packed(texts, self.ngram, self.mode)
        return self.sketch_packed(buf, offsets, [len(t) for t in texts])

    def sketch_packed(
        self, buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64], chars: Sequence[int]
    ) -> npt.NDArray[np.unsignedinteger]:
        """``sketch_many`` of texts already packed by
        :func:`~neardup.features.normalize.pack_prepared`; ``chars``: their lengths."""
        modes = np.full(len(offsets) - 1, _MODES[self.mode], dtype=np.int8)
        salts = self._salts()
        parts = []
        for n in self._ngrams():
            mins = np.empty((len(offsets) - 1, self.num_hashes), dtype=np.uint64)
            # one pass per text (C: _csrc/verify.c nd_sketch): minhash() over shingle_hashes_many()
            _backend.C.sketch(buf, offsets, modes, char_classes(), n, self.seed, salts, mins)
            parts.append(mins)
        return self._finish(np.hstack(parts) if len(parts) > 1 else parts[0], chars)

    def _ngrams(self) -> tuple[int, ...]:
        """Shingle sizes of the row's parts, in column order."""
        band = self.band_ngram_
        return (band, self.ngram) if band is not None else (self.ngram,)

    def sketch_sets(
        self, sets: Sequence[npt.NDArray[np.uint64]], lengths: Sequence[int] | None = None
    ) -> npt.NDArray[np.unsignedinteger]:
        """Sketch rows from precomputed shingle hash arrays (see :func:`shingle_hashes`).

        ``lengths`` are the texts' lengths in characters (None: treated as long texts). Only
        for verifiers without a separate band part (one shingle size).
        """
        if self.split:
            raise BadInputError(
                "sketch_sets needs a verifier with one shingle size; pass band_ngram=ngram "
                f"(this one has ngram={self.ngram}, band_ngram={self.band_ngram_})"
            )
        sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
        offsets = np.zeros(len(sets) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        flat = np.concatenate(sets) if sets else np.empty(0, dtype=np.uint64)
        chars = [self.short_length] * len(sets) if lengths is None else list(lengths)
        return self._sketch_flat(flat.astype(np.uint64, copy=False), offsets, chars)

    def _sketch_flat(
        self, flat: npt.NDArray[np.uint64], offsets: npt.NDArray[np.int64], chars: Sequence[int]
    ) -> npt.NDArray[np.unsignedinteger]:
        mins = np.empty((len(offsets) - 1, self.num_hashes), dtype=np.uint64)
        _backend.C.minhash(flat, offsets, self._salts(), mins)
        return self._finish(mins, chars)

    def _finish(
        self, mins: npt.NDArray[np.uint64], chars: Sequence[int]
    ) -> npt.NDArray[np.unsignedinteger]:
        out = np.empty((mins.shape[0], self.width), dtype=self.dtype)
        out[:, :-1] = mins & np.uint64((1 << self.bits) - 1)
        out[:, -1] = np.asarray(chars, dtype=np.int64) < self.short_length
        return out

    def _check(
        self, a: npt.NDArray[np.unsignedinteger], b: npt.NDArray[np.unsignedinteger]
    ) -> None:
        if a.shape != b.shape or a.ndim != 2 or a.shape[1] != self.width:
            raise BadInputError(
                f"sketch arrays must both have shape (m, {self.width}) from this verifier's "
                f"sketch_many, got {a.shape} and {b.shape}"
            )

    def estimate(
        self, a: npt.NDArray[np.unsignedinteger], b: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.float64]:
        """Estimated Jaccard similarity of row i of ``a`` and row i of ``b``, in [0, 1]."""
        self._check(a, b)
        lo = self.width - 1 - self.num_hashes  # the similarity values (after any band part)
        match = (a[:, lo:-1] == b[:, lo:-1]).mean(axis=1)
        chance = 2.0**-self.bits
        out: npt.NDArray[np.float64] = np.clip((match - chance) / (1.0 - chance), 0.0, 1.0)
        return out.astype(np.float64)

    def similarity(
        self, a: npt.NDArray[np.unsignedinteger], b: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.float64]:
        """Decision score per row pair: the estimate, minus the short-text margin for short pairs.

        ``similarity(a, b) >= threshold`` is the verification rule.
        """
        est = self.estimate(a, b)
        if self.short_threshold is None:
            return est
        short = (a[:, -1] != 0) | (b[:, -1] != 0)
        margin = max(0.0, self.short_threshold - self.threshold)
        out: npt.NDArray[np.float64] = np.clip(est - margin * short, 0.0, 1.0)
        return out

    def thresholds(
        self, a: npt.NDArray[np.unsignedinteger], b: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.float64]:
        """The threshold that applies per row pair: ``short_threshold`` when either text is short,
        else ``threshold``; ``estimate(a, b) >= thresholds(a, b)`` is the verification rule
        (what :meth:`confirm` tests), and the estimate is the similarity every surface shows.

        >>> v = MinHashVerifier()
        >>> s = v.sketch_many(["tiny text", "tiny text!", "fifty characters or more " * 3])
        >>> v.thresholds(s[[0, 2]], s[[1, 2]]).tolist()
        [0.8, 0.6]
        """
        self._check(a, b)
        out = np.full(len(a), self.threshold, np.float64)
        if self.short_threshold is not None:
            short = (a[:, -1] != 0) | (b[:, -1] != 0)
            out[short] = max(self.threshold, self.short_threshold)
        return out

    def confirm(
        self, a: npt.NDArray[np.unsignedinteger], b: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.bool_]:
        """Boolean mask: pairs the verifier confirms (``similarity >= threshold``)."""
        out: npt.NDArray[np.bool_] = self.similarity(a, b) >= self.threshold
        return out
