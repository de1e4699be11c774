"""An inverted index of gram hashes -> postings (document, first token, last token).

Postings live in sorted *segments* (numpy arrays sorted by hash). New postings collect in a
buffer; a look-up first turns the buffer into a segment, and segments of similar size are
merged (as in an LSM tree), so adding costs O(log n) amortised per posting and a look-up is a
``searchsorted`` over a few segments, for a whole query text at once.

>>> import numpy as np
>>> ix = GramIndex()
>>> ix.add(0, np.array([7, 9], dtype=np.uint64), np.array([[0, 2], [1, 3]]))
>>> ix.add(1, np.array([9], dtype=np.uint64), np.array([[4, 6]]))
>>> q, post = ix.lookup(np.array([9, 5], dtype=np.uint64), max_df=10)
>>> q.tolist(), post[:, 0].tolist()
([0, 0], [0, 1])
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["GramIndex"]

# postings columns: doc, first token, last token (exclusive)
COLUMNS = 3
_BUFFER = 1 << 16


class GramIndex:
    """Gram hash -> postings; see the module docstring."""

    def __init__(self) -> None:
        self._hashes: list[npt.NDArray[np.uint64]] = []
        self._posts: list[npt.NDArray[np.int64]] = []
        self._buf_h: list[npt.NDArray[np.uint64]] = []
        self._buf_p: list[npt.NDArray[np.int64]] = []
        self._buffered = 0

    def __len__(self) -> int:
        return sum(h.size for h in self._hashes) + self._buffered

    def add(self, doc: int, hashes: npt.NDArray[np.uint64], where: npt.NDArray[np.int64]) -> None:
        """Add the grams ``hashes`` of document ``doc``; ``where`` rows: (first, last) tokens."""
        if hashes.size == 0:
            return
        posts = np.empty((hashes.size, COLUMNS), dtype=np.int64)
        posts[:, 0] = doc
        posts[:, 1:] = where
        self._buf_h.append(hashes.astype(np.uint64, copy=False))
        self._buf_p.append(posts)
        self._buffered += hashes.size
        if self._buffered >= _BUFFER:
            self._flush()

    def _flush(self) -> None:
        if not self._buffered:
            return
        h = np.concatenate(self._buf_h)
        p = np.concatenate(self._buf_p)
        self._buf_h, self._buf_p, self._buffered = [], [], 0
        order = np.argsort(h, kind="stable")
        self._hashes.append(h[order])
        self._posts.append(p[order])
        # merge while the newest segment is at least half the size of the one before it
        while len(self._hashes) > 1 and 2 * self._hashes[-1].size >= self._hashes[-2].size:
            h2, p2 = self._hashes.pop(), self._posts.pop()
            h1, p1 = self._hashes.pop(), self._posts.pop()
            h = np.concatenate([h1, h2])
            p = np.concatenate([p1, p2])
            order = np.argsort(h, kind="stable")  # stable: earlier postings stay first
            self._hashes.append(h[order])
            self._posts.append(p[order])

    def lookup(
        self, hashes: npt.NDArray[np.uint64], max_df: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``(query_index, postings)``: one row per posting of each of ``hashes``, leaving out
        grams with more than ``max_df`` postings (boilerplate)."""
        self._flush()
        found = [
            (np.searchsorted(h, hashes, "left"), np.searchsorted(h, hashes, "right"))
            for h in self._hashes
        ]
        df = sum((hi - lo for lo, hi in found), np.zeros(hashes.size, dtype=np.int64))
        keep = df <= max_df
        qs: list[npt.NDArray[np.int64]] = []
        ps: list[npt.NDArray[np.int64]] = []
        for (lo, hi), posts in zip(found, self._posts, strict=True):
            counts = np.where(keep, hi - lo, 0)
            total = int(counts.sum())
            if not total:
                continue
            q = np.repeat(np.arange(hashes.size, dtype=np.int64), counts)
            starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
            qs.append(q)
            ps.append(posts[starts + np.arange(total)])
        if not qs:
            return np.zeros(0, dtype=np.int64), np.zeros((0, COLUMNS), dtype=np.int64)
        return np.concatenate(qs), np.concatenate(ps)

    def arrays(self) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
        """All postings as one sorted segment (for saving)."""
        self._flush()
        while len(self._hashes) > 1:
            h2, p2 = self._hashes.pop(), self._posts.pop()
            h1, p1 = self._hashes.pop(), self._posts.pop()
            h = np.concatenate([h1, h2])
            order = np.argsort(h, kind="stable")
            self._hashes.append(h[order])
            self._posts.append(np.concatenate([p1, p2])[order])
        if not self._hashes:
            return np.zeros(0, dtype=np.uint64), np.zeros((0, COLUMNS), dtype=np.int64)
        return self._hashes[0], self._posts[0]

    @classmethod
    def from_arrays(cls, hashes: npt.NDArray[np.uint64], posts: npt.NDArray[np.int64]) -> GramIndex:
        """The index holding one saved sorted segment."""
        ix = cls()
        if hashes.size:
            ix._hashes.append(np.asarray(hashes, dtype=np.uint64))
            ix._posts.append(np.asarray(posts, dtype=np.int64))
        return ix
