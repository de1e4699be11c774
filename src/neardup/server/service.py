"""The service without HTTP: the library's Deduplicator (in memory) and the store (SQLite),
kept in step.

One writer: every call that changes the Deduplicator or the store holds ``lock``; FastAPI runs
these blocking calls in its thread pool, off the event loop. A batch is decided by
``Deduplicator.feed`` (every decision comes from the library), its rows
(:meth:`Deduplicator.state_columns`) are written in one transaction, and the answer leaves only
after ``COMMIT`` returned. If the write fails, the Deduplicator is rebuilt from the store, so
memory never runs ahead of what is durable. A dry run is ``feed(..., commit=False)``.

A deleted document is forgotten (:meth:`Deduplicator.forget`): it leaves the candidate index and
the exact-text map, so it no longer attracts new duplicates (neither near nor exact copies); its
row stays as a tombstone (``GET`` answers 404). When it was a kept document, its cluster keeps
its members and their decisions (``duplicate_of`` still names it): a later copy of the same
story starts a new cluster instead of joining the old one.

With a window, the library expires kept documents from memory (its exact rule); ``retention``
deletes rows older than ``newest timestamp - retention`` from SQLite too (``retention >=
window``, so only expired documents go).
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup.dedup import Deduplicator
from neardup.dedup.state import STATUS_NAMES, Decisions
from neardup.server.metrics import Histogram
from neardup.server.store import Store, to_i64
from neardup.server.validate import Item

EMPTY = STATUS_NAMES.index("empty")


@dataclass
class Settings:
    """Everything ``neardup serve`` takes besides the dedup options."""

    data: str
    synchronous: str = "FULL"
    store_text: bool = False
    retention: float | None = None
    max_batch: int = 1000
    max_body: int = 16 << 20
    token: str | None = None


def result(row: tuple[Any, ...], dup_id: str | None) -> dict[str, Any]:
    """The public decision of a stored row (``ROW`` order)."""
    return {
        "id": row[1],
        "status": STATUS_NAMES[int(row[4])],
        "duplicate_of": dup_id,
        "distance": None if row[5] is None else int(row[6]),
        "cluster_id": int(row[7]),
    }


class Service:
    """Ingest, dry runs, reads and deletes over one data directory."""

    def __init__(self, dd: Deduplicator, settings: Settings) -> None:
        if dd.keep != "first":
            raise ValueError("the service decides in arrival order: keep must be 'first'")
        os.makedirs(settings.data, exist_ok=True)
        self.settings = settings
        self.lock = threading.Lock()
        self.store = Store(os.path.join(settings.data, "neardup.db"), settings.synchronous)
        self._config = dd.replace()  # an empty Deduplicator of these settings
        self.config_id = dd.config_id
        self.store.check_config(self.config_id, dd.state_config())
        self.dd = self._load()
        self.commit_seconds = Histogram(
            "neardup_commit_seconds", "SQLite transaction time of one batch (write + commit)."
        )
        self._counts = self._count_rows()
        self._warm_up()

    def _load(self) -> Deduplicator:
        """The Deduplicator of the stored state (empty for a new directory)."""
        meta = self.store.state_meta()
        if meta is None:
            return self._config.replace()
        width = dtype = None
        if self._config.verifier is not None:
            probe = np.asarray(self._config.verifier.sketch_many(["width probe"]))
            width, dtype = probe.shape[1], probe.dtype
        cols = self.store.load(int(meta["documents"]), width, dtype)
        return Deduplicator.from_state_columns(self._config, cols, meta)

    def _warm_up(self) -> None:
        """Load every kernel once (a dry run), so the first request is not the slow one."""
        text = "warm up the kernels before serving 在服务前预热内核 " * 4
        ts = None if self.dd.window is None else [0.0]
        self.dd.feed([text], ts, commit=False)

    # ------------------------------------------------------------------ ingest
    def ingest(self, items: list[Item], dry_run: bool) -> list[dict[str, Any]]:
        with self.lock:
            known = self.store.lookup_ids([it.id for it in items])
            new = [it for it in items if it.id not in known]
            decided = self._decide(new, dry_run) if new else None
            ids: dict[int, str] = {}
            if decided is not None:
                ids = {int(p): it.id for p, it in zip(decided.position, new, strict=True)}
            want = [r[5] for r in known.values() if r[5] is not None]
            if decided is not None:
                want += [int(p) for p in decided.duplicate_of if p >= 0 and int(p) not in ids]
            ids.update(self.store.ids_of(want))
        out: list[dict[str, Any]] = []
        fresh = iter(range(len(new)))
        for it in items:
            row = known.get(it.id)
            if row is not None:
                out.append(result(row, None if row[5] is None else ids.get(row[5])))
                continue
            assert decided is not None
            i = next(fresh)
            dup = int(decided.duplicate_of[i])
            out.append(
                {
                    "id": it.id,
                    "status": STATUS_NAMES[int(decided.status[i])],
                    "duplicate_of": None if dup < 0 else ids.get(dup),
                    "distance": None if dup < 0 else int(decided.distance[i]),
                    "cluster_id": int(decided.cluster_id[i]),
                }
            )
        return out

    def _decide(self, new: list[Item], dry_run: bool) -> Decisions:
        texts = [it.text for it in new]
        ts = [it.timestamp for it in new]
        times = None
        if any(t is not None for t in ts):
            times = [math.nan if t is None else t for t in ts]
        decided = self.dd.feed(texts, times, commit=not dry_run)
        if dry_run:
            return decided
        start = time.perf_counter()
        try:
            with self.store.transaction():
                self.store.insert(self._rows(new, decided), self.dd.state_meta())
                purged = self._retention()
        except BaseException:
            self.dd = self._load()  # memory goes back to what the store holds
            raise
        self.commit_seconds.observe(time.perf_counter() - start)
        for code in decided.status.tolist():
            self._counts[STATUS_NAMES[code]] += 1
        if purged:
            self._counts = self._count_rows()
        return decided

    def _rows(self, new: list[Item], d: Decisions) -> list[tuple[Any, ...]]:
        """The batch's rows from the library's state columns, in ``store.INSERT`` order."""
        start = int(d.position[0])
        cols = self.dd.state_columns(start, start + len(new))
        fps, hi, lo = (to_i64(cols[c]) for c in ("fingerprint", "exact_key_hi", "exact_key_lo"))
        sketches = cols.get("sketch")
        dup, status = cols["duplicate_of"].tolist(), cols["status"].tolist()
        distance, cluster = cols["distance"].tolist(), cols["cluster_id"].tolist()
        searched = cols["searched"].tolist()
        store_text = self.settings.store_text
        rows = []
        for i, it in enumerate(new):
            kept = dup[i] < 0 and status[i] != EMPTY
            rows.append(
                (
                    start + i,
                    it.id,
                    it.timestamp,
                    fps[i],
                    sketches[i].tobytes() if kept and sketches is not None else None,
                    hi[i],
                    lo[i],
                    status[i],
                    None if dup[i] < 0 else dup[i],
                    distance[i],
                    cluster[i],
                    int(searched[i]),
                    it.text if store_text else None,
                )
            )
        return rows

    def _retention(self) -> int:
        keep = self.settings.retention
        newest = self.dd.state_meta()["max_timestamp"]
        if keep is None or newest is None:
            return 0
        return self.store.purge_before(math.floor(newest - keep))

    # ------------------------------------------------------------------ reads, deletes
    def get(self, doc_id: str) -> dict[str, Any] | None:
        row = self.store.lookup_ids([doc_id]).get(doc_id)
        if row is None:
            return None
        dup = None if row[5] is None else self.store.ids_of([row[5]]).get(row[5])
        out = result(row, dup)
        out["timestamp"] = row[2]
        if self.settings.store_text:
            out["text"] = self.store.text(int(row[0]))
        return out

    def delete(self, doc_id: str) -> dict[str, Any] | None:
        with self.lock:
            row = self.store.lookup_ids([doc_id]).get(doc_id)
            if row is None:
                return None
            try:
                with self.store.transaction():
                    self.store.tombstone(int(row[0]))
                self.dd.forget([int(row[0])])
            except BaseException:
                self.dd = self._load()
                raise
            self._counts[STATUS_NAMES[int(row[4])]] -= 1
        return {"id": doc_id, "deleted": True, "was": STATUS_NAMES[int(row[4])]}

    def cluster(self, cluster_id: int) -> dict[str, Any] | None:
        rows = self.store.cluster(cluster_id)
        if not rows:
            return None
        reps = {r[5] for r in rows if r[5] is not None}
        ids = self.store.ids_of(reps)
        kept = [r[1] for r in rows if r[5] is None]
        return {
            "cluster_id": cluster_id,
            "kept": kept[0] if kept else (ids.get(next(iter(reps))) if reps else None),
            "documents": [result(r, None if r[5] is None else ids.get(r[5])) for r in rows],
        }

    def counts(self) -> dict[str, int]:
        """Stored (not deleted) documents per status, kept up to date without a query."""
        return dict(self._counts)

    def index_size(self) -> int:
        """Kept documents in the in-memory candidate index."""
        return int(self.dd.describe()["kept_in_index"])

    def memory_bytes(self) -> int:
        """Bytes of the in-memory dedup state: per-document rows, sketches, candidate index."""
        info = self.dd.describe()
        index = int(info["candidates"].get("memory_bytes", 0))
        return int(info["state_bytes"]) + int(info["sketch_bytes"]) + index

    def _count_rows(self) -> dict[str, int]:
        q = "SELECT status, count(*) FROM documents WHERE forgotten = 0 GROUP BY status"
        out = {name: 0 for name in STATUS_NAMES}
        for status, n in self.store.reader().execute(q).fetchall():
            out[STATUS_NAMES[int(status)]] = int(n)
        return out

    def close(self) -> None:
        with self.lock:
            self.store.close()
