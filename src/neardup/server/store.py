"""The service's source of truth: one SQLite database (WAL) in the data directory.

One row per document with the library's state columns (``Deduplicator.state.columns()``:
position, timestamp, fingerprint, verifier sketch of kept documents, exact-text key halves,
status, duplicate_of as a position, distance, cluster_id, searched, forgotten, similarity,
threshold) plus the external id and, with ``--store-text``, the text. A deleted document keeps
its row with ``forgotten = 1`` (a tombstone: its cluster's history stays, and the library
rebuilds its exact-text map from the ``searched`` rows). ``meta`` holds the format, the
configuration id and the library's ``Deduplicator.state.meta()`` counters after the last
committed batch. A store of before a column is upgraded in place (``ALTER TABLE ... ADD
COLUMN``, NULL: unknown, as the library reads a state of before). On start the state is
rebuilt with :func:`neardup.dedup.from_state_columns`: one state format, the library's, no
second one of the service's own. A request batch is one ``BEGIN IMMEDIATE`` ... ``COMMIT``;
the service answers only after the commit returned.

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
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from neardup._atomic import CURRENT
from neardup._params import config_difference, older_cluster_rule
from neardup.errors import ConfigMismatchError, DamagedFileError

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    timestamp REAL,
    fingerprint INTEGER NOT NULL,
    sketch BLOB,
    exact_key_hi INTEGER NOT NULL,
    exact_key_lo INTEGER NOT NULL,
    status INTEGER NOT NULL,
    duplicate_of INTEGER,
    distance INTEGER NOT NULL,
    cluster_id INTEGER NOT NULL,
    searched INTEGER NOT NULL,
    forgotten INTEGER NOT NULL DEFAULT 0,
    text TEXT,
    similarity REAL,
    threshold REAL
);
CREATE UNIQUE INDEX IF NOT EXISTS documents_id ON documents(id) WHERE forgotten = 0;
CREATE INDEX IF NOT EXISTS documents_cluster ON documents(cluster_id);
CREATE INDEX IF NOT EXISTS documents_time ON documents(timestamp);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
FORMAT = "neardup-serve-2"


class StoredRow(NamedTuple):
    """A stored document's decision, read by column name (``SELECT {ROW}``): the one row
    shape of :meth:`Store.lookup_ids`, :meth:`Store.cluster` and of the batches decided but
    not yet on disk."""

    position: int
    id: str
    timestamp: float | None
    fingerprint: int
    status: int
    duplicate_of: int | None
    distance: int
    cluster_id: int
    similarity: float | None
    threshold: float | None


class NewRow(NamedTuple):
    """A decided document's row as inserted (``INSERT``; ``forgotten`` takes its default)."""

    position: int
    id: str
    timestamp: float | None
    fingerprint: int
    sketch: bytes | None
    exact_key_hi: int
    exact_key_lo: int
    status: int
    duplicate_of: int | None
    distance: int
    cluster_id: int
    searched: int
    text: str | None
    similarity: float | None
    threshold: float | None

    def stored(self) -> StoredRow:
        """The decision of this row as :meth:`Store.lookup_ids` reads it once it is durable."""
        return StoredRow._make(getattr(self, name) for name in StoredRow._fields)


ROW = ", ".join(StoredRow._fields)
INSERT = (
    f"INSERT INTO documents({', '.join(NewRow._fields)}) "
    f"VALUES ({', '.join('?' * len(NewRow._fields))})"
)


# the data directory was written with other dedup settings (the old name, still raised)
ConfigMismatch = ConfigMismatchError


class DatabaseProblem(DamagedFileError):
    """A database of the data directory cannot be served: damaged, unreadable, or gone while
    the state saved from it is still there."""


# SQLite's result codes of a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB
_DAMAGED = (11, 26)


@contextmanager
def opening(path: str) -> Iterator[None]:
    """Open and load the database ``path`` inside: an SQLite error becomes a
    :class:`DatabaseProblem`, one line naming the file, what is wrong and what to do (the
    serve command prints it and exits 2; a traceback says nothing an operator can act on).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "neardup.db")
    >>> _ = open(path, "wb").write(b"not a database, only text" * 100)
    >>> try:
    ...     with opening(path):
    ...         Store(path)
    ... except DatabaseProblem as e:
    ...     print(str(e).replace(path, "DB")[:64])
    DB is damaged (file is not a database): restore it from a backup
    """
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _DAMAGED:
            message = (
                f"{path} is damaged ({exc}): restore it from a backup (with its -wal file), or "
                "move it and its -wal and -shm files aside to start an empty store, or start "
                "with a new --data directory"
            )
        else:
            message = (
                f"cannot use {path} ({exc}): check that it and its directory are readable and "
                "writable and that no other server uses them"
            )
        raise DatabaseProblem(message) from None


def refuse_lost_database(database: str, saved: str) -> None:
    """Call when the database ``database`` holds no documents: refuse it when ``saved`` (the
    state saved from it at a clean shutdown: the dedup snapshot, the overlap reference) holds
    a version. The database was deleted or replaced; serving it would forget every document,
    and the next shutdown would replace ``saved``, the last copy, with the empty state. One
    rule for both stores.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> refuse_lost_database(os.path.join(d, "neardup.db"), os.path.join(d, "snapshot"))
    """
    if os.path.isfile(os.path.join(saved, CURRENT)):
        raise DatabaseProblem(
            f"{database} holds no documents but {saved} holds a saved state of them: the "
            "database was deleted or replaced. Restore the database file (with its -wal "
            f"file), or move {saved} away to start with an empty state"
        )


def to_i64(values: npt.NDArray[Any]) -> list[int]:
    """uint64 values (fingerprints, key halves) as the signed 64-bit integers SQLite stores."""
    out: list[int] = np.asarray(values, np.uint64).view(np.int64).tolist()
    return out


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
        columns = {
            name for (name,) in self.db.execute("SELECT name FROM pragma_table_info('documents')")
        }
        # a store from before a column is upgraded in place: its rows get NULL (unknown, as
        # the library's states of before read NaN); nothing else changed, so no refusal
        for name in ("similarity", "threshold"):
            if name not in columns:
                self.db.execute(f"ALTER TABLE documents ADD COLUMN {name} REAL")

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={self.synchronous}")
        db.execute("PRAGMA busy_timeout=10000")
        return db

    def reader(self) -> sqlite3.Connection:
        """This thread's read connection (WAL readers never block the writer)."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._connect()
        return db

    def close(self) -> None:
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()

    # ------------------------------------------------------------------ meta
    def meta(self, key: str) -> str | None:
        value = scalar(self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)))
        return None if value is None else str(value)

    def state_meta(self) -> dict[str, Any] | None:
        """The library's counters after the last committed batch (None before the first)."""
        raw = self.meta("state")
        return None if raw is None else dict(json.loads(raw))

    def check_config(self, config_id: str, settings: dict[str, Any]) -> None:
        """Record the configuration on first use; refuse a directory written with another."""
        stored = self.meta("config_id")
        if stored is None:
            with self.transaction():
                self.set_meta(
                    {
                        "format": FORMAT,
                        "config_id": config_id,
                        "settings": json.dumps(settings, sort_keys=True),
                    }
                )
        elif self.meta("format") != FORMAT:
            raise ConfigMismatch(
                f"the data directory has format {self.meta('format')}, this server writes "
                f"{FORMAT}; use another --data directory"
            )
        elif stored != config_id:
            differ = config_difference(json.loads(self.meta("settings") or "{}"), settings)
            where = f"the data directory {os.path.dirname(self.path)}"
            older = older_cluster_rule(differ, stored, where, "a new --data directory")
            if older is not None:  # no option of this version decides on from it
                raise ConfigMismatch(older)
            raise ConfigMismatch(
                f"the data directory was written with dedup config {stored}, these settings "
                f"are config {config_id} ({differ}); start with the same options as before or "
                "use another --data directory"
            )

    def db_id(self) -> str:
        """A random id made with the database (once): its snapshots carry it, so a snapshot
        directory of another database is never loaded as this one's."""
        got = self.meta("db_id")
        if got is None:
            got = uuid.uuid4().hex
            with self.transaction():
                self.set_meta({"db_id": got})
        return got

    def set_meta(self, values: dict[str, str]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items())
        )

    # ------------------------------------------------------------------ writes
    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    def insert_rows(self, rows: Iterable[NewRow]) -> None:
        """Inside a transaction: new document rows."""
        self.db.executemany(INSERT, rows)

    def set_state(self, state: dict[str, Any]) -> None:
        """Inside a transaction: the library's counters after the last batch written."""
        self.set_meta({"state": json.dumps(state, sort_keys=True)})

    def tombstone(self, position: int) -> None:
        """Inside a transaction: mark a document forgotten (its text goes too)."""
        self.db.execute(
            "UPDATE documents SET forgotten = 1, text = NULL WHERE position = ?", (position,)
        )

    def purge_before(self, cutoff: float) -> int:
        """Inside a transaction: retention. Delete the rows with ``timestamp < cutoff`` whose
        kept document is that old too (a row whose kept document is newer stays: the library
        may still follow its exact-text entry). Returns how many rows went."""
        cur = self.db.execute(
            "DELETE FROM documents WHERE timestamp < ?1 AND (duplicate_of IS NULL OR "
            "duplicate_of NOT IN (SELECT position FROM documents WHERE timestamp >= ?1))",
            (cutoff,),
        )
        return int(cur.rowcount)

    # ------------------------------------------------------------------ reads
    def n_documents(self) -> int:
        q = "SELECT count(*) FROM documents WHERE forgotten = 0"
        return int(scalar(self.reader().execute(q)))

    def lookup_ids(self, ids: Sequence[str]) -> dict[str, StoredRow]:
        """Stored (not deleted) rows by id."""
        out: dict[str, StoredRow] = {}
        db = self.reader()
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            marks = ",".join("?" * len(part))
            for row in db.execute(
                f"SELECT {ROW} FROM documents WHERE forgotten = 0 AND id IN ({marks})", part
            ):
                got = StoredRow._make(row)
                out[got.id] = got
        return out

    def exact_keys(self, positions: Iterable[int]) -> dict[int, int]:
        """The exact-text key (as an unsigned 128-bit int) of stored documents by position."""
        want = sorted(set(positions))
        out: dict[int, int] = {}
        for i in range(0, len(want), 500):
            part = want[i : i + 500]
            q = "SELECT position, exact_key_hi, exact_key_lo FROM documents WHERE position IN "
            for pos, hi, lo in self.reader().execute(q + f"({','.join('?' * len(part))})", part):
                out[pos] = ((hi & (2**64 - 1)) << 64) | (lo & (2**64 - 1))  # stored signed
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

    def cluster(self, cluster_id: int) -> list[StoredRow]:
        q = f"SELECT {ROW} FROM documents WHERE cluster_id = ? AND forgotten = 0 ORDER BY position"
        return [StoredRow._make(r) for r in self.reader().execute(q, (cluster_id,))]

    def text(self, position: int) -> str | None:
        q = "SELECT text FROM documents WHERE position = ?"
        text: str | None = scalar(self.reader().execute(q, (position,)))
        return text

    def load(
        self, start: int, stop: int, width: int | None, sketch_dtype: Any
    ) -> dict[str, npt.NDArray[Any]]:
        """The state columns of positions ``start..stop-1`` for
        :func:`neardup.dedup.from_state_columns` (``start`` 0) or
        ``Deduplicator.state.restore`` (the rows after a snapshot).

        Rows the retention deleted come back as expired, forgotten kept documents (timestamp
        -inf, never searched): nothing can match them or reach them by the exact path, which
        is what the library's expiry gives them too."""
        n = stop - start
        cols: dict[str, npt.NDArray[Any]] = {
            name: np.full(n, missing, dtype) for name, _, dtype, missing in _LOADED
        }
        cols["position"] = np.arange(start, stop, dtype=np.int64)
        if width is not None:
            cols["sketch"] = np.zeros((n, width), sketch_dtype)
        loaded = ", ".join(expr for _, expr, _, _ in _LOADED)
        cur = self.db.execute(
            f"SELECT position, {loaded}, sketch FROM documents "
            "WHERE position >= ? AND position < ? ORDER BY position",
            (start, stop),
        )
        while rows := cur.fetchmany(65536):
            _load_rows(cols, rows, start, width, sketch_dtype)
        for name in ("fingerprint", "exact_key_hi", "exact_key_lo"):
            cols[name] = cols[name].view(np.uint64)
        return cols

    def forgotten_before(self, stop: int) -> list[int]:
        """Positions below ``stop`` deleted through the API (tombstones)."""
        q = "SELECT position FROM documents WHERE forgotten = 1 AND position < ?"
        return [int(position) for (position,) in self.db.execute(q, (stop,))]


# the state columns :meth:`Store.load` reads, by name: the SQL that reads each (NULL: what
# the library's columns hold for "none"), their dtype, and the value of a row the retention
# deleted (an expired, forgotten kept document: see :meth:`Store.load`)
_LOADED: tuple[tuple[str, str, Any, Any], ...] = (
    ("timestamp", "ifnull(timestamp, 'nan')", np.float64, -np.inf),
    ("fingerprint", "fingerprint", np.int64, 0),
    ("exact_key_hi", "exact_key_hi", np.int64, 0),
    ("exact_key_lo", "exact_key_lo", np.int64, 0),
    ("status", "status", np.int8, 0),
    ("duplicate_of", "ifnull(duplicate_of, -1)", np.int64, -1),
    ("distance", "distance", np.int16, -1),
    ("cluster_id", "cluster_id", np.int64, -1),
    ("searched", "searched", bool, False),
    ("forgotten", "forgotten", bool, True),
    ("similarity", "ifnull(similarity, 'nan')", np.float64, np.nan),
    ("threshold", "ifnull(threshold, 'nan')", np.float64, np.nan),
)


def scalar(cursor: sqlite3.Cursor) -> Any:
    """The one value a one-column query returns (None: no row)."""
    row = cursor.fetchone()
    return None if row is None else row[0]


def _load_rows(
    cols: dict[str, npt.NDArray[Any]], rows: list[Any], start: int, width: int | None, dtype: Any
) -> None:
    pos, *values, sk = zip(*rows, strict=True)
    p = np.asarray(pos, np.int64) - start
    for (name, *_), column in zip(_LOADED, values, strict=True):
        cols[name][p] = np.asarray(column, dtype=cols[name].dtype)
    if width is not None:
        has = [i for i, b in enumerate(sk) if b is not None]
        if has:
            blob = b"".join(sk[i] for i in has)
            cols["sketch"][p[has]] = np.frombuffer(blob, dtype).reshape(len(has), width)


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
