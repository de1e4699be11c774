"""The one greedy decision rule, on arrays: every engine (library, CLI, service, Spark) calls it.

Documents are decided one by one in processing order. For document ``g``:

1. no features: ``empty``, a cluster of its own, never matched;
2. exact path: ``p = exact[key]`` (the last document with this normalised text that was searched)
   and ``r = rep[p]``; without a window, or with ``|t_g - t_r| <= window``, ``g`` joins ``r``'s
   cluster: ``exact_duplicate`` (distance 0) when ``p == r``, else ``duplicate`` at ``p``'s
   distance; with a horizon (streaming order, see :func:`horizons`) also ``floor(t_r) >= h_g``;
3. otherwise ``exact[key] = g`` and the first candidate (candidates arrive sorted by distance,
   then position, already filtered by the accept predicate) that is a *kept* document makes ``g``
   a ``duplicate`` of it;
4. no candidate: ``unique``, kept, a new cluster.

Clusters are numbered in order of creation. The Spark engine runs this rule per connected
component of the accepted-candidate graph: a document's decision depends only on its neighbours'.

>>> import numpy as np
>>> ledger = Ledger.empty(3)
>>> kept = decide_in_order(
...     ledger, np.arange(3), base=0, empty=[False, False, False], keys=[7, 7, 9],
...     ptr=[0, 0, 0, 1], pos=[0], dist=[5])
>>> ledger.statuses(), ledger.rep.tolist(), kept
(['unique', 'exact_duplicate', 'duplicate'], [0, 0, 0], [0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from neardup.dedup.state import DUPLICATE, EMPTY, EXACT_DUPLICATE, STATUS_NAMES, UNIQUE


@dataclass
class Ledger:
    """Per-document decision arrays indexed by position, plus the state the rule carries along.

    ``rep``: position of the kept document (itself when kept); ``distance``: Hamming distance
    to it (-1 when kept); ``cluster``: cluster number; ``status``: status code; ``ts``:
    timestamps (only read with a window); ``exact``: normalised-text key -> last searched
    position; ``n_clusters``: clusters created so far.
    """

    rep: npt.NDArray[np.int64]
    distance: npt.NDArray[np.int16]
    cluster: npt.NDArray[np.int64]
    status: npt.NDArray[np.int8]
    ts: npt.NDArray[np.float64]
    exact: dict[int, int] = field(default_factory=dict)
    n_clusters: int = 0

    @classmethod
    def empty(cls, n: int, ts: npt.ArrayLike | None = None) -> Ledger:
        """Undecided arrays for ``n`` documents (``ts``: their timestamps, if a window is used)."""
        return cls(
            np.full(n, -1, np.int64),
            np.full(n, -1, np.int16),
            np.full(n, -1, np.int64),
            np.full(n, -1, np.int8),
            np.full(n, np.nan) if ts is None else np.asarray(ts, np.float64),
        )

    def statuses(self) -> list[str]:
        """Status names, one per document."""
        return [STATUS_NAMES[s] for s in self.status.tolist()]


def horizons(ts: npt.ArrayLike, window: float, newest: float = -np.inf) -> npt.NDArray[np.float64]:
    """Per document ``h_g = floor(max(newest, t_0..t_g) - window)`` (input order): a kept
    document ``r`` with ``floor(t_r) < h_g`` has expired for ``g`` (a stream drops it from the
    index), in every engine and for any chunking. ``g`` is *late* when ``t_g < h_g``.

    >>> horizons([10.0, 30.0, 5.0], 10.0).tolist()
    [0.0, 20.0, 20.0]
    """
    m = np.fmax.accumulate(np.concatenate([[newest], np.asarray(ts, np.float64)]))[1:]
    return np.floor(m - window)


def decide_in_order(
    ledger: Ledger,
    order: npt.NDArray[np.int64],
    *,
    base: int,
    empty: Sequence[bool],
    keys: Sequence[int],
    ptr: Sequence[int],
    pos: Sequence[int],
    dist: Sequence[int],
    window: float | None = None,
    origin: int = 0,
    horizon: Sequence[float] | None = None,
) -> list[int]:
    """Decide the documents ``base + order[i]`` in that order; returns the new kept local rows.

    ``empty[l]`` and ``keys[l]`` describe local row ``l``; its accepted candidates are
    ``pos[ptr[l]:ptr[l + 1]]`` (global positions, sorted by (distance, position)) at distances
    ``dist[...]``. Candidates below ``base`` are kept documents decided earlier; those at or
    above ``base`` count only once decided as kept. ``origin``: the ledger's arrays start at
    that position (a saved state drops the rows no later decision can read); positions stay
    global. ``horizon[l]``: kept documents older than that (whole seconds) are out of reach
    of local row ``l`` (:func:`horizons`; ``keep='first'`` with a window).
    """
    rep, dst, clu, sta, ts = ledger.rep, ledger.distance, ledger.cluster, ledger.status, ledger.ts
    exact = ledger.exact
    new: list[int] = []
    o = origin
    for li in order.tolist():
        g = base + li
        if empty[li]:
            sta[g - o], rep[g - o], clu[g - o] = EMPTY, g, ledger.n_clusters
            ledger.n_clusters += 1
            continue
        p = exact.get(keys[li])
        if p is not None:
            r = int(rep[p - o])
            if window is None or (
                abs(ts[g - o] - ts[r - o]) <= window
                and (horizon is None or math.floor(ts[r - o]) >= horizon[li])
            ):
                rep[g - o], clu[g - o] = r, clu[r - o]
                if p == r:
                    sta[g - o], dst[g - o] = EXACT_DUPLICATE, 0
                else:
                    sta[g - o], dst[g - o] = DUPLICATE, dst[p - o]
                continue
        exact[keys[li]] = g
        for c in range(ptr[li], ptr[li + 1]):
            r = pos[c]
            if r >= base and (rep[r - o] != r or sta[r - o] != UNIQUE):
                continue  # not decided yet, or not a kept document
            rep[g - o], clu[g - o], dst[g - o], sta[g - o] = r, clu[r - o], dist[c], DUPLICATE
            break
        else:
            sta[g - o], rep[g - o], clu[g - o] = UNIQUE, g, ledger.n_clusters
            ledger.n_clusters += 1
            new.append(li)
    return new
