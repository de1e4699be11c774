"""The decision core: the one definition of the decide step's inputs, shared by every engine.

Every engine (the library's :class:`~neardup.dedup.pipeline.Deduplicator`, the Spark kernels,
``explain``) decides documents in the same four steps, all written once here and knowing nothing
of files, HTTP or Spark:

1. :func:`processing_order`: input position, longest first or newest first (ties: position);
2. :func:`searched_rows`: the rows that take the Hamming path (without a window only the first
   copy of a normalised text: later copies always take the exact path);
3. :func:`accept`: the accept test of a candidate pair (distance within the radius, time window,
   verifier similarity at or above its threshold);
4. :func:`candidate_csr` then :func:`decide`: accepted candidates sorted per document by
   (distance, position), or with ``cluster_similarity`` by (similarity descending, distance,
   position), and the greedy rule (:func:`~neardup.dedup.greedy.decide_in_order`).

:class:`DecideConfig` holds the parameters these steps read; a ``Deduplicator`` builds it once
(``Deduplicator.state.decide_config``).

>>> cfg = DecideConfig(radius=3, keep="first", window=None, threshold=None)
>>> order = processing_order(cfg.keep, np.arange(3), np.array([5, 5, 5]), np.zeros(3))
>>> keys = [7, 7, 9]
>>> searched_rows(cfg, order, keys).tolist()  # the copy of text 7 takes the exact path
[0, 2]
>>> q, p, d = np.array([2]), np.array([0]), np.array([2])
>>> ok = accept(cfg, d, np.zeros(3)[q], np.zeros(3)[p], None)
>>> ledger = Ledger.empty(3)
>>> _ = decide(cfg, ledger, order, [False] * 3, keys, candidate_csr(q[ok], p[ok], d[ok], 3))
>>> ledger.statuses(), ledger.rep.tolist()
(['unique', 'exact_duplicate', 'duplicate'], [0, 0, 0])
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from neardup.dedup.decisions import PreparedBatch
from neardup.dedup.greedy import Ledger, decide_in_order

if TYPE_CHECKING:
    from neardup.dedup.candidates import CandidateIndex

__all__ = [
    "Csr",
    "DecideConfig",
    "Ledger",
    "StateView",
    "accept",
    "candidate_csr",
    "decide",
    "decide_batch",
    "processing_order",
    "searched_rows",
    "verified_pairs",
    "verify_pairs",
]

Csr = tuple[list[int], list[int], list[int], list[float] | None]
Lookup = Callable[[npt.NDArray[np.int64]], npt.NDArray[Any]]


@dataclass(frozen=True)
class DecideConfig:
    """What the decide step reads: the Hamming ``radius`` of a candidate, the keep policy, the
    time ``window`` (seconds or None), the verifier ``threshold`` (None: no verifier) and
    ``cluster_similarity`` (None: star clusters; else a document joins a kept document ``r``
    only when its similarity ``s`` keeps every pair of ``r``'s cluster at least this similar,
    bounded through ``r``: ``s + min(similarity of r's members) - 1 >= cluster_similarity``,
    see :mod:`neardup.dedup.greedy`).

    >>> DecideConfig(radius=64, keep="first", window=None, threshold=0.5).threshold
    0.5
    """

    radius: int
    keep: str
    window: float | None
    threshold: float | None
    cluster_similarity: float | None = None


def processing_order(
    keep: str, pos: npt.NDArray[np.int64], length: npt.NDArray[np.int64], ts: npt.NDArray[Any]
) -> npt.NDArray[np.int64]:
    """Rows in processing order: input position, longest first, or newest first (ties: position).

    >>> processing_order("longest", np.array([0, 1, 2]), np.array([3, 9, 9]), np.zeros(3)).tolist()
    [1, 2, 0]
    """
    if keep == "longest":
        return np.lexsort((pos, -np.asarray(length)))
    if keep == "newest":
        return np.lexsort((pos, -np.asarray(ts, np.float64)))
    return np.argsort(pos, kind="stable")


def searched_rows(
    config: DecideConfig,
    order: npt.NDArray[np.int64],
    keys: Sequence[Any],
    seen: Container[Any] = (),
) -> npt.NDArray[np.int64]:
    """Rows (sorted) that may take the Hamming path, from the non-empty rows in ``order``.

    Without a window, a later copy of an already seen normalised text (``keys``: exact keys per
    row; ``seen``: keys decided before this batch) always takes the exact path, so only the
    first copy is searched: a text repeated m times costs no m^2 pairs. With a window a copy may
    fall outside it, so every row is searched.
    """
    if config.window is not None:
        return np.sort(np.asarray(order, np.int64))
    first: set[Any] = set()
    out = []
    for r in order.tolist():
        key = keys[r]
        if key not in first and key not in seen:
            first.add(key)
            out.append(r)
    return np.sort(np.asarray(out, dtype=np.int64))


def accept(
    config: DecideConfig,
    dist: npt.NDArray[np.int64],
    ts_q: npt.NDArray[np.float64] | None,
    ts_p: npt.NDArray[np.float64] | None,
    similarity: npt.NDArray[np.float64] | None,
    horizon_q: npt.NDArray[np.float64] | None = None,
    needed: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.bool_]:
    """The accept test of candidate pairs: Hamming distance within the radius, timestamps
    within the window (skipped when ``ts_q``/``ts_p`` are None: applied later), the candidate
    not older than the query's streaming horizon (``horizon_q``, see
    :func:`~neardup.dedup.greedy.horizons`) and, with a verifier, ``similarity >= threshold``
    (``similarity`` None: not computed yet; ``needed``: the threshold that applies per pair,
    from :func:`verify_pairs`, else the configuration's).

    >>> cfg = DecideConfig(radius=3, keep="first", window=None, threshold=0.5)
    >>> accept(cfg, np.array([1, 4, 2]), None, None, np.array([0.9, 0.9, 0.4])).tolist()
    [True, False, False]
    """
    ok: npt.NDArray[np.bool_] = np.asarray(dist) <= config.radius
    if config.window is not None and ts_q is not None and ts_p is not None:
        ok &= np.abs(np.asarray(ts_q) - np.asarray(ts_p)) <= config.window
        if horizon_q is not None:  # expired for the query document
            ok &= np.floor(np.asarray(ts_p, np.float64)) >= horizon_q
    if config.threshold is not None and similarity is not None:
        need = config.threshold if needed is None else np.asarray(needed, np.float64)
        ok &= np.asarray(similarity, np.float64) >= need
    return ok


def verify_pairs(
    verifier: Any, a: npt.NDArray[Any], b: npt.NDArray[Any], threshold: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The verifier's evidence on sketch row pairs: the similarity (the estimated Jaccard
    similarity for :class:`~neardup.verify.MinHashVerifier`, what every surface shows) and the
    threshold that applied to it (its ``short_threshold`` for a pair with a short text); the
    pair is confirmed when the first is at or above the second. A verifier without
    ``estimate`` / ``thresholds`` gives its ``similarity`` against ``threshold``.

    >>> from neardup.verify import MinHashVerifier
    >>> v = MinHashVerifier()
    >>> s = v.sketch_many(["Tiny text.", "tiny text"])
    >>> sim, need = verify_pairs(v, s[:1], s[1:], v.threshold)
    >>> sim.tolist(), need.tolist()  # the same text after normalisation: 1.0, not 0.8
    ([1.0], [0.8])
    """
    estimate, needed = getattr(verifier, "estimate", None), getattr(verifier, "thresholds", None)
    if estimate is None or needed is None:
        sim = np.asarray(verifier.similarity(a, b), np.float64)
        return sim, np.full(len(sim), threshold, np.float64)
    return np.asarray(estimate(a, b), np.float64), np.asarray(needed(a, b), np.float64)


def candidate_csr(
    q: npt.NDArray[np.int64],
    pos: npt.NDArray[np.int64],
    dist: npt.NDArray[np.int64],
    n: int,
    similarity: npt.NDArray[np.float64] | None = None,
) -> Csr:
    """Accepted candidates ``(query row, candidate position, distance)`` as CSR lists per query
    row ``0..n-1``, each sorted by (distance, position), or with ``similarity`` (the
    ``cluster_similarity`` rule) by (similarity descending, distance, position): the greedy
    rule takes the first kept one it may join.

    >>> candidate_csr(np.array([1, 1]), np.array([0, 5]), np.array([3, 1]), 2)
    ([0, 0, 2], [5, 0], [1, 3], None)
    >>> candidate_csr(np.array([1, 1]), np.array([0, 5]), np.array([3, 1]), 2, np.array([.9, .7]))
    ([0, 0, 2], [0, 5], [3, 1], [0.9, 0.7])
    """
    q, pos, dist = (np.asarray(a, np.int64) for a in (q, pos, dist))
    if similarity is None:
        order = np.lexsort((pos, dist, q))
    else:
        similarity = np.asarray(similarity, np.float64)
        order = np.lexsort((pos, dist, -similarity, q))
    ptr = np.searchsorted(q[order], np.arange(n + 1))
    sim = None if similarity is None else similarity[order].tolist()
    return ptr.tolist(), pos[order].tolist(), dist[order].tolist(), sim


def decide(
    config: DecideConfig,
    ledger: Ledger,
    order: npt.NDArray[np.int64],
    empty: Sequence[bool],
    keys: Sequence[int],
    csr: Csr,
    *,
    base: int = 0,
    origin: int = 0,
    horizon: npt.NDArray[np.float64] | None = None,
) -> list[int]:
    """The greedy rule over ``order`` on accepted candidates ``csr``, written into ``ledger``
    (rows ``base..`` of it, positions relative to ``origin``; ``horizon`` per row, see
    :func:`~neardup.dedup.greedy.horizons`); returns the new kept rows."""
    ptr, pos, dist, sim = csr
    return decide_in_order(
        ledger,
        np.asarray(order, np.int64),
        base=base,
        empty=empty,
        keys=keys,
        ptr=ptr,
        pos=pos,
        dist=dist,
        window=config.window,
        origin=origin,
        horizon=None if horizon is None else horizon.tolist(),
        similarity=sim,
        cluster_similarity=config.cluster_similarity,
    )


@dataclass(frozen=True)
class StateView:
    """What :func:`decide_batch` reads of the documents decided before a batch: the exact keys
    already searched, and per global position of a kept document its timestamp (with a window)
    and its verifier sketch (with a verifier). ``index``: query the kept documents' candidate
    index (streaming); None when the batch is the whole input (batch mode, Spark components).
    """

    exact: Container[int] = ()
    timestamps: Lookup | None = None
    sketches: Lookup | None = None
    index: CandidateIndex | None = None


def decide_batch(
    config: DecideConfig,
    design: CandidateIndex,
    verifier: Any,
    view: StateView,
    ledger: Ledger,
    chunk: PreparedBatch,
    order: npt.NDArray[np.int64],
    *,
    base: int = 0,
    origin: int = 0,
    horizon: npt.NDArray[np.float64] | None = None,
) -> list[int]:
    """Decide the documents of ``chunk`` (global positions ``base..``) in ``order`` against the
    state seen through ``view``: searched rows, candidates (inside the batch by ``design``, and
    among the kept documents by ``view.index``), the accept test, then the greedy rule into
    ``ledger``. Returns the rows kept; the caller applies them to its state (index, sketches).
    """
    live = searched_rows(config, order[~chunk.empty[order]], chunk.keys, view.exact)
    sk = None if chunk.sketches is None else chunk.sketches[live]
    i, j, d = design.pairs(chunk.fps[live], sk)
    i, j = live[i], live[j]
    parts = [(np.concatenate([j, i]), np.concatenate([i, j]) + base, np.concatenate([d, d]))]
    if view.index is not None:
        q, p, d = view.index.query(chunk.fps[live], sk)
        parts.append((live[q], p, d))
    q = np.concatenate([x[0] for x in parts]).astype(np.int64)
    pos = np.concatenate([x[1] for x in parts]).astype(np.int64)
    dist = np.concatenate([x[2] for x in parts]).astype(np.int64)
    ts_p = None
    if config.window is not None:
        ts_p = _lookup(pos, base, chunk.ts, view.timestamps)
    sim = need = None
    if config.threshold is not None and chunk.sketches is not None and len(q):
        b = _lookup(pos, base, chunk.sketches, view.sketches)
        sim, need = verify_pairs(verifier, chunk.sketches[q], b, config.threshold)
    hz = None if horizon is None else horizon[q]
    ok = accept(config, dist, chunk.ts[q], ts_p, sim, hz, need)
    ranked = None
    if config.cluster_similarity is not None:
        ranked = np.zeros(0) if sim is None else sim[ok]  # None: no candidate pairs at all
    csr = candidate_csr(q[ok], pos[ok], dist[ok], len(chunk.fps), ranked)
    empty = chunk.empty.tolist()
    return decide(
        config, ledger, order, empty, chunk.keys, csr, base=base, origin=origin, horizon=horizon
    )


def verified_pairs(
    config: DecideConfig, design: CandidateIndex, verifier: Any, chunk: PreparedBatch
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[Any]]:
    """Every verified candidate pair of a whole input ``chunk`` (positions ``a < b``, sorted):
    the rows :func:`searched_rows` searches (the first copy of each normalised text; no
    window), candidates of each other by ``design``, that pass :func:`accept`; with their
    Hamming distance and similarity (the verifier's estimate; ``1 - distance / 64`` without
    a verifier). The pairs behind the decisions, whoever was kept (``dedup --pairs``).

    >>> from neardup import Deduplicator
    >>> dd = Deduplicator()
    >>> text = "the storm hit the coast at night and the ferry to the island was cancelled"
    >>> chunk = dd.prepare([text, "x y z", text + " again", text])
    >>> a, b, d, s = verified_pairs(dd.state.decide_config, dd.state.candidates, dd.verifier, chunk)
    >>> a.tolist(), b.tolist()  # the exact copy (3) is not a verified pair
    ([0], [2])
    """
    assert config.window is None, "verified pairs are defined without a window"
    order = np.flatnonzero(~np.asarray(chunk.empty))
    live = searched_rows(config, order, chunk.keys)
    sk = None if chunk.sketches is None else chunk.sketches[live]
    i, j, d = design.pairs(chunk.fps[live], sk)
    d = np.asarray(d, np.int64)
    sim: npt.NDArray[Any] = 1.0 - d / 64.0
    need = None
    if config.threshold is not None and sk is not None:
        sim, need = verify_pairs(verifier, sk[i], sk[j], config.threshold)
    ok = accept(config, d, None, None, sim, None, need)
    a, b = np.minimum(live[i], live[j])[ok], np.maximum(live[i], live[j])[ok]
    order = np.lexsort((b, a))
    return a[order], b[order], d[ok][order], np.asarray(sim, np.float64)[ok][order]


def _lookup(
    pos: npt.NDArray[np.int64], base: int, rows: npt.NDArray[Any], before: Lookup | None
) -> npt.NDArray[Any]:
    """Per global position: the batch's own row from ``base`` on, else the state's value."""
    inside = pos >= base
    out = np.empty((len(pos), *rows.shape[1:]), rows.dtype)
    out[inside] = rows[pos[inside] - base]
    if (~inside).any():
        assert before is not None, "candidates outside the batch need the state's values"
        out[~inside] = before(pos[~inside])
    return out
