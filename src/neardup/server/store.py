"""The service's source of truth: one SQLite database (WAL) in the data directory.

One row per document with the library's state columns (position, id, timestamp, fingerprint,
verifier sketch of kept documents, exact-text key, status, duplicate_of as a position,
distance, cluster_id) plus ``deleted`` (a tombstone: the row stays so that the cluster history
and the decisions of later documents can be rebuilt) and, with ``--store-text``, the text. The
``exact`` table is the library's exact-path map (normalised-text key -> position); ``meta``
holds the configuration id and the counters. A request batch is one ``BEGIN IMMEDIATE`` ...
``COMMIT``; the service answers only after the commit returned.

Durability (``synchronous``, measured in benchmarks/README.md): in WAL mode ``FULL`` fsyncs the
WAL at every commit, so an acknowledged batch survives a process crash *and* a power loss or
OS crash; ``NORMAL`` fsyncs only at checkpoints: a process crash (``kill -9``) loses nothing
(the WAL is in the OS page cache), a power loss may roll back the last acknowledged batches
(never corrupting the database). The default is ``FULL``.

>>> import tempfile, os
>>> s = Store(os.path.join(tempfile.mkdtemp(), "neardup.db"))
>>> s.check_config("abc", {"k": 3}); s.n_documents()
0
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    timestamp REAL,
    fingerprint INTEGER NOT NULL,
    sketch BLOB,
    exact_key BLOB,
    status INTEGER NOT NULL,
    duplicate_of INTEGER,
    distance INTEGER,
    cluster_id INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    text TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS documents_id ON documents(id) WHERE deleted = 0;
CREATE INDEX IF NOT EXISTS documents_cluster ON documents(cluster_id);
CREATE TABLE IF NOT EXISTS exact (key BLOB PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
FORMAT = "neardup-serve-1"
ROW = "position, id, timestamp, fingerprint, status, duplicate_of, distance, cluster_id"


class ConfigMismatch(ValueError):
    """The data directory was written with other dedup settings."""


def to_i64(fps: npt.NDArray[np.uint64]) -> list[int]:
    """uint64 fingerprints as the signed 64-bit integers SQLite stores."""
    return np.asarray(fps, np.uint64).view(np.int64).tolist()  # type: ignore[no-any-return]


def key_bytes(key: int) -> bytes:
    return key.to_bytes(16, "big")


class Store:
    """SQLite in WAL mode: one writer connection (the caller serialises writes), one read
    connection per thread."""

    def __init__(self, path: str, synchronous: str = "FULL") -> None:
        self.path = path
        self.synchronous = synchronous.upper()
        if self.synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, got {synchronous!r}")
        self._local = threading.local()
        self.db = self._connect()
        self.db.executescript(SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={self.synchronous}")
        db.execute("PRAGMA busy_timeout=10000")
        return db

    def reader(self) -> sqlite3.Connection:
        """This thread's read connection (WAL readers never block the writer)."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._connect()
        return db

    def close(self) -> None:
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()

    # ------------------------------------------------------------------ meta
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def check_config(self, config_id: str, settings: dict[str, Any]) -> None:
        """Record the configuration on first use; refuse a directory written with another."""
        stored = self.meta("config_id")
        if stored is None:
            with self.transaction():
                self._set_meta(
                    {
                        "format": FORMAT,
                        "config_id": config_id,
                        "settings": json.dumps(settings, sort_keys=True),
                        "n_positions": "0",
                        "n_clusters": "0",
                    }
                )
        elif stored != config_id:
            raise ConfigMismatch(
                f"the data directory was written with dedup config {stored} "
                f"({self.meta('settings')}), these settings are config {config_id} "
                f"({json.dumps(settings, sort_keys=True)}); start with the same options "
                "or use another --data directory"
            )

    def _set_meta(self, values: dict[str, str]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items())
        )

    # ------------------------------------------------------------------ writes
    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    def insert(
        self,
        rows: Iterable[tuple[Any, ...]],
        exact: dict[int, int],
        n_positions: int,
        n_clusters: int,
    ) -> None:
        """Inside a transaction: new document rows, the exact-map entries, the counters."""
        self.db.executemany(
            f"INSERT INTO documents({ROW}, sketch, exact_key, text) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        self.db.executemany(
            "INSERT OR REPLACE INTO exact(key, position) VALUES (?, ?)",
            [(key_bytes(k), p) for k, p in exact.items()],
        )
        self._set_meta({"n_positions": str(n_positions), "n_clusters": str(n_clusters)})

    def tombstone(self, position: int) -> dict[int, int]:
        """Inside a transaction: mark a document deleted and drop the exact-map entries that
        lead into what it kept (its cluster when it is kept, else itself); returns them."""
        row = self.db.execute(
            "SELECT cluster_id, duplicate_of FROM documents WHERE position = ?", (position,)
        ).fetchone()
        if row[1] is None:  # kept: every exact entry into its cluster
            members = "SELECT position FROM documents WHERE cluster_id = ?"
            arg = row[0]
        else:
            members, arg = "SELECT ?", position
        gone = self.db.execute(
            f"SELECT key, position FROM exact WHERE position IN ({members})", (arg,)
        ).fetchall()
        self.db.executemany("DELETE FROM exact WHERE key = ?", [(k,) for k, _ in gone])
        self.db.execute(
            "UPDATE documents SET deleted = 1, text = NULL WHERE position = ?", (position,)
        )
        return {int.from_bytes(k, "big"): int(p) for k, p in gone}

    def purge_before(self, cutoff: float) -> list[int]:
        """Inside a transaction: delete rows older than ``cutoff`` (retention); positions."""
        gone = [
            int(r[0])
            for r in self.db.execute(
                "SELECT position FROM documents WHERE timestamp < ?", (cutoff,)
            )
        ]
        if gone:
            self.db.execute("DELETE FROM documents WHERE timestamp < ?", (cutoff,))
            self.db.execute(
                "DELETE FROM exact WHERE position NOT IN (SELECT position FROM documents)"
            )
        return gone

    # ------------------------------------------------------------------ reads
    def n_documents(self) -> int:
        return int(
            self.reader().execute("SELECT count(*) FROM documents WHERE deleted = 0").fetchone()[0]
        )

    def lookup_ids(self, ids: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        """Stored (not deleted) rows by id, in ``ROW`` order."""
        out: dict[str, tuple[Any, ...]] = {}
        db = self.reader()
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            marks = ",".join("?" * len(part))
            for row in db.execute(
                f"SELECT {ROW} FROM documents WHERE deleted = 0 AND id IN ({marks})", part
            ):
                out[row[1]] = row
        return out

    def ids_of(self, positions: Iterable[int]) -> dict[int, str]:
        want = sorted(set(positions))
        out: dict[int, str] = {}
        db = self.reader()
        for i in range(0, len(want), 500):
            part = want[i : i + 500]
            marks = ",".join("?" * len(part))
            q = f"SELECT position, id FROM documents WHERE position IN ({marks})"
            out.update(db.execute(q, part).fetchall())
        return out

    def cluster(self, cluster_id: int) -> list[tuple[Any, ...]]:
        return (
            self.reader()
            .execute(
                f"SELECT {ROW} FROM documents WHERE cluster_id = ? AND deleted = 0 "
                "ORDER BY position",
                (cluster_id,),
            )
            .fetchall()
        )

    def text(self, position: int) -> str | None:
        row = (
            self.reader()
            .execute("SELECT text FROM documents WHERE position = ?", (position,))
            .fetchone()
        )
        return None if row is None else row[0]

    def load(self, width: int | None, sketch_dtype: Any) -> dict[str, npt.NDArray[Any]]:
        """Every row as state columns indexed by position ``0..n_positions-1``; positions the
        retention deleted are filled as expired kept documents (timestamp -inf)."""
        n = int(self.meta("n_positions") or 0)
        cols: dict[str, npt.NDArray[Any]] = {
            "status": np.zeros(n, np.int8),
            "duplicate_of": np.full(n, -1, np.int64),
            "distance": np.full(n, -1, np.int16),
            "cluster_id": np.full(n, -1, np.int64),
            "fingerprint": np.zeros(n, np.int64),
            "timestamp": np.full(n, -np.inf),
            "forgotten": np.ones(n, bool),
        }
        if width is not None:
            cols["sketch"] = np.zeros((n, width), sketch_dtype)
        cur = self.db.execute(
            "SELECT position, timestamp, fingerprint, status, ifnull(duplicate_of, -1), "
            "ifnull(distance, -1), cluster_id, deleted, sketch FROM documents ORDER BY position"
        )
        while rows := cur.fetchmany(65536):
            self._load_rows(cols, rows, width, sketch_dtype)
        cols["fingerprint"] = cols["fingerprint"].view(np.uint64)
        return cols

    @staticmethod
    def _load_rows(
        cols: dict[str, npt.NDArray[Any]], rows: list[Any], width: int | None, dtype: Any
    ) -> None:
        pos, ts, fp, st, dup, dist, clu, dele, sk = zip(*rows, strict=True)
        p = np.asarray(pos, np.int64)
        cols["timestamp"][p] = np.asarray([np.nan if t is None else t for t in ts], float)
        cols["fingerprint"][p] = np.asarray(fp, np.int64)
        cols["status"][p] = np.asarray(st, np.int8)
        cols["duplicate_of"][p] = np.asarray(dup, np.int64)
        cols["distance"][p] = np.asarray(dist, np.int16)
        cols["cluster_id"][p] = np.asarray(clu, np.int64)
        cols["forgotten"][p] = np.asarray(dele, bool)
        if width is not None:
            has = [i for i, b in enumerate(sk) if b is not None]
            if has:
                blob = b"".join(sk[i] for i in has)
                cols["sketch"][p[has]] = np.frombuffer(blob, dtype).reshape(len(has), width)

    def load_exact(self) -> dict[int, int]:
        return {
            int.from_bytes(k, "big"): int(p)
            for k, p in self.db.execute("SELECT key, position FROM exact")
        }


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
        else:
            self.db.execute("ROLLBACK")
