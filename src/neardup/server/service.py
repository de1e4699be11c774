"""The service without HTTP: the engine (in memory) and the store (SQLite), kept in step.

One writer: every call that changes the engine or the store holds ``lock``; FastAPI runs these
blocking calls in its thread pool, off the event loop. A batch is decided in memory, written in
one transaction, and the answer leaves only after ``COMMIT`` returned. If the write fails, the
engine is rebuilt from the store, so memory never runs ahead of what is durable.

A deleted document is *forgotten*: it leaves the candidate index and the exact-text map, so it
no longer attracts new duplicates (neither near nor exact copies); its row stays as a tombstone
(``GET`` answers 404). When it was a kept document, its cluster keeps its members and their
decisions (``duplicate_of`` still names it): a later copy of the same story starts a new
cluster instead of joining the old one.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from neardup.dedup import Deduplicator
from neardup.dedup.state import STATUS_NAMES, UNIQUE
from neardup.server.engine import Decided, Engine
from neardup.server.metrics import Histogram
from neardup.server.store import Store, key_bytes, to_i64
from neardup.server.validate import Item


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
        os.makedirs(settings.data, exist_ok=True)
        self.settings = settings
        self.lock = threading.Lock()
        self.store = Store(os.path.join(settings.data, "neardup.db"), settings.synchronous)
        self._factory = dd
        self.engine = Engine(dd)  # checks keep="first"
        self.store.check_config(self.engine.config_id, _settings(dd))
        self.engine = self._load(dd)
        self.commit_seconds = Histogram(
            "neardup_commit_seconds", "SQLite transaction time of one batch (write + commit)."
        )
        self._counts = self._count_rows()
        self.engine.warm_up()

    def _load(self, dd: Deduplicator) -> Engine:
        verifier = dd.verifier
        width = dtype = None
        if verifier is not None:
            probe = verifier.sketch_many(["width probe"])
            width, dtype = probe.shape[1], probe.dtype
        cols = self.store.load(width, dtype)
        n_clusters = int(self.store.meta("n_clusters") or 0)
        return Engine.restore(dd, cols, self.store.load_exact(), n_clusters)

    def _rebuild(self) -> None:
        """After a failed write: memory goes back to what the store holds."""
        self.engine = self._load(self._factory.replace())

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

    def _decide(self, new: list[Item], dry_run: bool) -> Decided:
        texts = [it.text for it in new]
        ts = [it.timestamp for it in new]
        has_time = any(t is not None for t in ts)
        times = [float("nan") if t is None else t for t in ts] if has_time else None
        decided = self.engine.decide(texts, times, commit=not dry_run)
        if dry_run:
            return decided
        start = time.perf_counter()
        try:
            with self.store.transaction():
                self.store.insert(
                    self._rows(new, decided),
                    decided.exact,
                    self.engine.n_positions,
                    decided.n_clusters,
                )
                purged = self._retention()
        except BaseException:
            self._rebuild()
            raise
        self.engine.drop(purged)
        self.commit_seconds.observe(time.perf_counter() - start)
        for code in decided.status.tolist():
            self._counts[STATUS_NAMES[code]] += 1
        if purged:
            self._counts = self._count_rows()
        return decided

    def _rows(self, new: list[Item], d: Decided) -> list[tuple[Any, ...]]:
        fps = to_i64(d.fingerprint)
        rows = []
        store_text = self.settings.store_text
        for i, it in enumerate(new):
            dup = int(d.duplicate_of[i])
            kept = dup < 0 and int(d.status[i]) == UNIQUE
            sketch = d.sketch[i].tobytes() if kept and d.sketch is not None else None
            empty = int(d.status[i]) == 3
            rows.append(
                (
                    int(d.position[i]),
                    it.id,
                    it.timestamp,
                    fps[i],
                    int(d.status[i]),
                    None if dup < 0 else dup,
                    None if dup < 0 else int(d.distance[i]),
                    int(d.cluster_id[i]),
                    sketch,
                    None if empty else key_bytes(d.exact_key[i]),
                    it.text if store_text else None,
                )
            )
        return rows

    def _retention(self) -> list[int]:
        keep = self.settings.retention
        newest = self.engine.dd._max_ts  # STAND-IN: the newest timestamp seen
        if keep is None or newest == float("-inf"):
            return []
        return self.store.purge_before(newest - keep)

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
                    gone = self.store.tombstone(int(row[0]))
                self.engine.forget([int(row[0])], gone)
            except BaseException:
                self._rebuild()
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

    def _count_rows(self) -> dict[str, int]:
        rows = (
            self.store.reader()
            .execute("SELECT status, count(*) FROM documents WHERE deleted = 0 GROUP BY status")
            .fetchall()
        )
        out = {name: 0 for name in STATUS_NAMES}
        for status, n in rows:
            out[STATUS_NAMES[int(status)]] = int(n)
        return out

    def close(self) -> None:
        with self.lock:
            self.store.close()


def _settings(dd: Deduplicator) -> dict[str, Any]:
    return {
        "fingerprint": dd.fingerprinter.config_id,
        "k": dd.k,
        "verifier": dd.verifier is not None,
        "window": dd.window,
    }
