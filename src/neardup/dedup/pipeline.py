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

import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, Literal, Protocol, Self, runtime_checkable

import numpy as np

from neardup._params import FrozenParams
from neardup._threads import thread_safe
from neardup.dedup import persist
from neardup.dedup.candidates import (
    NO_HAMMING_LIMIT,
    BandCandidates,
    CandidateIndex,
    HammingCandidates,
    bands_fit,
)
from neardup.dedup.columns import verifier_config
from neardup.dedup.core import DecideConfig
from neardup.dedup.decisions import STATUS_NAMES, Decision, Decisions, PreparedBatch
from neardup.dedup.dedup_state import DedupState
from neardup.dedup.greedy import CLUSTER_RULE, Considered
from neardup.dedup.prepare import prepare_chunk
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


# one call at a time per object, each whole (neardup._threads); not prepare() (no shared
# state: the service prepares batches in parallel). ``state``'s methods hold its own lock.
@thread_safe("add", "feed", "run", "describe", "save")
class Deduplicator(FrozenParams):  # parameters read-only: they define the config
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
    holds the object's lock (and ``state``'s methods the state's), so calls run one at a time,
    each whole, and the decisions are those of one thread making the same calls in the order
    they took the lock; :meth:`prepare` (no shared state) runs in parallel.
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
        _check_params(self)
        self.candidate_k_ = k if candidate_k is None else candidate_k
        self.bits_ = int(self.fingerprinter.get_config().get("bits", 64))
        if self.bits_ != 64:
            raise ValueError(
                f"dedup works on 64-bit fingerprints, got bits={self.bits_}; use "
                "a 128-bit fingerprint as a verifier instead"
            )
        candidates: CandidateIndex = (
            BandCandidates()
            if bands
            else HammingCandidates(radius=self.candidate_k_, index_design=index_design)
        )
        threshold = None if resolved is None else float(resolved.threshold)
        rule = _cluster_similarity(self)
        core = DecideConfig(self.candidate_k_, keep, window, threshold, rule)
        identity = _config_blob(self, candidates, rule)
        self._state = DedupState(core, candidates, resolved, identity)
        self._freeze()

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters as given: ``k=None`` for the band design (whose resolved
        ``k`` is :data:`NO_HAMMING_LIMIT`), so :meth:`replace` builds the same design."""
        params = super().get_params()
        if isinstance(self._state.candidates, BandCandidates):
            params["k"] = None
        return params

    @property
    def state(self) -> DedupState:
        """What this Deduplicator has decided (:class:`~neardup.dedup.dedup_state.DedupState`):
        its decisions, columns, ids, ``forget``, ``restore``; ``state.decide_config`` and
        ``state.candidates`` are the decide step's configuration and candidate design."""
        return self._state

    @property
    def config_id(self) -> str:
        """Short stable id of the configuration (``state.config``), carried by every saved
        state.

        >>> Deduplicator().config_id == Deduplicator().config_id != Deduplicator(k=3).config_id
        True
        """
        return self._state.config_id

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
        return one_decision(d, self._state.external_id)

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
        ``state.decide(prepare(texts, timestamps), ...)`` is the same in two steps.

        >>> dd = Deduplicator()
        >>> _ = dd.feed(["the cat sat on the mat today"])
        >>> dd.feed(["the cat sat on the mat today"], commit=False).statuses, dd.n_documents
        (['exact_duplicate'], 1)
        """
        self._state.check_streaming()
        if ids is not None and len(ids) != len(texts):
            raise ValueError(f"got {len(ids)} ids for {len(texts)} texts")
        return self._state.decide(self.prepare(texts, timestamps), ids, commit=commit)

    def run(
        self,
        texts: Iterable[str],
        timestamps: Iterable[Any] | None = None,
        *,
        chunk_size: int = 65536,
    ) -> Decisions:
        """Batch: decide all documents; same rules as :meth:`feed`, in keep-policy order.

        ``texts`` may be a generator: it is fingerprinted chunk by chunk (only fingerprints,
        hashes and small per-document state are kept; ``state.collect(prepare(...))`` per
        chunk), then resolved (``state.resolve()``).
        """
        ts_iter: Iterator[Any] | None = None if timestamps is None else iter(timestamps)
        it = iter(texts)
        while chunk := list(islice(it, chunk_size)):
            ts = None if ts_iter is None else list(islice(ts_iter, len(chunk)))
            self._state.collect(self.prepare(chunk, ts))
        return self._state.resolve()

    def describe(self) -> dict[str, Any]:
        """Settings and memory use (bytes) of the per-document state and the index."""
        st = self._state
        return {
            "k": self.k,
            "candidate_k": self.candidate_k_,
            "keep": self.keep,
            "window": self.window,
            "documents": self.n_documents,
            "kept_in_index": len(st.candidates),
            "candidates": st.candidates.describe(),
            "clusters": st.n_clusters,
            "state_bytes": st.cols.nbytes(),
            "sketch_bytes": 0 if st.sketches is None else st.sketches.nbytes,
            "sketch_file_bytes": 0 if st.sketches is None else st.sketches.file_bytes,
            "config_id": self.config_id,
            "fingerprinter_config_id": self.fingerprinter.config_id,
            "late_documents": st.late,
            "already_decided": st.already,
        }

    def save(self, path: str | os.PathLike[str], *, wait: bool = True) -> None:
        """Write the state as a new version of directory ``path`` (dedup/persist.py)."""
        persist.save(self, path, wait=wait)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], config: Self | None = None, *, verify: bool = True
    ) -> Self:
        """The state saved in directory ``path`` (its live version).

        ``config``: a Deduplicator whose configuration the state must have (it is not
        changed); without it the configuration is rebuilt from the state (a custom verifier
        needs ``config``). Raises :class:`StateFormatError` for a damaged state or another
        configuration.
        """
        return persist.load(cls, path, config, verify=verify)

    def prepare(
        self, texts: Sequence[str], timestamps: Sequence[Any] | None = None
    ) -> PreparedBatch:
        """Per-document data with the library's own code: fingerprints, empty mask, exact-text
        keys, timestamps, lengths and verifier sketches (what every engine decides on; see
        :func:`~neardup.dedup.prepare.prepare_chunk`). No shared state: runs in parallel."""
        timed = self.window is not None or self.keep == "newest"
        return prepare_chunk(
            self.fingerprinter, self.verifier, texts, timestamps, timed=timed, n_jobs=self.n_jobs
        )


def _config_blob(dd: Deduplicator, candidates: CandidateIndex, rule: float | None) -> str:
    """What decides (fingerprints, k, candidate design, verifier, window, keep; not speed
    settings such as ``n_jobs`` or the index design) as JSON: ``config_id`` hashes it."""
    config = {
        "fingerprinter": dd.fingerprinter.get_config(),
        "k": dd.k,
        "candidate_k": dd.candidate_k_,
        "candidates": candidates.get_config(),
        "verifier": verifier_config(dd.verifier),
        "window": dd.window,
        "keep": dd.keep,
    }
    if rule is not None:  # None: configurations from before
        config["cluster_similarity"] = rule
        config["cluster_rule"] = CLUSTER_RULE  # version 1 kept what every cluster refused
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


def one_decision(d: Decisions, external_id: Callable[[int], Any]) -> Decision:
    """The one row of ``d`` as a :class:`Decision`, with ids instead of positions."""
    pos, dup = int(d.position[0]), int(d.duplicate_of[0])  # (a known document: its own)
    return Decision(
        external_id(pos),
        int(d.fingerprint[0]),
        STATUS_NAMES[int(d.status[0])],
        None if dup < 0 else external_id(dup),
        None if dup < 0 else int(d.distance[0]),
        int(d.cluster_id[0]),
        None if np.isnan(d.similarity[0]) else float(d.similarity[0]),
        None if np.isnan(d.threshold[0]) else float(d.threshold[0]),
    )


def from_state_columns(
    config: Deduplicator, columns: dict[str, np.ndarray], meta: dict[str, Any]
) -> Deduplicator:
    """A Deduplicator of ``config``'s configuration (not changed) holding the state of
    ``columns`` (:meth:`DedupState.columns <neardup.dedup.dedup_state.DedupState.columns>`,
    all rows) and ``meta`` (``state.meta()``): ``config.replace()`` and ``state.restore``."""
    dd = config.replace()
    dd.state.restore(columns, meta)
    return dd


def trace(
    dd: Deduplicator,
    texts: Sequence[str],
    timestamps: Sequence[Any] | None = None,
    *,
    positions: Iterable[int],
) -> tuple[Decisions, dict[int, list[Considered]]]:
    """Batch, as ``run`` on a fresh Deduplicator of ``dd``'s configuration, with the decision
    step's evidence for the documents at ``positions``: the kept candidates it considered, in
    order (:class:`~neardup.dedup.greedy.Considered`; empty for a document decided by the exact
    path or with no accepted candidate). What ``explain FILE ID`` prints.

    >>> d, ev = trace(Deduplicator(), ["storm hits the coast at night"] * 2, positions=[1])
    >>> d.statuses, ev
    (['unique', 'exact_duplicate'], {1: []})
    """
    fresh = dd.replace()
    notes: dict[int, list[Considered]] = {int(p): [] for p in positions}
    fresh.state.trace = notes
    return fresh.run(texts, timestamps), notes


def _check_params(dd: Deduplicator) -> None:
    """Refuse parameters out of range, naming the value and the fix."""
    if not isinstance(dd.k, int) or dd.k < 0:
        raise ValueError(f"k must be an int >= 0, got {dd.k!r}")
    if dd.keep not in KEEP_POLICIES:
        raise ValueError(f"keep must be one of {KEEP_POLICIES}, got {dd.keep!r}")
    if dd.window is not None and not dd.window > 0:
        raise ValueError(f"window must be > 0 seconds or None, got {dd.window!r}")
    if dd.candidate_k is not None:
        if dd.verifier is None:
            raise ValueError("candidate_k only applies with a verifier; pass verifier=...")
        if dd.candidate_k < dd.k:
            raise ValueError(f"candidate_k ({dd.candidate_k}) must be >= k ({dd.k})")
    if dd.verifier is not None and not isinstance(dd.verifier, Verifier):
        raise TypeError(f"verifier {dd.verifier!r} lacks threshold/sketch_many/similarity")


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
