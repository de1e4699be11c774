"""The overlap side of the service: an :class:`~neardup.overlap.OverlapFinder` in memory and
its documents in SQLite (``overlap.sqlite`` in the data directory), kept in step.

The finder needs the texts of the stored documents to align spans, so each stored document is
one row: position, id, text, and the passages it got when it was stored (the answer a retry of
the same id gets back). ``meta`` holds the format and the finder's ``config_id``. A store batch
is one ``BEGIN IMMEDIATE`` ... ``COMMIT`` (WAL, ``synchronous=FULL`` by default) and the answer
leaves only after the commit returned, so an acknowledged document survives ``kill -9``.

At start the finder is rebuilt *before the port opens* (``/healthz`` answers once it is
ready): from the reference saved at the last clean shutdown (``overlap-reference/``,
:meth:`OverlapFinder.save`) when it holds a prefix of the rows, then the rows after it are added
again in position order (a kill -9 costs re-adding the documents stored since the last clean
shutdown). A directory written with other overlap parameters is refused naming both ids; one
without stored overlap documents takes the new parameters. An empty database beside a saved
reference (the database was deleted) and a damaged database are refused with the fix, as the
dedup store refuses them (:func:`~neardup.server.store.refuse_lost_database`,
:func:`~neardup.server.store.opening`).

Ids: a known id is never added twice; its answer is the stored one (``known: true``), whatever
the text and ``store`` of the new request (the dedup endpoint's rule: a retry after a lost
answer gets the same answer).

>>> import tempfile
>>> from neardup.overlap import OverlapFinder
>>> s = OverlapStore(tempfile.mkdtemp(), OverlapFinder(min_length=5))
>>> text = "one two three four five six seven eight nine ten eleven twelve"
>>> s.run([("a", text)], store=True)[0]["stored"]
True
>>> [p["source_id"] for p in s.run([(None, "so: " + text)], store=False)[0]["passages"]]
['a']
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

from neardup._params import config_difference
from neardup.errors import DamagedFileError
from neardup.overlap import OverlapFinder, ReferenceFormatError, SeedBudgetError
from neardup.server.store import (
    ConfigMismatch,
    DatabaseProblem,
    opening,
    refuse_lost_database,
    scalar,
)

__all__ = ["FORMAT", "OverlapConfigMismatch", "OverlapStore"]

FORMAT = "neardup-overlap-serve-1"
log = logging.getLogger("neardup.server")
SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    passages TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class OverlapConfigMismatch(ConfigMismatch):
    """The overlap documents were stored with other overlap parameters."""


def _loads(text: str | None) -> Any:
    """The JSON of a meta row, None when it is missing or damaged."""
    try:
        return json.loads(text or "")
    except ValueError:
        return None


class OverlapStore:
    """Query and store texts for ``POST /v1/overlaps``; one lock serialises the finder and
    the writes (a store batch is decided and committed holding it)."""

    def __init__(self, data: str, finder: OverlapFinder, synchronous: str = "FULL") -> None:
        if synchronous.upper() not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, got {synchronous!r}")
        os.makedirs(data, exist_ok=True)
        self.path = os.path.join(data, "overlap.sqlite")
        self.reference = os.path.join(data, "overlap-reference")
        self.lock = threading.Lock()
        self._config = finder.replace()  # an empty finder of these parameters
        self.config_id = finder.config_id
        self._saved = -1  # documents in the saved reference (-1: none loaded)
        with opening(self.path):  # a damaged file: one line saying what to do
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={synchronous.upper()}")
            self.db.execute("PRAGMA busy_timeout=10000")
            self.db.executescript(SCHEMA)
            self._check_config()
            self.finder = self._rebuild()
        if not len(self.finder):
            try:
                refuse_lost_database(self.path, self.reference)
            except DatabaseProblem:
                self.db.close()
                raise

    @classmethod
    def open(
        cls, data: str, params: Sequence[tuple[str, Any]], synchronous: str = "FULL"
    ) -> OverlapStore:
        """The store of directory ``data`` with an :class:`OverlapFinder` of ``params``; a
        text over its seed budget is refused (413) unless ``params`` say ``budget=trim``."""
        return cls(data, OverlapFinder(**{"budget": "refuse", **dict(params)}), synchronous)

    def __len__(self) -> int:
        return len(self.finder)

    def _meta(self, key: str) -> str | None:
        value = scalar(self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)))
        return None if value is None else str(value)

    def _check_config(self) -> None:
        """Refuse stored documents of other parameters; record these ones otherwise."""
        stored, fmt = self._meta("config_id"), self._meta("format")
        has_rows = self.db.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is not None
        if has_rows and fmt != FORMAT:
            raise OverlapConfigMismatch(
                f"{self.path} has format {fmt}, this server writes {FORMAT}; "
                "use another --data directory"
            )
        if has_rows and stored != self.config_id:
            saved = _loads(self._meta("params"))
            # parameters added since the store was written take their defaults
            differ = config_difference(
                {**OverlapFinder().get_params(), **(saved if isinstance(saved, dict) else {})},
                self._config.get_params(),
            )
            raise OverlapConfigMismatch(
                f"the overlap documents in {self.path} were stored with overlap config {stored} "
                f"({self._meta('params')}), these settings are config {self.config_id}: "
                + (
                    "the same --overlap options in an earlier neardup (its tokenizer or aligner "
                    "has changed, and the stored answers with it): use another --data directory "
                    "and post the texts again"
                    if not differ
                    else f"start with the same --overlap options as before ({differ}) or use "
                    "another --data directory"
                )
            )
        params = json.dumps(self._config.get_params(), sort_keys=True)
        meta = {"format": FORMAT, "config_id": self.config_id, "params": params}
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def _rebuild(self) -> OverlapFinder:
        """The finder of the stored rows: the saved reference when it is a prefix of them,
        then the rows after it, added in position order."""
        rows = self.db.execute("SELECT id, text FROM documents ORDER BY position").fetchall()
        finder = self._load_reference(rows)
        for doc_id, text in rows[len(finder) :]:
            finder.add(text, doc_id)
        return finder

    def _load_reference(self, rows: Sequence[tuple[str, str]]) -> OverlapFinder:
        if not os.path.isdir(self.reference):
            return self._config.replace()
        try:
            saved = OverlapFinder.load(self.reference, self._config)
        except ReferenceFormatError:  # another config or damaged: the rows are the truth
            return self._config.replace()
        n = len(saved)
        if n > len(rows) or [saved.id_of(i) for i in range(n)] != [i for i, _ in rows[:n]]:
            return self._config.replace()
        self._saved = n
        return saved

    def run(self, items: Sequence[tuple[str | None, str]], store: bool) -> list[dict[str, Any]]:
        """The passages of each ``(id, text)`` in the stored documents, in input order; with
        ``store`` each text is added after its query (so later items of the batch find it)
        and the batch is committed before this returns. Known ids get their stored answer."""
        with self.lock:
            known = self._known([i for i, _ in items if i is not None])
            out: list[dict[str, Any]] = []
            rows: list[tuple[int, str, str, str]] = []
            try:
                for item, (doc_id, text) in enumerate(items):
                    if doc_id is not None and doc_id in known:
                        out.append(known[doc_id])
                        continue
                    position = len(self.finder)
                    try:
                        if store:
                            assert doc_id is not None  # the request parser requires an id
                            found = self.finder.add(text, doc_id)
                        else:
                            found = self.finder.query(text, doc_id)
                    except SeedBudgetError as exc:
                        exc.item = item  # the answer names the text of the batch
                        raise
                    passages = [_passage(p.to_dict(), doc_id) for p in found]
                    if store:
                        rows.append((position, str(doc_id), text, json.dumps(passages)))
                    out.append(_answer(doc_id, passages, stored=store, known=False))
                if rows:
                    self._commit(rows)
            except BaseException:
                if rows:  # memory back to what the store holds
                    self.finder = self._rebuild()
                raise
        return out

    def _known(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):  # SQLite's limit on parameters
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT id, passages FROM documents WHERE id IN ({marks})"
            for doc_id, passages in self.db.execute(q, chunk):
                out[doc_id] = _answer(doc_id, json.loads(passages), stored=True, known=True)
        return out

    def _commit(self, rows: list[tuple[int, str, str, str]]) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            q = "INSERT INTO documents(position, id, text, passages) VALUES (?, ?, ?, ?)"
            self.db.executemany(q, rows)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Save the reference (the next start loads it instead of re-adding every row) when
        documents were stored since it was saved, and close the database."""
        with self.lock:
            if len(self.finder) and len(self.finder) != self._saved:
                self._save_reference()
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.db.close()

    def _save_reference(self) -> None:
        """Save the reference; a failure (a full disk, a ``CURRENT`` naming a gone version,
        which the start read past) is logged, as the dedup snapshot's is: the rows are the
        truth, and the close goes on (a traceback here left the databases unclosed)."""
        try:
            self.finder.save(self.reference)
        except (OSError, DamagedFileError) as exc:
            log.error(
                "could not write the overlap reference in %s (%s); restarts add the stored "
                "texts again",
                self.reference,
                exc,
            )


def _passage(d: dict[str, Any], doc_id: str | None) -> dict[str, Any]:
    """A passage as answered: ``id`` is the request's id (null when none was given)."""
    d["id"] = doc_id
    return d


def _answer(
    doc_id: str | None, passages: list[dict[str, Any]], *, stored: bool, known: bool
) -> dict[str, Any]:
    return {"id": doc_id, "stored": stored, "known": known, "passages": passages}
