"""Numba kernels of the self-join: brute force, bucket joins, pair expansion, bucket sort.

Same conventions as :mod:`neardup.index.kernels` (resumable fixed output buffers driven by
:func:`~neardup.index.kernels.collect`, uint64 arithmetic, compiled on first use).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from neardup.index.kernels import popcount, reported_by_earlier_table


@njit(cache=True, nogil=True)
def sort_buckets(keys: Any, pos: Any, offsets: Any) -> None:
    """Sort each bucket by full key: insertion sort, numpy's sort for big buckets."""
    for b in range(offsets.shape[0] - 1):
        lo = np.int64(offsets[b])
        hi = np.int64(offsets[b + 1])
        if hi - lo > 32:
            order = np.argsort(keys[lo:hi])
            keys[lo:hi] = keys[lo:hi][order]
            pos[lo:hi] = pos[lo:hi][order]
            continue
        for i in range(lo + 1, hi):
            k = keys[i]
            p = pos[i]
            j = i
            while j > lo and keys[j - 1] > k:
                keys[j] = keys[j - 1]
                pos[j] = pos[j - 1]
                j -= 1
            keys[j] = k
            pos[j] = p


@njit(cache=True, nogil=True)
def brute_pairs(
    start: int, fps: Any, k: int, out_i: Any, out_j: Any, out_d: Any
) -> tuple[int, int]:
    """All pairs ``i < j`` of ``fps`` within ``k``, rows ``i >= start`` (tiny inputs)."""
    cap = out_i.shape[0]
    m = 0
    n = fps.shape[0]
    for i in range(start, n):
        m0 = m
        for j in range(i + 1, n):
            d = popcount(fps[i] ^ fps[j])
            if d <= k:
                if m == cap:
                    return m0, i
                out_i[m] = i
                out_j[m] = j
                out_d[m] = d
                m += 1
    return m, n


@njit(cache=True, nogil=True)
def join_tables(
    start: int,
    k: int,
    keys: Any,
    pos: Any,
    offsets: Any,
    probes: Any,
    nprobes: int,
    dedup: Any,
    radius: int,
    out_i: Any,
    out_j: Any,
    out_d: Any,
) -> tuple[int, int]:
    """Self-join of bucketed tables: pairs of positions within ``k``, each pair once.

    Units are ``t * buckets + a``. Within a table, a pair is met in one bucket (probe 0) or
    in one ordered pair of buckets ``a < a ^ probe``; across tables the first-table rule of
    :func:`search_tables` applies.
    """
    ntab = keys.shape[0]
    nb = offsets.shape[1] - 1
    cap = out_i.shape[0]
    m = 0
    for unit in range(start, ntab * nb):
        t = unit // nb
        a = unit - t * nb
        lo_a = np.int64(offsets[t, a])
        hi_a = np.int64(offsets[t, a + 1])
        if lo_a == hi_a:
            continue
        m0 = m
        for pi in range(nprobes):
            b = a ^ probes[pi]
            if b < a:
                continue
            hi_b = np.int64(offsets[t, b + 1])
            for x in range(lo_a, hi_a):
                kx = keys[t, x]
                first = x + 1 if b == a else np.int64(offsets[t, b])
                for y in range(first, hi_b):
                    diff = kx ^ keys[t, y]
                    d = popcount(diff)
                    if d > k:
                        continue
                    if reported_by_earlier_table(diff, dedup, t, radius):
                        continue
                    if m == cap:
                        return m0, unit
                    out_i[m] = pos[t, x]
                    out_j[m] = pos[t, y]
                    out_d[m] = d
                    m += 1
    return m, ntab * nb


@njit(cache=True, nogil=True)
def join_tables_r0(
    start: int,
    k: int,
    keys: Any,
    pos: Any,
    offsets: Any,
    dedup: Any,
    hot: int,
    out_i: Any,
    out_j: Any,
    out_d: Any,
) -> tuple[int, int]:
    """:func:`join_tables` for radius-0 designs: pairs within one bucket only (faster loop).

    Buckets of more than ``hot`` entries are skipped: the caller handles them.
    """
    ntab = keys.shape[0]
    nb = offsets.shape[1] - 1
    cap = out_i.shape[0]
    m = 0
    for t in range(start // nb, ntab):
        for a in range(start % nb if t == start // nb else 0, nb):
            lo = np.int64(offsets[t, a])
            hi = np.int64(offsets[t, a + 1])
            if hi - lo > hot:
                continue
            m0 = m
            for x in range(lo, hi):
                kx = keys[t, x]
                for y in range(x + 1, hi):
                    diff = kx ^ keys[t, y]
                    d = popcount(diff)
                    if d > k:
                        continue
                    if reported_by_earlier_table(diff, dedup, t, 0):
                        continue
                    if m == cap:
                        return m0, t * nb + a
                    out_i[m] = pos[t, x]
                    out_j[m] = pos[t, y]
                    out_d[m] = d
                    m += 1
    return m, ntab * nb


@njit(cache=True, nogil=True)
def expand_pairs(a: Any, b: Any, dist: Any, order: Any, starts: Any, counts: Any) -> Any:
    """Expand pairs of distinct values (and the groups themselves) to input-position pairs.

    ``order[starts[g]:starts[g + 1]]`` are the input positions holding distinct value ``g``.
    """
    total = 0
    for e in range(a.shape[0]):
        total += counts[a[e]] * counts[b[e]]
    for g in range(counts.shape[0]):
        total += counts[g] * (counts[g] - 1) // 2
    out_i = np.empty(total, np.int64)
    out_j = np.empty(total, np.int64)
    out_d = np.empty(total, np.int64)
    m = 0
    for e in range(a.shape[0]):
        for x in range(starts[a[e]], starts[a[e] + 1]):
            for y in range(starts[b[e]], starts[b[e] + 1]):
                u = order[x]
                v = order[y]
                out_i[m] = min(u, v)
                out_j[m] = max(u, v)
                out_d[m] = dist[e]
                m += 1
    for g in range(counts.shape[0]):
        if counts[g] < 2:
            continue
        for x in range(starts[g], starts[g + 1]):
            for y in range(x + 1, starts[g + 1]):
                out_i[m] = min(order[x], order[y])
                out_j[m] = max(order[x], order[y])
                out_d[m] = 0
                m += 1
    return out_i, out_j, out_d
