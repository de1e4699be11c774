"""The dedup pipeline: documents in, decisions out (unique, duplicate, exact_duplicate, empty).

Rules, identical in streaming (:meth:`Deduplicator.feed`) and batch (:meth:`Deduplicator.run`):

1. A document without features is ``empty``: kept, in a cluster of its own, never matched.
2. Exact fast path: if its normalised text (xxh3_128) was seen, it takes the decision of that
   earlier copy: ``exact_duplicate`` of it when the copy was kept, else ``duplicate`` of the
   copy's kept document at the copy's distance. No Hamming work.
3. Otherwise it is compared with the *kept* documents only (the index holds representatives):
   the nearest one within ``k`` (ties: earliest position) becomes ``duplicate_of``. With a
   verifier, candidates within ``candidate_k`` must also reach ``verifier.threshold``.
4. No match: the document is kept (``unique``) and starts a new cluster.

Chaining guard: because only kept documents are searched, a document joins a cluster only if it
is within ``k`` of the cluster's kept document. A chain A-B-C-D of small edits does not glue A
and D together; the first document too far from A becomes a new kept document. Clusters are
stars, ``cluster_id`` is the cluster's number in order of creation.

Time window: with ``window`` (seconds), a match needs ``|t_doc - t_kept| <= window``; in
streaming, kept documents older than ``newest timestamp - window`` are expired from the index, so
input should be roughly in time order (a late document cannot match an expired one).

Keep policy: ``first`` keeps the earliest document of each group and works in streaming.
``longest`` and ``newest`` need the whole input: :meth:`Deduplicator.run` processes documents in
priority order (longest text first / newest timestamp first, ties by position) with the same
rules, so the kept document is the longest / newest of its group; :meth:`feed` refuses them.

>>> dd = Deduplicator(k=3)
>>> d = dd.run(["the cat sat on the mat", "The  cat sat on the mat", "", "dogs bark loudly"])
>>> d.statuses
['unique', 'exact_duplicate', 'empty', 'unique']
>>> d.duplicate_of.tolist(), d.cluster_id.tolist()
([-1, 0, -1, -1], [0, 0, 1, 2])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice, pairwise
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from neardup._params import FrozenParams
from neardup._persist import JsonColumn
from neardup._threads import thread_safe
from neardup.dedup.budget import PAIR_BUDGET, budget_cuts
from neardup.dedup.candidates import (
    NO_HAMMING_LIMIT,
    BandCandidates,
    CandidateIndex,
    HammingCandidates,
    bands_fit,
)
from neardup.dedup.columns import SEARCHED, UNIQUE, ExactMap
from neardup.dedup.core import DecideConfig, StateView, decide_batch, processing_order
from neardup.dedup.greedy import Ledger, horizons
from neardup.dedup.persist import LOCKED_METHODS, StateMixin
from neardup.dedup.prepare import prepare_chunk
from neardup.dedup.similarity import decided_similarity
from neardup.dedup.state import (
    DUPLICATE,
    STATUS_NAMES,
    Chunk,
    Decision,
    Decisions,
    Growable,
    concat_chunks,
    slice_chunk,
)
from neardup.fingerprint import Fingerprinter
from neardup.verify import MinHashVerifier

KeepPolicy = Literal["first", "longest", "newest"]
KEEP_POLICIES = ("first", "longest", "newest")


@runtime_checkable
class Verifier(Protocol):
    """A second, finer similarity used to confirm Hamming candidates.

    ``sketch_many`` returns one row per text (``(n, width)``); ``similarity`` compares row ``i``
    of ``a`` with row ``i`` of ``b`` and returns float64 ``(m,)``; a candidate is accepted when
    the similarity is ``>= threshold``. Sketches of kept documents stay in memory
    (``width * itemsize`` bytes per kept document).
    """

    @property
    def threshold(self) -> float: ...

    def sketch_many(self, texts: Sequence[str]) -> np.ndarray: ...

    def similarity(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...


# Measured defaults (docs/ACCURACY.md): verified candidates within VERIFIED_K bits; without a
# verifier, PLAIN_K is the best plain-SimHash threshold for the default features.
VERIFIED_K = 14
PLAIN_K = 8


@thread_safe(*LOCKED_METHODS)  # one call at a time per object, each whole (neardup._threads)
class Deduplicator(StateMixin, FrozenParams):  # parameters read-only: they define the config
    """Near-duplicate decisions for a stream or a batch of documents (see module docs).

    Args:
        fingerprinter: the :class:`Fingerprinter` (default ``Fingerprinter()``).
        k: maximum Hamming distance of a duplicate. Default with the default verifier: no
            limit (64): candidates share a MinHash LSH band
            (:class:`~neardup.dedup.candidates.BandCandidates`, constant cost per document)
            and the verifier decides. Passing ``k`` (or ``candidate_k``) asks for the exact
            radius search instead (:class:`~neardup.dedup.candidates.HammingCandidates`);
            ``PLAIN_K`` (8) without a verifier.
        keep: ``first`` | ``longest`` | ``newest`` (the latter two only in :meth:`run`).
        window: seconds; only documents this close in time match (needs timestamps).
        verifier: a :class:`Verifier`; ``"default"`` is ``MinHashVerifier()`` (128 8-bit MinHash
            values of 4-shingles, 129 bytes per kept document); None turns verification off.
        candidate_k: search radius with a verifier (``>= k``, default ``k``).
        index_design: passed to :class:`HammingIndex` (``"auto"``).
        n_jobs: fingerprinting worker processes (``-1``: all cores).

    Threads: one Deduplicator may be shared. Every method that reads or changes its state
    holds the object's lock, so calls run one at a time, each whole, and the decisions are
    those of one thread making the same calls in the order they took the lock;
    :meth:`prepare` (no shared state) runs in parallel.
    """

    _pair_budget = PAIR_BUDGET  # candidate pairs per streaming part (dedup/budget.py)

    def __init__(
        self,
        *,
        fingerprinter: Fingerprinter | None = None,
        k: int | None = None,
        keep: KeepPolicy = "first",
        window: float | None = None,
        verifier: Verifier | Literal["default"] | None = "default",
        candidate_k: int | None = None,
        index_design: str = "auto",
        n_jobs: int = 1,
    ) -> None:
        self.fingerprinter = Fingerprinter() if fingerprinter is None else fingerprinter
        resolved = _resolve_verifier(verifier)
        bands = k is None and candidate_k is None and index_design == "auto"
        bands = bands and bands_fit(resolved)
        if k is None:
            k = NO_HAMMING_LIMIT if bands else VERIFIED_K if resolved is not None else PLAIN_K
        self.k = k
        self.keep = keep
        self.window = window
        self.verifier = resolved
        self.candidate_k = candidate_k
        self.index_design = index_design
        self.n_jobs = n_jobs
        self._validate()
        self.candidate_k_ = k if candidate_k is None else candidate_k
        self.bits_ = int(self.fingerprinter.get_config().get("bits", 64))
        if self.bits_ != 64:
            raise ValueError(
                f"dedup works on 64-bit fingerprints, got bits={self.bits_}; use "
                "a 128-bit fingerprint as a verifier instead"
            )
        self._candidates: CandidateIndex = (
            BandCandidates()
            if bands
            else HammingCandidates(radius=self.candidate_k_, index_design=index_design)
        )
        self._init_state()
        threshold = None if resolved is None else float(resolved.threshold)
        self._core = DecideConfig(self.candidate_k_, keep, window, threshold)
        self._freeze()

    def _init_state(self) -> None:
        """The empty per-document state (the columns of dedup/columns.py) and its counters."""
        self._rep = Growable(np.int64)
        self._dist = Growable(np.int16)
        self._cluster = Growable(np.int64)
        self._status = Growable(np.int8)
        self._ts = Growable(np.float64)
        self._fps = Growable(np.uint64)
        self._slot = Growable(np.int64)  # row in _sketches for kept docs (with a verifier)
        self._sketches: Growable | None = None
        self._key_hi = Growable(np.uint64)  # exact keys (xxh3_128 halves), 0 when empty
        self._key_lo = Growable(np.uint64)
        self._flags = Growable(np.int8)  # SEARCHED | FORGOTTEN, see persist.py
        self._sim = Growable(np.float32)  # the similarity that decided (not saved: derived)
        self._exact = ExactMap()
        self._ids: JsonColumn | None = None  # external ids, once any were given
        self._n_clusters = 0
        self._origin = 0  # per-document arrays start at this position (see dedup/columns.py)
        self._max_ts = -np.inf
        self._horizon: float = -np.inf  # kept documents with floor(t) < horizon have expired
        self._late = 0  # documents decided after the kept ones they could match expired
        self._unindexed: np.ndarray | None = None  # kept by resolve(), not yet in the index
        self._pending: list[Chunk] = []

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters as given: ``k=None`` for the band design (whose resolved
        ``k`` is :data:`NO_HAMMING_LIMIT`), so :meth:`replace` builds the same design."""
        params = super().get_params()
        if isinstance(self._candidates, BandCandidates):
            params["k"] = None
        return params

    def _validate(self) -> None:
        if not isinstance(self.k, int) or self.k < 0:
            raise ValueError(f"k must be an int >= 0, got {self.k!r}")
        if self.keep not in KEEP_POLICIES:
            raise ValueError(f"keep must be one of {KEEP_POLICIES}, got {self.keep!r}")
        if self.window is not None and not self.window > 0:
            raise ValueError(f"window must be > 0 seconds or None, got {self.window!r}")
        if self.candidate_k is not None:
            if self.verifier is None:
                raise ValueError("candidate_k only applies with a verifier; pass verifier=...")
            if self.candidate_k < self.k:
                raise ValueError(f"candidate_k ({self.candidate_k}) must be >= k ({self.k})")
        if self.verifier is not None and not isinstance(self.verifier, Verifier):
            raise TypeError(f"verifier {self.verifier!r} lacks threshold/sketch_many/similarity")

    # ------------------------------------------------------------------ public API
    @property
    def decide_config(self) -> DecideConfig:
        """The parameters of the decide step (:mod:`neardup.dedup.core`) every engine applies.

        >>> Deduplicator(k=3, verifier=None).decide_config.radius
        3
        """
        return self._core

    @property
    def candidates(self) -> CandidateIndex:
        """The candidate design (its ``pairs``, ``keys`` and ``get_config``), read-only use:
        the one definition of "candidate" that every engine and ``explain`` applies."""
        return self._candidates

    @property
    def n_documents(self) -> int:
        """Documents decided so far."""
        return self._origin + self._status.size

    def add(self, text: str, *, id: Any = None, timestamp: float | None = None) -> Decision:
        """Decide one document (streaming); ``duplicate_of`` is the kept document's id.

        >>> dd = Deduplicator()
        >>> dd.add("breaking: storm hits the coast", id="a").status
        'unique'
        >>> dd.add("BREAKING: storm hits the coast", id="b").duplicate_of
        'a'
        """
        ts = None if timestamp is None else [timestamp]
        pos = self.n_documents
        d = self.feed([text], ts, ids=[pos if id is None else id])
        dup = int(d.duplicate_of[0])
        return Decision(
            self.external_id(pos),
            int(d.fingerprint[0]),
            STATUS_NAMES[int(d.status[0])],
            None if dup < 0 else self.external_id(dup),
            None if dup < 0 else int(d.distance[0]),
            int(d.cluster_id[0]),
            None if np.isnan(d.similarity[0]) else float(d.similarity[0]),
        )

    def feed(
        self,
        texts: Sequence[str],
        timestamps: Sequence[float] | None = None,
        *,
        ids: Sequence[Any] | None = None,
        commit: bool = True,
    ) -> Decisions:
        """Decide a chunk of documents in order, against everything fed before (streaming).

        ``ids``: external ids stored with the state (``duplicate_of`` ids after a reload).
        ``commit=False`` (dry run): the decisions these documents would get, leaving the state
        exactly as it was.

        >>> dd = Deduplicator()
        >>> _ = dd.feed(["the cat sat on the mat today"])
        >>> dd.feed(["the cat sat on the mat today"], commit=False).statuses, dd.n_documents
        (['exact_duplicate'], 1)
        """
        self._check_streaming()
        if ids is not None and len(ids) != len(texts):
            raise ValueError(f"got {len(ids)} ids for {len(texts)} texts")
        return self.feed_prepared(self.prepare(texts, timestamps), ids=ids, commit=commit)

    def feed_prepared(
        self, chunk: Chunk, *, ids: Sequence[Any] | None = None, commit: bool = True
    ) -> Decisions:
        """:meth:`feed` on a chunk from :meth:`prepare` (same decisions): a service prepares
        the next chunk (fingerprints, sketches: no state) while the previous one is decided.

        >>> dd = Deduplicator()
        >>> chunk = dd.prepare(["the cat sat on the mat today"] * 2)
        >>> dd.feed_prepared(chunk).statuses
        ['unique', 'exact_duplicate']
        """
        self._check_streaming()
        if ids is not None and len(ids) != len(chunk.fps):
            raise ValueError(f"got {len(ids)} ids for {len(chunk.fps)} texts")
        if commit and (cuts := self._budget_cuts(chunk)):  # hot keys: in parts, same decisions
            base, n = self.n_documents, len(chunk.fps)
            for a, b in pairwise([0, *cuts, n]):
                self.feed_prepared(slice_chunk(chunk, a, b), ids=None if ids is None else ids[a:b])
            return self._decisions(base, base + n)
        self._index_unindexed()
        base, n = self.n_documents, len(chunk.fps)
        saved = (self._n_clusters, self._max_ts)
        hz = self._horizons(chunk)
        self._extend_state(chunk)
        self._exact.start_log()
        new = self._decide(chunk, np.arange(n), base, streaming=True, hz=hz)
        self._fill_similarity(base, chunk)
        out = self._decisions(base, base + n)
        if not commit:
            self._exact.undo_log()
            self._truncate(base)
            self._n_clusters, self._max_ts = saved
            return out
        self._commit_chunk(base, chunk, ids, hz)
        self._index_new(base, new, chunk)
        return out

    def _budget_cuts(self, chunk: Chunk) -> list[int]:
        """Where to cut ``chunk`` so that its pairs stay within the budget (dedup/budget.py)."""
        first: dict[int, int] = {}
        for row in np.flatnonzero(~chunk.empty).tolist():
            first.setdefault(chunk.keys[row], row)  # later copies take the exact path: no pairs
        live = np.fromiter(first.values(), np.int64, len(first))
        if len(live) < 2:
            return []
        keys = self._candidates.keys(chunk.fps[live], _rows(chunk.sketches, live))
        return budget_cuts(keys, live, self._pair_budget)

    def extend_state_columns(self, columns: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Append rows decided earlier (:meth:`state_columns` of positions ``n_documents``..
        ``meta["documents"] - 1``, e.g. a store's rows written after a snapshot) without deciding
        them again: afterwards this state is the one that fed those documents. ``meta`` is the
        :meth:`state_meta` after the last row. Forgotten rows are forgotten again.

        >>> a, b = Deduplicator(), Deduplicator()
        >>> _ = a.feed(["storm hits the coast tonight", "cats and dogs", "a third one here"])
        >>> b.extend_state_columns(a.state_columns(0, 3), a.state_meta())
        >>> later = ["storm hits the coast tonight", "cats and dogs!", "new"]
        >>> b.feed(later).statuses == a.feed(later).statuses, b.n_documents
        (True, 6)
        """
        self._check_streaming()
        self._index_unindexed()
        base, stop = self.n_documents, int(meta["documents"])
        pos = np.asarray(columns["position"], np.int64)
        if not np.array_equal(pos, np.arange(base, stop)):
            raise ValueError(f"state columns must hold positions {base}..{stop - 1}, in order")
        status = np.asarray(columns["status"], np.int8)
        hi = np.asarray(columns["exact_key_hi"], np.uint64).tolist()
        lo = np.asarray(columns["exact_key_lo"], np.uint64).tolist()
        sketches = columns.get("sketch") if self.verifier is not None else None
        chunk = Chunk(
            np.asarray(columns["fingerprint"], np.uint64),
            status == STATUS_NAMES.index("empty"),
            [(h << 64) | x for h, x in zip(hi, lo, strict=True)],
            np.asarray(columns["timestamp"], np.float64),
            np.zeros(pos.size, np.int64),
            None if sketches is None else np.asarray(sketches),
        )
        self._extend_state(chunk)
        rows = slice(base - self._origin, stop - self._origin)
        dup = np.asarray(columns["duplicate_of"], np.int64)
        searched = np.asarray(columns["searched"], bool)
        forgotten = np.asarray(columns["forgotten"], bool)
        self._rep.writable()[rows] = np.where(dup < 0, pos, dup)
        self._dist.writable()[rows] = columns["distance"]
        self._cluster.writable()[rows] = columns["cluster_id"]
        self._status.writable()[rows] = status
        self._flags.writable()[rows] = searched * SEARCHED
        keys = np.array(chunk.keys, dtype=object)[searched].tolist()
        for key, p in zip(keys, pos[searched].tolist(), strict=True):
            self._exact[key] = p  # the last searched document of each key, in order
        self._n_clusters = int(meta["clusters"])
        self._late = int(meta.get("late_documents", 0))
        kept = np.flatnonzero((status == UNIQUE) & ~forgotten)
        self._index_new(base, kept.tolist(), chunk)
        if forgotten.any():
            self.forget(pos[forgotten])

    def _check_streaming(self) -> None:
        if self.keep != "first":
            raise ValueError(
                f"keep={self.keep!r} needs the whole input: use run(), or "
                "keep='first' for streaming"
            )
        if self._pending:
            raise ValueError("this Deduplicator is collecting a batch; call resolve() first")

    def _commit_chunk(
        self, base: int, chunk: Chunk, ids: Sequence[Any] | None, hz: np.ndarray | None
    ) -> None:
        """Bookkeeping of a decided chunk: searched flags, late count, external ids."""
        flags = self._flags.view()
        flags[np.asarray(self._exact.stop_log(), np.int64) - self._origin] |= SEARCHED
        if hz is not None:  # late: older than the newest minus the window (greedy.horizons)
            self._late += int((chunk.ts < hz).sum())
        if ids is not None and self._ids is None:
            self._ids = JsonColumn.of(range(self._origin, base))  # earlier ones: positions
        if self._ids is not None:
            self._ids.extend(range(base, base + len(chunk.fps)) if ids is None else ids)

    def run(
        self,
        texts: Iterable[str],
        timestamps: Iterable[float] | None = None,
        *,
        chunk_size: int = 65536,
    ) -> Decisions:
        """Batch: decide all documents with :func:`all_pairs`; same rules as :meth:`feed`.

        ``texts`` may be a generator: it is fingerprinted chunk by chunk (only fingerprints,
        hashes and small per-document state are kept), then resolved in keep-policy order.
        """
        ts_iter: Iterator[float] | None = None if timestamps is None else iter(timestamps)
        it = iter(texts)
        while chunk := list(islice(it, chunk_size)):
            ts = None if ts_iter is None else list(islice(ts_iter, len(chunk)))
            self.collect(chunk, ts)
        return self.resolve()

    def collect(self, texts: Sequence[str], timestamps: Sequence[float] | None = None) -> None:
        """Batch phase 1: fingerprint a chunk and keep it for :meth:`resolve`."""
        if self.n_documents:
            raise ValueError(
                "batch mode needs a fresh Deduplicator (this one has streamed documents)"
            )
        self._pending.append(self.prepare(texts, timestamps))

    def resolve(self) -> Decisions:
        """Batch phase 2: decide every collected document; returns decisions in input order."""
        chunk = concat_chunks(self._pending)
        self._pending = []
        n = len(chunk.fps)
        hz = self._horizons(chunk)
        self._extend_state(chunk)
        order = processing_order(self.keep, np.arange(n), chunk.lengths, chunk.ts)
        self._exact.start_log()
        new = self._decide(chunk, order, 0, streaming=False, hz=hz)
        self._fill_similarity(0, chunk)
        self._commit_chunk(0, chunk, None, hz)
        if self.keep == "first":  # later feed() / save() go on from here: index lazily
            self._keep_sketches(np.asarray(new, np.int64), 0, chunk)
            self._unindexed = np.asarray(new, np.int64)
        return self._decisions(0, n)

    def decisions(self) -> Decisions:
        """Decisions for every document decided so far, in input order (from
        ``state_meta()["origin"]`` on for a loaded state with a window: see dedup/columns.py)."""
        return self._decisions(self._origin, self.n_documents)

    def describe(self) -> dict[str, Any]:
        """Settings and memory use (bytes) of the per-document state and the index."""
        state = sum(g.nbytes for g in self.per_document())
        return {
            "k": self.k,
            "candidate_k": self.candidate_k_,
            "keep": self.keep,
            "window": self.window,
            "documents": self.n_documents,
            "kept_in_index": len(self._candidates),
            "candidates": self._candidates.describe(),
            "clusters": self._n_clusters,
            "state_bytes": state,
            "sketch_bytes": 0 if self._sketches is None else self._sketches.nbytes,
            "config_id": self.config_id,
            "fingerprinter_config_id": self.fingerprinter.config_id,
            "late_documents": self._late,
        }

    # ------------------------------------------------------------------ internals
    def prepare(self, texts: Sequence[str], timestamps: Sequence[float] | None = None) -> Chunk:
        """Per-document data with the library's own code: fingerprints, empty mask, exact-text
        keys, timestamps, lengths and verifier sketches (what every engine decides on; see
        :func:`~neardup.dedup.prepare.prepare_chunk`)."""
        timed = self.window is not None or self.keep == "newest"
        return prepare_chunk(
            self.fingerprinter, self.verifier, texts, timestamps, timed=timed, n_jobs=self.n_jobs
        )

    def _extend_state(self, chunk: Chunk) -> None:
        n = len(chunk.fps)
        for g in (self._rep, self._dist, self._cluster):
            g.extend(np.full(n, -1))
        self._status.extend(np.full(n, -1))
        if self.verifier is not None:  # per-document arrays only when they are used
            self._slot.extend(np.full(n, -1))
        if self.window is not None:
            self._ts.extend(chunk.ts)
        self._fps.extend(chunk.fps)
        keys = np.array(chunk.keys, dtype=object)
        self._key_hi.extend((keys >> 64).astype(np.uint64) if n else [])
        self._key_lo.extend((keys & ((1 << 64) - 1)).astype(np.uint64) if n else [])
        self._flags.extend(np.zeros(n, np.int8))
        self._sim.extend(np.full(n, np.nan, np.float32))
        if chunk.ts.size and not np.isnan(chunk.ts).all():
            self._max_ts = max(self._max_ts, float(np.nanmax(chunk.ts)))

    def _horizons(self, chunk: Chunk) -> np.ndarray | None:
        """Per document of the chunk, the horizon of :func:`~neardup.dedup.greedy.horizons`
        (``keep='first'`` with a window: the streaming order), from the newest timestamp before
        the chunk; None otherwise. Call it before ``_extend_state`` moves the newest one."""
        if self.window is None or self.keep != "first":
            return None
        return horizons(chunk.ts, self.window, self._max_ts)

    def _decide(
        self,
        chunk: Chunk,
        order: np.ndarray,
        base: int,
        *,
        streaming: bool,
        hz: np.ndarray | None = None,
    ) -> list[int]:
        """The decision core's step (:func:`~neardup.dedup.core.decide_batch`) on this state;
        returns the new kept (local) rows."""
        origin = self._origin
        ledger = Ledger(
            self._rep.writable(),
            self._dist.writable(),
            self._cluster.writable(),
            self._status.writable(),
            self._ts.view(),
            self._exact,
            self._n_clusters,
        )
        view = StateView(
            self._exact,
            lambda pos: self._ts.view()[pos - origin],
            self._kept_sketches,
            self._candidates if streaming else None,
        )
        new = decide_batch(
            self._core, self._candidates, self.verifier, view, ledger, chunk, order,
            base=base, origin=origin, horizon=hz,
        )  # fmt: skip
        self._n_clusters = ledger.n_clusters
        return new

    def _fill_similarity(self, base: int, chunk: Chunk) -> None:
        """The similarity that decided each document of the chunk (dedup/similarity.py)."""
        rows = slice(base - self._origin, base - self._origin + len(chunk.fps))
        status, sk = self._status.view()[rows], chunk.sketches
        rep_sk = None
        if sk is not None and self.verifier is not None:
            dup = np.flatnonzero(status == DUPLICATE)
            r = self._rep.view()[rows][dup]
            rep_sk = np.zeros_like(sk)
            inside = r >= base
            rep_sk[dup[inside]] = sk[r[inside] - base]
            if (~inside).any():  # kept in earlier chunks: their sketches are in the state
                slot = self._slot.view()[r[~inside] - self._origin]
                known = slot >= 0  # (a kept document expired before a reload has none)
                assert self._sketches is not None
                rep_sk[dup[~inside][known]] = self._sketches.view()[slot[known]]
        sim = decided_similarity(self.verifier, status, self._dist.view()[rows], sk, rep_sk)
        if rep_sk is not None and (~inside).any():
            sim[dup[~inside][~known]] = np.nan
        self._sim.writable()[rows] = sim

    def _kept_sketches(self, pos: np.ndarray) -> np.ndarray:
        assert self._sketches is not None
        rows: np.ndarray = self._sketches.view()[self._slot.view()[pos - self._origin]]
        return rows

    def _index_new(self, base: int, new: list[int], chunk: Chunk) -> None:
        local = np.asarray(new, dtype=np.int64)
        if local.size:
            # the index keeps whole seconds; flooring only ever keeps entries a little longer
            ts = np.floor(chunk.ts[local]).astype(np.int64) if self.window is not None else None
            self._candidates.add(local + base, chunk.fps[local], _rows(chunk.sketches, local), ts)
            self._keep_sketches(local, base, chunk)
        self._expire()

    def _keep_sketches(self, local: np.ndarray, base: int, chunk: Chunk) -> None:
        if chunk.sketches is not None and local.size:
            if self._sketches is None:
                self._sketches = Growable(chunk.sketches.dtype, chunk.sketches.shape[1])
            rows = local + base - self._origin
            self._slot.writable()[rows] = np.arange(local.size) + self._sketches.size
            self._sketches.extend(chunk.sketches[local])

    def _expire(self) -> None:
        """Drop kept documents that no in-order later document can match (see persist.py)."""
        if self.window is not None and np.isfinite(self._max_ts):
            horizon = int(np.floor(self._max_ts - self.window))
            if horizon > self._horizon:
                self._horizon = horizon
                self._candidates.expire(horizon)
                self._prune_exact()

    def _decisions(self, start: int, stop: int) -> Decisions:
        a, b = start - self._origin, stop - self._origin
        rep = self._rep.view()[a:b]
        positions = np.arange(start, stop, dtype=np.int64)
        kept = rep == positions
        return Decisions(
            positions,
            self._fps.view()[a:b].copy(),
            self._status.view()[a:b].copy(),
            np.where(kept, -1, rep),
            self._dist.view()[a:b].copy(),
            self._cluster.view()[a:b].copy(),
            self._sim.view()[a:b].astype(np.float64),
        )


def _resolve_verifier(verifier: Verifier | str | None) -> Verifier | None:
    if isinstance(verifier, str):
        if verifier != "default":
            raise ValueError(f"verifier must be 'default', None or a Verifier, got {verifier!r}")
        return MinHashVerifier()
    return verifier


def _rows(sketches: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if sketches is None else sketches[rows]


def dedup_batch(
    texts: Iterable[str], timestamps: Iterable[float] | None = None, **options: Any
) -> Decisions:
    """One-shot batch dedup: ``Deduplicator(**options).run(texts, timestamps)``.

    >>> dedup_batch(["a b c d", "a b c d", "x y z"]).statuses
    ['unique', 'exact_duplicate', 'unique']
    """
    return Deduplicator(**options).run(texts, timestamps)
