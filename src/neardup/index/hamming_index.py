"""HammingIndex: exact search within ``k`` bits, with appends, removal, expiry and persistence.

Layout (LSM-style): a store of (id, fingerprint, timestamp, alive) rows; the newest rows form
a small buffer scanned by brute force; older rows live in immutable runs of bucketed tables
(:class:`~neardup.index.tables.StaticTables`), each covering a contiguous range of positions.
A full buffer becomes a run; runs of similar size are merged (dropping dead rows). Removal
and expiry clear ``alive`` (tombstones); :meth:`HammingIndex.compact` rewrites everything.

>>> import numpy as np
>>> index = HammingIndex(k=3)
>>> index.add([10, 11, 12], np.array([0b1011, 0b1000, 2**63], dtype=np.uint64))
>>> index.query(0b1011)
[(10, 0), (11, 2)]
>>> m = index.search(np.array([0, 2**63 + 1], dtype=np.uint64))
>>> m.query.tolist(), m.id.tolist(), m.distance.tolist()
([0, 0, 0, 1, 1, 1], [11, 12, 10, 12, 10, 11], [1, 1, 3, 1, 3, 3])

``bits=128`` is the same class and API over ``(n, 2)`` ``[hi, lo]`` fingerprints: the index
holds a :class:`~neardup.index.wide.HalvesIndex` (two 64-bit indexes) and every method
delegates to it (see :mod:`neardup.index.wide`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._threads import object_lock, thread_safe
from neardup.errors import BadInputError
from neardup.index import kernels
from neardup.index._validate import as_fingerprints, as_ids, as_timestamps, check_bits, check_k
from neardup.index.design import DEFAULT_MEMORY_BUDGET, TableDesign, auto_design
from neardup.index.expiry import ExpiryQueue
from neardup.index.results import Matches
from neardup.index.store import IdIndex, IndexStore
from neardup.index.tables import StaticTables
from neardup.index.wide import MAX_K as MAX_K_128
from neardup.index.wide import HalvesIndex

I64 = npt.NDArray[np.int64]


@thread_safe(
    "add",
    "flush",
    "remove",
    "expire",
    "compact",
    "__contains__",
    "describe",
    "memory_bytes",
    "save",
)
class HammingIndex:
    """Exact Hamming-distance index over 64- or 128-bit fingerprints.

    Parameters (keyword-only): ``k`` the largest distance the tables are built for;
    ``bits`` 64 (uint64 fingerprints, ``k <= 63``) or 128 (``(n, 2)`` uint64 ``[hi, lo]`` or
    ints below ``2**128``, ``k <= 127``; two 64-bit halves searched at ``k // 2``, with the
    other parameters applying to each half); ``design`` ``"auto"`` (cost model from
    ``expected_n``/size, ``k``, ``memory_budget``), a :class:`TableDesign`, or an int number of
    blocks (Manku tables);
    ``buffer_size`` rows scanned by brute force before they become a run; ``merge_factor``
    size ratio at which runs merge.

    ``search`` with ``k`` above the index's ``k`` works by probing a larger radius; it raises
    ``ValueError`` when that would need more than 200 000 probes per table.

    Threads: one index may be shared. Writers (``add``, ``remove``, ``expire``, ``flush``,
    ``compact``) hold the index's lock (:mod:`neardup._threads`), so they run one at a time,
    each whole; ``search`` takes the lock only to read a consistent view (the runs are
    immutable, the store only grows or is replaced), so 64-bit searches run in parallel with
    each other and with writers, and find every row added before they started (128-bit
    searches hold the lock throughout).
    """

    def __init__(
        self,
        *,
        k: int = 3,
        bits: int = 64,
        design: str | int | TableDesign = "auto",
        memory_budget: int = DEFAULT_MEMORY_BUDGET,
        expected_n: int | None = None,
        buffer_size: int = 2048,
        merge_factor: int = 4,
    ) -> None:
        self.bits = check_bits(bits)
        self.k = check_k(k, MAX_K_128 if self.bits == 128 else 63)
        self.design = design
        self.memory_budget = int(memory_budget)
        self.expected_n = expected_n
        self.buffer_size = max(1, int(buffer_size))
        self.merge_factor = max(2, int(merge_factor))
        self._wide: HalvesIndex | None = None
        if self.bits == 128:

            def half() -> HammingIndex:
                return HammingIndex(
                    k=self.k // 2,
                    design=design,
                    memory_budget=memory_budget,
                    expected_n=expected_n,
                    buffer_size=buffer_size,
                    merge_factor=merge_factor,
                )

            self._wide = HalvesIndex(self.k, half(), half())
            design = "auto"  # the halves own the table designs
        self.design_ = self._fixed_design(design)
        self._designed_for = 0
        self._store = IndexStore()
        self._ids = IdIndex()
        self._runs: list[tuple[int, int, StaticTables]] = []  # (lo, hi, tables)
        self._indexed = 0
        self._expiry: ExpiryQueue | None = None  # store rows by timestamp, built by expire()

    def _fixed_design(self, design: str | int | TableDesign) -> TableDesign | None:
        if isinstance(design, TableDesign):
            if design.k != self.k:
                raise BadInputError(
                    f"design.k={design.k} differs from k={self.k}; pass "
                    f"TableDesign(k={self.k}, ...)"
                )
            return design
        if isinstance(design, bool) or not isinstance(design, (str, int)):
            raise TypeError(
                f"design must be 'auto', an int number of blocks or a TableDesign, got {design!r}"
            )
        if isinstance(design, int):
            if design < self.k + 1:
                raise BadInputError(
                    f"design={design} blocks cannot find k={self.k} by pigeonhole; "
                    f"use at least {self.k + 1} blocks"
                )
            return TableDesign(k=self.k, blocks=design)
        if design != "auto":
            raise BadInputError(f"design must be 'auto', an int or a TableDesign, got {design!r}")
        return None

    def _current_design(self) -> TableDesign:
        n = max(self.expected_n or 0, self._store.n)
        if self.design != "auto" and self.design_ is not None:
            return self.design_
        if self.design_ is None or n > 4 * self._designed_for:
            self.design_ = auto_design(n, self.k, self.memory_budget)
            self._designed_for = max(n, 1024)
        return self.design_

    # ----------------------------------------------------------------- writes
    def add(
        self,
        ids: npt.ArrayLike,
        fingerprints: npt.ArrayLike,
        timestamps: npt.ArrayLike | None = None,
    ) -> None:
        """Add rows; ``ids`` int64 (unique, not yet present), ``fingerprints`` of ``bits``."""
        fps = as_fingerprints(fingerprints, self.bits)
        ids_arr = as_ids(ids, fps.shape[0])
        ts = None if timestamps is None else as_timestamps(timestamps, fps.shape[0])
        if self._wide is not None:
            return self._wide.add(ids_arr, fps, ts)
        if fps.shape[0] == 0:
            return
        if self._store.n + fps.shape[0] >= 2**32:
            raise BadInputError("a HammingIndex holds fewer than 2**32 rows; shard the data")
        present = self._ids.lookup(ids_arr, self._store)
        if (present >= 0).any():
            bad = int(ids_arr[np.argmax(present >= 0)])
            raise BadInputError(
                f"id {bad} is already in the index; remove() it first or use a new id"
            )
        first = self._store.n
        self._store.append(ids_arr, fps, ts)
        if self._expiry is not None and ts is not None:
            self._expiry.push(ts, np.arange(first, self._store.n))
        if (self._ids.sorted_ids.shape[0] == 0 and not self._ids.recent) or len(ids_arr) > 65536:
            self._ids.rebuild(self._store)
        else:
            self._ids.add(ids_arr, first)
            if self._ids.needs_rebuild():
                self._ids.rebuild(self._store)
        if self._store.n - self._indexed >= self.buffer_size:
            self.flush()

    def flush(self) -> None:
        """Turn the buffer into a run and merge runs of similar size."""
        if self._wide is not None:
            return self._wide.flush()
        n = self._store.n
        if n > self._indexed:
            self._runs.append(self._build(self._indexed, n))
            self._indexed = n
        while len(self._runs) >= 2:
            lo_a, hi_a, _ = self._runs[-2]
            lo_b, hi_b, _ = self._runs[-1]
            if hi_a - lo_a > self.merge_factor * (hi_b - lo_b):
                break
            self._runs[-2:] = [self._build(lo_a, hi_b)]

    def _build(self, lo: int, hi: int) -> tuple[int, int, StaticTables]:
        alive = self._store.alive[lo:hi]
        design = self._current_design()
        if lo == 0 and hi == self._store.n and bool(alive.all()):
            return lo, hi, StaticTables.build(design, self._store.fps, None)
        positions = (np.flatnonzero(alive) + lo).astype(np.uint32)
        return lo, hi, StaticTables.build(design, self._store.fps, positions)

    def remove(self, ids: npt.ArrayLike, *, missing_ok: bool = False) -> int:
        """Remove rows by id; returns how many were removed. Unknown ids raise ``KeyError``."""
        if self._wide is not None:
            return self._wide.remove(ids, missing_ok=missing_ok)
        arr = np.atleast_1d(np.asarray(ids))
        if arr.size and arr.dtype.kind not in "iu":
            raise TypeError(f"ids must be integers, got dtype {arr.dtype}")
        arr = arr.astype(np.int64)
        pos = self._ids.lookup(arr, self._store)
        if not missing_ok and (pos < 0).any():
            raise KeyError(
                f"id {int(arr[np.argmax(pos < 0)])} is not in the index "
                "(pass missing_ok=True to ignore unknown ids)"
            )
        removed = self._store.kill(pos[pos >= 0])
        self._maybe_compact()
        return removed

    def expire(self, before_timestamp: int) -> int:
        """Remove rows whose timestamp is older than ``before_timestamp``; returns the count."""
        if self._wide is not None:
            return self._wide.expire(before_timestamp)
        ts = self._store.ts
        if ts is None:
            return 0
        if self._expiry is None:  # once per compaction: later calls pop, no scan (expiry.py)
            live = np.flatnonzero(self._store.alive != 0)
            self._expiry = ExpiryQueue.of(ts[live], live)
        old = self._expiry.pop_before(int(before_timestamp))
        removed = self._store.kill(old[self._store.alive[old] != 0])
        self._maybe_compact()
        return removed

    def _maybe_compact(self) -> None:
        if self._store.n > self.buffer_size and self._store.live < self._store.n // 2:
            self.compact()

    def compact(self) -> None:
        """Drop dead rows from the store and rebuild all tables as one run."""
        if self._wide is not None:
            return self._wide.compact()
        self._store = self._store.compacted()
        self._expiry = None  # rows renumbered
        self._ids.rebuild(self._store)
        self._runs = []
        self._indexed = 0
        if self._store.n:
            self._runs = [self._build(0, self._store.n)]
            self._indexed = self._store.n

    # ----------------------------------------------------------------- reads
    def __len__(self) -> int:
        return self._store.live if self._wide is None else len(self._wide)

    def search(self, fingerprints: npt.ArrayLike, k: int | None = None) -> Matches:
        """Every live row within ``k`` (default: the index's k) of each query."""
        queries = as_fingerprints(fingerprints, self.bits)
        if self._wide is not None:
            with object_lock(self):  # the halves change together under this lock
                return self._wide.search(queries, self.k if k is None else check_k(k, MAX_K_128))
        k = self.k if k is None else check_k(k)
        with object_lock(self):  # a consistent view; searched without the lock (see class docs)
            store, runs, indexed = self._store, list(self._runs), self._indexed
            n, fps_, alive_, ids_ = store.n, store.fps_, store.alive_, store.ids_
        parts = [run.search(queries, k, alive_[:n]) for _, _, run in runs]
        if n > indexed:
            parts.append(
                kernels.collect(
                    kernels.scan_range,
                    int(queries.shape[0]),
                    queries,
                    k,
                    fps_,
                    indexed,
                    n,
                    alive_,
                    capacity=256,
                )
            )
        if not parts:
            return Matches.empty()
        qrow = np.concatenate([p[0] for p in parts])
        pos = np.concatenate([p[1] for p in parts])
        dist = np.concatenate([p[2] for p in parts])
        ids = ids_[pos]
        order = np.lexsort((ids, dist, qrow))
        return Matches(qrow[order], ids[order], dist[order])

    def _stored_fingerprints(self, ids: I64) -> npt.NDArray[np.uint64]:
        """Fingerprints of stored ``ids`` (all present) of a 64-bit index."""
        return self._store.fps_[self._ids.lookup(ids, self._store)]

    def query(
        self, fingerprint: int | np.integer[Any], k: int | None = None
    ) -> list[tuple[int, int]]:
        """``(id, distance)`` of every row within ``k`` of one fingerprint, nearest first.

        A 128-bit fingerprint is an int below ``2**128``."""
        if isinstance(fingerprint, (np.ndarray, list, tuple)):
            raise TypeError("query() takes one fingerprint; use search() for many")
        return self.search(as_fingerprints([fingerprint], self.bits), k).for_query(0)

    def __contains__(self, id_: object) -> bool:
        if self._wide is not None:
            return id_ in self._wide
        if not isinstance(id_, (int, np.integer)):
            return False
        return bool(self._ids.lookup(np.array([id_], np.int64), self._store)[0] >= 0)

    def describe(self) -> dict[str, Any]:
        """Design, cost-model figures and memory use (per half for 128 bits)."""
        if self._wide is not None:
            return self._wide.describe()
        design = self.design_ or self._current_design()
        n = max(self._store.live, 1)
        cost = design.cost(n)
        return {
            "bits": self.bits,
            "k": self.k,
            "design": design.to_dict(),
            "tables": design.tables,
            "blocks": design.blocks,
            "block_sizes": design.block_sizes,
            "key_blocks": design.key_blocks,
            "key_bits": design.key_bits,
            "radius": design.radius,
            "prefix_bits": [run.q for _, _, run in self._runs],
            "probes_per_query": cost["probes_per_query"],
            "expected_candidates_per_probe": cost["candidates_per_probe"],
            "model_memory_bytes": cost["memory_bytes"],
            "memory_bytes": self.memory_bytes(),
            "live": self._store.live,
            "stored": self._store.n,
            "runs": [hi - lo for lo, hi, _ in self._runs],
            "buffer": self._store.n - self._indexed,
        }

    def __repr__(self) -> str:
        if self._wide is not None:
            return f"HammingIndex(k={self.k}, bits=128, live={len(self)})"
        d = self.describe()
        return (
            f"HammingIndex(k={self.k}, live={d['live']}, tables={d['tables']}, "
            f"blocks={d['blocks']}, radius={d['radius']}, runs={len(d['runs'])})"
        )

    def memory_bytes(self) -> int:
        """Bytes held by the store, id index and tables."""
        if self._wide is not None:
            return self._wide.memory_bytes()
        s = self._store
        total = s.ids_.nbytes + s.fps_.nbytes + s.alive_.nbytes
        total += 0 if s.ts_ is None else s.ts_.nbytes
        total += self._ids.sorted_ids.nbytes if self._ids.order is not None else 0
        total += 0 if self._ids.order is None else self._ids.order.nbytes
        return int(total + sum(run.nbytes for _, _, run in self._runs))

    # ----------------------------------------------------------------- persistence
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to directory ``path`` atomically (see :mod:`neardup.index.storage`)."""
        from neardup.index import storage

        if self._wide is not None:
            return storage.save_halves(self._wide, path)
        self.flush()
        if self._ids.recent:
            self._ids.rebuild(self._store)  # the saved id index is the sorted part only
        storage.save_index(self, path)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, mmap: bool = True, verify: bool = True
    ) -> HammingIndex:
        """Open an index written by :meth:`save`; arrays are memory-mapped when ``mmap``.

        ``verify`` checks every file's XXH3-128 (reads all bytes, ~2-4 GB/s); ``verify=False``
        opens a trusted huge index in O(1) (the manifest checksum, file sizes, shapes and
        cross-array invariants are always checked, so a damaged index raises
        :class:`IndexFormatError` instead of crashing).
        """
        from neardup.index import storage

        return storage.load_index(cls, path, mmap=mmap, verify=verify)
