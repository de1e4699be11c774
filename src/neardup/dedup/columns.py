"""The dedup state's per-document columns: one schema table, and the rules of expiry and forget.

:data:`SCHEMA` is the one table of the per-document columns (name, dtype, which states hold
it, since which state format a saved state has it, whether a reader needs it, the value of a
new row): :class:`DocColumns` is built from it, and a saved state (dedup/persist.py), the
public columns and the one way rows enter a state without being decided
(:meth:`~neardup.dedup.dedup_state.DedupState.take_rows`) read it. A new per-document column is
one row of it (and its line in ``DocColumns.__init__``).

The public columns (what the service stores in SQLite, one row per document):
``dd.state.columns()`` / ``dd.state.restore(columns, meta)``
(:func:`neardup.dedup.from_state_columns`) with ``position, id?, timestamp, fingerprint,
sketch?, exact_key_hi, exact_key_lo, status, duplicate_of, distance, cluster_id, searched,
forgotten, similarity, threshold`` (the last two optional on read: NaN, unknown).
``searched`` marks documents that went through the candidate search (step 3 of the rule),
from which the exact-text map is rebuilt: for each key, the last searched document.
:attr:`Deduplicator.config_id` identifies what decides (fingerprinter, k, candidate design,
verifier, window, keep).

Time window and expiry (the exact rule). Let ``M`` be the newest timestamp seen. A kept document
``r`` with ``t_r < M - window`` can never match a later document ``i`` with ``t_i >= M``
(``t_i - t_r > window``), so after each chunk the kept documents with
``floor(t_r) < horizon = floor(M - window)`` leave the candidate index, their sketches leave
the saved state, and exact-map entries whose kept document expired are pruned: for such an
``i`` a pruned entry and a present one lead to the same decision (the window check of the exact
path fails either way and the document is searched). With ``keep='first'`` the rule itself
reads the horizon per document (:func:`neardup.dedup.greedy.horizons`, the newest timestamp up
to it in input order): a kept document older than it never matches, in ``run``, in
``feed`` with any chunking and in the Spark engine alike. A document is *late* when
``t_i < h_i`` (older than the newest minus the window); late documents are counted
(``describe()["late_documents"]``; both CLI engines print the count). Input in time order has
none. When a state with a window is saved,
the per-document rows before ``origin`` leave it too: ``origin`` is the first position a later
decision can read (the kept documents still in the index, the exact-map entries and their kept
documents), so a long stream keeps about one window of rows. Positions stay global;
``state.decisions()`` and ``state.columns()`` of a loaded state start at
``state.meta()["origin"]``.
Without a window nothing expires and every row stays.

``state.forget(positions)``: a deleted document stops attracting duplicates: it leaves the candidate
index, and the exact-map entries that point to it (or to a duplicate of it) are dropped, so a
later copy of its text is searched like a new text. Its cluster keeps its members and their
decisions; the row stays, marked ``forgotten``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from neardup import _spill
from neardup._growable import Growable
from neardup._params import config_difference, older_cluster_rule
from neardup._persist import JsonColumn
from neardup._spill import SpillGrowable
from neardup.dedup.decisions import DUPLICATE, UNIQUE
from neardup.dedup.exact_map import ExactMap
from neardup.errors import ConfigMismatchError, DamagedFileError

SEARCHED, FORGOTTEN = 1, 2  # bits of the per-document flags
MAX_SLOTS = 2**31 - 1  # kept sketches a state holds: ``slot`` is int32


class StateFormatError(DamagedFileError):
    """A saved dedup state is missing, damaged, or of another configuration."""


class StateConfigError(StateFormatError, ConfigMismatchError):
    """A saved dedup state of another configuration."""


def verifier_config(verifier: object) -> dict[str, Any] | None:
    """JSON-able identity of a verifier (its ``get_config()``, else its parameters when it has
    ``get_params``)."""
    if verifier is None:
        return None
    get = getattr(verifier, "get_config", None) or getattr(verifier, "get_params", None)
    params = get() if callable(get) else {"repr": repr(verifier)}
    return {"type": type(verifier).__qualname__, **params}


@dataclass(frozen=True)
class Column:
    """One per-document column of a dedup state: the schema table :data:`SCHEMA` holds them."""

    name: str  # attribute of DocColumns, and NAME.npy in a saved state
    dtype: type[np.generic]  # the one place a column's dtype is written
    held: str  # which states hold it: "always", "window", "rule" (cluster_similarity), "verifier"
    since: int | None  # state format version that first saved it (None: never saved)
    required: bool  # a saved state of that version must have it (else: its value of a new row)
    new: float  # value of a row not decided yet


NAN = float("nan")
#: The per-document columns, in the order a saved state writes them (dedup/persist.py).
SCHEMA = (
    Column("fps", np.uint64, "always", 1, True, 0),
    Column("rep", np.int64, "always", 1, True, -1),  # the kept document (itself when kept)
    Column("distance", np.int16, "always", 1, True, -1),
    Column("cluster", np.int64, "always", 1, True, -1),
    Column("status", np.int8, "always", 1, True, -1),
    Column("key_hi", np.uint64, "always", 1, True, 0),  # exact keys (xxh3_128 halves)
    Column("key_lo", np.uint64, "always", 1, True, 0),
    Column("flags", np.int8, "always", 1, True, 0),  # SEARCHED | FORGOTTEN
    Column("ts", np.float64, "window", 1, True, NAN),
    # per kept document the lowest similarity of a member (the cluster_similarity rule);
    # float32 everywhere: the same floors in every engine
    Column("floor", np.float32, "rule", 3, True, 1.0),
    # the similarity that decided and its threshold (issue 38: NaN in states saved before)
    Column("similarity", np.float64, "always", 3, False, NAN),
    Column("threshold", np.float64, "always", 3, False, NAN),
    # row in the kept sketches (int32: 4 B/doc less; _keep_sketches refuses 2**31 kept rows)
    Column("slot", np.int32, "verifier", None, False, -1),
)
_DTYPES = {c.name: c.dtype for c in SCHEMA}
#: positions and cluster numbers: int32 in memory until one reaches 2**31 - 1 (8 B/doc less;
#: issue 39), then int64; saved and handed out as SCHEMA's int64 (:meth:`DocColumns.fit`)
NARROW = ("rep", "cluster")
_NARROW_TOP = 2**31 - 1
_SETTLED = ("similarity", "threshold")  # appended by DocColumns.settle, not grow
#: :meth:`DocColumns.public` names (the service's SQLite columns) of the plain columns
PUBLIC = {
    "fps": "fingerprint",
    "key_hi": "exact_key_hi",
    "key_lo": "exact_key_lo",
    "status": "status",
    "distance": "distance",
    "cluster": "cluster_id",
    "similarity": "similarity",
    "threshold": "threshold",
}


def _growable(name: str) -> Growable:
    return Growable(np.int32 if name in NARROW else _DTYPES[name])


def _spilled(name: str) -> Growable:
    """A column read only in slices or for a few rows: a spill file past ``SPILL_BYTES / 16``
    (4 MiB, 500,000 rows of 8 bytes: a service of 10^6 stored documents spills them)."""
    return SpillGrowable(_DTYPES[name], spill_bytes=_spill.SPILL_BYTES // 16)


class DocColumns:
    """The per-document columns of a dedup state (row ``i``: position ``origin + i``), one
    attribute per :data:`SCHEMA` row; ``held`` the columns this configuration keeps.

    >>> cols = DocColumns(timed=False, tight=False, sketched=False)
    >>> [c.name for c in cols.saved()][-3:], cols.rows
    (['flags', 'similarity', 'threshold'], 0)
    """

    def __init__(self, *, timed: bool, tight: bool, sketched: bool) -> None:
        self.fps = _growable("fps")
        self.rep = _growable("rep")
        self.distance = _growable("distance")
        self.cluster = _growable("cluster")
        self.status = _growable("status")
        # read only by exact_keys, a rebuild, a save and the service's rows: to a spill file
        # past 4 MiB (500,000 rows) each, like the sketches (16 B/doc, issue 39)
        self.key_hi = _spilled("key_hi")
        self.key_lo = _spilled("key_lo")
        self.flags = _growable("flags")
        self.ts = _growable("ts")
        self.floor = _growable("floor")
        # written once a chunk is decided (:meth:`settle`), read for its decisions, a save and
        # the service's rows: spill files too (16 B/doc)
        self.similarity = _spilled("similarity")
        self.threshold = _spilled("threshold")
        self.slot = _growable("slot")
        kinds = {"always", *(("window",) if timed else ()), *(("rule",) if tight else ())}
        kinds |= {"verifier"} if sketched else set()
        self.held = tuple(c for c in SCHEMA if c.held in kinds)

    def column(self, name: str) -> Growable:
        """The column ``name`` of :data:`SCHEMA`."""
        g: Growable = getattr(self, name)
        return g

    def holds(self, name: str) -> bool:
        """Whether this configuration keeps the column ``name``."""
        return any(c.name == name for c in self.held)

    @property
    def rows(self) -> int:
        return int(self.status.size)

    def saved(self) -> list[Column]:
        """The held columns a saved state writes."""
        return [c for c in self.held if c.since is not None]

    def nbytes(self) -> int:
        """Bytes of every column (held or not: an unused one is empty)."""
        return sum(self.column(c.name).nbytes for c in SCHEMA)

    def fit(self, top: int) -> None:
        """Make the :data:`NARROW` columns hold values up to ``top`` (a position or cluster
        number): int64 from ``2**31 - 1`` on, once (a state never narrows back)."""
        if top >= _NARROW_TOP and self.rep.data.dtype == np.int32:
            for name in NARROW:
                setattr(self, name, Growable.wrap(self.column(name).view().astype(np.int64)))

    def saved_view(self, c: Column, start: int) -> npt.NDArray[Any]:
        """Rows ``start..`` of column ``c`` with its :data:`SCHEMA` dtype (no copy unless
        narrowed in memory)."""
        return self.column(c.name).view()[start:].astype(c.dtype, copy=False)

    def truncate(self, rows: int) -> None:
        """Forget the rows from ``rows`` on (a dry run's undo)."""
        for c in SCHEMA:
            g = self.column(c.name)
            g.size = min(g.size, rows)

    def grow(self, fps: npt.NDArray[Any], keys: list[int], ts: npt.NDArray[Any]) -> None:
        """Rows for documents not decided yet (fingerprints, exact keys, timestamps; the
        similarities come with :meth:`settle`)."""
        n = len(fps)
        for c in self.held:
            if c.name not in ("fps", "key_hi", "key_lo", "ts", *_SETTLED):
                self.column(c.name).extend(np.full(n, c.new, c.dtype))
        if self.holds("ts"):
            self.ts.extend(ts)
        self.fps.extend(fps)
        k = np.array(keys, dtype=object)
        self.key_hi.extend((k >> 64).astype(np.uint64) if n else [])
        self.key_lo.extend((k & ((1 << 64) - 1)).astype(np.uint64) if n else [])

    def settle(self, start: int, similarity: npt.NDArray[Any], threshold: npt.NDArray[Any]) -> None:
        """The similarity that decided rows ``start..`` and its threshold, appended once they
        are decided (:meth:`grow` leaves these columns short: a spill file is append-only)."""
        for g, values in ((self.similarity, similarity), (self.threshold, threshold)):
            assert g.size == start, (g.size, start)
            g.extend(values)

    def take(self, arrays: dict[str, npt.NDArray[Any]], rows: int, where: str, at: str) -> None:
        """Append ``rows`` rows of ``arrays`` (named as :data:`SCHEMA`; wrapped, not copied,
        into an empty state), checked; a column not required and absent gets new rows' value.
        ``at`` names the rows in an error (``"positions 0..9"``)."""
        empty = self.rows == 0
        for c in self.held:
            got = arrays.get(c.name)
            if got is None and c.required and c.since is not None:
                raise StateFormatError(f"{where}: {c.name}.npy is missing; restore it")
            values = np.full(rows, c.new, c.dtype) if got is None else got
            if values.shape != (rows,):
                raise StateFormatError(
                    f"{where}: {c.name}.npy has shape {values.shape}, the state holds "
                    f"{at}; restore it or start a new state"
                )
            if c.name in NARROW and values.size:
                self.fit(int(values.max()))
            g = self.column(c.name)
            if empty:
                g.data, g.size = np.asarray(values, g.data.dtype), rows
            else:
                g.extend(values)

    def public(self, rows: slice, positions: npt.NDArray[np.int64]) -> dict[str, np.ndarray]:
        """Rows ``rows`` as the public columns of :meth:`DedupState.columns` (no ids, no
        sketches), in the order the service stores them."""
        rep, flags = self.rep.view()[rows].astype(np.int64), self.flags.view()[rows]

        def copy(name: str) -> np.ndarray:
            return np.array(self.column(name).view()[rows], _DTYPES[name])

        timed = self.holds("ts")
        return {
            "position": positions,
            "timestamp": copy("ts") if timed else np.full(positions.size, np.nan),
            **{PUBLIC[n]: copy(n) for n in ("fps", "key_hi", "key_lo", "status")},
            "duplicate_of": np.where(rep == positions, -1, rep),
            **{PUBLIC[n]: copy(n) for n in ("distance", "cluster")},
            "searched": (flags & SEARCHED) != 0,
            "forgotten": (flags & FORGOTTEN) != 0,
            **{PUBLIC[n]: copy(n) for n in ("similarity", "threshold")},
        }


def internal(columns: dict[str, np.ndarray]) -> dict[str, npt.NDArray[Any]]:
    """:meth:`DocColumns.public` columns back as :data:`SCHEMA` arrays (``floor``: 1, lowered
    by :func:`lower_floors`; ``similarity`` and ``threshold`` optional: columns of before
    issue 38 lack them)."""
    pos = np.asarray(columns["position"], np.int64)
    dup = np.asarray(columns["duplicate_of"], np.int64)
    flags = np.asarray(columns["searched"], bool) * SEARCHED
    flags += np.asarray(columns["forgotten"], bool) * FORGOTTEN
    out = {n: np.array(columns[p], _DTYPES[n]) for n, p in PUBLIC.items() if p in columns}
    out["rep"] = np.where(dup < 0, pos, dup)
    out["flags"] = flags.astype(np.int8)
    out["ts"] = np.array(columns["timestamp"], np.float64)
    out["floor"] = np.ones(pos.size, _DTYPES["floor"])  # lowered from similarities after
    return out


def rebuild_exact(cols: DocColumns, origin: int, horizon: float) -> ExactMap:
    """For each key, the last searched document, unless it (or its kept one) is forgotten
    or expired (what the live map holds after pruning)."""
    flags, rep, o = cols.flags.view(), cols.rep.view(), origin
    rows = np.flatnonzero((flags & SEARCHED) != 0)
    ex = ExactMap.from_arrays(cols.key_hi.view()[rows], cols.key_lo.view()[rows], rows + o)
    at = ex.positions() - o
    dropped = rep[at] < o  # its kept document left the saved state: expired
    kept_at = np.where(dropped, 0, rep[at] - o)
    bad = dropped | (((flags[at] | flags[kept_at]) & FORGOTTEN) != 0)
    if cols.holds("ts"):
        bad |= np.floor(cols.ts.view()[kept_at]) < horizon
    ex.drop(bad)
    return ex


def live_kept(cols: DocColumns, horizon: float) -> tuple[npt.NDArray[np.int64], Any]:
    """Rows of the kept documents neither forgotten nor expired, and their whole-second
    timestamps (None without a window): what a rebuilt candidate index holds."""
    flags = cols.flags.view()
    keep = (cols.status.view() == UNIQUE) & ((flags & FORGOTTEN) == 0)
    timed = cols.holds("ts")
    if timed:
        whole = np.floor(cols.ts.view())
        keep &= whole >= horizon
    rows = np.flatnonzero(keep)
    return rows, whole[rows].astype(np.int64) if timed else None


def lower_floors(cols: DocColumns, rows: slice, origin: int) -> None:
    """``floor`` of the kept documents that the duplicates of ``rows`` joined, from their
    similarities (state columns appended without deciding them again)."""
    if not cols.holds("floor"):
        return
    status, rep = cols.status.view()[rows], cols.rep.view()[rows]
    sim = cols.similarity.view()[rows]
    dup = (status == DUPLICATE) & ~np.isnan(sim) & (rep >= origin)
    rounded = [round(x, 4) for x in sim[dup].tolist()]  # as greedy.decide_in_order reads
    np.minimum.at(cols.floor.writable(), rep[dup] - origin, np.asarray(rounded))


def check_config(config_id: str, config: dict[str, Any], meta: Any, where: str) -> None:
    """Refuse a state of another configuration than ``config_id`` (``config``: its settings):
    ``meta`` holds the saved ``config_id`` and ``config``; the error names both ids and the
    settings that differ."""
    saved_id, saved = meta.get("config_id"), meta.get("config")
    if saved_id != config_id:
        differ = config_difference(saved, config) if saved else ""
        differ = differ or "fingerprinter, k, candidates, verifier, window, keep or rule differ"
        older = older_cluster_rule(differ, saved_id, where, "a new state directory")
        if older is not None:  # a state of the rule's version 1 (module greedy)
            raise StateConfigError(older)
        raise StateConfigError(
            f"{where} holds a dedup state of config {saved_id}, but this run's config is "
            f"{config_id} ({differ}); run with the options the state was made with "
            "(the library: Deduplicator.load(path) without config= takes them from the state), "
            "or use a new state directory"
        )


def json_column(texts: list[str]) -> JsonColumn:
    """External ids given as JSON texts, checked (orjson; the stdlib for lone surrogates, which
    our writer escapes) and stored as they are."""
    blobs = [t.encode("utf-8", "surrogatepass") for t in texts]
    for blob in blobs:
        try:
            orjson.loads(blob)
        except orjson.JSONDecodeError:
            json.loads(blob)  # raises ValueError naming the problem when it is not JSON
    offsets = np.zeros(len(blobs) + 1, np.int64)
    np.cumsum([len(b) for b in blobs], out=offsets[1:])
    return JsonColumn(np.frombuffer(b"".join(blobs), np.uint8).copy(), offsets)
