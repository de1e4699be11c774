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
input should be roughly in time order (a late document cannot match an expired one);
:class:`~neardup.dedup.disorder.DisorderBuffer` puts rows in time order within a bound first
(what ``neardup dedup --max-disorder`` does).

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

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, Literal, Protocol, Self, runtime_checkable

import numpy as np
import numpy.typing as npt

from neardup._params import FrozenParams
from neardup._threads import thread_safe
from neardup.dedup.candidates import (
    NO_HAMMING_LIMIT,
    BandCandidates,
    CandidateIndex,
    HammingCandidates,
    bands_fit,
)
from neardup.dedup.columns import check_config, verifier_config
from neardup.dedup.core import DecideConfig
from neardup.dedup.dedup_state import DedupState
from neardup.dedup.greedy import CLUSTER_RULE, Considered
from neardup.dedup.persist import LOCKED_METHODS, StateMixin
from neardup.dedup.prepare import prepare_chunk
from neardup.dedup.state import (
    STATUS_NAMES,
    Chunk,
    Decision,
    Decisions,
    concat_chunks,
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
        verifier: a :class:`Verifier`; ``"default"`` is ``MinHashVerifier()`` (192 8-bit MinHash
            values of 4-shingles, 193 bytes per kept document); None turns verification off.
        preset: a named setting instead of ``verifier`` / ``threshold``: ``"edited"`` (copies
            with ~10 % of their words edited: ``MinHashVerifier(ngram=2, threshold=0.64)``,
            :data:`PRESETS`); the CLI's ``--preset edited`` has the same ``config_id``.
        threshold: the similarity above which two documents are duplicates, in the verifier's
            terms; for :class:`~neardup.verify.MinHashVerifier` the Jaccard similarity of the
            two texts' shingle sets (word 4-shingles, or character 4-grams for Chinese, by
            default), estimated from its MinHash values. None: the verifier's own (0.6 for the
            default). ``Deduplicator(threshold=0.5)`` is ``Deduplicator(verifier=
            MinHashVerifier(threshold=0.5))``; the threshold is part of :attr:`config_id`.
        cluster_similarity: every two documents of one cluster are at least this similar in
            the verifier's terms, bounded through their kept document (Jaccard distance obeys
            the triangle inequality): a document joins a kept document only when its similarity
            plus the lowest similarity of a document already in that cluster is at least
            ``1 + cluster_similarity``; otherwise it tries its next candidate. When every
            cluster refuses it, it is a duplicate of its closest candidate all the same (a
            document that passes the threshold against a kept one is never kept because of
            this rule, so a lower threshold never finds less through it). ``"auto"``: 0.25
            with a verifier (or the verifier's threshold when that is lower; measured: 0.5
            split the independent 5 %-edited reposts of one story), None (star clusters: every
            member is like the kept document, two members need not be alike) without one.
            States saved before this rule carry None in their configuration; states of its
            first version (no ``cluster_rule`` in their configuration) are refused.
        candidate_k: search radius with a verifier (``>= k``, default ``k``).
        index_design: passed to :class:`HammingIndex` (``"auto"``).
        n_jobs: fingerprinting worker processes (``-1``: all cores).

    Threads: one Deduplicator may be shared. Every method that reads or changes its state
    holds the object's lock, so calls run one at a time, each whole, and the decisions are
    those of one thread making the same calls in the order they took the lock;
    :meth:`prepare` (no shared state) runs in parallel.
    """

    def __init__(
        self,
        *,
        fingerprinter: Fingerprinter | None = None,
        k: int | None = None,
        keep: KeepPolicy = "first",
        window: float | None = None,
        verifier: Verifier | Literal["default"] | None = "default",
        threshold: float | None = None,
        cluster_similarity: float | Literal["auto"] | None = "auto",
        candidate_k: int | None = None,
        index_design: str = "auto",
        n_jobs: int = 1,
        preset: str | None = None,
    ) -> None:
        self.fingerprinter = Fingerprinter() if fingerprinter is None else fingerprinter
        resolved = _resolve_verifier(_preset_verifier(preset, verifier, threshold), threshold)
        self.preset = preset
        bands = k is None and candidate_k is None and index_design == "auto"
        bands = bands and bands_fit(resolved)
        if k is None:
            k = NO_HAMMING_LIMIT if bands else VERIFIED_K if resolved is not None else PLAIN_K
        self.k = k
        self.keep = keep
        self.window = window
        self.verifier = resolved
        self.threshold = threshold
        self.cluster_similarity = cluster_similarity
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
        threshold = None if resolved is None else float(resolved.threshold)
        self._core = DecideConfig(
            self.candidate_k_, keep, window, threshold, _cluster_similarity(self)
        )
        self._state = DedupState(self._core, self._candidates, resolved)
        self._pending: list[Chunk] = []  # batch chunks collected for resolve()
        self._freeze()

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
        return self._state.n_documents

    def add(self, text: str, *, id: Any = None, timestamp: float | str | None = None) -> Decision:
        """Decide one document (streaming); ``duplicate_of`` is the kept document's id.

        >>> dd = Deduplicator()
        >>> dd.add("breaking: storm hits the coast", id="a").status
        'unique'
        >>> dd.add("BREAKING: storm hits the coast", id="b").duplicate_of
        'a'
        """
        ts = None if timestamp is None else [timestamp]
        d = self.feed([text], ts, ids=[self.n_documents if id is None else id])
        pos, dup = int(d.position[0]), int(d.duplicate_of[0])  # (a known document: its own)
        return Decision(
            self.external_id(pos),
            int(d.fingerprint[0]),
            STATUS_NAMES[int(d.status[0])],
            None if dup < 0 else self.external_id(dup),
            None if dup < 0 else int(d.distance[0]),
            int(d.cluster_id[0]),
            None if np.isnan(d.similarity[0]) else float(d.similarity[0]),
            None if np.isnan(d.threshold[0]) else float(d.threshold[0]),
        )

    def feed(
        self,
        texts: Sequence[str],
        timestamps: Sequence[Any] | None = None,
        *,
        ids: Sequence[Any] | None = None,
        commit: bool = True,
    ) -> Decisions:
        """Decide a chunk of documents in order, against everything fed before (streaming).

        ``timestamps``: epoch seconds, or dates as the CLI reads them (ISO 8601 strings,
        ``datetime``; see :func:`~neardup.dedup.prepare.epoch_seconds`).
        ``ids``: external ids stored with the state (``duplicate_of`` ids after a reload).
        A document whose id and text were already fed gets its stored decision (its
        ``position`` is the earlier one) and is not added again (:mod:`neardup.dedup.rerun`);
        a known id with another text is a new document. ``commit=False`` (dry run): the
        decisions these documents would get, leaving the state exactly as it was.

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
        return self._state.decide_chunk(chunk, ids, commit=commit)

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
        self._state.append_columns(columns, meta)

    def _check_streaming(self) -> None:
        if self.keep != "first":
            raise ValueError(
                f"keep={self.keep!r} needs the whole input: use run(), or "
                "keep='first' for streaming"
            )
        if self._pending:
            raise ValueError("this Deduplicator is collecting a batch; call resolve() first")

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

    def trace(
        self,
        texts: Sequence[str],
        timestamps: Sequence[float] | None = None,
        *,
        positions: Iterable[int],
    ) -> tuple[Decisions, dict[int, list[Considered]]]:
        """Batch, as :meth:`run` on a fresh Deduplicator of this configuration, with the
        decision step's evidence for the documents at ``positions``: the kept candidates it
        considered, in order (:class:`~neardup.dedup.greedy.Considered`; empty for a document
        decided by the exact path or with no accepted candidate). What ``explain FILE ID``
        prints.

        >>> d, ev = Deduplicator().trace(["storm hits the coast at night"] * 2, positions=[1])
        >>> d.statuses, ev
        (['unique', 'exact_duplicate'], {1: []})
        """
        fresh = self.replace()
        notes: dict[int, list[Considered]] = {int(p): [] for p in positions}
        fresh._state.trace = notes
        return fresh.run(texts, timestamps), notes

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
        return self._state.resolve_chunk(chunk)

    def decisions(self) -> Decisions:
        """Decisions for every document decided so far, in input order (from
        ``state_meta()["origin"]`` on for a loaded state with a window: see dedup/columns.py)."""
        return self._state.decisions(self._state.origin, self.n_documents)

    def describe(self) -> dict[str, Any]:
        """Settings and memory use (bytes) of the per-document state and the index."""
        st = self._state
        state = sum(g.nbytes for g in st.per_document())
        return {
            "k": self.k,
            "candidate_k": self.candidate_k_,
            "keep": self.keep,
            "window": self.window,
            "documents": self.n_documents,
            "kept_in_index": len(self._candidates),
            "candidates": self._candidates.describe(),
            "clusters": st.n_clusters,
            "state_bytes": state,
            "sketch_bytes": 0 if st.sketches is None else st.sketches.nbytes,
            "sketch_file_bytes": 0 if st.sketches is None else st.sketches.file_bytes,
            "config_id": self.config_id,
            "fingerprinter_config_id": self.fingerprinter.config_id,
            "late_documents": st.late,
            "already_decided": st.already,
        }

    # ------------------------------------------------------------------ identity
    def state_config(self) -> dict[str, Any]:
        """What decides the decisions: fingerprints, k, candidate design, verifier, window,
        keep (not speed settings such as ``n_jobs`` or the index design); a fresh dict."""
        return dict(json.loads(self._config_blob()))

    def _config_blob(self) -> str:
        # the configuration is frozen: built once (every service batch reads config_id)
        blob: str | None = self.__dict__.get("_blob")
        if blob is None:
            config = {
                "fingerprinter": self.fingerprinter.get_config(),
                "k": self.k,
                "candidate_k": self.candidate_k_,
                "candidates": self._candidates.get_config(),
                "verifier": verifier_config(self.verifier),
                "window": self.window,
                "keep": self.keep,
            }
            if self._core.cluster_similarity is not None:  # None: configurations from before
                config["cluster_similarity"] = self._core.cluster_similarity
                config["cluster_rule"] = CLUSTER_RULE  # version 1 kept what every cluster refused
            blob = json.dumps(config, sort_keys=True, separators=(",", ":"))
            self._blob = blob
        return blob

    @property
    def config_id(self) -> str:
        """Short stable id of :meth:`state_config`, carried by every saved state.

        >>> Deduplicator().config_id == Deduplicator().config_id != Deduplicator(k=3).config_id
        True
        """
        return "dd1-" + hashlib.sha256(self._config_blob().encode()).hexdigest()[:16]

    # ------------------------------------------------------------------ state as columns
    def external_id(self, position: int) -> Any:
        """The id given for the document at ``position`` (its position when none was)."""
        return self._state.external_id(position)

    def shared_ids(self, ids: Iterable[Any], before: int) -> list[Any]:
        """The distinct values of ``ids`` that a document before position ``before`` also has
        (among the rows still held: with a window, expired documents are not kept).

        >>> dd = Deduplicator()
        >>> _ = dd.feed(["one text", "another one", "a third"], ids=["a", "b", "a"])
        >>> dd.shared_ids(["a", "z"], 2), dd.shared_ids(["a", "z"], 0)
        (['a'], [])
        """
        return self._state.shared_ids(ids, before)

    def exact_keys(self, positions: Sequence[int]) -> list[int | None]:
        """The exact-text key (xxh3_128 of the normalised text, as an int) of the documents at
        ``positions``; None for one this state no longer holds (what the rerun rule compares:
        :mod:`neardup.dedup.rerun`).

        >>> dd = Deduplicator()
        >>> _ = dd.feed(["Storm hits the coast", "storm  hits the coast"])
        >>> a, b = dd.exact_keys([0, 1]); a == b, dd.exact_keys([5])
        (True, [None])
        """
        return self._state.exact_keys(positions)

    def forget(self, positions: npt.ArrayLike) -> int:
        """Deleted documents stop attracting duplicates (dedup/columns.py); returns how many
        left the candidate index.

        >>> dd = Deduplicator()
        >>> _ = dd.feed(["storm hits the coast tonight"])
        >>> dd.forget([0]), dd.feed(["storm hits the coast tonight"]).statuses
        (1, ['unique'])
        """
        return self._state.forget(positions)

    def state_meta(self) -> dict[str, Any]:
        """The config and counters that go with :meth:`state_columns` (JSON-able)."""
        meta = {"config_id": self.config_id, "config": self.state_config()}
        return {**meta, **self._state.counters()}

    def state_columns(self, start: int = 0, stop: int | None = None) -> dict[str, np.ndarray]:
        """Rows ``start:stop`` of the per-document state as named columns (dedup/columns.py).

        ``id`` holds each external id as JSON text (only when ids were given); ``sketch`` the
        verifier sketch of kept documents (zeros for others; only with a verifier).
        """
        return self._state.state_columns(start, stop)

    @classmethod
    def from_state_columns(
        cls, config: Self, columns: dict[str, np.ndarray], meta: dict[str, Any]
    ) -> Self:
        """A Deduplicator of ``config``'s configuration holding the state of ``columns`` (all
        rows: positions ``meta["origin"]``..n-1) and ``meta`` (:meth:`state_meta`)."""
        check_config(config, meta.get("config_id"), "these state columns", meta.get("config"))
        dd = config.replace()
        dd._state.load_columns(columns, meta)
        return dd

    # ------------------------------------------------------------------ internals
    def prepare(self, texts: Sequence[str], timestamps: Sequence[Any] | None = None) -> Chunk:
        """Per-document data with the library's own code: fingerprints, empty mask, exact-text
        keys, timestamps, lengths and verifier sketches (what every engine decides on; see
        :func:`~neardup.dedup.prepare.prepare_chunk`)."""
        timed = self.window is not None or self.keep == "newest"
        return prepare_chunk(
            self.fingerprinter, self.verifier, texts, timestamps, timed=timed, n_jobs=self.n_jobs
        )


#: ``cluster_similarity="auto"`` with a verifier (docs/ACCURACY.md, "Clusters of mutual duplicates")
CLUSTER_SIMILARITY = 0.25


def _cluster_similarity(dd: Deduplicator) -> float | None:
    """The resolved ``cluster_similarity`` of ``dd`` (checked)."""
    value = dd.cluster_similarity
    if value == "auto":  # never above the threshold: a join needs s >= cluster_similarity
        return None if dd.verifier is None else min(CLUSTER_SIMILARITY, dd.verifier.threshold)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"cluster_similarity must be 'auto', None or in [0, 1], got {value!r}")
    if dd.verifier is None:
        raise ValueError(
            "cluster_similarity bounds the verifier's similarity inside a cluster; with "
            "verifier=None pass cluster_similarity=None (or 'auto')"
        )
    return float(value)


#: named settings, ``Deduplicator(preset=...)`` / ``--preset``: the verifier they name.
#: "edited": word 2-shingles at Jaccard 0.64 (band keys of 3-shingles, the verifier's rule) find
#: copies with ~10 % of their words edited (docs/ACCURACY.md, "Edited copies")
PRESETS = {"edited": MinHashVerifier(ngram=2, threshold=0.64)}


def _preset_verifier(
    preset: str | None, verifier: Verifier | str | None, threshold: float | None
) -> Verifier | str | None:
    """The verifier of ``preset`` (None: ``verifier`` as given); refused beside another
    verifier or threshold (one configuration, one ``config_id``).

    >>> _preset_verifier("edited", "default", None) == MinHashVerifier(ngram=2, threshold=0.64)
    True
    """
    if preset is None:
        return verifier
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)} or None, got {preset!r}")
    named = PRESETS[preset]
    if verifier not in ("default", named) or threshold not in (None, named.threshold):
        raise ValueError(
            f"preset={preset!r} sets the verifier ({named!r}); pass preset or "
            "verifier/threshold, not both"
        )
    return named


def _resolve_verifier(verifier: Verifier | str | None, threshold: float | None) -> Verifier | None:
    """The verifier that decides: ``"default"`` resolved, with ``threshold`` applied."""
    if isinstance(verifier, str):
        if verifier != "default":
            raise ValueError(f"verifier must be 'default', None or a Verifier, got {verifier!r}")
        verifier = MinHashVerifier()
    if threshold is None:
        return verifier
    if verifier is None:
        raise ValueError(
            "threshold applies to the verifier's similarity; with verifier=None the Hamming "
            "distance decides: pass k=... instead, or keep a verifier"
        )
    replace = getattr(verifier, "replace", None)
    if not callable(replace):
        raise TypeError(
            f"threshold= needs a verifier with replace(threshold=...), got {verifier!r}; "
            "build the verifier with its threshold instead"
        )
    resolved: Verifier = replace(threshold=threshold)
    return resolved


def dedup_batch(
    texts: Iterable[str], timestamps: Iterable[float] | None = None, **options: Any
) -> Decisions:
    """One-shot batch dedup: ``Deduplicator(**options).run(texts, timestamps)``.

    >>> dedup_batch(["a b c d", "a b c d", "x y z"]).statuses
    ['unique', 'exact_duplicate', 'unique']
    """
    return Deduplicator(**options).run(texts, timestamps)
