"""How the Deduplicator finds candidate pairs: the :class:`CandidateIndex` protocol.

A candidate index holds the *kept* documents (global positions, fingerprints, verifier sketches,
timestamps) and answers two questions for a chunk of new documents: which kept documents are
candidates for each of them (:meth:`CandidateIndex.query`), and which pairs inside the chunk
are candidates (:meth:`CandidateIndex.pairs`). Candidates are then filtered by the accept
predicate (Hamming distance, verifier, window) in the pipeline and decided by
:func:`neardup.dedup.greedy.decide_in_order`.

``candidate(i, j)`` must be a pure function of the two documents (their fingerprints and
sketches), so that every engine finds the same pairs: :meth:`CandidateIndex.keys` states it as
join keys (two documents are candidates when they share a key), which is what the Spark engine
joins on.

:class:`HammingCandidates` is the exact radius search: every kept document within ``radius``
bits (:class:`~neardup.index.HammingIndex` against kept documents, :func:`~neardup.index.all_pairs`
inside a chunk); its keys are pigeonhole blocks (``radius + 1`` blocks of the fingerprint, of
which a pair within ``radius`` bits shares at least one exactly), a superset of its pairs.

>>> import numpy as np
>>> hc = HammingCandidates(radius=2)
>>> fps = np.array([0b1111, 0b0111, 2**63], dtype=np.uint64)
>>> hc.pairs(fps, None)[0].tolist(), hc.pairs(fps, None)[1].tolist()
([0], [1])
>>> hc.add(np.array([10, 11]), fps[:2], None, None)
>>> q, p, d = hc.query(np.array([0b0011], dtype=np.uint64), None)
>>> p.tolist(), d.tolist()
([11, 10], [1, 2])
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from neardup.index import HammingIndex, all_pairs

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
Pairs = tuple[I64, I64, I64]


@runtime_checkable
class CandidateIndex(Protocol):
    """What the Deduplicator needs to find candidates (see the module docs).

    Every method takes ``fps`` (uint64 ``(n,)``) and ``sketches`` (verifier sketches ``(n,
    width)``, or None without a verifier) of the same rows.
    """

    def query(self, fps: U64, sketches: npt.NDArray[Any] | None) -> Pairs:
        """Candidates among the kept documents: ``(row, position, hamming distance)``."""
        ...

    def pairs(self, fps: U64, sketches: npt.NDArray[Any] | None) -> Pairs:
        """Candidate pairs among the given rows: ``(i, j, hamming distance)`` with ``i < j``."""
        ...

    def add(
        self,
        positions: I64,
        fps: U64,
        sketches: npt.NDArray[Any] | None,
        timestamps: I64 | None,
    ) -> None:
        """Store kept documents (``timestamps`` in whole seconds, for :meth:`expire`)."""
        ...

    def expire(self, before_timestamp: int) -> int:
        """Drop kept documents older than ``before_timestamp``; returns how many."""
        ...

    def remove(self, positions: I64) -> int:
        """Drop kept documents by position (missing ones are ignored); returns how many."""
        ...

    def keys(self, fps: U64, sketches: npt.NDArray[Any] | None) -> U64:
        """Join keys ``(n, m)``: documents sharing a key are candidates (a superset is fine:
        the accept predicate decides)."""
        ...

    def get_config(self) -> dict[str, Any]:
        """JSON-able description of the design (it is part of the dedup config id)."""
        ...

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The stored kept documents as named arrays (for the persisted dedup state)."""
        ...

    def load_arrays(self, arrays: dict[str, npt.NDArray[Any]]) -> None:
        """Restore what :meth:`to_arrays` returned (into an empty index of the same config)."""
        ...

    def __len__(self) -> int: ...

    def describe(self) -> dict[str, Any]: ...


class HammingCandidates:
    """Exact radius search: candidates are the kept documents within ``radius`` bits."""

    def __init__(self, *, radius: int, index_design: str = "auto") -> None:
        self.radius = radius
        self.index_design = index_design
        self._index = HammingIndex(k=radius, design=index_design)

    def query(self, fps: U64, sketches: npt.NDArray[Any] | None) -> Pairs:
        m = self._index.search(fps, k=self.radius)
        return (
            np.asarray(m.query, np.int64),
            np.asarray(m.id, np.int64),
            np.asarray(m.distance, np.int64),
        )

    def pairs(self, fps: U64, sketches: npt.NDArray[Any] | None) -> Pairs:
        i, j, d = all_pairs(fps, k=self.radius)
        return np.asarray(i, np.int64), np.asarray(j, np.int64), np.asarray(d, np.int64)

    def add(
        self,
        positions: I64,
        fps: U64,
        sketches: npt.NDArray[Any] | None,
        timestamps: I64 | None,
    ) -> None:
        self._index.add(positions, fps, timestamps=timestamps)

    def expire(self, before_timestamp: int) -> int:
        return self._index.expire(before_timestamp)

    def remove(self, positions: I64) -> int:
        return self._index.remove(positions, missing_ok=True)

    def keys(self, fps: U64, sketches: npt.NDArray[Any] | None) -> U64:
        """Pigeonhole keys: block ``b`` of ``radius + 1`` near-equal blocks, tagged and mixed.

        >>> HammingCandidates(radius=1).keys(np.array([0, 1], np.uint64), None).shape
        (2, 2)
        """
        blocks = self.radius + 1
        fps = np.asarray(fps, np.uint64)
        edges = np.linspace(0, 64, blocks + 1).astype(np.int64)
        out = np.empty((fps.size, blocks), np.uint64)
        for b in range(blocks):
            width = int(edges[b + 1] - edges[b])
            mask = np.uint64((1 << width) - 1) if width < 64 else np.uint64(2**64 - 1)
            block = (fps >> np.uint64(edges[b])) & mask
            out[:, b] = _mix(block ^ (np.uint64(b + 1) << np.uint64(58)))
        return out

    def get_config(self) -> dict[str, Any]:
        return {"design": "hamming", "radius": self.radius}

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        self._index.flush()
        store = self._index._store
        alive = store.alive.astype(bool)
        out: dict[str, npt.NDArray[Any]] = {
            "positions": store.ids[alive].copy(),
            "fingerprints": store.fps[alive].copy(),
        }
        if store.ts is not None:
            out["timestamps"] = store.ts[alive].copy()
        return out

    def load_arrays(self, arrays: dict[str, npt.NDArray[Any]]) -> None:
        if len(self._index):
            raise ValueError("load_arrays needs an empty candidate index")
        if len(arrays["positions"]):
            self._index.add(
                arrays["positions"], arrays["fingerprints"], timestamps=arrays.get("timestamps")
            )

    def __len__(self) -> int:
        return len(self._index)

    def describe(self) -> dict[str, Any]:
        return {**self.get_config(), "index": self._index.describe()}


def _mix(values: U64) -> U64:
    """splitmix64 finaliser, vectorised (the same function as :func:`neardup.hashing.mix64`).

    >>> from neardup.hashing import mix64
    >>> int(_mix(np.array([12345], np.uint64))[0]) == int(mix64(np.uint64(12345)))
    True
    """
    x = np.asarray(values, np.uint64).copy()
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x
