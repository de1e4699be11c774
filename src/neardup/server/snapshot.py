"""Fast restarts: a snapshot of the in-memory state that the store points to.

Rebuilding the Deduplicator from every SQLite row (:func:`neardup.dedup.from_state_columns`)
re-sorts the whole candidate index: seconds at 10^6 documents. So the service also writes the
library's own persisted state (:meth:`Deduplicator.save`: one format, a checksummed bundle
written atomically as a new version of ``DATA/snapshot``) every ``snapshot_every`` documents
and at shutdown, and records in SQLite (``meta.snapshot``) the position it covers. On start:
load the snapshot, then append the rows written after it
(``Deduplicator.state.restore``, no decision is made again) and forget again the
documents deleted since. SQLite stays the source of truth: a snapshot that is missing, damaged
(bad checksum), of another configuration, of another database (each version holds ``owner.json``
with the database's random ``db_id``) or ahead of the store is ignored with a log line, and
every row is replayed from SQLite. An empty database beside a snapshot (the database file was
deleted or replaced) is refused at start: serving an empty state would forget every document.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from neardup._atomic import atomic_directory, read_current
from neardup._threads import object_lock
from neardup.dedup import Deduplicator, from_state_columns, persist
from neardup.dedup.columns import StateFormatError
from neardup.server.store import Store, refuse_lost_database

log = logging.getLogger("neardup.server")
OWNER = "owner.json"  # in each snapshot version: the database it was taken of


def load_state(store: Store, config: Deduplicator, snapshot_dir: str) -> Deduplicator:
    """The Deduplicator of the stored state: snapshot + later rows, or every row."""
    meta = store.state_meta()
    if meta is None:
        refuse_lost_database(store.path, snapshot_dir)
        return config.replace()
    n = int(meta["documents"])
    width = dtype = None
    if config.verifier is not None:
        probe = np.asarray(config.verifier.sketch_many(["width probe"]))
        width, dtype = probe.shape[1], probe.dtype
    dd = _snapshot(store, config, snapshot_dir, n)
    if dd is None:
        log.info("state: rebuilt from %d stored rows", n)
        return from_state_columns(config, store.load(0, n, width, dtype), meta)
    start = dd.n_documents
    if start < n:
        dd.state.restore(store.load(start, n, width, dtype), meta)
    gone = store.forgotten_before(start)
    if gone:
        dd.state.forget(gone)
    log.info("state: snapshot of %d documents + %d stored rows after it", start, n - start)
    return dd


def _snapshot(store: Store, config: Deduplicator, path: str, n: int) -> Deduplicator | None:
    """The snapshot, if it is there, intact, of this configuration and not ahead of SQLite."""
    if store.meta("snapshot") is None or not os.path.isdir(path):
        return None
    try:
        owner = _owner(path)
        if owner.get("db_id") != store.db_id():
            raise ValueError(f"it belongs to another database ({owner.get('db_id')})")
        dd = Deduplicator.load(path, config)
        if dd.n_documents != owner.get("documents"):
            raise ValueError("its owner record does not match it")
    except (StateFormatError, OSError, ValueError) as exc:
        log.warning("ignoring the snapshot in %s (%s); replaying every stored row", path, exc)
        return None
    if dd.n_documents > n:
        log.warning(
            "ignoring the snapshot in %s: it covers %d documents, the store holds %d; "
            "replaying every stored row",
            path,
            dd.n_documents,
            n,
        )
        return None
    return dd


def _owner(path: str) -> dict[str, Any]:
    """``owner.json`` of the live snapshot version (``{}`` when it has none)."""
    live = read_current(Path(path))
    owner = os.path.join(path, live or "", OWNER)
    if live is None or not os.path.isfile(owner):
        return {}
    with open(owner, encoding="utf-8") as f:
        return dict(json.load(f))


def write_snapshot(dd: Deduplicator, store: Store, path: str) -> float:
    """Save ``dd`` (its state must be exactly what the store holds) and record it; returns the
    seconds it took. A failure is logged: the store alone is still complete."""
    start = time.perf_counter()
    if save_snapshot(dd, store.db_id(), path):
        record_snapshot(dd.n_documents, dd.config_id, store)
    return time.perf_counter() - start


def save_snapshot(dd: Deduplicator, db_id: str, path: str) -> bool:
    """Write ``dd`` as the new version of the snapshot directory (atomically), without
    touching the store. False (logged) if it could not be written."""
    try:
        with atomic_directory(path) as version:  # dd.save(path), plus the owner in the version
            persist.write_state(dd, version)
            owner = {"db_id": db_id, "documents": dd.n_documents}
            with open(version / OWNER, "w", encoding="utf-8") as f:
                f.write(json.dumps(owner))
                f.flush()
                os.fsync(f.fileno())
    except (OSError, StateFormatError, ValueError) as exc:
        log.error("could not write the snapshot in %s (%s); restarts replay the store", path, exc)
        return False
    return True


def record_snapshot(documents: int, config_id: str, store: Store) -> None:
    """Record in the store that a snapshot covers the first ``documents`` (call holding the
    store's writer). The snapshot directory describes itself (``owner.json``): a crash before
    this record only leaves the record one snapshot behind."""
    record: dict[str, Any] = {"documents": documents, "config_id": config_id}
    try:
        with store.transaction():
            store.set_meta({"snapshot": json.dumps(record)})
    except (OSError, sqlite3.Error) as exc:
        log.error("could not record the snapshot (%s)", exc)


class Background:
    """Snapshots written beside the writer, one at a time, by a forked child process.

    :meth:`start` has the snapshot thread fork (milliseconds: the page tables, not the
    memory): the child holds a copy-on-write image of the state exactly as the store holds it,
    writes it as a new snapshot version and exits; the server goes on at once, and neither its
    CPU nor its GIL is taken by the save. The snapshot thread waits for the child and records
    the snapshot in the store holding the store's writer (``exclusive``). The child dies with
    that thread, which lives as long as the server (``PR_SET_PDEATHSIG``): a ``kill -9``
    leaves no writer behind, and an interrupted version is never made current. Where
    ``os.fork`` is missing the snapshot is written in the calling thread (holding the writer).
    ``done_at``: the documents the last recorded snapshot covers.
    """

    def __init__(
        self,
        store: Store,
        path: str,
        exclusive: Callable[[], AbstractContextManager[None]],
        observe: Callable[[float], None],
        done_at: int,
    ) -> None:
        self._store, self._path = store, path
        self._exclusive, self._observe = exclusive, observe
        self.done_at = done_at
        self._db_id = store.db_id()
        self._jobs: queue.SimpleQueue[tuple[Deduplicator, threading.Event] | None]
        self._jobs = queue.SimpleQueue()
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(target=self._run, name="neardup-snapshot", daemon=True)
        self._thread.start()

    def busy(self) -> bool:
        return not self._idle.is_set()

    def start(self, dd: Deduplicator) -> None:
        """Snapshot ``dd``; returns once it is forked (call with nothing decided that is not
        durable, holding the lock that keeps ``dd`` still)."""
        if not hasattr(os, "fork"):
            self._observe(write_snapshot(dd, self._store, self._path))
            self.done_at = dd.n_documents
            return
        self._idle.clear()
        forked = threading.Event()
        self._jobs.put((dd, forked))
        forked.wait()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                self._write(*job)
            finally:
                job[1].set()
                self._idle.set()

    def _write(self, dd: Deduplicator, forked: threading.Event) -> None:
        start = time.perf_counter()
        documents, config_id, parent = dd.n_documents, dd.config_id, os.getpid()
        # fork holding the Deduplicator's own lock: were another thread inside one of its
        # methods (a /metrics scrape), the child would inherit that lock held by a thread it
        # does not have, and its save would wait forever
        with object_lock(dd):
            try:
                with warnings.catch_warnings():  # 3.12+: "multi-threaded, fork() may deadlock"
                    warnings.simplefilter("ignore", DeprecationWarning)  # (the lock above)
                    pid = os.fork()
            except OSError as exc:
                log.error("could not fork the snapshot writer (%s)", exc)
                return
            if pid == 0:  # the child (it holds the lock): never returns
                _child(dd, self._db_id, self._path, parent)
        forked.set()  # the server goes on: the child has its own image of the state
        del dd
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) == 0:
            with self._exclusive():
                record_snapshot(documents, config_id, self._store)
            self.done_at = documents
        else:
            log.error("the snapshot writer exited with status %d", status)
        self._observe(time.perf_counter() - start)

    def wait(self, timeout: float | None = None) -> bool:
        """Return once no snapshot is being written (False: still one after ``timeout``)."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        """Wait for the snapshot being written, then stop the snapshot thread."""
        self.wait()
        self._jobs.put(None)
        self._thread.join()


def _child(dd: Deduplicator, db_id: str, path: str, parent: int) -> None:
    """The forked snapshot writer: save, then ``os._exit`` (no atexit handlers, no flushing of
    the server's buffers, no finalizers of its connections)."""
    code = 1
    try:
        _die_with(parent)
        # the server's sockets and database files: a listening socket held by a child would
        # keep the port after the server died, a client connection would not close
        os.closerange(3, _max_fd())
        code = 0 if save_snapshot(dd, db_id, path) else 1
    finally:
        os._exit(code)


def _die_with(parent: int) -> None:
    """SIGKILL this process when the server dies (Linux); exit now if it already has."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def _max_fd() -> int:
    try:
        return max(256, int(os.sysconf("SC_OPEN_MAX")))
    except (OSError, ValueError):
        return 4096
