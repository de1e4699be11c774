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

:class:`BandCandidates` is the default (issue 13): LSH bands of the verifier's MinHash sketch,
constant work per document at any collection size (docs/ACCURACY.md, "Candidates that scale").

What every engine must mirror (library, CLI, service, Spark), so that all find the same pairs
and, through :func:`~neardup.dedup.greedy.decide_in_order`, make the same decisions:

- the keys: :func:`neardup.index.lsh.band_keys` of the default ``MinHashVerifier`` sketch,
  ``mix64((band << 32) | big-endian uint32 of the band's 4 sketch bytes)`` for bands 0..31
  (sketch values ``4t .. 4t + 3``; the sketch's last, length byte is not used). Call
  ``candidates.keys(fps, sketches)`` rather than re-deriving them;
- ``candidate(i, j)`` = the two documents share at least one key (any band). There is no cap,
  no sampling and no Hamming limit (``k`` is 64 in the default); every candidate is then
  filtered by the accept predicate (verifier threshold, window) in the pipeline;
- the design and its parameters (``get_config()``: ``{"design": "minhash-bands", "bands": 32,
  "rows": 4}``) are part of the dedup config id: a state or store written with one design must
  not be read with another. The Spark engine joins on ``(key)`` exploded per band; the service
  looks the keys up in its own store (or a :class:`~neardup.index.keytable.KeyTable`).

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

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from neardup._growable import Growable
from neardup.dedup.exact_map import narrow_positions
from neardup.index import HammingIndex, all_pairs
from neardup.index.expiry import ExpiryQueue
from neardup.index.keytable import KeyTable
from neardup.index.lsh import BandDesign, band_keys, mix64_np, pairs_sharing_keys

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
CandidatePairs = tuple[I64, I64, I64]  # (row, candidate, hamming distance): not index.Pairs
Sketches = npt.NDArray[Any] | None  # the verifier's sketch rows; None without a verifier


@runtime_checkable
class CandidateIndex(Protocol):
    """What the Deduplicator needs to find candidates (see the module docs).

    Every method takes ``fps`` (uint64 ``(n,)``) and ``sketches`` (verifier sketches ``(n,
    width)``, or None without a verifier) of the same rows.
    """

    def query(self, fps: U64, sketches: Sketches) -> CandidatePairs:
        """Candidates among the kept documents: ``(row, position, hamming distance)``."""
        ...

    def pairs(self, fps: U64, sketches: Sketches) -> CandidatePairs:
        """Candidate pairs among the given rows: ``(i, j, hamming distance)`` with ``i < j``."""
        ...

    def add(self, positions: I64, fps: U64, sketches: Sketches, timestamps: I64 | None) -> None:
        """Store kept documents (``timestamps`` in whole seconds, for :meth:`expire`)."""
        ...

    def expire(self, before_timestamp: int) -> int:
        """Drop kept documents older than ``before_timestamp``; returns how many."""
        ...

    def remove(self, positions: I64) -> int:
        """Drop kept documents by position (missing ones are ignored); returns how many."""
        ...

    def keys(self, fps: U64, sketches: Sketches) -> U64:
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
        self._queries = 0
        self._hits = 0

    def query(self, fps: U64, sketches: Sketches) -> CandidatePairs:
        m = self._index.search(fps, k=self.radius)
        self._queries += len(fps)
        self._hits += len(m.id)
        return (
            np.asarray(m.query, np.int64),
            np.asarray(m.id, np.int64),
            np.asarray(m.distance, np.int64),
        )

    def pairs(self, fps: U64, sketches: Sketches) -> CandidatePairs:
        i, j, d = all_pairs(fps, k=self.radius)
        return np.asarray(i, np.int64), np.asarray(j, np.int64), np.asarray(d, np.int64)

    def add(self, positions: I64, fps: U64, sketches: Sketches, timestamps: I64 | None) -> None:
        self._index.add(positions, fps, timestamps=timestamps)

    def expire(self, before_timestamp: int) -> int:
        return self._index.expire(before_timestamp)

    def remove(self, positions: I64) -> int:
        return self._index.remove(positions, missing_ok=True)

    def keys(self, fps: U64, sketches: Sketches) -> U64:
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
            out[:, b] = mix64_np(block ^ (np.uint64(b + 1) << np.uint64(58)))
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
        """Design, expected random candidates per document at the current size, memory.

        Two unrelated 64-bit fingerprints are within ``radius`` bits with probability
        ``P(Binomial(64, 1/2) <= radius)`` (3.5e-6 at 14): the expected random candidates per
        query grow linearly with the kept documents, and so does the work of the exact search.
        """
        from math import comb

        index = self._index.describe()
        rate = sum(comb(64, d) for d in range(self.radius + 1)) / 2.0**64
        kept = len(self)
        return {
            **self.get_config(),
            "kept": kept,
            "random_pair_rate": rate,
            "expected_random_candidates_per_document": rate * kept,
            "measured_candidates_per_query": self._hits / max(self._queries, 1),
            "memory_bytes": index.get("memory_bytes", 0),
            "index": index,
        }


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
        # band keys are mix64 of (band << 32) | values: the table stores what the bucket does
        # not imply and 3-byte slots (keytable.py), 5-6 bytes a key instead of 14
        self._bits = 32 + (bands - 1).bit_length()
        self._table = KeyTable(value_bits=self._bits)
        self._pos = Growable(np.int32)  # by slot; int64 from 2**31 (narrow_positions)
        # by slot, unless the owner reads them by position (read_fingerprints: 8 B/doc less)
        self._fps: Growable | None = Growable(np.uint64)
        self._fps_at: Callable[[I64], U64] | None = None
        self._ts = Growable(np.int64)  # by slot, only once timestamps come (8 B/doc)
        self._alive = Growable(np.bool_)
        self._live = 0
        self._has_ts = False
        self._expiry: ExpiryQueue | None = None  # slots by timestamp, built by expire()
        self._queries = 0
        self._hits = 0

    def _need(self, sketches: Sketches) -> npt.NDArray[Any]:
        if sketches is None:
            raise ValueError(
                "band candidates need verifier sketches; with verifier=None use "
                "HammingCandidates (pass k=... / candidate_k=...)"
            )
        return sketches

    def read_fingerprints(self, fingerprints_at: Callable[[I64], U64]) -> None:
        """Read the kept documents' fingerprints by position from ``fingerprints_at`` (their
        owner's column, e.g. the dedup state's) instead of holding a copy by slot (issue 39).
        It must give, for every position this index holds alive, the fingerprint it was
        :meth:`add`-ed with."""
        self._fps_at, self._fps = fingerprints_at, None

    def _slot_fps(self, slots: I64) -> U64:
        """Fingerprints of live ``slots``."""
        if self._fps is not None:
            return np.asarray(self._fps.view()[slots], np.uint64)
        assert self._fps_at is not None
        return self._fps_at(self._pos.view()[slots].astype(np.int64))

    def keys(self, fps: U64, sketches: Sketches) -> U64:
        """``(n, bands)`` keys: ``mix64((band << 32) | band values)`` (:mod:`neardup.index.lsh`)."""
        return band_keys(self._need(sketches), self.design)

    def query(self, fps: U64, sketches: Sketches) -> CandidatePairs:
        fps = np.asarray(fps, np.uint64)
        rows, slots = self._table.lookup(self.keys(fps, sketches))
        self._queries += int(fps.size)
        self._hits += int(rows.size)
        dist = np.bitwise_count(fps[rows] ^ self._slot_fps(slots)).astype(np.int64)
        return rows, self._pos.view()[slots].astype(np.int64), dist

    def pairs(self, fps: U64, sketches: Sketches) -> CandidatePairs:
        fps = np.asarray(fps, np.uint64)
        keys = self.keys(fps, sketches)
        docs = np.repeat(np.arange(fps.size, dtype=np.int64), keys.shape[1])
        i, j = pairs_sharing_keys(keys.ravel(), docs)
        return i, j, np.bitwise_count(fps[i] ^ fps[j]).astype(np.int64)

    def add(self, positions: I64, fps: U64, sketches: Sketches, timestamps: I64 | None) -> None:
        self._add_keys(positions, fps, self.keys(fps, sketches), timestamps)

    def _add_keys(self, positions: I64, fps: U64, keys: U64, timestamps: I64 | None) -> None:
        n = len(positions)
        slots = np.arange(self._pos.size, self._pos.size + n)
        self._table.add(keys, slots)
        pos = narrow_positions(np.asarray(positions, np.int64), self._pos.data)
        if pos.dtype != self._pos.data.dtype:  # a position past 2**31: widen once
            self._pos = Growable.wrap(self._pos.view().astype(pos.dtype))
        self._pos.extend(pos)
        if self._fps is not None:
            self._fps.extend(fps)
        self._alive.extend(np.ones(n, bool))
        self._live += n
        if timestamps is not None:
            if not self._has_ts:  # slots before the first timestamps read 0 (none stored)
                self._ts.extend(np.zeros(self._pos.size - n, np.int64))
                self._has_ts = True
            if self._expiry is not None:
                self._expiry.push(timestamps, slots)
        if self._has_ts:
            self._ts.extend(np.zeros(n, np.int64) if timestamps is None else timestamps)

    def _kill(self, slots: I64) -> int:
        """Kill live ``slots``; compact once as many slots are dead as live (amortised O(1))."""
        self._alive.writable()[slots] = False
        self._live -= int(slots.size)
        self._table.kill(slots)
        if self._live < self._pos.size // 2 and self._pos.size > 4096:
            self._compact()
        return int(slots.size)

    def _compact(self) -> None:
        """Drop dead slots and renumber the live ones ``0..live-1`` (keys stay sorted)."""
        live = np.flatnonzero(self._alive.view())
        self._table.compact(live)
        self._pos = Growable.wrap(self._pos.view()[live].copy())
        if self._fps is not None:
            self._fps = Growable.wrap(self._fps.view()[live].copy())
        if self._has_ts:
            self._ts = Growable.wrap(self._ts.view()[live].copy())
        self._alive = Growable.wrap(np.ones(live.size, np.bool_))
        self._expiry = None  # slots renumbered: rebuilt by the next expire()

    def expire(self, before_timestamp: int) -> int:
        if not self._has_ts:
            return 0
        if self._expiry is None:  # once per compaction: later calls pop, no scan (expiry.py)
            live = np.flatnonzero(self._alive.view())
            self._expiry = ExpiryQueue.of(self._ts.view()[live], live)
        old = self._expiry.pop_before(int(before_timestamp))
        return self._kill(old[self._alive.view()[old]])

    def remove(self, positions: I64) -> int:
        return self._kill(np.flatnonzero(self._alive.view() & np.isin(self._pos.view(), positions)))

    def get_config(self) -> dict[str, Any]:
        return {"design": "minhash-bands", "bands": self.design.bands, "rows": self.design.rows}

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """Live kept positions, plus every slot (position, fingerprint, timestamp, alive) and
        the key table's sorted runs, so that loading re-sorts nothing. A dead slot's fingerprint
        is never read: 0 when they are read by position (:meth:`read_fingerprints`)."""
        alive = self._alive.view()
        if self._fps is None:
            fps = np.zeros(alive.size, np.uint64)
            fps[alive] = self._slot_fps(np.flatnonzero(alive))
        else:
            fps = self._fps.view()
        out: dict[str, npt.NDArray[Any]] = {
            "positions": self._pos.view()[alive].astype(np.int64),
            "slot_positions": self._pos.view().astype(np.int64),  # saved int64 (format 4)
            "slot_fingerprints": fps,
            "slot_alive": alive,
        }
        if self._has_ts:
            out["slot_timestamps"] = self._ts.view()
        out.update({f"table_{k}": v for k, v in self._table.to_arrays().items()})
        return out

    def load_arrays(self, arrays: dict[str, npt.NDArray[Any]]) -> None:
        if len(self):
            raise ValueError("load_arrays needs an empty candidate index")
        if "table_dead" not in arrays:  # kept documents and their keys: rebuild the table
            self._load_keys(arrays)
            return
        n = arrays["slot_positions"].shape[0]
        for name in ("slot_fingerprints", "slot_alive"):
            if arrays[name].shape != (n,):
                raise ValueError(f"{name} has shape {arrays[name].shape}, expected ({n},)")
        table = {k[6:]: v for k, v in arrays.items() if k.startswith("table_")}
        self._table = KeyTable.from_arrays(table, value_bits=self._bits)
        if self._table._dead.shape[0] < n:
            raise ValueError("the key table's dead-slot mask is shorter than the slots")
        self._pos = Growable.wrap(narrow_positions(np.asarray(arrays["slot_positions"], np.int64)))
        if self._fps_at is None:
            self._fps = Growable.wrap(np.asarray(arrays["slot_fingerprints"], np.uint64))
        self._alive = Growable.wrap(np.asarray(arrays["slot_alive"], np.bool_))
        self._live = int(np.count_nonzero(self._alive.view()))
        self._expiry = None
        self._has_ts = "slot_timestamps" in arrays
        ts = arrays.get("slot_timestamps")
        self._ts = Growable(np.int64) if ts is None else Growable.wrap(ts)

    def _load_keys(self, arrays: dict[str, npt.NDArray[Any]]) -> None:
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
        return self._live

    def describe(self) -> dict[str, Any]:
        """Design, expected and measured candidates per query at the current size, memory.

        ``expected_random_candidates_per_document`` is ``random_pair_rate * kept`` (7.5e-9 per
        kept document for 32 x 4: 0.0075 at 10^6, 0.75 at 10^8); a query's true near-duplicates
        come on top (measured: ``measured_candidates_per_query``). ``probes_per_query``: one
        bucket read per band and LSM run.

        >>> d = BandCandidates().describe()
        >>> d["expected_random_candidates_per_document"], d["probes_per_query"]
        (0.0, 0)
        """
        kept = len(self)
        rate = self.design.random_pair_rate()
        per_doc = self._pos.nbytes + self._ts.nbytes + self._alive.nbytes
        per_doc += 0 if self._fps is None else self._fps.nbytes
        return {
            **self.get_config(),
            "kept": kept,
            "random_pair_rate": rate,
            "expected_random_candidates_per_document": rate * kept,
            "recall_at_jaccard": {j: round(self.design.recall(j), 4) for j in (0.5, 0.6, 0.7)},
            "expected_candidates_per_query": f"{rate * kept:.3g} random + the query's true "
            "near-duplicates",
            "measured_candidates_per_query": self._hits / max(self._queries, 1),
            "probes_per_query": self.design.bands * len(self._table.runs),
            "runs": self._table.runs,
            "memory_bytes": self._table.nbytes + per_doc,
            "file_bytes": self._table.file_bytes,  # the key table's slots in spill files
        }
