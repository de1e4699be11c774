"""Exact ground truth: shingle Jaccard similarity over all pairs of a corpus.

Shingles: word 5-shingles for alphabetic text, character 5-grams (letters and digits, after
NFKC and case folding) for CJK text, chosen per document (:func:`neardup.verify.shingle_hashes`).
Pairs with Jaccard >= 0.5 "may" merge; pairs with Jaccard >= 0.8 "must" merge.

The all-pairs join is exact and memory-safe: prefix filtering (Chaudhuri et al. 2006; Xiao et
al. 2008) generates candidates (two sets with Jaccard >= t share a token among the
``|A| - ceil(t|A|) + 1`` rarest tokens of each), found by a chunked sparse product, and each
candidate's exact intersection is then counted by a merge of the two sorted token lists.

>>> gt = GroundTruth.from_texts(["a b c d e f g h", "a b c d e f g h", "a b c d e f g x", "x y z"])
>>> gt.may_i.tolist(), gt.may_j.tolist(), gt.may_sim.round(2).tolist()
([0, 0, 1], [1, 2, 2], [1.0, 0.6, 0.6])
>>> gt.must_pairs().shape
(1, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from neardup._extras import require
from neardup.verify import shingle_hashes_many

sp = require("scipy.sparse", "eval", "the accuracy harness (neardup eval)")
if TYPE_CHECKING:
    import numba
else:  # numba is in the eval extra, not the core
    numba = require("numba", "eval", "the accuracy harness (neardup eval)")

__all__ = ["GroundTruth", "jaccard_join", "shingle_sets"]

MAY = 0.5
MUST = 0.8

IntArr = npt.NDArray[np.int64]
FloatArr = npt.NDArray[np.float64]


def shingle_sets(
    texts: Sequence[str], n: int = 5, mode: str = "auto"
) -> list[npt.NDArray[np.uint64]]:
    """Shingle hash sets of every text (sorted, unique)."""
    flat, offsets = shingle_hashes_many(texts, n, mode=mode)
    return np.split(flat, offsets[1:-1])


def _token_ids(sets: Sequence[npt.NDArray[np.uint64]]) -> tuple[IntArr, IntArr, int]:
    """Flat token ids ranked by ascending document frequency (rarest = 0), plus doc offsets."""
    lengths = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.concatenate(sets) if len(sets) else np.empty(0, dtype=np.uint64)
    uniq, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.lexsort((np.arange(len(uniq)), counts))] = np.arange(len(uniq))
    ids = rank[inverse].astype(np.int64)
    for d in range(len(sets)):  # each doc's tokens sorted by rarity
        ids[offsets[d] : offsets[d + 1]].sort()
    return ids, offsets, len(uniq)


@numba.njit(cache=True)
def _intersections(
    ids: IntArr, offsets: IntArr, ci: IntArr, cj: IntArr
) -> IntArr:  # pragma: no cover - compiled
    out = np.zeros(ci.shape[0], dtype=np.int64)
    for p in range(ci.shape[0]):
        a0, a1 = offsets[ci[p]], offsets[ci[p] + 1]
        b0, b1 = offsets[cj[p]], offsets[cj[p] + 1]
        c = 0
        while a0 < a1 and b0 < b1:
            if ids[a0] == ids[b0]:
                c += 1
                a0 += 1
                b0 += 1
            elif ids[a0] < ids[b0]:
                a0 += 1
            else:
                b0 += 1
        out[p] = c
    return out


def jaccard_join(
    sets: Sequence[npt.NDArray[np.uint64]], threshold: float = MAY, chunk: int = 2000
) -> tuple[IntArr, IntArr, FloatArr]:
    """All pairs ``i < j`` with Jaccard(sets[i], sets[j]) >= threshold, exactly.

    Empty sets never match. Returns ``(i, j, jaccard)`` sorted by ``(i, j)``.

    >>> import numpy as np
    >>> s = [np.array([1, 2, 3], dtype=np.uint64), np.array([2, 3, 4], dtype=np.uint64)]
    >>> [a.tolist() for a in jaccard_join(s, 0.5)]
    [[0], [1], [0.5]]
    >>> [a.tolist() for a in jaccard_join(s, 0.6)]
    [[], [], []]
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    n = len(sets)
    ids, offsets, m = _token_ids(sets)
    lengths = np.diff(offsets)
    # prefix = the |A| - ceil(t|A|) + 1 rarest tokens (float guard: t|A| rounded before ceil)
    need = np.array([math.ceil(round(threshold * x, 9)) for x in lengths], dtype=np.int64)
    plen = np.where(lengths > 0, lengths - need + 1, 0)
    rows = np.repeat(np.arange(n), plen)
    starts = np.repeat(offsets[:-1], plen)
    within = np.arange(len(rows)) - np.repeat(np.cumsum(plen) - plen, plen)
    cols = ids[starts + within]
    prefix = sp.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(n, max(m, 1)))
    prefix_t = prefix.T.tocsr()
    out_i: list[IntArr] = []
    out_j: list[IntArr] = []
    out_s: list[FloatArr] = []
    for lo in range(0, n, chunk):
        hit = (prefix[lo : lo + chunk] @ prefix_t).tocoo()
        ci = hit.row.astype(np.int64) + lo
        cj = hit.col.astype(np.int64)
        keep = ci < cj
        ci, cj = ci[keep], cj[keep]
        la, lb = lengths[ci], lengths[cj]
        keep = np.minimum(la, lb) >= threshold * np.maximum(la, lb) - 1e-9
        ci, cj = ci[keep], cj[keep]
        inter = _intersections(ids, offsets, ci, cj)
        sim = inter / (lengths[ci] + lengths[cj] - inter)
        keep = sim >= threshold - 1e-12
        out_i.append(ci[keep])
        out_j.append(cj[keep])
        out_s.append(sim[keep])
    i = np.concatenate(out_i) if out_i else np.empty(0, dtype=np.int64)
    j = np.concatenate(out_j) if out_j else np.empty(0, dtype=np.int64)
    s = np.concatenate(out_s) if out_s else np.empty(0, dtype=np.float64)
    order = np.lexsort((j, i))
    return i[order], j[order], s[order].astype(np.float64)


@dataclass(frozen=True)
class GroundTruth:
    """Pairs with Jaccard >= ``may`` (sorted ``i < j``) and their similarities, for ``n`` docs."""

    n: int
    may_i: IntArr
    may_j: IntArr
    may_sim: FloatArr
    must: float = MUST
    may: float = MAY

    @classmethod
    def from_texts(cls, texts: Sequence[str], n: int = 5, mode: str = "auto") -> GroundTruth:
        """Shingle every text and join at the "may" threshold."""
        return cls.from_sets(shingle_sets(texts, n, mode))

    @classmethod
    def from_sets(cls, sets: Sequence[npt.NDArray[np.uint64]]) -> GroundTruth:
        """Join precomputed shingle sets at the "may" threshold."""
        i, j, s = jaccard_join(sets, MAY)
        return cls(len(sets), i, j, s)

    def restrict(self, mask: npt.NDArray[np.bool_]) -> GroundTruth:
        """Ground truth over the same ``n`` docs keeping only pairs with both ends in ``mask``."""
        keep = mask[self.may_i] & mask[self.may_j]
        return GroundTruth(
            self.n, self.may_i[keep], self.may_j[keep], self.may_sim[keep], self.must, self.may
        )

    def must_pairs(self) -> IntArr:
        """``(m, 2)`` array of pairs with Jaccard >= ``must``."""
        keep = self.may_sim >= self.must - 1e-12
        return np.stack([self.may_i[keep], self.may_j[keep]], axis=1)

    def may_pairs(self) -> IntArr:
        """``(m, 2)`` array of pairs with Jaccard >= ``may``."""
        return np.stack([self.may_i, self.may_j], axis=1)
