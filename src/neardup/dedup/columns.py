"""The dedup state as columns, and what changes it besides deciding: forget, expiry, dry runs.

One column schema (what the service stores in SQLite, one row per document):
:meth:`Deduplicator.state_columns` / :meth:`Deduplicator.from_state_columns` with
``position, id?, timestamp, fingerprint, sketch?, exact_key_hi, exact_key_lo, status,
duplicate_of, distance, cluster_id, searched, forgotten, similarity, threshold`` (the last two
optional on read: NaN, unknown). ``searched`` marks documents that
went through the candidate search (step 3 of the rule), from which the exact-text map is
rebuilt: for each key, the last searched document. :attr:`Deduplicator.config_id` identifies
what decides (fingerprinter, k, candidate design, verifier, window, keep).

Time window and expiry (the exact rule). Let ``M`` be the newest timestamp seen. A kept document
``r`` with ``t_r < M - window`` can never match a later document ``i`` with ``t_i >= M``
(``t_i - t_r > window``), so after each chunk the kept documents with
``floor(t_r) < horizon = floor(M - window)`` leave the candidate index, their sketches leave
the saved state, and exact-map entries whose kept document expired are pruned: for such an
``i`` a pruned entry and a present one lead to the same decision (the window check of the exact
path fails either way and the document is searched). With ``keep='first'`` the rule itself
reads the horizon per document (:func:`neardup.dedup.greedy.horizons`, the newest timestamp up
to it in input order): a kept document older than it never matches, in :meth:`run`, in
:meth:`feed` with any chunking and in the Spark engine alike. A document is *late* when
``t_i < h_i`` (older than the newest minus the window); late documents are counted
(``describe()["late_documents"]``; both CLI engines print the count). Input in time order has
none. When a state with a window is saved,
the per-document rows before ``origin`` leave it too: ``origin`` is the first position a later
decision can read (the kept documents still in the index, the exact-map entries and their kept
documents), so a long stream keeps about one window of rows. Positions stay global;
``decisions()`` and ``state_columns()`` of a loaded state start at ``state_meta()["origin"]``.
Without a window nothing expires and every row stays.

``forget(positions)``: a deleted document stops attracting duplicates: it leaves the candidate
index, and the exact-map entries that point to it (or to a duplicate of it) are dropped, so a
later copy of its text is searched like a new text. Its cluster keeps its members and their
decisions; the row stays, marked ``forgotten``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import orjson

from neardup._growable import Growable
from neardup._params import config_difference, older_cluster_rule
from neardup._persist import JsonColumn
from neardup._spill import SpillGrowable
from neardup.dedup.exact_map import ExactMap
from neardup.dedup.state import DUPLICATE, UNIQUE
from neardup.errors import ConfigMismatchError, DamagedFileError

if TYPE_CHECKING:
    from neardup.dedup.candidates import CandidateIndex

SEARCHED, FORGOTTEN = 1, 2  # bits of the per-document flags


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


class StateColumns:
    """Columns, expiry, dry-run undo and forgetting of a
    :class:`~neardup.dedup.dedup_state.DedupState` (module docs)."""

    if TYPE_CHECKING:  # attributes of the DedupState this mixin works on
        window: float | None
        verifier: Any
        candidates: CandidateIndex
        rep: Growable
        dist: Growable
        cluster: Growable
        status: Growable
        ts: Growable
        fps: Growable
        slot: Growable
        sketches: SpillGrowable | None
        key_hi: Growable
        key_lo: Growable
        flags: Growable
        sim: Growable
        need: Growable
        floor: Growable
        core: Any
        exact: ExactMap
        ids: JsonColumn | None
        n_clusters: int
        origin: int
        max_ts: float
        horizon: float
        late: int
        pruned_at: int
        unindexed: npt.NDArray[np.int64] | None

        @property
        def n_documents(self) -> int: ...

        def expire(self) -> None: ...

    def external_id(self, position: int) -> Any:
        """The id given for the document at ``position`` (its position when none was)."""
        row = position - self.origin
        if self.ids is None or not 0 <= row < len(self.ids):
            return position
        return self.ids[row]

    def named_columns(self) -> dict[str, Growable]:
        """The saved per-document columns by name (plus ``ts`` with a window)."""
        named = {
            "fps": self.fps,
            "rep": self.rep,
            "distance": self.dist,
            "cluster": self.cluster,
            "status": self.status,
            "key_hi": self.key_hi,
            "key_lo": self.key_lo,
            "flags": self.flags,
        }
        if self.window is not None:
            named["ts"] = self.ts
        if self.core.cluster_similarity is not None:
            named["floor"] = self.floor
        return named

    def per_document(self) -> list[Growable]:
        """Every per-document column (for sizes and a dry run's undo)."""
        columns = [*self.named_columns().values(), self.ts, self.slot, self.sim, self.need]
        return columns if "floor" in self.named_columns() else [*columns, self.floor]

    def truncate(self, n: int) -> None:
        """Forget the rows from position ``n`` on (a dry run's undo)."""
        for g in self.per_document():
            g.size = min(g.size, n - self.origin)

    def index_unindexed(self) -> None:
        """Put the documents kept by a batch ``resolve()`` into the candidate index."""
        pos, self.unindexed = self.unindexed, None
        if pos is None or not pos.size:
            return
        rows, sk, ts = pos - self.origin, None, None
        if self.sketches is not None:
            sk = self.sketches.take(self.slot.view()[rows])
        if self.window is not None:
            ts = np.floor(self.ts.view()[rows]).astype(np.int64)
        self.candidates.add(pos, self.fps.view()[rows], sk, ts)
        self.expire()

    def prune_exact(self, force: bool = False) -> None:
        """Drop exact-map entries whose kept document expired (amortised: when it doubled)."""
        ex = self.exact
        floor = self.pruned_at
        if self.window is None or (not force and len(ex) < max(2 * floor, 65536)):
            return
        o = self.origin
        pos = ex.positions()
        ex.drop(np.floor(self.ts.view()[self.rep.view()[pos - o] - o]) < self.horizon)
        self.pruned_at = len(ex)

    def forget(self, positions: npt.ArrayLike) -> int:
        """Deleted documents stop attracting duplicates (see the module docs); returns how many
        left the candidate index.

        >>> from neardup import Deduplicator
        >>> dd = Deduplicator()
        >>> _ = dd.feed(["storm hits the coast tonight"])
        >>> dd.forget([0]), dd.feed(["storm hits the coast tonight"]).statuses
        (1, ['unique'])
        """
        pos = np.unique(np.asarray(positions, np.int64).ravel())
        if pos.size and (pos[0] < 0 or pos[-1] >= self.n_documents):
            bad = int(pos[0] if pos[0] < 0 else pos[-1])
            raise ValueError(
                f"position {bad} is not a decided document (0..{self.n_documents - 1}); "
                "pass positions from Decisions.position"
            )
        o = self.origin
        pos = pos[pos >= o]  # rows dropped from a saved state attract nothing already
        self.index_unindexed()
        removed = self.candidates.remove(pos)
        self.flags.writable()[pos - o] |= FORGOTTEN
        ex = self.exact
        if pos.size and len(ex):
            targets = ex.positions()
            ex.drop(np.isin(targets, pos) | np.isin(self.rep.view()[targets - o], pos))
        return int(removed)

    def state_columns(self, start: int = 0, stop: int | None = None) -> dict[str, np.ndarray]:
        """Rows ``start:stop`` of the per-document state as named columns (module docs).

        ``id`` holds each external id as JSON text (only when ids were given); ``sketch`` the
        verifier sketch of kept documents (zeros for others; only with a verifier).
        """
        n, o = self.n_documents, self.origin
        start = max(start, o)
        stop = n if stop is None else max(min(stop, n), start)
        rows = slice(start - o, stop - o)
        positions = np.arange(start, stop, dtype=np.int64)
        rep = self.rep.view()[rows]
        flags = self.flags.view()[rows]
        cols: dict[str, np.ndarray] = {
            "position": positions,
            "timestamp": (
                self.ts.view()[rows].copy()
                if self.window is not None
                else np.full(positions.size, np.nan)
            ),
            "fingerprint": self.fps.view()[rows].copy(),
            "exact_key_hi": self.key_hi.view()[rows].copy(),
            "exact_key_lo": self.key_lo.view()[rows].copy(),
            "status": self.status.view()[rows].copy(),
            "duplicate_of": np.where(rep == positions, -1, rep),
            "distance": self.dist.view()[rows].copy(),
            "cluster_id": self.cluster.view()[rows].copy(),
            "searched": (flags & SEARCHED) != 0,
            "forgotten": (flags & FORGOTTEN) != 0,
            "similarity": self.sim.view()[rows].copy(),
            "threshold": self.need.view()[rows].copy(),
        }
        if self.sketches is not None:
            slot = self.slot.view()[rows]
            sk = np.zeros((positions.size, self.sketches.data.shape[1]), self.sketches.data.dtype)
            sk[slot >= 0] = self.sketches.take(slot[slot >= 0])
            cols["sketch"] = sk
        if self.ids is not None:
            data, off = self.ids.arrays()
            raw, ends = bytes(data), off.tolist()
            cols["id"] = np.array(
                [raw[ends[i] : ends[i + 1]].decode() for i in range(start - o, stop - o)],
                dtype=object,
            )
        return cols

    def fill(self, arrays: dict[str, npt.NDArray[Any]], meta: dict[str, Any]) -> None:
        """Per-document columns (wrapped, copied on first write) and counters."""
        self.origin = int(meta.get("origin", 0))
        for name, g in self.named_columns().items():
            g.data, g.size = arrays[name], int(arrays[name].shape[0])
        rows = self.status.size
        if self.verifier is not None:
            self.slot.data, self.slot.size = np.full(rows, -1, np.int64), rows
        # the similarity that decided and its threshold (saved since issue 38; NaN: unknown,
        # older states)
        for column, name in ((self.sim, "similarity"), (self.need, "threshold")):
            got = arrays.get(name)
            column.data = np.full(rows, np.nan) if got is None else np.asarray(got, np.float64)
            column.size = rows
        self.n_clusters = int(meta["clusters"])
        self.max_ts = _number(meta.get("max_timestamp"))
        self.horizon = _number(meta.get("horizon"))
        self.late = int(meta.get("late_documents", 0))

    def set_sketches(self, positions: npt.NDArray[np.int64], sketches: npt.NDArray[Any]) -> None:
        self.sketches = SpillGrowable.wrap(sketches)
        self.slot.writable()[positions - self.origin] = np.arange(positions.size)

    def rebuild_exact(self) -> None:
        """For each key, the last searched document, unless it (or its kept one) is forgotten
        or expired (what the live map holds after pruning)."""
        flags, rep, o = self.flags.view(), self.rep.view(), self.origin
        rows = np.flatnonzero((flags & SEARCHED) != 0)
        ex = ExactMap.from_arrays(self.key_hi.view()[rows], self.key_lo.view()[rows], rows + o)
        at = ex.positions() - o
        dropped = rep[at] < o  # its kept document left the saved state: expired
        kept_at = np.where(dropped, 0, rep[at] - o)
        bad = dropped | (((flags[at] | flags[kept_at]) & FORGOTTEN) != 0)
        if self.window is not None:
            bad |= np.floor(self.ts.view()[kept_at]) < self.horizon
        ex.drop(bad)
        self.exact = ex

    def rebuild_candidates(self) -> None:
        """Kept documents neither forgotten nor expired, into an empty candidate index."""
        flags = self.flags.view()
        keep = (self.status.view() == UNIQUE) & ((flags & FORGOTTEN) == 0)
        ts = None
        if self.window is not None:
            whole = np.floor(self.ts.view())
            keep &= whole >= self.horizon
        rows = np.flatnonzero(keep)
        if self.window is not None:
            ts = whole[rows].astype(np.int64)
        sk = None if self.sketches is None else self.sketches.take(self.slot.view()[rows])
        if rows.size:
            self.candidates.add(rows + self.origin, self.fps.view()[rows], sk, ts)

    def lower_floors(self, rows: slice) -> None:
        """``floor`` of the kept documents that the duplicates of ``rows`` joined, from their
        similarities (state columns appended without deciding them again)."""
        if self.core.cluster_similarity is None:
            return
        status, rep = self.status.view()[rows], self.rep.view()[rows]
        sim = self.sim.view()[rows]
        dup = (status == DUPLICATE) & ~np.isnan(sim) & (rep >= self.origin)
        rounded = [round(x, 4) for x in sim[dup].tolist()]  # as greedy.decide_in_order reads
        np.minimum.at(self.floor.writable(), rep[dup] - self.origin, np.asarray(rounded))

    def counters(self) -> dict[str, Any]:
        """The counters that go with :meth:`state_columns` (JSON-able)."""
        return {
            "documents": self.n_documents,
            "origin": self.origin,
            "clusters": self.n_clusters,
            "max_timestamp": _finite(self.max_ts),
            "horizon": _finite(self.horizon),
            "late_documents": self.late,
        }

    def load_columns(self, columns: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Fill this empty state from :meth:`state_columns` (all rows: positions
        ``meta["origin"]``..n-1) and ``meta``."""
        n, o = int(meta["documents"]), int(meta.get("origin", 0))
        if not np.array_equal(columns["position"], np.arange(o, n)):
            raise ValueError(f"state columns must hold positions {o}..{n - 1}, in order")
        pos = columns["position"]
        dup = np.asarray(columns["duplicate_of"], np.int64)
        self.fill(
            {
                "fps": np.asarray(columns["fingerprint"], np.uint64),
                "rep": np.where(dup < 0, pos, dup),
                "distance": np.asarray(columns["distance"], np.int16),
                "cluster": np.asarray(columns["cluster_id"], np.int64),
                "status": np.asarray(columns["status"], np.int8),
                "key_hi": np.asarray(columns["exact_key_hi"], np.uint64),
                "key_lo": np.asarray(columns["exact_key_lo"], np.uint64),
                "flags": (
                    np.asarray(columns["searched"], bool) * SEARCHED
                    + np.asarray(columns["forgotten"], bool) * FORGOTTEN
                ).astype(np.int8),
                "ts": np.asarray(columns["timestamp"], np.float64),
                "floor": np.ones(n - o, np.float32),
            },
            meta,
        )
        if "threshold" in columns:  # optional: columns of before issue 38 lack it (NaN)
            self.need.data = np.asarray(columns["threshold"], np.float64).copy()
        if "similarity" in columns:
            self.sim.data = np.asarray(columns["similarity"], np.float64).copy()
            self.lower_floors(slice(0, n - o))
        self.rebuild_exact()
        if self.verifier is not None and "sketch" in columns:
            kept = np.flatnonzero(np.asarray(columns["status"]) == UNIQUE)
            self.set_sketches(kept + o, np.asarray(columns["sketch"])[kept])
        self.rebuild_candidates()
        if "id" in columns:
            self.ids = _json_column(columns["id"].tolist())


def check_config(config: Any, saved_id: Any, where: str, saved: Any = None) -> None:
    """Refuse a state of another configuration, naming both ids and (``saved``: the saved
    :meth:`~neardup.Deduplicator.state_config`) the settings that differ."""
    if saved_id != config.config_id:
        differ = config_difference(saved, config.state_config()) if saved else ""
        differ = differ or "fingerprinter, k, candidates, verifier, window, keep or rule differ"
        older = older_cluster_rule(differ, saved_id, where, "a new state directory")
        if older is not None:  # a state of the rule's version 1 (module greedy)
            raise StateConfigError(older)
        raise StateConfigError(
            f"{where} holds a dedup state of config {saved_id}, but this run's config is "
            f"{config.config_id} ({differ}); run with the options the state was made with "
            "(the library: Deduplicator.load(path) without config= takes them from the state), "
            "or use a new state directory"
        )


def _json_column(texts: list[str]) -> JsonColumn:
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


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _number(x: Any) -> float:
    return -np.inf if x is None else float(x)
