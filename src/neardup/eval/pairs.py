"""All pairs within Hamming distance k: ``neardup.index.all_pairs`` when present, else brute force.

The brute-force join is exact and O(n^2) (blocked numpy popcount, a few seconds for 30,000
fingerprints); it keeps the
evaluation independent of the index while the index is being built, and cross-checks it after.

>>> import numpy as np
>>> i, j, d = brute_force_pairs(np.array([0b0000, 0b0011, 0b1111], dtype=np.uint64), 2)
>>> i.tolist(), j.tolist(), d.tolist()
([0, 1], [1, 2], [2, 2])
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["all_pairs", "brute_force_pairs"]

IntArr = npt.NDArray[np.int64]


def _blocked(
    fps: npt.NDArray[np.uint64], k: int, block: int = 256
) -> tuple[IntArr, IntArr, IntArr]:
    n, w = fps.shape
    out: list[tuple[IntArr, IntArr, IntArr]] = []
    for lo in range(0, n, block):
        hi = min(lo + block, n)
        d = np.zeros((hi - lo, n - lo), dtype=np.int64)
        for c in range(w):
            d += np.bitwise_count(fps[lo:hi, c, None] ^ fps[None, lo:, c])
        a, b = np.nonzero(d <= k)
        keep = b > a
        a, b = a[keep], b[keep]
        out.append((a + lo, b + lo, d[a, b]))
    if not out:
        e = np.empty(0, dtype=np.int64)
        return e, e.copy(), e.copy()
    return tuple(np.concatenate([o[x] for o in out]).astype(np.int64) for x in range(3))  # type: ignore[return-value]


def _as_words(fps: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    arr = np.asarray(fps)
    if arr.dtype != np.uint64:
        raise TypeError(f"fingerprints must be a uint64 array, got dtype {arr.dtype}")
    if arr.ndim not in (1, 2):
        raise ValueError(f"fingerprints must have shape (n,) or (n, words), got {arr.shape}")
    return np.ascontiguousarray(arr[:, None] if arr.ndim == 1 else arr)


def brute_force_pairs(fps: npt.ArrayLike, k: int) -> tuple[IntArr, IntArr, IntArr]:
    """Exact pairs ``i < j`` within Hamming distance k; fps: ``(n,)`` or ``(n, words)`` uint64."""
    return _blocked(_as_words(fps), int(k))


def all_pairs(fps: npt.ArrayLike, k: int) -> tuple[IntArr, IntArr, IntArr]:
    """``(i, j, dist)`` for all pairs within k, by the project index if available."""
    if np.asarray(fps).ndim != 1:  # the index joins 64-bit fingerprints only
        return brute_force_pairs(fps, k)
    try:
        from neardup.index import all_pairs as index_all_pairs
    except ImportError:
        return brute_force_pairs(fps, k)
    i, j, d = index_all_pairs(fps, k)
    return np.asarray(i, np.int64), np.asarray(j, np.int64), np.asarray(d, np.int64)
