"""numba kernels of the index and the self-join (the fallback of ``_csrc/index.c``).

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


@njit(cache=True, nogil=True)
def popcount(x: np.uint64) -> np.int64:
    return np.int64(_ctpop(np.uint64(x)))  # type: ignore[call-arg]


@njit(cache=True, nogil=True)
def reported_by_earlier_table(diff: np.uint64, dedup: Any, t: int, radius: int) -> bool:
    """Whether a pair found in table ``t`` (key bits differing in ``diff``) was already found
    in an earlier table: the rule that reports every pair exactly once, without a hash set."""
    for u in range(t):  # noqa: SIM110 - numba compiles no generator expressions
        if popcount(diff & dedup[t, u]) <= radius:
            return True
    return False


@njit(inline="always", cache=True, nogil=True)
def put_pair(out_a: Any, out_b: Any, out_d: Any, m: int, a: Any, b: Any, d: Any) -> bool:
    """Write pair ``(a, b, d)`` at row ``m``; False (nothing written) when the output is full,
    so the kernel stops and reports where to resume (``put_pair`` of ``index.c``)."""
    if m == out_a.shape[0]:
        return False
    out_a[m] = a
    out_b[m] = b
    out_d[m] = d
    return True


@njit(cache=True, nogil=True)
def top_bits(x: np.uint64, bits: int) -> np.int64:
    """The top ``bits`` bits of ``x`` (0 bits: 0; a shift by 64 is undefined in LLVM too)."""
    if bits == 0:
        return np.int64(0)
    return np.int64(x >> np.uint64(64 - bits))


@njit(cache=True, nogil=True)
def permute(x: np.uint64, rsh: Any, msk: Any, lsh: Any, t: int) -> np.uint64:
    out = np.uint64(0)
    for i in range(rsh.shape[1]):
        out |= ((x >> rsh[t, i]) & msk[t, i]) << lsh[t, i]
    return out


# Stands for ``positions`` when every row is taken (``every``): no position array to allocate.
_EVERY = np.zeros(0, np.uint32)


@njit(cache=True, nogil=True)
def _top_counts(
    fps: Any, positions: Any, every: bool, rsh: Any, msk: Any, lsh: Any, t: int, top: int
) -> Any:
    """Group starts (``2**top + 1``) of table ``t``'s top ``top`` key bits, ``fps[positions]``
    (every row of ``fps`` when ``every``)."""
    counts = np.zeros((1 << top) + 1, np.int64)
    for i in range(fps.shape[0] if every else positions.shape[0]):
        p = i if every else positions[i]
        counts[top_bits(permute(fps[p], rsh, msk, lsh, t), top) + 1] += 1
    for g in range(1 << top):
        counts[g + 1] += counts[g]
    return counts


@njit(cache=True, nogil=True)
def _scatter_top(
    fps: Any,
    positions: Any,
    perm: Any,
    t: int,
    top: int,
    starts: Any,
    keys: Any,
    pos: Any,
    every: bool,
) -> None:
    """:func:`neardup.index.kernels.scatter_top` with ``perm`` = ``(rsh, msk, lsh)``; every row
    of ``fps`` when ``every``."""
    rsh, msk, lsh = perm
    nxt = starts.copy()
    for i in range(fps.shape[0] if every else positions.shape[0]):
        p = i if every else positions[i]
        key = permute(fps[p], rsh, msk, lsh, t)
        g = top_bits(key, top)
        j = nxt[g]
        nxt[g] = j + 1
        keys[j] = key
        pos[j] = p


@njit(cache=True, nogil=True)
def bucket_segments(keys: Any, pos: Any, q: int, top: int, starts: Any, offsets: Any) -> None:
    """Finish bucketing on the top ``q`` bits, given groups on the top ``top`` bits.

    Each group is counting-sorted on the remaining ``q - top`` bits through a group-sized
    scratch buffer (cache-resident for random keys). Order within a bucket is unspecified.
    """
    n = keys.shape[0]
    ng = 1 << top
    low = q - top
    if low == 0:
        for g in range(ng + 1):
            offsets[g] = starts[g]
        return
    biggest = 0
    for g in range(ng):
        biggest = max(biggest, starts[g + 1] - starts[g])
    tmp_keys = np.empty(biggest, np.uint64)
    tmp_pos = np.empty(biggest, pos.dtype)
    shift2 = np.uint64(64 - q)
    lmask = np.uint64((1 << low) - 1)
    local = np.zeros((1 << low) + 1, np.int64)
    for g in range(ng):
        lo = starts[g]
        m = starts[g + 1] - lo
        tmp_keys[:m] = keys[lo : lo + m]
        tmp_pos[:m] = pos[lo : lo + m]
        local[:] = 0
        for j in range(m):
            local[np.int64((tmp_keys[j] >> shift2) & lmask) + 1] += 1
        base = g << low
        acc = lo
        for b in range(1 << low):
            offsets[base + b] = acc
            acc += local[b + 1]
            local[b + 1] = offsets[base + b]
        for j in range(m):
            c = np.int64((tmp_keys[j] >> shift2) & lmask)
            d = local[c + 1]
            local[c + 1] = d + 1
            keys[d] = tmp_keys[j]
            pos[d] = tmp_pos[j]
    offsets[1 << q] = n


@njit(cache=True, nogil=True)
def offsets_from_sorted(keys: Any, q: int, offsets: Any) -> None:
    """Bucket starts of ``keys`` already sorted by their top ``q`` bits."""
    n = keys.shape[0]
    b = 0
    for i in range(n):
        c = top_bits(keys[i], q)
        while b <= c:
            offsets[b] = i
            b += 1
    while b < offsets.shape[0]:
        offsets[b] = n
        b += 1


@njit(cache=True, nogil=True)
def _bucket_ranges(
    x: Any,
    rsh: Any,
    msk: Any,
    lsh: Any,
    q: int,
    offsets: Any,
    probes: Any,
    nprobes: int,
    nkeys: Any,
    pq: Any,
    lo: Any,
    hi: Any,
) -> None:
    """Phase 1 of one query: its permuted key and every probed bucket's range in each table,
    all before any scan, so the offset loads overlap (memory-level parallelism)."""
    for t in range(pq.shape[0]):
        px = permute(x, rsh, msk, lsh, t)
        pq[t] = px
        b0 = top_bits(px, q)
        for pi in range(nprobes):
            b = b0 ^ probes[pi]
            # clamped: unverified files opened with verify=False must not crash a kernel
            lo[t, pi] = min(np.int64(offsets[t, b]), nkeys)
            hi[t, pi] = min(np.int64(offsets[t, b + 1]), nkeys)


@njit(cache=True, nogil=True)
def search_tables(
    start: int,
    queries: Any,
    k: int,
    keys: Any,
    pos: Any,
    offsets: Any,
    q: int,
    rsh: Any,
    msk: Any,
    lsh: Any,
    probes: Any,
    nprobes: int,
    dedup: Any,
    radius: int,
    alive: Any,
    out_q: Any,
    out_p: Any,
    out_d: Any,
) -> tuple[int, int]:
    """Matches of ``queries[start:]`` within ``k`` in one run's tables (see :func:`collect`).

    A candidate met in table ``t`` is kept only if no earlier table ``u`` has it within the
    probe radius on ``u``'s bucket bits (``dedup[t, u]`` is that mask in ``t``'s space), so
    every position comes out once per query without a hash set.
    """
    ntab = keys.shape[0]
    nkeys = np.int64(keys.shape[1])
    nalive = np.int64(alive.shape[0])
    pq = np.empty(ntab, np.uint64)
    lo = np.empty((ntab, nprobes), np.int64)
    hi = np.empty((ntab, nprobes), np.int64)
    m = 0
    for qi in range(start, queries.shape[0]):
        m0 = m
        _bucket_ranges(queries[qi], rsh, msk, lsh, q, offsets, probes, nprobes, nkeys, pq, lo, hi)
        # phase 2: scan and verify
        for t in range(ntab):
            px = pq[t]
            for pi in range(nprobes):
                for j in range(lo[t, pi], hi[t, pi]):
                    diff = px ^ keys[t, j]
                    d = popcount(diff)
                    if d > k or reported_by_earlier_table(diff, dedup, t, radius):
                        continue
                    p = np.int64(pos[t, j])
                    if p >= nalive or alive[p] == 0:
                        continue
                    if not put_pair(out_q, out_p, out_d, m, qi, p, d):
                        return m0, qi
                    m += 1
    return m, queries.shape[0]


@njit(cache=True, nogil=True)
def scan_range(
    start: int,
    queries: Any,
    k: int,
    fps: Any,
    lo: int,
    hi: int,
    alive: Any,
    out_q: Any,
    out_p: Any,
    out_d: Any,
) -> tuple[int, int]:
    """Brute-force matches of ``queries[start:]`` among store positions ``[lo, hi)``."""
    m = 0
    for qi in range(start, queries.shape[0]):
        m0 = m
        x = queries[qi]
        for p in range(lo, hi):
            d = popcount(x ^ fps[p])
            if d <= k and alive[p] != 0:
                if not put_pair(out_q, out_p, out_d, m, qi, p, d):
                    return m0, qi
                m += 1
    return m, queries.shape[0]


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
    m = 0
    n = fps.shape[0]
    for i in range(start, n):
        m0 = m
        for j in range(i + 1, n):
            d = popcount(fps[i] ^ fps[j])
            if d <= k:
                if not put_pair(out_i, out_j, out_d, m, i, j, d):
                    return m0, i
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
                    if d > k or reported_by_earlier_table(diff, dedup, t, radius):
                        continue
                    # written out, not put_pair: put_pair's arguments (pos[t, x]) load before the
                    # test, and this loop measured ~10 % slower so (join_tables_r0 did not)
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
                    if d > k or reported_by_earlier_table(diff, dedup, t, 0):
                        continue
                    if not put_pair(out_i, out_j, out_d, m, pos[t, x], pos[t, y], d):
                        return m0, t * nb + a
                    m += 1
    return m, ntab * nb


@njit(cache=True, nogil=True)
def _expand_pairs(a: Any, b: Any, dist: Any, order: Any, starts: Any, counts: Any) -> Any:
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


def top_counts(
    fps: Any, positions: Any, rsh: Any, msk: Any, lsh: Any, t: int, top: int, counts: Any
) -> None:
    """The C signature: group starts into ``counts``; ``positions`` None means every row."""
    every = positions is None
    counts[:] = _top_counts(fps, _EVERY if every else positions, every, rsh, msk, lsh, t, top)


def scatter_top(fps: Any, positions: Any, rsh: Any, msk: Any, lsh: Any, *out: Any) -> None:
    """The C signature of the scatter (``t, top, starts, keys, pos`` after ``lsh``);
    ``positions`` None means every row."""
    every = positions is None
    t, top, starts, keys, pos = out
    perm = (rsh, msk, lsh)
    _scatter_top(fps, _EVERY if every else positions, perm, t, top, starts, keys, pos, every)


def expand_pairs(
    a: Any, b: Any, dist: Any, order: Any, starts: Any, counts: Any, oi: Any, oj: Any, od: Any
) -> None:
    """The C signature: outputs pre-sized by the caller."""
    i, j, d = _expand_pairs(a, b, dist, order, starts, counts)
    oi[:], oj[:], od[:] = i, j, d
