"""Candidate keys: LSH bands of the verifier's b-bit MinHash sketch, as uint64 keys.

A document's keys are a pure function of its own sketch: band ``t`` of ``rows`` consecutive
sketch values (8 bits each) is packed big-endian into an integer ``v < 2**(8 * rows)`` and the
key is ``mix64((t << 32) | v)`` (splitmix64's finaliser, a bijection on 64 bits, so two keys are
equal exactly when the band index and all its values are equal: no hash collisions). Two
documents are *candidates* when they share at least one key. With per-value match probability
``s`` (``s = J + (1 - J) / 256`` for 8-bit values of a pair with shingle Jaccard ``J``) the
probability of that is ``1 - (1 - s**rows)**bands`` (Indyk & Motwani; Leskovec et al., ch. 3).

Everything here is numpy; the same keys are an equi-join key for the Spark engine.

>>> design = BandDesign(bands=2, rows=4)
>>> sk = np.array([[1, 2, 3, 4, 5, 6, 7, 8, 0], [1, 2, 3, 4, 9, 9, 9, 9, 1]], dtype=np.uint8)
>>> k = band_keys(sk, design)
>>> k.shape, bool(k[0, 0] == k[1, 0]), bool(k[0, 1] == k[1, 1])
((2, 2), True, False)
>>> int(k[0, 0]) == int(mix64_np(np.array([0x01020304], dtype=np.uint64))[0])
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.errors import BadInputError

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

__all__ = ["BandDesign", "band_keys", "mix64_np", "pairs_sharing_keys", "recall"]

_C1 = np.uint64(0xBF58476D1CE4E5B9)
_C2 = np.uint64(0x94D049BB133111EB)


def mix64_np(x: U64) -> U64:
    """splitmix64's finaliser on an array (same values as :func:`neardup.hashing.mix64`).

    >>> hex(int(mix64_np(np.array([1], dtype=np.uint64))[0]))
    '0x5692161d100b05e5'
    """
    z = np.asarray(x, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= _C1
        z ^= z >> np.uint64(27)
        z *= _C2
        z ^= z >> np.uint64(31)
    return z


@dataclass(frozen=True)
class BandDesign:
    """``bands`` bands of ``rows`` sketch values each (``bands * rows <= num_hashes``).

    >>> BandDesign().to_dict()
    {'kind': 'minhash-bands', 'bands': 32, 'rows': 4}
    >>> round(BandDesign().recall(0.6), 3), round(BandDesign().recall(0.0), 10)
    (0.989, 7.5e-09)
    """

    bands: int = 32
    rows: int = 4

    def __post_init__(self) -> None:
        if not isinstance(self.rows, int) or not 1 <= self.rows <= 4:
            raise BadInputError(
                f"rows must be an int in 1..4 (8-bit values, 32-bit bands), got {self.rows!r}"
            )
        if not isinstance(self.bands, int) or not 1 <= self.bands <= 4096:
            raise BadInputError(f"bands must be an int in 1..4096, got {self.bands!r}")

    def recall(self, jaccard: float, value_bits: int = 8) -> float:
        """Probability that a pair with shingle Jaccard ``jaccard`` shares a key."""
        s = jaccard + (1.0 - jaccard) * 2.0**-value_bits
        return float(1.0 - (1.0 - s**self.rows) ** self.bands)

    def random_pair_rate(self, value_bits: int = 8) -> float:
        """Probability that two unrelated documents (J = 0) share a key."""
        return self.recall(0.0, value_bits)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description (part of the dedup configuration)."""
        return {"kind": "minhash-bands", "bands": self.bands, "rows": self.rows}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BandDesign:
        """Inverse of :meth:`to_dict`."""
        if data.get("kind") != "minhash-bands":
            raise BadInputError(f"not a minhash-bands design: {data!r}")
        return cls(bands=int(data["bands"]), rows=int(data["rows"]))


def band_keys(sketches: npt.NDArray[Any], design: BandDesign) -> U64:
    """``(n, bands)`` uint64 keys of sketch rows (8-bit values; the last column is ignored).

    Value columns ``t * rows .. t * rows + rows - 1`` form band ``t``.
    """
    sk = np.asarray(sketches)
    if sk.ndim != 2 or sk.dtype != np.uint8:
        raise BadInputError(f"band keys need (n, width) uint8 sketches, got {sk.dtype} {sk.shape}")
    need = design.bands * design.rows
    if sk.shape[1] - 1 < need:
        raise BadInputError(
            f"{design.bands} bands x {design.rows} rows need {need} sketch values, the sketch "
            f"has {sk.shape[1] - 1}; use fewer bands or a wider MinHashVerifier"
        )
    if design.rows == 4:  # one big-endian uint32 per band: a view, no arithmetic
        packed = np.ascontiguousarray(sk[:, :need]).view(">u4").astype(np.uint64)
    else:
        vals = sk[:, :need].astype(np.uint64).reshape(sk.shape[0], design.bands, design.rows)
        packed = np.zeros((sk.shape[0], design.bands), dtype=np.uint64)
        for r in range(design.rows):
            packed = (packed << np.uint64(8)) | vals[:, :, r]
    band = np.arange(design.bands, dtype=np.uint64) << np.uint64(32)
    return mix64_np(packed | band)


def recall(jaccard: float, bands: int, rows: int, value_bits: int = 8) -> float:
    """``1 - (1 - s**rows)**bands`` with ``s = J + (1 - J) 2**-value_bits``.

    >>> round(recall(0.8, 32, 4), 6)
    1.0
    """
    return BandDesign(bands=bands, rows=rows).recall(jaccard, value_bits)


def pairs_sharing_keys(keys: U64, docs: I64) -> tuple[I64, I64]:
    """Distinct pairs ``(a, b)``, ``a < b``, of doc ids that share at least one key.

    ``keys`` and ``docs`` are parallel flat arrays (one row per (doc, key)). The work is the
    sum of ``g * (g - 1) / 2`` over key groups of size ``g`` (a hot key is quadratic in its
    group), then one sort to drop pairs found through several keys.

    >>> a, b = pairs_sharing_keys(np.array([5, 5, 7, 7, 5], np.uint64), np.array([0, 1, 1, 0, 2]))
    >>> list(zip(a.tolist(), b.tolist()))
    [(0, 1), (0, 2), (1, 2)]
    """
    keys = np.asarray(keys, dtype=np.uint64)
    docs = np.asarray(docs, dtype=np.int64)
    empty = np.zeros(0, np.int64)
    order = np.argsort(keys)  # one sort; rows of keys held more than once (usually few) stay
    ks = keys[order]
    dup = ks[1:] == ks[:-1]
    if not dup.any():
        return empty, empty.copy()
    grouped = np.zeros(ks.size, dtype=bool)
    grouped[1:] |= dup
    grouped[:-1] |= dup
    k, d = ks[grouped], docs[order[grouped]]
    start = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
    size = np.diff(np.append(start, k.size))
    big = size > 1
    start, size = start[big], size[big]
    # element at local index a of a group of size g pairs with the g - 1 - a later ones
    first = np.repeat(start, size) + _ranks(size)
    later = np.repeat(size, size) - 1 - _ranks(size)
    i = np.repeat(first, later)
    j = i + 1 + _ranks(later)
    a, b = d[i], d[j]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    if d.size and int(d.max()) >= 2**32:
        raise BadInputError("pairs_sharing_keys takes doc ids < 2**32 (local rows of a chunk)")
    code = np.sort(lo[keep].astype(np.uint64) << np.uint64(32) | hi[keep].astype(np.uint64))
    code = code[np.concatenate((code[:1] == code[:1], code[1:] != code[:-1]))]  # np.unique
    # would import numpy.ma (~12 ms of a run's start)
    return (code >> np.uint64(32)).astype(np.int64), (code & np.uint64(0xFFFFFFFF)).astype(np.int64)


def _ranks(size: I64) -> I64:
    """``[0, 1, .., s0 - 1, 0, 1, .., s1 - 1, ...]`` for group sizes ``size``."""
    total = int(size.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    starts = np.cumsum(size) - size
    return np.arange(total, dtype=np.int64) - np.repeat(starts, size)
