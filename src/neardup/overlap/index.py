"""An inverted index of gram hashes -> postings (document, first token, last token).

With the C kernels built (``neardup._overlap.Index``) the postings live in a hash table cut
into 256 parts that grow one at a time (no stop of the whole table), 8-byte slots (one cache
line per probe of an absent gram) and per-gram runs of postings of doubling size (overlap_index.c
documents the layout; docs/OVERLAP.md "Cost" its cost from 10^5 to 10^6 documents); otherwise
in the numpy structure described next, which is also the reference the kernel is tested
against (same seeds, same order; tests/overlap/test_index.py checks both against a dict).

Postings live in sorted *segments* (numpy arrays sorted by hash). New postings collect in a
buffer; a look-up first turns the buffer into a segment, and segments of similar size are
merged (as in an LSM tree), so adding costs O(log n) amortised per posting and a look-up is a
``searchsorted`` over a few segments, for a whole query text at once.

>>> import numpy as np
>>> ix = GramIndex()
>>> ix.add(0, np.array([7, 9], dtype=np.uint64), np.array([[0, 2], [1, 3]]))
>>> ix.add(1, np.array([9], dtype=np.uint64), np.array([[4, 6]]))
>>> query = np.array([9, 5], dtype=np.uint64), np.array([0, 1]), np.array([2, 3])
>>> docs, bounds, seeds = ix.seeds(*query, max_df=10, min_seeds=1)
>>> docs, bounds.tolist(), seeds.tolist()
([0, 1], [0, 1, 2], [[0, 2, 1, 3], [0, 2, 4, 6]])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from neardup import _backend
from neardup._backend import overlap_kernels
from neardup.errors import BadInputError

__all__ = ["Budget", "GramIndex", "Look", "Looked", "SeedBudgetError"]

# postings columns: doc, first token, last token (exclusive)
COLUMNS = 3
_BUFFER = 1 << 16


class SeedBudgetError(BadInputError):
    """A query's look-ups found more than ``limit`` postings (``seeds`` of them): refused
    before they are copied, as the per-pair step's work grows with them (a text of a few
    words repeated meets each gram's many postings once per occurrence: seeds grow with the
    square of its length)."""

    item: int | None = None  # the text's place in a batch, where a caller knows it

    def __init__(self, seeds: int, limit: int, message: str = "") -> None:
        self.seeds, self.limit = seeds, limit
        super().__init__(message or f"{seeds} seeds, more than the limit of {limit}")


class Look(NamedTuple):
    """What a look-up of a packed document asks besides the document: the C index's
    ``seeds_packed`` arguments after ``packed`` (:meth:`GramIndex.seeds` says what each does;
    ``window`` is the winnowing window of the grams looked up)."""

    max_df: int
    min_seeds: int
    window: int
    max_seeds: int = 0
    cap: int = 0


class Budget(NamedTuple):
    """A text's seed budget in :meth:`GramIndex.look_post_many`: ``per_gram`` seeds a coarse
    gram, for at least ``floor`` grams; over it, ``trim`` looks the text up again without its
    grams of more than ``per_gram`` postings (else the batch stops there)."""

    per_gram: int
    floor: int
    trim: bool


# look_post_many's answer for one document: docs, bounds, seed rows (bytes of int64) and
# whether its look-ups were trimmed
Looked = tuple[bytes, bytes, bytes, bool]


def _within(raw: tuple[bytes, bytes, bytes] | int, max_seeds: int) -> tuple[bytes, bytes, bytes]:
    """The C index's answer, or :class:`SeedBudgetError` when it is a count (over budget)."""
    if isinstance(raw, int):
        raise SeedBudgetError(raw, max_seeds)
    return raw


class GramIndex:
    """Gram hash -> postings; see the module docstring."""

    def __init__(self) -> None:
        self._c: _backend.OV.Index | None = None
        if overlap_kernels() is not None:
            self._c = _backend.OV.Index()
        self._hashes: list[npt.NDArray[np.uint64]] = []
        self._posts: list[npt.NDArray[np.int64]] = []
        self._buf_h: list[npt.NDArray[np.uint64]] = []
        self._buf_p: list[npt.NDArray[np.int64]] = []
        self._buffered = 0

    def __len__(self) -> int:
        if self._c is not None:
            return int(self._c.postings())
        return sum(h.size for h in self._hashes) + self._buffered

    def add(self, doc: int, hashes: npt.NDArray[np.uint64], where: npt.NDArray[np.int64]) -> None:
        """Add the grams ``hashes`` of document ``doc``; ``where`` rows: (first, last) tokens."""
        if hashes.size == 0:
            return
        if self._c is not None:
            w = np.asarray(where, dtype=np.int64)
            self._c.add(
                doc, np.ascontiguousarray(hashes, np.uint64), w[:, 0].copy(), w[:, 1].copy()
            )
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
        self, hashes: npt.NDArray[np.uint64], max_df: int, max_seeds: int = 0, cap: int = 0
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``(query_index, postings)``: one row per posting of each of ``hashes``, leaving out
        grams posted by more than ``max_df`` documents (boilerplate) and, with ``cap`` > 0,
        grams with more than ``cap`` postings; the numpy structure only.
        :class:`SeedBudgetError` when there are more than ``max_seeds`` rows (0: no limit),
        before any is copied."""
        if self._c is not None:
            raise RuntimeError("lookup() is the reference path; use seeds()")
        self._flush()
        found = [
            (np.searchsorted(h, hashes, "left"), np.searchsorted(h, hashes, "right"))
            for h in self._hashes
        ]
        postings = sum((hi - lo for lo, hi in found), np.zeros(hashes.size, dtype=np.int64))
        keep = postings <= max_df  # a gram with at most max_df postings has at most max_df docs
        for g in np.flatnonzero(~keep):
            keep[g] = self._documents(found, int(g)) <= max_df
        if cap > 0:
            keep &= postings <= cap
        total = int(postings[keep].sum())
        if 0 < max_seeds < total:
            raise SeedBudgetError(total, max_seeds)
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

    def _documents(self, found: list[tuple[Any, Any]], q: int) -> int:
        """The documents posting query gram ``q`` (``found``: its ranges in the segments). A
        document is added at once, so its postings sit in one segment."""
        return sum(
            np.unique(posts[lo[q] : hi[q], 0]).size
            for (lo, hi), posts in zip(found, self._posts, strict=True)
        )

    def seeds(
        self,
        hashes: npt.NDArray[np.uint64],
        first: npt.NDArray[np.int64],
        last: npt.NDArray[np.int64],
        max_df: int,
        min_seeds: int,
        max_seeds: int = 0,
        cap: int = 0,
    ) -> tuple[list[int], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``(docs, bounds, seeds)``: the documents (ascending) holding at least ``min_seeds``
        postings of the query grams (``hashes`` covering tokens ``[first, last)``; grams posted
        by more than ``max_df`` documents skipped); document ``docs[j]``'s seed rows
        ``(q_first, q_last, d_first, d_last)`` are ``seeds[bounds[j]:bounds[j + 1]]``, in
        query-gram then posting order; :class:`SeedBudgetError` when there are more than
        ``max_seeds`` postings (0: no limit); with ``cap`` > 0 the grams with more than ``cap``
        postings are left out (a text over its budget looked up again, at most ``cap`` seeds a
        gram). A document repeating a gram counts once:

        >>> ix = GramIndex()
        >>> ix.add(0, np.array([7, 7, 7], dtype=np.uint64), np.array([[0, 1], [2, 3], [4, 5]]))
        >>> one = np.array([0])
        >>> docs, bounds, seeds = ix.seeds(np.array([7], np.uint64), one, one + 1, 1, 1)
        >>> docs, len(seeds)
        ([0], 3)
        >>> ix.seeds(np.array([7], np.uint64), one, one + 1, 1, 1, max_seeds=2)
        Traceback (most recent call last):
        ...
        neardup.overlap.index.SeedBudgetError: 3 seeds, more than the limit of 2
        >>> ix.seeds(np.array([7], np.uint64), one, one + 1, 1, 1, cap=2)[0]
        []
        """
        if self._c is not None:
            d, b, s = _within(
                self._c.seeds(
                    np.ascontiguousarray(hashes, np.uint64),
                    np.ascontiguousarray(first, np.int64),
                    np.ascontiguousarray(last, np.int64),
                    max_df,
                    min_seeds,
                    max_seeds,
                    cap,
                ),
                max_seeds,
            )
            seeds = np.frombuffer(s, dtype=np.int64).reshape(-1, 4)
            return np.frombuffer(d, dtype=np.int64).tolist(), np.frombuffer(b, np.int64), seeds
        qi, posts = self.lookup(hashes, max_df, max_seeds, cap)
        by_doc = np.argsort(posts[:, 0], kind="stable")
        docs, counts = np.unique(posts[by_doc, 0], return_counts=True)
        many = counts >= min_seeds
        rows = by_doc[np.repeat(many, counts)]
        seeds = np.stack([first[qi[rows]], last[qi[rows]], posts[rows, 1], posts[rows, 2]], 1)
        bounds = np.zeros(int(many.sum()) + 1, dtype=np.int64)
        np.cumsum(counts[many], out=bounds[1:])
        return docs[many].tolist(), bounds, seeds.astype(np.int64).reshape(-1, 4)

    @property
    def packed(self) -> bool:
        """Whether :meth:`seeds_packed` and :meth:`add_packed` work (the C index)."""
        return self._c is not None

    def seeds_packed(
        self, packed: bytes, *look: int
    ) -> tuple[list[int], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """:meth:`seeds` of the grams of a packed document (``pairs.prepare_packed``) that
        winnowing with ``window`` keeps (``tokens.winnow``; C index); ``look``: the fields of
        :class:`Look`."""
        d, b, s = self.seeds_raw(packed, Look(*look))
        seeds = np.frombuffer(s, dtype=np.int64).reshape(-1, 4)
        return np.frombuffer(d, dtype=np.int64).tolist(), np.frombuffer(b, np.int64), seeds

    def seeds_raw(self, packed: bytes, look: Look) -> tuple[bytes, bytes, bytes]:
        """:meth:`seeds_packed` as the C index's bytes of int64 (docs, bounds, seed rows)."""
        return _within(self._kernel().seeds_packed(packed, *look), look.max_seeds)

    def look_post_many(
        self, packed: list[bytes], first: int, window: int | None, look: Look, budget: Budget
    ) -> tuple[list[Looked], int, int]:
        """For each packed document ``k`` in turn, in one call without the GIL (C index): its
        seeds as :meth:`seeds_raw` with ``look`` finds them, within ``budget`` (over it with
        ``trim``: again without the grams of more than ``per_gram`` postings, and the last item
        True), then, unless ``window`` is None, posted as document ``first + k``
        (:meth:`add_packed`). Returns the seeds of documents ``[0, stop)``; ``stop <
        len(packed)``: document ``stop`` is over its budget without ``trim`` (neither it nor
        those after it looked up or posted), with its postings' count."""
        add = window is not None
        args = (first, add, window or 1, look.window, look.max_df, look.min_seeds, *budget)
        return self._kernel().look_post_many(packed, *args)

    def add_packed(self, doc: int, packed: bytes, window: int) -> None:
        """Post the winnowed grams of a packed document (the C index)."""
        self._kernel().add_packed(doc, packed, window)

    def _kernel(self) -> _backend.OV.Index:
        """The C index (the packed methods need it: see :attr:`packed`)."""
        if self._c is None:
            raise RuntimeError("packed documents need the C index (GramIndex.packed is False)")
        return self._c

    def arrays(self) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
        """All postings as one sorted segment (for saving)."""
        if self._c is not None:
            hs, ps = self._c.arrays()
            return np.frombuffer(hs, np.uint64), np.frombuffer(ps, np.int64).reshape(-1, COLUMNS)
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
        if ix._c is not None:
            for doc_rows in _by_doc(np.asarray(posts, dtype=np.int64)):
                ix._c.add(
                    int(posts[doc_rows[0], 0]),
                    np.ascontiguousarray(hashes[doc_rows], np.uint64),
                    posts[doc_rows, 1].copy(),
                    posts[doc_rows, 2].copy(),
                )
            return ix
        if hashes.size:
            ix._hashes.append(np.asarray(hashes, dtype=np.uint64))
            ix._posts.append(np.asarray(posts, dtype=np.int64))
        return ix


def _by_doc(posts: npt.NDArray[np.int64]) -> list[npt.NDArray[np.int64]]:
    """Row indices of ``posts`` per document, documents ascending, rows in saved order (so
    the postings of one hash keep their order)."""
    if posts.shape[0] == 0:
        return []
    order = np.argsort(posts[:, 0], kind="stable")
    cuts = np.flatnonzero(np.diff(posts[order, 0])) + 1
    return np.split(order, cuts)
