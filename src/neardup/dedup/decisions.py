"""What the dedup step reads and returns: prepared batches of documents and their decisions.

:class:`PreparedBatch` (what :meth:`Deduplicator.prepare <neardup.Deduplicator.prepare>`
returns: fingerprints, exact keys, timestamps, lengths, sketches), :class:`Decisions` (one row
per document) and :class:`Decision` (one document, with ids), and the status codes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

UNIQUE, DUPLICATE, EXACT_DUPLICATE, EMPTY = 0, 1, 2, 3
STATUS_NAMES = ("unique", "duplicate", "exact_duplicate", "empty")


@dataclass(frozen=True)
class Decisions:
    """Decisions for a run of documents as parallel arrays (one row per document).

    ``duplicate_of`` holds the *position* of the kept document (-1 for kept ones) and
    ``distance`` its Hamming distance (-1 for kept); ``status`` holds codes, see
    :attr:`statuses` for the names ``unique``, ``duplicate``, ``exact_duplicate``, ``empty``.
    ``similarity`` is the value that decided (see :mod:`neardup.dedup.similarity`): the
    verifier's similarity to the kept document for a ``duplicate`` (the estimated Jaccard
    similarity; ``1 - distance / 64`` without a verifier), 1.0 for an ``exact_duplicate``, NaN
    for kept and empty documents; ``threshold`` the threshold it passed (the short-text
    threshold for a pair with a text under ``short_length`` characters; NaN where no verifier
    decided).
    """

    position: npt.NDArray[np.int64]
    fingerprint: npt.NDArray[np.uint64]
    status: npt.NDArray[np.int8]
    duplicate_of: npt.NDArray[np.int64]
    distance: npt.NDArray[np.int16]
    cluster_id: npt.NDArray[np.int64]
    similarity: npt.NDArray[np.float64]
    # optional for callers that build Decisions without it: unknown (NaN) then
    threshold: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        n = len(self.position)
        if len(self.threshold) == 0 and n:  # not given
            object.__setattr__(self, "threshold", np.full(n, np.nan))
        elif len(self.threshold) != n:
            raise ValueError(f"threshold has {len(self.threshold)} rows for {n} documents")

    def __len__(self) -> int:
        return len(self.position)

    @property
    def statuses(self) -> list[str]:
        """Status names, one per document."""
        return [STATUS_NAMES[s] for s in self.status.tolist()]

    def counts(self) -> dict[str, int]:
        """Number of documents per status name."""
        bc = np.bincount(self.status.astype(np.int64), minlength=len(STATUS_NAMES))
        return {name: int(bc[i]) for i, name in enumerate(STATUS_NAMES)}


def concat_decisions(parts: list[Decisions]) -> Decisions:
    """The rows of ``parts`` one after the other (an empty Decisions for none).

    >>> one = Decisions(*(np.zeros(1, t) for t in "i8 u8 i1 i8 i2 i8 f8".split()))
    >>> len(concat_decisions([one, one])), len(concat_decisions([]))
    (2, 0)
    """
    names = [f.name for f in fields(Decisions)]
    if not parts:
        types = (np.int64, np.uint64, np.int8, np.int64, np.int16, np.int64, np.float64)
        empty: Any = (np.zeros(0, t) for t in types)
        return Decisions(*empty)
    columns: Any = (np.concatenate([getattr(p, k) for p in parts]) for k in names)
    return Decisions(*columns)


@dataclass(frozen=True)
class Decision:
    """The decision for one document, with ids instead of positions (see ``Deduplicator.add``)."""

    id: Any
    fingerprint: int
    status: str
    duplicate_of: Any | None
    distance: int | None
    cluster_id: int
    similarity: float | None = None
    threshold: float | None = None


@dataclass
class PreparedBatch:
    """Per-document data of a batch of documents before decisions (from ``prepare``):
    fingerprints, empty mask, exact keys, timestamps, text lengths, verifier sketches."""

    fps: npt.NDArray[np.uint64]
    empty: npt.NDArray[np.bool_]
    keys: list[int]
    ts: npt.NDArray[np.float64]
    lengths: npt.NDArray[np.int64]
    sketches: np.ndarray | None


def slice_batch(chunk: PreparedBatch, a: int, b: int) -> PreparedBatch:
    """Rows ``a..b-1`` of ``chunk``."""
    sk = chunk.sketches
    return PreparedBatch(
        chunk.fps[a:b],
        chunk.empty[a:b],
        chunk.keys[a:b],
        chunk.ts[a:b],
        chunk.lengths[a:b],
        None if sk is None else sk[a:b],
    )


def take_batch(chunk: PreparedBatch, rows: list[int]) -> PreparedBatch:
    """The rows ``rows`` of ``chunk``, in that order."""
    r = np.asarray(rows, np.int64)
    sk = chunk.sketches
    return PreparedBatch(
        chunk.fps[r],
        chunk.empty[r],
        [chunk.keys[i] for i in rows],
        chunk.ts[r],
        chunk.lengths[r],
        None if sk is None else sk[r],
    )


def concat_batches(chunks: list[PreparedBatch]) -> PreparedBatch:
    if not chunks:
        return PreparedBatch(
            np.zeros(0, np.uint64), np.zeros(0, bool), [], np.zeros(0), np.zeros(0, np.int64), None
        )
    sk = [c.sketches for c in chunks]
    return PreparedBatch(
        np.concatenate([c.fps for c in chunks]),
        np.concatenate([c.empty for c in chunks]),
        [key for c in chunks for key in c.keys],
        np.concatenate([c.ts for c in chunks]),
        np.concatenate([c.lengths for c in chunks]),
        None if sk[0] is None else np.concatenate(sk),  # type: ignore[arg-type]
    )
