"""Fast restarts: a snapshot of the in-memory state that the store points to.

Rebuilding the Deduplicator from every SQLite row (:meth:`Deduplicator.from_state_columns`)
re-sorts the whole candidate index: seconds at 10^6 documents. So the service also writes the
library's own persisted state (:meth:`Deduplicator.save`: one format, a checksummed bundle
written atomically as a new version of ``DATA/snapshot``) every ``snapshot_every`` documents
and at shutdown, and records in SQLite (``meta.snapshot``) the position it covers. On start:
load the snapshot, then append the rows written after it
(:meth:`Deduplicator.extend_state_columns`, no decision is made again) and forget again the
documents deleted since. SQLite stays the source of truth: a snapshot that is missing, damaged
(bad checksum), of another configuration or ahead of the store is ignored with a log line, and
every row is replayed from SQLite.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

import numpy as np

from neardup.dedup import Deduplicator
from neardup.dedup.columns import StateFormatError
from neardup.server.store import Store

log = logging.getLogger("neardup.server")


def load_state(store: Store, config: Deduplicator, snapshot_dir: str) -> Deduplicator:
    """The Deduplicator of the stored state: snapshot + later rows, or every row."""
    meta = store.state_meta()
    if meta is None:
        return config.replace()
    n = int(meta["documents"])
    width = dtype = None
    if config.verifier is not None:
        probe = np.asarray(config.verifier.sketch_many(["width probe"]))
        width, dtype = probe.shape[1], probe.dtype
    dd = _snapshot(store, config, snapshot_dir, n)
    if dd is None:
        log.info("state: rebuilt from %d stored rows", n)
        return Deduplicator.from_state_columns(config, store.load(0, n, width, dtype), meta)
    start = dd.n_documents
    if start < n:
        dd.extend_state_columns(store.load(start, n, width, dtype), meta)
    gone = store.forgotten_before(start)
    if gone:
        dd.forget(gone)
    log.info("state: snapshot of %d documents + %d stored rows after it", start, n - start)
    return dd


def _snapshot(store: Store, config: Deduplicator, path: str, n: int) -> Deduplicator | None:
    """The snapshot, if it is there, intact, of this configuration and not ahead of SQLite."""
    if store.meta("snapshot") is None or not os.path.isdir(path):
        return None
    try:
        dd = Deduplicator.load(path, config)
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


def write_snapshot(dd: Deduplicator, store: Store, path: str) -> float:
    """Save ``dd`` (its state must be exactly what the store holds) and record it; returns the
    seconds it took. A failure is logged: the store alone is still complete."""
    start = time.perf_counter()
    try:
        dd.save(path)
        record: dict[str, Any] = {"documents": dd.n_documents, "config_id": dd.config_id}
        with store.transaction():
            store.set_meta({"snapshot": json.dumps(record)})
    except (OSError, StateFormatError, ValueError) as exc:
        log.error("could not write the snapshot in %s (%s); restarts replay the store", path, exc)
    return time.perf_counter() - start
