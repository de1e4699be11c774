"""The one state of a :class:`~neardup.Deduplicator`: what it has decided and what it searches.

:class:`DedupState` (``dd.state``) holds the per-document columns (:class:`~neardup.dedup.
columns.DocColumns`, built from the schema table :data:`~neardup.dedup.columns.SCHEMA`), the
exact-text map, the candidate index, the sketches of kept documents, the external ids and the
counters, and the configuration's identity (:attr:`DedupState.config_id`). It runs the decision
core's step (:func:`neardup.dedup.core.decide_batch`) on itself (:meth:`DedupState.decide`,
:meth:`DedupState.resolve`), and is what a saved state, the service's SQLite rows and a snapshot
hold; rows decided earlier enter it one way (:meth:`DedupState.take_rows`: from a saved bundle
or from :meth:`DedupState.columns` through :meth:`DedupState.restore`). The
:class:`~neardup.Deduplicator` facade owns the configuration and the calls users make; it holds
one ``DedupState`` and a fresh one per :meth:`~neardup.Deduplicator.replace`. The state's
methods that read or change it hold its own lock (:data:`LOCKED`), so a service may call them
from several threads.

>>> from neardup import Deduplicator
>>> dd = Deduplicator()
>>> _ = dd.feed(["storm hits the coast tonight", "storm hits the coast tonight"])
>>> state = dd.state
>>> state.n_documents, state.n_clusters, state.decisions().statuses
(2, 1, ['unique', 'exact_duplicate'])
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._heap import release_heap
from neardup._persist import JsonColumn
from neardup._spill import SpillGrowable
from neardup._threads import thread_safe
from neardup.dedup.budget import PAIR_BUDGET, budget_cuts
from neardup.dedup.candidates import BandCandidates, CandidateIndex
from neardup.dedup.columns import (
    FORGOTTEN,
    MAX_SLOTS,
    SEARCHED,
    DocColumns,
    StateFormatError,
    check_config,
    internal,
    json_column,
    live_kept,
    lower_floors,
    rebuild_exact,
)
from neardup.dedup.core import DecideConfig, StateView, decide_batch, processing_order
from neardup.dedup.decisions import (
    DUPLICATE,
    EMPTY,
    UNIQUE,
    Decisions,
    PreparedBatch,
    concat_batches,
    slice_batch,
    take_batch,
)
from neardup.dedup.exact_map import ExactMap
from neardup.dedup.greedy import Considered, Ledger, horizons
from neardup.dedup.rerun import NEW, IdPositions, merge_repeats, repeats
from neardup.dedup.similarity import decided_evidence

__all__ = ["LOCKED", "DedupState"]

# documents decided between two trims of the C heap: a chunk's temporaries below glibc's mmap
# threshold stay resident in its heap otherwise (issue 39: -19.5 B/doc of peak RSS at 10^6,
# ~1 ms a trim); the service's single-document feeds trim once per this many, not each time
TRIM_DOCS = 1 << 14

# DedupState methods that hold the state's lock (neardup._threads): all that read or change it
LOCKED = (
    "decide",
    "collect",
    "resolve",
    "restore",
    "decisions",
    "forget",
    "columns",
    "meta",
    "external_id",
    "shared_ids",
    "exact_keys",
)


@thread_safe(*LOCKED)  # one call at a time, each whole (neardup._threads)
class DedupState:
    """Per-document columns, exact map, candidate index, sketches, ids and counters of one
    Deduplicator (module docs); ``decide_config`` is the decide step's configuration and
    ``identity`` the configuration's JSON (:attr:`config_id`)."""

    def __init__(
        self,
        decide_config: DecideConfig,
        candidates: CandidateIndex,
        verifier: Any,
        identity: str,
        pair_budget: int = PAIR_BUDGET,
    ) -> None:
        self.decide_config = decide_config
        self.keep = decide_config.keep
        self.window = decide_config.window
        self.verifier = verifier
        self.candidates = candidates
        self.identity = identity
        self.pair_budget = pair_budget  # candidate pairs per streaming part (dedup/budget.py)
        tight = decide_config.cluster_similarity is not None
        self.cols = DocColumns(
            timed=self.window is not None, tight=tight, sketched=verifier is not None
        )
        if isinstance(candidates, BandCandidates):  # no copy of the kept fingerprints there
            candidates.read_fingerprints(self._fingerprints_at)
        # read only for verified candidates: moves to a spill file past 64 MiB (issue 39)
        self.sketches: SpillGrowable | None = None
        self.trace: dict[int, list[Considered]] | None = None  # see greedy.Ledger.trace
        self.exact = ExactMap()
        self.ids: JsonColumn | None = None  # external ids, once any were given
        self.n_clusters = 0
        self.origin = 0  # per-document arrays start at this position (see dedup/columns.py)
        self.max_ts = -np.inf
        self.horizon: float = -np.inf  # kept documents with floor(t) < horizon have expired
        self.late = 0  # documents decided after the kept ones they could match expired
        self.pruned_at = 0  # exact-map size after the last pruning
        self.unindexed: np.ndarray | None = None  # kept by resolve(), not yet in the index
        self.id_positions = IdPositions()  # the rerun rule's id look-up (dedup/rerun.py)
        self.already = 0  # documents fed again (same id and text): not added (not saved)
        self.pending: list[PreparedBatch] = []  # batch chunks collected for resolve()
        self.untrimmed = 0  # documents decided since the heap was last given back

    def _fingerprints_at(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
        """Fingerprints of held documents at ``positions`` (the candidate index's kept ones)."""
        fps: npt.NDArray[np.uint64] = self.cols.fps.view()[positions - self.origin]
        return fps

    @property
    def n_documents(self) -> int:
        """Documents decided so far."""
        return self.origin + self.cols.rows

    @property
    def config_id(self) -> str:
        """Short stable id of :attr:`config`, carried by every saved state.

        >>> from neardup import Deduplicator
        >>> Deduplicator().config_id == Deduplicator().state.config_id
        True
        """
        return "dd1-" + hashlib.sha256(self.identity.encode()).hexdigest()[:16]

    @property
    def config(self) -> dict[str, Any]:
        """What decides the decisions: fingerprints, k, candidate design, verifier, window,
        keep (not speed settings such as ``n_jobs`` or the index design); a fresh dict."""
        return dict(json.loads(self.identity))

    def decide(
        self, chunk: PreparedBatch, ids: Sequence[Any] | None = None, *, commit: bool = True
    ) -> Decisions:
        """Decide ``chunk`` (from :meth:`Deduplicator.prepare`) against this state, in order
        (streaming); ``commit=False`` leaves the state exactly as it was (a dry run). With
        ``ids``, documents already decided (same id and text) get their stored decision and are
        not added (:mod:`neardup.dedup.rerun`). What ``Deduplicator.feed`` does after
        preparing: a service prepares the next chunk while this one is decided.

        >>> from neardup import Deduplicator
        >>> dd = Deduplicator()
        >>> dd.state.decide(dd.prepare(["the cat sat on the mat today"] * 2)).statuses
        ['unique', 'exact_duplicate']
        """
        self.check_streaming()
        if ids is not None and len(ids) != len(chunk.fps):
            raise ValueError(f"got {len(ids)} ids for {len(chunk.fps)} texts")
        if ids is not None and len(ids):
            rep = repeats(ids, chunk.keys, self._held)
            if (rep != NEW).any():
                new = np.flatnonzero(rep == NEW).tolist()
                decided = self._decide_new(take_batch(chunk, new), [ids[i] for i in new], commit)
                self.already += int((rep != NEW).sum()) if commit else 0
                return merge_repeats(rep, decided, self.decisions_at)
        return self._decide_new(chunk, ids, commit)

    def check_streaming(self) -> None:
        """Refuse streaming calls for a batch keep policy or while a batch is collected."""
        if self.keep != "first":
            raise ValueError(
                f"keep={self.keep!r} needs the whole input: use run(), or "
                "keep='first' for streaming"
            )
        if self.pending:
            raise ValueError("this Deduplicator is collecting a batch; call resolve() first")

    def _held(self, ids: list[Any]) -> list[tuple[int, int]]:
        """Per id, the last held (not forgotten) position with it and its exact key (-1, 0)."""
        out = []
        positions = self.id_positions.lookup(self.ids, self.origin, ids)
        for p, key in zip(positions, self.exact_keys(positions), strict=True):
            forgotten = key is not None and self.cols.flags.view()[p - self.origin] & FORGOTTEN
            out.append((-1, 0) if key is None or forgotten else (p, key))
        return out

    def exact_keys(self, positions: Sequence[int]) -> list[int | None]:
        """The exact-text key (xxh3_128 of the normalised text, as an int) of the documents at
        ``positions``; None for one this state no longer holds (what the rerun rule compares:
        :mod:`neardup.dedup.rerun`).

        >>> from neardup import Deduplicator
        >>> dd = Deduplicator()
        >>> _ = dd.feed(["Storm hits the coast", "storm  hits the coast"])
        >>> a, b = dd.state.exact_keys([0, 1]); a == b, dd.state.exact_keys([5])
        (True, [None])
        """
        rows = [p - self.origin for p in positions]
        held = [r for r in rows if 0 <= r < self.cols.rows]
        hi, lo = (self._key_half(name, held) for name in ("key_hi", "key_lo"))
        keys = {r: (h << 64) | x for r, h, x in zip(held, hi, lo, strict=True)}
        return [keys.get(r) for r in rows]

    def _key_half(self, name: str, rows: list[int]) -> list[int]:
        """Rows ``rows`` of the exact-key column ``name`` (read with ``pread`` once spilled)."""
        col = self.cols.column(name)
        at = np.asarray(rows, np.int64)
        got = col.take(at) if isinstance(col, SpillGrowable) else col.view()[at]
        return [int(v) for v in got.tolist()]

    def external_id(self, position: int) -> Any:
        """The id given for the document at ``position`` (its position when none was)."""
        row = position - self.origin
        if self.ids is None or not 0 <= row < len(self.ids):
            return position
        return self.ids[row]

    def _decide_new(
        self, chunk: PreparedBatch, ids: Sequence[Any] | None, commit: bool
    ) -> Decisions:
        """:meth:`decide` of documents not decided before."""
        if commit and (cuts := self.budget_cuts(chunk)):  # hot keys: in parts, same decisions
            base, n = self.n_documents, len(chunk.fps)
            for a, b in pairwise([0, *cuts, n]):
                self._decide_new(slice_batch(chunk, a, b), None if ids is None else ids[a:b], True)
            return self.decisions(base, base + n)
        self.index_unindexed()
        base, n = self.n_documents, len(chunk.fps)
        saved = (self.n_clusters, self.max_ts)
        hz = self._chunk_horizons(chunk)
        self._extend(chunk)
        self.exact.start_log(chunk.keys)  # its keys move into the map's dict
        floor_log: list[tuple[int, float]] = []
        new = self._decide_rows(chunk, np.arange(n), base, streaming=True, hz=hz, log=floor_log)
        self._fill_similarity(base, chunk)
        out = self.decisions(base, base + n)
        if not commit:
            self.exact.undo_log()
            floor = self.cols.floor.writable() if floor_log else None
            for row, old in reversed(floor_log):  # kept documents of earlier calls
                assert floor is not None
                floor[row] = old
            self.cols.truncate(base - self.origin)
            self.n_clusters, self.max_ts = saved
            return out
        self._commit(base, chunk, ids, hz)
        self._index_new(base, new, chunk)
        self._trim(n)
        return out

    def collect(self, chunk: PreparedBatch) -> None:
        """Batch phase 1: keep a prepared chunk for :meth:`resolve`."""
        if self.n_documents:
            raise ValueError(
                "batch mode needs a fresh Deduplicator (this one has streamed documents)"
            )
        self.pending.append(chunk)

    def resolve(self) -> Decisions:
        """Batch phase 2: decide every collected document (an empty state) in keep-policy
        order; returns decisions in input order."""
        chunk = concat_batches(self.pending)
        self.pending = []
        n = len(chunk.fps)
        hz = self._chunk_horizons(chunk)
        self._extend(chunk)
        order = processing_order(self.keep, np.arange(n), chunk.lengths, chunk.ts)
        self.exact.start_log(chunk.keys)  # its keys move into the map's dict
        new = self._decide_rows(chunk, order, 0, streaming=False, hz=hz)
        self._fill_similarity(0, chunk)
        self._commit(0, chunk, None, hz)
        if self.keep == "first":  # later feed() / save() go on from here: index lazily
            self._keep_sketches(np.asarray(new, np.int64), 0, chunk)
            self.unindexed = np.asarray(new, np.int64)
        self._trim(n)
        return self.decisions(0, n)

    def _trim(self, decided: int) -> None:
        """Give the C heap back once per :data:`TRIM_DOCS` decided documents (its reason)."""
        self.untrimmed += decided
        if self.untrimmed >= TRIM_DOCS:
            release_heap()
            self.untrimmed = 0

    # ------------------------------------------------------------------ the one restore path
    def restore(self, columns: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Take rows decided earlier, as :meth:`columns` gives them, without deciding them
        again; ``meta`` is the :meth:`meta` after the last row (its configuration is checked).
        Into an empty state: positions ``meta["origin"]``..``meta["documents"] - 1``; else
        from :attr:`n_documents` on (e.g. a store's rows written after a snapshot): afterwards
        this state is the one that fed those documents. Forgotten rows stay forgotten.

        >>> from neardup import Deduplicator
        >>> a, b = Deduplicator(), Deduplicator()
        >>> _ = a.feed(["storm hits the coast tonight", "cats and dogs", "a third one here"])
        >>> b.state.restore(a.state.columns(0, 3), a.state.meta())
        >>> later = ["storm hits the coast tonight", "cats and dogs!", "new"]
        >>> b.feed(later).statuses == a.feed(later).statuses, b.n_documents
        (True, 6)
        """
        check_config(self.config_id, self.config, meta, "these state columns")
        fresh = self.n_documents == 0
        if not fresh:
            self.check_streaming()
            self.index_unindexed()
        base = int(meta.get("origin", 0)) if fresh else self.n_documents
        stop = int(meta["documents"])
        pos = np.asarray(columns["position"], np.int64)
        if not np.array_equal(pos, np.arange(base, stop)):
            raise ValueError(f"state columns must hold positions {base}..{stop - 1}, in order")
        if fresh:
            self.origin = base
        self.take_rows(internal(columns), meta, "these state columns", fresh=fresh)
        rows = slice(base - self.origin, stop - self.origin)
        lower_floors(self.cols, rows, self.origin)
        sketches = columns.get("sketch") if self.verifier is not None else None
        if fresh:
            self._index_restored(None if sketches is None else np.asarray(sketches))
        else:
            self._index_appended(base, stop, None if sketches is None else np.asarray(sketches))
        if fresh and "id" in columns:  # (appended rows: the store answers their ids)
            self.ids = json_column(columns["id"].tolist())

    def take_rows(
        self, arrays: dict[str, Any], meta: dict[str, Any], where: str, *, fresh: bool
    ) -> None:
        """The one way rows enter a state without being decided (a saved state's arrays, a
        store's columns): :data:`~neardup.dedup.columns.SCHEMA` columns, then the counters
        (``fresh``: into an empty state, whose newest timestamp and horizon are ``meta``'s)."""
        n = int(meta["documents"])
        if not 0 <= self.origin <= n:
            raise StateFormatError(f"{where}: origin {self.origin} is past {n} documents")
        at = f"positions {self.n_documents}..{n - 1}"
        self.cols.take(arrays, n - self.n_documents, where, at)
        self.n_clusters = int(meta["clusters"])
        self.late = int(meta.get("late_documents", 0))
        if fresh:  # appended rows move them as deciding them did (index_appended)
            self.max_ts = _number(meta.get("max_timestamp"))
            self.horizon = _number(meta.get("horizon"))

    def _index_restored(self, sketches: np.ndarray | None) -> None:
        """Exact map and candidate index of a state filled from columns (rebuilt)."""
        self.exact = rebuild_exact(self.cols, self.origin, self.horizon)
        if sketches is not None:
            kept = np.flatnonzero(self.cols.status.view() == UNIQUE)
            self.set_sketches(kept + self.origin, sketches[kept])
        rows, ts = live_kept(self.cols, self.horizon)
        sk = None if self.sketches is None else self.sketches.take(self.cols.slot.view()[rows])
        if rows.size:
            self.candidates.add(rows + self.origin, self.cols.fps.view()[rows], sk, ts)

    def _index_appended(self, base: int, stop: int, sketches: np.ndarray | None) -> None:
        """Exact map and candidate index after rows ``base..stop-1`` were appended: as deciding
        them did (the last searched document of each key, the kept ones indexed)."""
        rows = slice(base - self.origin, stop - self.origin)
        pos = np.arange(base, stop, dtype=np.int64)
        flags, status = self.cols.flags.view()[rows], self.cols.status.view()[rows]
        hi, lo = self.cols.key_hi.view()[rows].tolist(), self.cols.key_lo.view()[rows].tolist()
        keys = [(h << 64) | x for h, x in zip(hi, lo, strict=True)]
        ts = self.cols.ts.view()[rows] if self.window is not None else np.zeros(0)
        if ts.size and not np.isnan(ts).all():
            self.max_ts = max(self.max_ts, float(np.nanmax(ts)))
        searched, forgotten = (flags & SEARCHED) != 0, (flags & FORGOTTEN) != 0
        found = np.array(keys, dtype=object)[searched].tolist()
        self.exact.start_log(found)
        for key, p in zip(found, pos[searched].tolist(), strict=True):
            self.exact[key] = p  # the last searched document of each key, in order
        self.exact.stop_log()
        chunk = PreparedBatch(
            self.cols.fps.view()[rows], status == EMPTY, keys, ts, np.zeros(pos.size, np.int64),
            sketches,
        )  # fmt: skip
        kept = np.flatnonzero((status == UNIQUE) & ~forgotten)
        self._index_new(base, kept.tolist(), chunk)
        if forgotten.any():
            self.forget(pos[forgotten])

    def budget_cuts(self, chunk: PreparedBatch) -> list[int]:
        """Where to cut ``chunk`` so that its pairs stay within the budget (dedup/budget.py)."""
        first: dict[int, int] = {}
        for row in np.flatnonzero(~chunk.empty).tolist():
            first.setdefault(chunk.keys[row], row)  # later copies take the exact path: no pairs
        live = np.fromiter(first.values(), np.int64, len(first))
        if len(live) < 2:
            return []
        keys = self.candidates.keys(chunk.fps[live], _rows(chunk.sketches, live))
        return budget_cuts(keys, live, self.pair_budget)

    def _commit(
        self, base: int, chunk: PreparedBatch, ids: Sequence[Any] | None, hz: np.ndarray | None
    ) -> None:
        """Bookkeeping of a decided chunk: searched flags, late count, external ids."""
        flags = self.cols.flags.view()
        flags[np.asarray(self.exact.stop_log(), np.int64) - self.origin] |= SEARCHED
        if hz is not None:  # late: older than the newest minus the window (greedy.horizons)
            self.late += int((chunk.ts < hz).sum())
        if ids is not None and self.ids is None:
            self.ids = JsonColumn.of(range(self.origin, base))  # earlier ones: positions
        if self.ids is not None:
            self.ids.extend(range(base, base + len(chunk.fps)) if ids is None else ids)

    def _extend(self, chunk: PreparedBatch) -> None:
        self.cols.fit(self.n_documents + len(chunk.fps))  # positions and cluster numbers
        self.cols.grow(chunk.fps, chunk.keys, chunk.ts)
        if chunk.ts.size and not np.isnan(chunk.ts).all():
            self.max_ts = max(self.max_ts, float(np.nanmax(chunk.ts)))

    def _chunk_horizons(self, chunk: PreparedBatch) -> np.ndarray | None:
        """Per document of the chunk, the horizon of :func:`~neardup.dedup.greedy.horizons`
        (``keep='first'`` with a window: the streaming order), from the newest timestamp before
        the chunk; None otherwise. Call it before ``_extend`` moves the newest one."""
        if self.window is None or self.keep != "first":
            return None
        return horizons(chunk.ts, self.window, self.max_ts)

    def _decide_rows(
        self,
        chunk: PreparedBatch,
        order: np.ndarray,
        base: int,
        *,
        streaming: bool,
        hz: np.ndarray | None = None,
        log: list[tuple[int, float]] | None = None,
    ) -> list[int]:
        """The decision core's step (:func:`~neardup.dedup.core.decide_batch`) on this state;
        returns the new kept (local) rows. ``log``: changes of earlier rows' ``floor`` are
        appended to it (a dry run undoes them)."""
        origin = self.origin
        tight = self.decide_config.cluster_similarity is not None
        ledger = Ledger(
            self.cols.rep.writable(),
            self.cols.distance.writable(),
            self.cols.cluster.writable(),
            self.cols.status.writable(),
            self.cols.ts.view(),
            self.exact,
            self.n_clusters,
            self.cols.floor.writable() if tight else None,
            log,
            self.trace,
        )
        view = StateView(
            self.exact,
            lambda pos: self.cols.ts.view()[pos - origin],
            self._kept_sketches,
            self.candidates if streaming else None,
        )
        new = decide_batch(
            self.decide_config, self.candidates, self.verifier, view, ledger, chunk, order,
            base=base, origin=origin, horizon=hz,
        )  # fmt: skip
        self.n_clusters = ledger.n_clusters
        return new

    def _fill_similarity(self, base: int, chunk: PreparedBatch) -> None:
        """The similarity that decided each document of the chunk and the threshold that
        applied (dedup/similarity.py)."""
        rows = slice(base - self.origin, base - self.origin + len(chunk.fps))
        status, sk = self.cols.status.view()[rows], chunk.sketches
        rep_sk = None
        if sk is not None and self.verifier is not None:
            dup = np.flatnonzero(status == DUPLICATE)
            r = self.cols.rep.view()[rows][dup]
            rep_sk = np.zeros_like(sk)
            inside = r >= base
            rep_sk[dup[inside]] = sk[r[inside] - base]
            if (~inside).any():  # kept in earlier chunks: their sketches are in the state
                slot = self.cols.slot.view()[r[~inside] - self.origin]
                known = slot >= 0  # (a kept document expired before a reload has none)
                assert self.sketches is not None
                rep_sk[dup[~inside][known]] = self.sketches.take(slot[known])
        sim, need = decided_evidence(
            self.verifier, status, self.cols.distance.view()[rows], sk, rep_sk
        )
        if rep_sk is not None and (~inside).any():
            sim[dup[~inside][~known]] = need[dup[~inside][~known]] = np.nan
        self.cols.settle(rows.start, sim, need)

    def _kept_sketches(self, pos: np.ndarray) -> np.ndarray:
        assert self.sketches is not None
        rows: np.ndarray = self.sketches.take(self.cols.slot.view()[pos - self.origin])
        return rows

    def _index_new(self, base: int, new: list[int], chunk: PreparedBatch) -> None:
        local = np.asarray(new, dtype=np.int64)
        if local.size:
            # the index keeps whole seconds; flooring only ever keeps entries a little longer
            ts = np.floor(chunk.ts[local]).astype(np.int64) if self.window is not None else None
            self.candidates.add(local + base, chunk.fps[local], _rows(chunk.sketches, local), ts)
            self._keep_sketches(local, base, chunk)
        self._expire()

    def _keep_sketches(self, local: np.ndarray, base: int, chunk: PreparedBatch) -> None:
        if chunk.sketches is not None and local.size:
            if self.sketches is None:
                self.sketches = SpillGrowable(chunk.sketches.dtype, chunk.sketches.shape[1])
            rows = local + base - self.origin
            if self.sketches.size + local.size > MAX_SLOTS:
                raise MemoryError(
                    f"more than {MAX_SLOTS} kept documents with sketches in one state: split "
                    "the stream (a window, or one state per shard)"
                )
            self.cols.slot.writable()[rows] = np.arange(local.size) + self.sketches.size
            self.sketches.extend(chunk.sketches[local])

    def _expire(self) -> None:
        """Drop kept documents that no in-order later document can match (see persist.py)."""
        if self.window is not None and np.isfinite(self.max_ts):
            horizon = int(np.floor(self.max_ts - self.window))
            if horizon > self.horizon:
                self.horizon = horizon
                self.candidates.expire(horizon)
                self.prune_exact()

    def decisions(self, start: int | None = None, stop: int | None = None) -> Decisions:
        """Decisions of the documents at positions ``start:stop`` (default: every one held, in
        input order: from :attr:`origin` on for a loaded state with a window)."""
        start = self.origin if start is None else start
        stop = self.n_documents if stop is None else stop
        return self.decisions_at(np.arange(start, stop, dtype=np.int64))

    def decisions_at(self, positions: npt.NDArray[np.int64]) -> Decisions:
        """The decisions of held documents at ``positions`` (copies)."""
        rows = positions - self.origin
        rep = self.cols.rep.view()[rows].astype(np.int64)  # int32 in memory (columns.NARROW)
        return Decisions(
            positions,
            self.cols.fps.view()[rows],
            self.cols.status.view()[rows],
            np.where(rep == positions, -1, rep),
            self.cols.distance.view()[rows],
            self.cols.cluster.view()[rows].astype(np.int64),
            self.cols.similarity.view()[rows].astype(np.float64),
            self.cols.threshold.view()[rows].astype(np.float64),
        )

    def shared_ids(self, ids: Iterable[Any], before: int) -> list[Any]:
        """The distinct values of ``ids`` that a document before position ``before`` also has
        (among the rows still held: with a window, expired documents are not kept).

        >>> from neardup import Deduplicator
        >>> dd = Deduplicator()
        >>> _ = dd.feed(["one text", "another one", "a third"], ids=["a", "b", "a"])
        >>> dd.state.shared_ids(["a", "z"], 2), dd.state.shared_ids(["a", "z"], 0)
        (['a'], [])
        """
        if self.ids is None:
            return []
        return self.ids.shared(ids, max(0, before - self.origin))

    def new_origin(self, kept: npt.NDArray[np.int64]) -> int:
        """With a window, the first position a later decision can read: kept documents still
        in the index, exact-map entries and their kept documents. The rows before it (expired
        documents) are not saved."""
        if self.window is None:
            return self.origin
        first = [self.n_documents]
        if kept.size:
            first.append(int(kept.min()))
        if len(self.exact):
            at = self.exact.positions()
            first += [int(at.min()), int(self.cols.rep.view()[at - self.origin].min())]
        return max(self.origin, min(first))

    # ------------------------------------------------------------------ columns and upkeep
    def columns(self, start: int = 0, stop: int | None = None) -> dict[str, np.ndarray]:
        """Rows ``start:stop`` of the per-document state as named columns (dedup/columns.py;
        from :attr:`origin` on).

        ``id`` holds each external id as JSON text (only when ids were given); ``sketch`` the
        verifier sketch of kept documents (zeros for others; only with a verifier).
        """
        n, o = self.n_documents, self.origin
        start = max(start, o)
        stop = n if stop is None else max(min(stop, n), start)
        rows = slice(start - o, stop - o)
        cols = self.cols.public(rows, np.arange(start, stop, dtype=np.int64))
        if self.sketches is not None:
            slot = self.cols.slot.view()[rows]
            sk = np.zeros((slot.size, self.sketches.data.shape[1]), self.sketches.data.dtype)
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

    def counters(self) -> dict[str, Any]:
        """The counters that go with :meth:`columns` (JSON-able)."""
        return {
            "documents": self.n_documents,
            "origin": self.origin,
            "clusters": self.n_clusters,
            "max_timestamp": _finite(self.max_ts),
            "horizon": _finite(self.horizon),
            "late_documents": self.late,
        }

    def meta(self) -> dict[str, Any]:
        """The config and counters that go with :meth:`columns` (JSON-able)."""
        return {"config_id": self.config_id, "config": self.config, **self.counters()}

    def set_sketches(self, positions: npt.NDArray[np.int64], sketches: npt.NDArray[Any]) -> None:
        self.sketches = SpillGrowable.wrap(sketches)
        self.cols.slot.writable()[positions - self.origin] = np.arange(positions.size)

    def index_unindexed(self) -> None:
        """Put the documents kept by a batch ``resolve()`` into the candidate index."""
        pos, self.unindexed = self.unindexed, None
        if pos is None or not pos.size:
            return
        rows, sk, ts = pos - self.origin, None, None
        if self.sketches is not None:
            sk = self.sketches.take(self.cols.slot.view()[rows])
        if self.window is not None:
            ts = np.floor(self.cols.ts.view()[rows]).astype(np.int64)
        self.candidates.add(pos, self.cols.fps.view()[rows], sk, ts)
        self._expire()

    def prune_exact(self, force: bool = False) -> None:
        """Drop exact-map entries whose kept document expired (amortised: when it doubled)."""
        ex = self.exact
        floor = self.pruned_at
        if self.window is None or (not force and len(ex) < max(2 * floor, 65536)):
            return
        o, rep = self.origin, self.cols.rep.view()
        pos = ex.positions()
        ex.drop(np.floor(self.cols.ts.view()[rep[pos - o] - o]) < self.horizon)
        self.pruned_at = len(ex)

    def forget(self, positions: npt.ArrayLike) -> int:
        """Deleted documents stop attracting duplicates (dedup/columns.py); returns how many
        left the candidate index.

        >>> from neardup import Deduplicator
        >>> dd = Deduplicator()
        >>> _ = dd.feed(["storm hits the coast tonight"])
        >>> dd.state.forget([0]), dd.feed(["storm hits the coast tonight"]).statuses
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
        self.cols.flags.writable()[pos - o] |= FORGOTTEN
        ex = self.exact
        if pos.size and len(ex):
            targets = ex.positions()
            ex.drop(np.isin(targets, pos) | np.isin(self.cols.rep.view()[targets - o], pos))
        return int(removed)


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _number(x: Any) -> float:
    return -np.inf if x is None else float(x)


def _rows(sketches: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if sketches is None else sketches[rows]
