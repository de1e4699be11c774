"""The one place where the service meets the library's :class:`~neardup.Deduplicator`.

The service needs four things the streaming Deduplicator will offer once the persisted state
lands (CONTRACTS.md, "What each surface needs from A1"): decide without storing (``dry_run``),
per-document state columns to store, rebuild from stored columns (restart), and ``forget`` (a
deleted document stops attracting duplicates). Until then this module implements them on the
Deduplicator's internals; every such stand-in is marked ``STAND-IN`` and is the only code in
the service that touches a private attribute, so the swap to the library API happens here.

The decision rule itself is never copied: every decision comes out of ``Deduplicator.feed``.
"""

from __future__ import annotations

import hashlib
import json
from collections import ChainMap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.dedup import Deduplicator
from neardup.dedup.exact import exact_keys
from neardup.dedup.state import UNIQUE, Growable


@dataclass(frozen=True)
class Decided:
    """One batch's decisions and the state columns to store, in input order.

    ``duplicate_of`` holds positions (-1 for kept documents); ``sketch`` a row per document
    (kept documents only carry a meaningful one); ``exact`` the exact-path entries this batch
    set (normalised-text key -> position), i.e. the library's ``exact`` map after the batch.
    """

    position: npt.NDArray[np.int64]
    fingerprint: npt.NDArray[np.uint64]
    status: npt.NDArray[np.int8]
    duplicate_of: npt.NDArray[np.int64]
    distance: npt.NDArray[np.int16]
    cluster_id: npt.NDArray[np.int64]
    exact_key: list[int]
    sketch: npt.NDArray[Any] | None
    exact: dict[int, int]
    n_clusters: int


def config_id(dd: Deduplicator) -> str:
    """The id of everything that changes decisions (STAND-IN for ``Deduplicator.config_id``).

    >>> len(config_id(Deduplicator()))
    16
    """
    verifier = dd.verifier
    conf = {
        "fingerprint": dd.fingerprinter.config_id,
        "k": dd.k,
        "candidate_k": dd.candidate_k_,
        "candidates": dd._candidates.get_config(),
        "verifier": None if verifier is None else repr(verifier),
        "window": dd.window,
        "keep": dd.keep,
    }
    blob = json.dumps(conf, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


class Engine:
    """The service's view of one streaming Deduplicator (keep="first").

    >>> e = Engine(Deduplicator(k=3, verifier=None))
    >>> d = e.decide(["a b c d e", "a b c d e", "x y z"], None, commit=True)
    >>> d.status.tolist(), d.duplicate_of.tolist(), e.n_positions
    ([0, 2, 0], [-1, 0, -1], 3)
    >>> e.decide(["x y z"], None, commit=False).status.tolist(), e.n_positions
    ([2], 3)
    """

    def __init__(self, dd: Deduplicator) -> None:
        if dd.keep != "first":
            raise ValueError("the service decides in arrival order: keep must be 'first'")
        self.dd = dd
        self.config_id = config_id(dd)

    @property
    def n_positions(self) -> int:
        return self.dd.n_documents

    @property
    def n_clusters(self) -> int:
        return int(self.dd._n_clusters)

    def index_size(self) -> int:
        """Kept documents currently in the in-memory candidate index."""
        return len(self.dd._candidates)

    def memory_bytes(self) -> int:
        info = self.dd.describe()
        idx_bytes = info["candidates"].get("memory_bytes", 0)
        return int(info["state_bytes"]) + int(info["sketch_bytes"]) + int(idx_bytes)

    def decide(
        self, texts: Sequence[str], timestamps: Sequence[float] | None, *, commit: bool
    ) -> Decided:
        """Decide a batch in order; with ``commit=False`` the state is left as it was.

        STAND-IN for ``Deduplicator.feed(texts, timestamps, commit=False)``: the exact map is
        overlaid (writes go to a fresh layer), and a dry run truncates the per-document arrays
        back and skips indexing and expiry.
        """
        dd = self.dd
        real = dd._exact
        overlay: dict[int, int] = {}
        dd._exact = ChainMap(overlay, real)  # type: ignore[assignment]
        saved = (dd.n_documents, dd._n_clusters, dd._max_ts)
        if not commit:
            dd._index_new = _skip_indexing  # type: ignore[method-assign]
        try:
            d = dd.feed(texts, timestamps)
            sketches = self._kept_sketches(d.position, d.status, d.duplicate_of)
            n_clusters = int(dd._n_clusters)
        finally:
            dd._exact = real
            if not commit:
                del dd._index_new
                _truncate(dd, saved[0])
                dd._n_clusters, dd._max_ts = saved[1], saved[2]
        if commit:
            real.update(overlay)
        return Decided(
            d.position,
            d.fingerprint,
            d.status,
            d.duplicate_of,
            d.distance,
            d.cluster_id,
            exact_keys(texts),
            sketches,
            overlay,
            n_clusters,
        )

    def warm_up(self) -> None:
        """Load every kernel once (a dry run), so the first request is not the slow one."""
        text = "warm up the kernels before serving 在服务前预热内核 " * 4
        ts = None if self.dd.window is None else [0.0]
        self.decide([text], ts, commit=False)

    def _kept_sketches(
        self, position: npt.NDArray[np.int64], status: npt.NDArray[np.int8], dup: Any
    ) -> npt.NDArray[Any] | None:
        """Sketch rows of the batch's kept documents (zeros elsewhere), for storage."""
        dd = self.dd
        if dd._sketches is None or dd.verifier is None:
            return None
        kept = (status == UNIQUE) & (dup < 0)
        slots = dd._slot.view()[position[kept]] if kept.any() else np.zeros(0, np.int64)
        kept_rows = slots >= 0
        width = dd._sketches.view().shape[1]
        out = np.zeros((len(position), width), dtype=dd._sketches.view().dtype)
        if kept_rows.all() and slots.size:  # a dry run never stored them: nothing to copy
            out[np.flatnonzero(kept)] = dd._sketches.view()[slots]
        return out

    def forget(self, positions: Sequence[int], exact: dict[int, int]) -> None:
        """STAND-IN for ``Deduplicator.forget``: the documents leave the candidate index and
        the exact-path entries ``exact`` (key -> position) that lead into their clusters go."""
        pos = np.asarray(list(positions), dtype=np.int64)
        if pos.size:
            self.dd._candidates.remove(pos)
        for key, p in exact.items():
            if self.dd._exact.get(key) == p:
                del self.dd._exact[key]

    def drop(self, positions: Sequence[int]) -> None:
        """Rows the retention deleted: as :meth:`Store.load` fills them after a restart
        (an expired kept document of its own, too old for the exact path)."""
        pos = np.asarray(list(positions), dtype=np.int64)
        if not pos.size:
            return
        dd = self.dd
        dd._candidates.remove(pos)
        dd._rep.view()[pos] = pos
        dd._status.view()[pos] = UNIQUE
        if dd.window is not None:
            dd._ts.view()[pos] = -np.inf

    @classmethod
    def restore(
        cls,
        dd: Deduplicator,
        columns: dict[str, npt.NDArray[Any]],
        exact: dict[int, int],
        n_clusters: int,
    ) -> Engine:
        """STAND-IN for ``Deduplicator.from_state_columns``: rebuild from stored rows.

        ``columns`` hold one entry per position ``0..n-1`` (rows the retention deleted are
        filled in as expired kept documents: never indexed, too old for the exact path);
        ``forgotten`` marks deleted documents (not indexed).
        """
        n = len(columns["status"])
        if n == 0:
            return cls(dd)
        status = columns["status"].astype(np.int8)
        rep = columns["duplicate_of"].astype(np.int64)
        own = rep < 0
        rep[own] = np.arange(n, dtype=np.int64)[own]
        _fill(dd._rep, rep)
        _fill(dd._dist, columns["distance"].astype(np.int16))
        _fill(dd._cluster, columns["cluster_id"].astype(np.int64))
        _fill(dd._status, status)
        fps = columns["fingerprint"].astype(np.uint64)
        _fill(dd._fps, fps)
        ts = columns["timestamp"].astype(np.float64)
        if dd.window is not None:
            _fill(dd._ts, ts)
        if np.isfinite(ts).any():
            dd._max_ts = float(np.nanmax(np.where(np.isfinite(ts), ts, -np.inf)))
        dd._exact = dict(exact)
        dd._n_clusters = n_clusters
        kept = np.flatnonzero((status == UNIQUE) & own & ~columns["forgotten"])
        if dd.verifier is not None:
            slot = np.full(n, -1, np.int64)
            slot[kept] = np.arange(kept.size)
            _fill(dd._slot, slot)
            sk = columns["sketch"][kept]
            dd._sketches = Growable(sk.dtype, sk.shape[1], capacity=max(1024, kept.size))
            dd._sketches.extend(sk)
        if dd.window is not None and np.isfinite(dd._max_ts):
            kept = kept[ts[kept] >= np.floor(dd._max_ts - dd.window)]
        kts = np.floor(ts[kept]).astype(np.int64) if dd.window is not None else None
        _add(dd, kept, fps[kept], kts)
        return cls(dd)


def _add(dd: Deduplicator, positions: Any, fps: Any, ts: Any) -> None:
    sk = None if dd._sketches is None else dd._sketches.view()[dd._slot.view()[positions]]
    dd._candidates.add(positions, fps, sk, ts)


def _skip_indexing(base: int, new: list[int], chunk: Any) -> None:
    """A dry run leaves the index (and its expiry) untouched."""


def _truncate(dd: Deduplicator, n: int) -> None:
    for g in (dd._rep, dd._dist, dd._cluster, dd._status, dd._fps):
        g.size = min(g.size, n)
    if dd.verifier is not None:
        dd._slot.size = min(dd._slot.size, n)
    if dd.window is not None:
        dd._ts.size = min(dd._ts.size, n)


def _fill(g: Growable, values: npt.NDArray[Any]) -> None:
    g.size = 0
    g.extend(values)
