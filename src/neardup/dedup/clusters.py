"""Connected components and cluster statistics on numpy arrays.

The dedup pipeline itself builds star-shaped clusters (each duplicate points at one kept
document, see :mod:`neardup.dedup.pipeline`); connected components over raw match pairs are
what a chain of small edits would produce without that guard, and what batch engines use.

>>> import numpy as np
>>> connected_components(5, np.array([0, 1]), np.array([1, 2])).tolist()
[0, 0, 0, 1, 2]
>>> cluster_sizes(np.array([0, 0, 0, 1, 2])).tolist()
[3, 1, 1]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def relabel_by_first(labels: npt.ArrayLike) -> IntArray:
    """Renumber labels densely ``0..c-1`` in order of first appearance.

    >>> relabel_by_first([7, 7, 3, 9, 3]).tolist()
    [0, 0, 1, 2, 1]
    """
    arr = np.asarray(labels)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    uniq, first, inverse = np.unique(arr, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq), dtype=np.int64)
    return rank[inverse.ravel()]


def connected_components(n: int, i: npt.ArrayLike, j: npt.ArrayLike) -> IntArray:
    """Component label of each of ``n`` nodes given edges ``(i[e], j[e])``.

    Labels are dense and numbered by each component's smallest node, so node 0 is in
    component 0. Pure numpy (min-label hooking with pointer jumping, a few O(n + edges)
    rounds), so the core needs no graph library.
    """
    ii = np.asarray(i, dtype=np.int64)
    jj = np.asarray(j, dtype=np.int64)
    if ii.shape != jj.shape:
        raise ValueError(f"edge arrays differ in shape: {ii.shape} vs {jj.shape}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if ii.size and (min(ii.min(), jj.min()) < 0 or max(ii.max(), jj.max()) >= n):
        raise ValueError(f"edge endpoints must lie in [0, {n})")
    parent = np.arange(n, dtype=np.int64)
    while True:
        # hook every root to the smallest root it has an edge to (roots only ever decrease,
        # so this terminates), then flatten the trees to stars
        ri, rj = parent[ii], parent[jj]
        low = np.minimum(ri, rj)
        hooked = parent.copy()
        np.minimum.at(hooked, ri, low)
        np.minimum.at(hooked, rj, low)
        while not np.array_equal(jumped := hooked[hooked], hooked):
            hooked = jumped
        if np.array_equal(hooked, parent):
            return relabel_by_first(parent)
        parent = hooked


def cluster_sizes(labels: npt.ArrayLike) -> IntArray:
    """Size of each cluster, indexed by dense label."""
    arr = np.asarray(labels, dtype=np.int64)
    return np.bincount(arr) if arr.size else np.zeros(0, dtype=np.int64)


def largest_clusters(labels: npt.ArrayLike, top: int = 5) -> list[tuple[int, int]]:
    """``(label, size)`` of the ``top`` largest clusters with more than one member.

    >>> largest_clusters([0, 1, 1, 2, 2, 2])
    [(2, 3), (1, 2)]
    """
    sizes = cluster_sizes(labels)
    order = np.lexsort((np.arange(len(sizes)), -sizes))[:top]
    return [(int(c), int(sizes[c])) for c in order if sizes[c] > 1]


def run_cluster_sizes(
    labels: npt.ArrayLike, kept_elsewhere: npt.ArrayLike
) -> tuple[IntArray, IntArray]:
    """``(labels, sizes)`` of the clusters of some documents (e.g. one ``--state`` run), a
    cluster whose kept document is not among them (``kept_elsewhere``: per document, its
    kept document is another run's) counting that document too.

    >>> run_cluster_sizes([7, 9, 9, 4], [False, False, False, True])
    (array([4, 7, 9]), array([2, 1, 2]))
    """
    ids, inverse, sizes = np.unique(np.asarray(labels), return_inverse=True, return_counts=True)
    outside = np.zeros(ids.size, np.int64)
    outside[inverse[np.asarray(kept_elsewhere, bool)]] = 1
    return ids.astype(np.int64), (sizes + outside).astype(np.int64)
