"""The service without HTTP: the library's Deduplicator (in memory) and the store (SQLite),
kept in step.

Requests are queued in arrival order (:meth:`Service.submit`, from the event loop: no thread
pool) and handled by one decider thread (:mod:`neardup.server.writer`): consecutive requests
are prepared (:meth:`Deduplicator.prepare`) and decided holding ``lock`` as one batch
(``Deduplicator.state.decide``: every decision comes from the library, which decides the
same however the ordered documents are cut into batches); their rows
(``Deduplicator.state.columns``) are then written by group commit and each request is
answered only after their ``COMMIT`` returned. If a write fails, every batch not yet durable
fails and the Deduplicator is rebuilt from the store. A dry run is ``state.decide(...,
commit=False)``, decided alone. Restarts load a snapshot (:mod:`neardup.server.snapshot`).

A deleted document is forgotten (``dd.state.forget``): it leaves the candidate index and
the exact-text map, so it no longer attracts new duplicates (neither near nor exact copies); its
row stays as a tombstone (``GET`` answers 404). When it was a kept document, its cluster keeps
its members and their decisions (``duplicate_of`` still names it): a later copy of the same
story starts a new cluster instead of joining the old one.

With a window, the library expires kept documents from memory (its exact rule); ``retention``
deletes rows older than ``newest timestamp - retention`` from SQLite too (``retention >=
window``, so only expired documents go).
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from neardup._heap import release_heap
from neardup.dedup import Deduplicator
from neardup.dedup.decisions import STATUS_NAMES, Decisions, PreparedBatch, take_batch
from neardup.dedup.rerun import NEW, repeats
from neardup.server.metrics import Histogram
from neardup.server.rows import answers, result, state_rows
from neardup.server.snapshot import Background, load_state, write_snapshot
from neardup.server.store import Store, StoredRow, opening
from neardup.server.validate import BadRequest, Item
from neardup.server.writer import (
    DECIDE_LIMIT,
    Answer,
    Arrivals,
    GroupCommit,
    Pending,
    Request,
    call,
    segments,
    wait_for_answer,
)

log = logging.getLogger("neardup.server")


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
    snapshot_every: int = 100_000  # documents between snapshots (0: none; see snapshot.py)
    max_future: float | None = 86_400.0  # with a window: later than clock + this is refused
    overlap: tuple[tuple[str, Any], ...] = ()  # OverlapFinder params (/v1/overlaps)


class Service:
    """Ingest, dry runs, reads and deletes over one data directory."""

    def __init__(self, dd: Deduplicator, settings: Settings) -> None:
        if dd.keep != "first":
            raise ValueError("the service decides in arrival order: keep must be 'first'")
        os.makedirs(settings.data, exist_ok=True)
        self.settings = settings
        self.lock = threading.RLock()  # the Deduplicator and the undurable maps below
        self.group = GroupCommit(self._write, self._failed, self.lock)
        self._undurable: dict[str, StoredRow] = {}  # id -> its row, decided, not yet on disk
        self._undurable_ids: dict[int, str] = {}  # position -> id of those
        self._last: Pending | None = None  # the batch submitted last (commits go in order)
        self._config = dd.replace()  # an empty Deduplicator of these settings
        self.config_id = dd.config_id
        self.snapshot_dir = os.path.join(settings.data, "snapshot")
        path = os.path.join(settings.data, "neardup.db")
        with opening(path):  # a damaged file: one line saying what to do
            self.store = Store(path, settings.synchronous)
            self.store.check_config(self.config_id, dd.state.config)
            self.dd = self._load()
            self._counts = self._count_rows()
        self._snap_at = int(json.loads(self.store.meta("snapshot") or "{}").get("documents", 0))
        self.commit_seconds = Histogram(
            "neardup_commit_seconds", "SQLite transaction time of one group of batches."
        )
        sizes = (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096)
        self.commit_batches = Histogram(
            "neardup_commit_batches", "Requests (batches) written by one group commit.", sizes
        )
        self.commit_documents = Histogram(
            "neardup_commit_documents", "Documents written by one group commit.", sizes
        )
        self.snapshot_seconds = Histogram(
            "neardup_snapshot_seconds", "Time to write a snapshot of the in-memory state."
        )
        self.background = Background(
            self.store,
            self.snapshot_dir,
            self.group.exclusive,
            self.snapshot_seconds.observe,
            self._snap_at,
        )
        from neardup.server.overlap_store import OverlapStore  # /v1/overlaps, its own file

        self.overlap = OverlapStore.open(settings.data, settings.overlap, settings.synchronous)
        self._warm_up()
        release_heap()  # the load's temporaries (memory per stored document, issue 21)
        self.arrivals = Arrivals(self._handle, DECIDE_LIMIT)

    def latest_time(self) -> float | None:
        """The latest timestamp a document may carry (with a window: this server's clock plus
        ``max_future``; one typo'd year would move the window and retention for every other
        document); None: no limit."""
        if self.dd.window is None or self.settings.max_future is None:
            return None
        return time.time() + self.settings.max_future

    def _load(self) -> Deduplicator:
        """The Deduplicator of the stored state (empty for a new directory)."""
        return load_state(self.store, self._config, self.snapshot_dir)

    def _snapshot(self) -> None:
        """Write a snapshot of the state (call holding the commit lock and ``lock``, with
        nothing undurable: the snapshot then covers exactly the durable rows)."""
        self.snapshot_seconds.observe(write_snapshot(self.dd, self.store, self.snapshot_dir))
        self._snap_at = self.background.done_at = self.dd.n_documents

    def _warm_up(self) -> None:
        """Load every kernel once (a dry run), so the first request is not the slow one."""
        text = "warm up the kernels before serving 在服务前预热内核 " * 4
        ts = None if self.dd.window is None else [0.0]
        self.dd.feed([text], ts, commit=False)

    # ------------------------------------------------------------------ ingest
    def submit(self, items: list[Item], dry_run: bool, answer: Answer) -> None:
        """Queue a batch in arrival order; ``answer(results, None)`` is called once it is
        decided and durable (``answer(None, error)`` if it failed), from another thread."""
        if not items:
            answer([], None)
            return
        self.arrivals.put(Request(items, dry_run, [], answer), len(items))

    def submit_delete(self, doc_ids: list[str], answer: Answer) -> None:
        """Queue a batched delete in arrival order (see :meth:`delete_many`)."""
        self.arrivals.put(Request(None, False, doc_ids, answer), max(1, len(doc_ids)))

    def ingest(self, items: list[Item], dry_run: bool) -> list[dict[str, Any]]:
        """Decide a batch in arrival order; return when it is durable (see writer.py)."""
        out: list[dict[str, Any]] = wait_for_answer(lambda a: self.submit(items, dry_run, a))
        return out

    def _handle(self, requests: list[Request]) -> None:
        """The decider thread's work: requests in arrival order, consecutive ones decided as
        one batch (:func:`~neardup.server.writer.segments`)."""
        for segment in segments(requests):
            batch = None
            try:
                if segment[0].items is None:
                    done = self._delete(segment[0].ids)
                    call(segment[0].answer, done, None)
                else:
                    batch = self._decide(segment)
            except BaseException as exc:
                for r in segment:
                    call(r.answer, None, exc)
            if batch is not None:
                try:
                    self._snapshot_due(batch)
                except Exception as exc:  # a snapshot is an optimisation: serving goes on
                    log.error("could not start a snapshot (%s)", exc)

    def _decide(self, segment: list[Request]) -> Pending | None:
        """Decide a segment as one batch; answer each request once it is durable. Returns
        the batch on its way to disk (None: nothing stored)."""
        items = [it for r in segment for it in r.items or ()]
        dry_run = segment[0].dry_run
        try:  # no shared state: while the last group commits
            prepared = self._prepare(items)
        except Exception:
            if len(segment) == 1:
                raise
            return self._one_by_one(segment)  # one request's documents failed
        with self.lock:
            ids = [it.id for it in items]
            known = self._known(ids)
            # the core's rerun rule (dedup/rerun.py): the same id and text get the stored
            # decision; a stored id with another text cannot be a second document here
            again = repeats(ids, prepared.keys, lambda i: self._held(i, known))
            clash = next((i for i, d in enumerate(ids) if d in known and again[i] == NEW), None)
            if clash is not None:
                if len(segment) > 1:
                    return self._one_by_one(segment)  # (the lock is re-entrant)
                raise BadRequest(
                    409,
                    f"documents[{clash}].id {ids[clash]!r} is stored with another text: ids "
                    "are unique here; delete it first (DELETE /v1/documents/{id}) or use a new id",
                )
            # a re-post of ids still on their way to disk: answer once they are durable
            behind = self._last if any(i in self._undurable for i in known) else None
            rows = [i for i, it in enumerate(items) if it.id not in known]
            new = [items[i] for i in rows]
            decided = batch = None
            if new:
                chunk = prepared if len(rows) == len(items) else take_batch(prepared, rows)
                decided = self.dd.state.decide(chunk, commit=not dry_run)
                if not dry_run:
                    batch = self._submit(new, decided, len(segment))
            out = answers(items, known, new, decided, self._undurable_ids, self.store.ids_of)
        parts, k = [], 0
        for r in segment:
            n = len(r.items or ())
            parts.append((r.answer, out[k : k + n]))
            k += n

        def finish(error: BaseException | None) -> None:
            for answer, results in parts:
                call(answer, None, error) if error is not None else call(answer, results, None)

        waiting = batch if batch is not None else behind
        if waiting is None:
            finish(None)
        else:
            self.group.when_durable(waiting, finish)
        return batch

    def _one_by_one(self, segment: list[Request]) -> Pending | None:
        """Each request of ``segment`` decided on its own (one of them failed as a batch)."""
        last = None
        for r in segment:
            try:
                last = self._decide([r]) or last
            except BaseException as exc:
                call(r.answer, None, exc)
        return last

    def _held(self, ids: list[str], known: dict[str, StoredRow]) -> list[tuple[int, int]]:
        """Per id, its stored position and exact key ((-1, 0): not stored), for the rule."""
        pos = [known[i].position if i in known else -1 for i in ids]
        keys = dict(zip(pos, self.dd.state.exact_keys(pos), strict=True))
        keys.update(self.store.exact_keys(p for p, k in keys.items() if k is None and p >= 0))
        return [(-1, 0) if p < 0 else (p, keys.get(p) or 0) for p in pos]

    def _snapshot_due(self, batch: Pending) -> None:
        """Every ``snapshot_every`` documents, once ``batch`` (the last one decided) is
        durable, so that the state is exactly what the store holds: a snapshot written by a
        forked child (:class:`~neardup.server.snapshot.Background`); the decider waits for one
        commit and the fork, not for the save."""
        every = self.settings.snapshot_every
        if not every or self.dd.n_documents - self._snap_at < every or self.background.busy():
            return
        try:
            self.group.wait(batch)
        except BaseException:
            return  # the state was rebuilt from the store; the next batch tries again
        with self.lock:
            if self._undurable:  # only the decider (this thread) adds to it: never here
                return
            self._snap_at = self.dd.n_documents
            self.background.start(self.dd)

    def wait_snapshot(self) -> None:
        """Return once no snapshot is being written in the background."""
        self.background.wait()

    def _prepare(self, items: list[Item]) -> PreparedBatch:
        ts = [it.timestamp for it in items]
        times = None
        if any(t is not None for t in ts):
            times = [math.nan if t is None else t for t in ts]
        return self.dd.prepare([it.text for it in items], times)

    def _known(self, ids: list[str]) -> dict[str, StoredRow]:
        """Rows of the ids already decided: durable ones, then batches still
        on their way to disk (a re-post of those must not be decided twice)."""
        known = self.store.lookup_ids(ids)
        for i in ids:
            row = self._undurable.get(i)
            if row is not None:
                known[i] = row
        return known

    def _submit(self, new: list[Item], decided: Decisions, requests: int) -> Pending:
        rows = state_rows(self.dd, new, decided, self.settings.store_text)
        batch = Pending(
            rows,
            self.dd.state.meta(),
            requests=requests,
            ids={r.position: r.id for r in rows},
            statuses=decided.status.tolist(),
        )
        for r in rows:
            self._undurable[r.id] = r.stored()
        self._undurable_ids.update(batch.ids)
        self._last = batch
        return self.group.submit(batch)

    def _write(self, group: Sequence[Pending]) -> None:
        """One transaction for a group of decided batches (GroupCommit's writer)."""
        start = time.perf_counter()
        meta = group[-1].meta  # the state after the group's last batch
        with self.store.transaction():
            for b in group:
                self.store.insert_rows(b.rows)
            self.store.set_state(meta)
            purged = self._retention(meta["max_timestamp"])
        self.commit_seconds.observe(time.perf_counter() - start)
        self.commit_batches.observe(sum(b.requests for b in group))
        self.commit_documents.observe(sum(len(b.rows) for b in group))
        with self.lock:
            for b in group:
                for pos, doc_id in b.ids.items():
                    self._undurable_ids.pop(pos, None)
                    self._undurable.pop(doc_id, None)
                for code in b.statuses:
                    self._counts[STATUS_NAMES[code]] += 1
            if purged:
                self._counts = self._count_rows()

    def _failed(self, group: Sequence[Pending]) -> None:
        """A group's transaction failed: memory goes back to what the store holds."""
        self._undurable.clear()
        self._undurable_ids.clear()
        self.dd = self._load()

    def _retention(self, newest: float | None) -> int:
        keep = self.settings.retention
        if keep is None or newest is None:
            return 0
        return self.store.purge_before(math.floor(newest - keep))

    # ------------------------------------------------------------------ reads, deletes
    def get(self, doc_id: str) -> dict[str, Any] | None:
        row = self.store.lookup_ids([doc_id]).get(doc_id)
        if row is None:
            return None
        dup_of = row.duplicate_of
        dup = None if dup_of is None else self.store.ids_of([dup_of]).get(dup_of)
        out = result(row, dup)
        out["timestamp"] = row.timestamp
        if self.settings.store_text:
            out["text"] = self.store.text(int(row.position))
        return out

    def delete(self, doc_id: str) -> dict[str, Any] | None:
        """Forget a document (None: no such document); see :meth:`delete_many`."""
        return self.delete_many([doc_id])[0]

    def delete_many(self, doc_ids: list[str]) -> list[dict[str, Any] | None]:
        """Forget documents in one transaction, in arrival order with the batches (after
        every earlier batch is durable: a document may be in one of them); per id the answer
        of a single delete (None: unknown or already deleted)."""
        out: list[dict[str, Any] | None] = wait_for_answer(lambda a: self.submit_delete(doc_ids, a))
        return out

    def _delete(self, doc_ids: list[str]) -> list[dict[str, Any] | None]:
        with self.group.exclusive(), self.lock:
            rows = self.store.lookup_ids(list(dict.fromkeys(doc_ids)))
            if not rows:
                return [None] * len(doc_ids)
            positions = [int(r.position) for r in rows.values()]
            try:
                with self.store.transaction():
                    for p in positions:
                        self.store.tombstone(p)
                self.dd.state.forget(positions)
            except BaseException:
                self.dd = self._load()
                raise
            for r in rows.values():
                self._counts[STATUS_NAMES[int(r.status)]] -= 1
        out: list[dict[str, Any] | None] = []
        for i in doc_ids:
            row = rows.pop(i, None)  # a repeated id: deleted once, then unknown
            out.append(
                None
                if row is None
                else {"id": i, "deleted": True, "was": STATUS_NAMES[int(row.status)]}
            )
        return out

    def cluster(self, cluster_id: int) -> dict[str, Any] | None:
        rows = self.store.cluster(cluster_id)
        if not rows:
            return None
        reps = {r.duplicate_of for r in rows if r.duplicate_of is not None}
        ids = self.store.ids_of(reps)
        kept = [r.id for r in rows if r.duplicate_of is None]
        return {
            "cluster_id": cluster_id,
            "kept": kept[0] if kept else (ids.get(next(iter(reps))) if reps else None),
            "documents": [
                result(r, None if r.duplicate_of is None else ids.get(r.duplicate_of)) for r in rows
            ],
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
        for status, n in self.store.reader().execute(q):
            out[STATUS_NAMES[int(status)]] = int(n)
        return out

    def close(self) -> None:
        """Write the last batches and a snapshot (the next start loads it), close the store."""
        self.arrivals.close()
        self.background.close()
        self.group.close()
        with self.group.exclusive(), self.lock:
            if self.settings.snapshot_every and self.dd.n_documents > self.background.done_at:
                self._snapshot()  # (also when the last background snapshot failed)
            self.overlap.close()  # saves the overlap reference (overlap_store.py)
            self.store.close()
