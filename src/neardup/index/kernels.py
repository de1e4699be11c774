"""Numba kernels: permutation, bucketed table build, batched probe search, join.

All kernels are ``@njit(cache=True, nogil=True)``: compiled on first call (then cached on
disk, so a second process starts warm), never at import time. Arithmetic stays in uint64:
mixing uint64 with int64 in numba silently goes through float64.

A table's permutation is given per block as ``(rshift, mask, lshift)``: the block
``(x >> rshift) & mask`` lands at ``<< lshift`` in the permuted word.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def _ctpop(typingctx: Any, x: Any) -> Any:
    sig = types.uint64(types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, [args[0]])

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def popcount(x: np.uint64) -> np.int64:
    return np.int64(_ctpop(np.uint64(x)))  # type: ignore[call-arg]


@njit(cache=True, nogil=True, inline="always")
def permute(x: np.uint64, rsh: Any, msk: Any, lsh: Any, t: int) -> np.uint64:
    out = np.uint64(0)
    for i in range(rsh.shape[1]):
        out |= ((x >> rsh[t, i]) & msk[t, i]) << lsh[t, i]
    return out


@njit(cache=True, nogil=True)
def build_table(fps: Any, positions: Any, rsh: Any, msk: Any, lsh: Any, t: int, q: int,
                keys: Any, pos: Any, offsets: Any) -> None:
    """Counting-sort ``fps[positions]`` of table ``t`` into buckets on the top ``q`` bits."""
    n = positions.shape[0]
    shift = np.uint64(64 - q)
    nb = offsets.shape[0] - 1
    counts = np.zeros(nb + 1, np.int64)
    for i in range(n):
        p = permute(fps[positions[i]], rsh, msk, lsh, t)
        counts[np.int64(p >> shift) + 1] += 1
    for b in range(nb):
        counts[b + 1] += counts[b]
    for b in range(nb + 1):
        offsets[b] = counts[b]
    for i in range(n):
        p = permute(fps[positions[i]], rsh, msk, lsh, t)
        c = np.int64(p >> shift)
        j = counts[c]
        counts[c] = j + 1
        keys[j] = p
        pos[j] = positions[i]


@njit(cache=True, nogil=True, inline="always")
def _grow(a: Any, n: int) -> Any:
    if n < a.shape[0]:
        return a
    b = np.empty(max(16, 2 * a.shape[0]), a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def search_tables(queries: Any, k: int, keys: Any, pos: Any, offsets: Any, q: int,
                  rsh: Any, msk: Any, lsh: Any, probes: Any, nprobes: int,
                  dedup: Any, radius: int, alive: Any) -> Any:
    """Matches of ``queries`` within ``k`` in one run's tables: (query row, position, distance).

    A candidate met in table ``t`` is kept only if no earlier table ``u`` has it within the
    probe radius on ``u``'s bucket bits (``dedup[t, u]`` is that mask in ``t``'s space), so
    every position comes out once per query without a hash set.
    """
    ntab = keys.shape[0]
    shift = np.uint64(64 - q)
    out_q = np.empty(64, np.int64)
    out_p = np.empty(64, np.int64)
    out_d = np.empty(64, np.int64)
    m = 0
    for qi in range(queries.shape[0]):
        x = queries[qi]
        for t in range(ntab):
            px = permute(x, rsh, msk, lsh, t)
            b0 = np.int64(px >> shift)
            for pi in range(nprobes):
                b = b0 ^ probes[pi]
                for j in range(offsets[t, b], offsets[t, b + 1]):
                    diff = px ^ keys[t, j]
                    d = popcount(diff)
                    if d > k:
                        continue
                    dup = False
                    for u in range(t):
                        if popcount(diff & dedup[t, u]) <= radius:
                            dup = True
                            break
                    if dup:
                        continue
                    p = np.int64(pos[t, j])
                    if alive[p] == 0:
                        continue
                    out_q = _grow(out_q, m)
                    out_p = _grow(out_p, m)
                    out_d = _grow(out_d, m)
                    out_q[m] = qi
                    out_p[m] = p
                    out_d[m] = d
                    m += 1
    return out_q[:m], out_p[:m], out_d[:m]


@njit(cache=True, nogil=True)
def scan_range(queries: Any, k: int, fps: Any, lo: int, hi: int, alive: Any) -> Any:
    """Brute-force matches of ``queries`` among store positions ``[lo, hi)``."""
    out_q = np.empty(64, np.int64)
    out_p = np.empty(64, np.int64)
    out_d = np.empty(64, np.int64)
    m = 0
    for qi in range(queries.shape[0]):
        x = queries[qi]
        for p in range(lo, hi):
            d = popcount(x ^ fps[p])
            if d <= k and alive[p] != 0:
                out_q = _grow(out_q, m)
                out_p = _grow(out_p, m)
                out_d = _grow(out_d, m)
                out_q[m] = qi
                out_p[m] = p
                out_d[m] = d
                m += 1
    return out_q[:m], out_p[:m], out_d[:m]


@njit(cache=True, nogil=True)
def brute_pairs(fps: Any, k: int) -> Any:
    """All pairs ``i < j`` of ``fps`` within ``k`` (reference and tiny inputs)."""
    out_i = np.empty(64, np.int64)
    out_j = np.empty(64, np.int64)
    out_d = np.empty(64, np.int64)
    m = 0
    n = fps.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            d = popcount(fps[i] ^ fps[j])
            if d <= k:
                out_i = _grow(out_i, m)
                out_j = _grow(out_j, m)
                out_d = _grow(out_d, m)
                out_i[m] = i
                out_j[m] = j
                out_d[m] = d
                m += 1
    return out_i[:m], out_j[:m], out_d[:m]


@njit(cache=True, nogil=True)
def join_tables(k: int, keys: Any, pos: Any, offsets: Any, probes: Any, nprobes: int,
                dedup: Any, radius: int) -> Any:
    """Self-join of bucketed tables: pairs of positions within ``k``, each pair once.

    Within a table, a pair is met in one bucket (probe 0) or in one ordered pair of buckets
    ``a < a ^ probe``; across tables the first-table rule of :func:`search_tables` applies.
    """
    ntab = keys.shape[0]
    nb = offsets.shape[1] - 1
    out_i = np.empty(64, np.int64)
    out_j = np.empty(64, np.int64)
    out_d = np.empty(64, np.int64)
    m = 0
    for t in range(ntab):
        for a in range(nb):
            lo_a = offsets[t, a]
            hi_a = offsets[t, a + 1]
            if lo_a == hi_a:
                continue
            for pi in range(nprobes):
                b = a ^ probes[pi]
                if b < a:
                    continue
                hi_b = offsets[t, b + 1]
                for x in range(lo_a, hi_a):
                    kx = keys[t, x]
                    start = x + 1 if b == a else offsets[t, b]
                    for y in range(start, hi_b):
                        diff = kx ^ keys[t, y]
                        d = popcount(diff)
                        if d > k:
                            continue
                        dup = False
                        for u in range(t):
                            if popcount(diff & dedup[t, u]) <= radius:
                                dup = True
                                break
                        if dup:
                            continue
                        out_i = _grow(out_i, m)
                        out_j = _grow(out_j, m)
                        out_d = _grow(out_d, m)
                        out_i[m] = pos[t, x]
                        out_j[m] = pos[t, y]
                        out_d[m] = d
                        m += 1
    return out_i[:m], out_j[:m], out_d[:m]


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
