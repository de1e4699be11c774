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

from neardup.dedup.state import Growable
from neardup.index import HammingIndex, all_pairs
from neardup.index.keytable import KeyTable
from neardup.index.lsh import BandDesign, band_keys, pairs_sharing_keys

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


#: ``k`` of the default design: no Hamming filter, the verifier decides (docs/ACCURACY.md).
NO_HAMMING_LIMIT = 64


def bands_fit(verifier: object) -> bool:
    """Whether the default band design applies: an 8-bit MinHash verifier with >= 128 values.

    >>> from neardup.verify import MinHashVerifier
    >>> bands_fit(MinHashVerifier()), bands_fit(MinHashVerifier(num_hashes=64)), bands_fit(None)
    (True, False, False)
    """
    from neardup.verify import MinHashVerifier

    return (
        isinstance(verifier, MinHashVerifier) and verifier.bits == 8 and verifier.num_hashes >= 128
    )


class BandCandidates:
    """Candidates by shared LSH bands of the verifier's MinHash sketch (the scaling default).

    ``candidate(i, j)``: the two sketches agree on all ``rows`` values of at least one of the
    ``bands`` bands, i.e. share a key of :func:`~neardup.index.lsh.band_keys`. Exact for that
    definition (no caps, no sampling): a hot key yields all its pairs. Cost per query document:
    ``bands`` lookups in a :class:`~neardup.index.keytable.KeyTable` (one bucket per LSM run)
    plus its candidates; unrelated documents share a key with probability
    ``design.random_pair_rate()`` (7.5e-9 for 32 x 4), so the expected random candidates per
    document are ``7.5e-9 * kept``: 0.75 at 10^8 kept documents.

    >>> import numpy as np
    >>> from neardup.verify import MinHashVerifier
    >>> v = MinHashVerifier()
    >>> texts = ["the quick brown fox jumps over the lazy dog near the river bank today",
    ...          "the quick brown fox jumps over the lazy dog near the river bank now",
    ...          "monetary policy was left unchanged by the central bank on tuesday"]
    >>> sk, fps = v.sketch_many(texts), np.array([1, 3, 2**40], np.uint64)
    >>> bc = BandCandidates()
    >>> i, j, d = bc.pairs(fps, sk)
    >>> list(zip(i.tolist(), j.tolist(), d.tolist()))
    [(0, 1, 1)]
    >>> bc.add(np.array([100, 102]), fps[[0, 2]], sk[[0, 2]], None)
    >>> q, p, d = bc.query(fps[1:2], sk[1:2])
    >>> p.tolist(), d.tolist()
    ([100], [1])
    """

    def __init__(self, *, bands: int = 32, rows: int = 4) -> None:
        self.design = BandDesign(bands=bands, rows=rows)
        self._table = KeyTable()
        self._pos = Growable(np.int64)
        self._fps = Growable(np.uint64)
        self._ts = Growable(np.int64)
        self._alive = Growable(np.bool_)
        self._has_ts = False
        self._queries = 0
        self._hits = 0

    def _need(self, sketches: npt.NDArray[Any] | None) -> npt.NDArray[Any]:
        if sketches is None:
            raise ValueError(
                "band candidates need verifier sketches; with verifier=None use "
                "HammingCandidates (pass k=... / candidate_k=...)"
            )
        return sketches

    def keys(self, fps: U64, sketches: npt.NDArray[Any] | None) -> U64:
        """``(n, bands)`` keys: ``mix64((band << 32) | band values)`` (:mod:`neardup.index.lsh`)."""
        return band_keys(self._need(sketches), self.design)

    def query(self, fps: U64, sketches: npt.NDArray[Any] | None) -> Pairs:
        fps = np.asarray(fps, np.uint64)
        rows, slots = self._table.lookup(self.keys(fps, sketches))
        self._queries += int(fps.size)
        self._hits += int(rows.size)
        dist = np.bitwise_count(fps[rows] ^ self._fps.view()[slots]).astype(np.int64)
        return rows, self._pos.view()[slots].copy(), dist

    def pairs(self, fps: U64, sketches: npt.NDArray[Any] | None) -> Pairs:
        fps = np.asarray(fps, np.uint64)
        keys = self.keys(fps, sketches)
        docs = np.repeat(np.arange(fps.size, dtype=np.int64), keys.shape[1])
        i, j = pairs_sharing_keys(keys.ravel(), docs)
        return i, j, np.bitwise_count(fps[i] ^ fps[j]).astype(np.int64)

    def add(
        self,
        positions: I64,
        fps: U64,
        sketches: npt.NDArray[Any] | None,
        timestamps: I64 | None,
    ) -> None:
        self._add_keys(positions, fps, self.keys(fps, sketches), timestamps)

    def _add_keys(self, positions: I64, fps: U64, keys: U64, timestamps: I64 | None) -> None:
        n = len(positions)
        slots = np.arange(self._pos.size, self._pos.size + n)
        self._table.add(keys, slots)
        self._pos.extend(positions)
        self._fps.extend(fps)
        self._alive.extend(np.ones(n, bool))
        if timestamps is not None:
            self._has_ts = True
        self._ts.extend(np.zeros(n, np.int64) if timestamps is None else timestamps)

    def _kill(self, mask: npt.NDArray[np.bool_]) -> int:
        slots = np.flatnonzero(mask)
        self._alive.view()[slots] = False
        self._table.kill(slots)
        if len(self) < self._pos.size // 2 and self._pos.size > 4096:
            self._table.compact()
        return int(slots.size)

    def expire(self, before_timestamp: int) -> int:
        if not self._has_ts:
            return 0
        return self._kill(self._alive.view() & (self._ts.view() < int(before_timestamp)))

    def remove(self, positions: I64) -> int:
        return self._kill(self._alive.view() & np.isin(self._pos.view(), positions))

    def get_config(self) -> dict[str, Any]:
        return {"design": "minhash-bands", "bands": self.design.bands, "rows": self.design.rows}

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """Live kept documents: positions, fingerprints, timestamps (if any) and their keys."""
        alive = self._alive.view()
        out: dict[str, npt.NDArray[Any]] = {
            "positions": self._pos.view()[alive].copy(),
            "fingerprints": self._fps.view()[alive].copy(),
            "keys": self._table.keys_by_slot(np.flatnonzero(alive), self.design.bands),
        }
        if self._has_ts:
            out["timestamps"] = self._ts.view()[alive].copy()
        return out

    def load_arrays(self, arrays: dict[str, npt.NDArray[Any]]) -> None:
        if len(self):
            raise ValueError("load_arrays needs an empty candidate index")
        keys = np.asarray(arrays["keys"], np.uint64)
        if keys.ndim != 2 or keys.shape[1] != self.design.bands:
            raise ValueError(
                f"stored keys have shape {keys.shape}, this design has {self.design.bands} "
                "bands; load the state with the configuration it was written with"
            )
        if len(arrays["positions"]):
            self._add_keys(
                arrays["positions"], arrays["fingerprints"], keys, arrays.get("timestamps")
            )

    def __len__(self) -> int:
        return int(self._alive.view().sum())

    def describe(self) -> dict[str, Any]:
        """Design, expected random candidates per document at the current size, memory."""
        kept = len(self)
        rate = self.design.random_pair_rate()
        per_doc = self._pos.nbytes + self._fps.nbytes + self._ts.nbytes + self._alive.nbytes
        return {
            **self.get_config(),
            "kept": kept,
            "random_pair_rate": rate,
            "expected_random_candidates_per_document": rate * kept,
            "recall_at_jaccard": {j: round(self.design.recall(j), 4) for j in (0.5, 0.6, 0.7)},
            "measured_candidates_per_query": self._hits / max(self._queries, 1),
            "runs": self._table.runs,
            "memory_bytes": self._table.nbytes + per_doc,
        }


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
