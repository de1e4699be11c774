"""all_pairs: every pair of fingerprints within ``k`` bits (batch self-join).

Identical fingerprints are collapsed first (``np.unique``), so a hot value (say 10^5 copies)
costs one table entry, not a quadratic bucket. The distinct values are bucketed per table
(:func:`~neardup.index.tables.fill_table`; one table in memory at a time when the design's
radius is 0, the default for small ``k``); pairs are enumerated within a bucket (and
between buckets within the probe radius), verified by popcount, and kept only in the first
table where they collide, so each pair comes out once. Distinct-value pairs are expanded back
to input positions; a group of ``g`` identical fingerprints still yields ``g(g-1)/2`` pairs,
because that is the output asked for: use :func:`duplicate_groups` to get the groups instead.

Cost: per table, the sum over buckets of (bucket size)^2 / 2 popcounts; for near-uniform
SimHash values buckets are tiny. Hot buckets of distinct values (a cluster of 10^5
near-variants of one document, low-entropy values such as small integers) are not scanned
quadratically: bits constant over a bucket (or over the whole input) are dropped and the
bucket is joined recursively with a design for the remaining bits (for few remaining bits,
one table probed within radius ``k``, which is output-sensitive). Radius > 0 designs (chosen
only for large ``k``) do not split hot buckets.

>>> import numpy as np
>>> i, j, d = all_pairs(np.array([5, 4, 5, 2**63], dtype=np.uint64), k=1)
>>> i.tolist(), j.tolist(), d.tolist()
([0, 0, 1], [1, 2, 2], [1, 0, 1])

128-bit fingerprints (``(n, 2)`` ``[hi, lo]``) are joined per half at ``k // 2`` and verified on
both halves (see :mod:`neardup.index.wide`); the result type is the same :class:`Pairs`.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from neardup.errors import BadInputError
from neardup.index import join_kernels, kernels
from neardup.index._validate import as_fingerprints, check_bits, check_k
from neardup.index.design import (
    MAX_PROBES_PER_TABLE,
    TableDesign,
    candidate_designs,
    probes_per_table,
)
from neardup.index.results import Pairs
from neardup.index.tables import StaticTables, dedup_masks, fill_table
from neardup.index.wide import MAX_K as MAX_K_128
from neardup.index.wide import distance_128, unique_pairs

I64 = npt.NDArray[np.int64]
_BRUTE_MAX = 64
_HOT = 2048  # buckets above this many distinct values are joined recursively


def join_design(n: int, k: int, bits: int = 64) -> TableDesign:
    """The candidate design (:func:`~neardup.index.design.candidate_designs`) cheapest for a
    self-join over the low ``bits`` bits: a join pays per table for its entries, its bucket
    visits and its pair checks, where a search pays per probe."""

    def join_cost(d: TableDesign) -> float:
        q = d.offset_bits(n)
        probes = probes_per_table(q, d.radius)
        if probes > MAX_PROBES_PER_TABLE:
            return math.inf
        pairs_per_probe = n * (n / 2**q)
        return float(d.tables * (n * 2.0 + 2**q * probes * 0.2 + pairs_per_probe * probes * 0.5))

    designs = candidate_designs(k, bits)
    costs = [join_cost(d) for d in designs]
    best = int(np.argmin(costs))  # the first of equally cheap designs, in enumeration order
    if not math.isfinite(costs[best]):  # pragma: no cover
        raise BadInputError(f"no join design for k={k}")
    return designs[best]


def sort_with_order(fps: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.uint64], I64]:
    """``(sorted values, their input positions)``.

    >>> v, o = sort_with_order(np.array([9, 2**63, 1], dtype=np.uint64))
    >>> v.tolist(), o.tolist()
    ([1, 9, 9223372036854775808], [2, 0, 1])
    """
    n = int(fps.shape[0])
    if n < 65536:
        order = np.argsort(fps)  # order within equal values is irrelevant here
        return fps[order], order.astype(np.int64)
    # radix on the top q bits (the table build), then tiny per-bucket sorts: ~2x np.argsort
    q = min(20, n.bit_length() - 4)
    run = StaticTables.build(TableDesign(k=0, blocks=1), fps, None, q=q)
    keys, pos = run.keys[0], run.pos[0]
    join_kernels.sort_buckets(keys, pos, run.offsets[0])
    return keys, pos.astype(np.int64)


def duplicate_groups(fingerprints: npt.ArrayLike) -> tuple[npt.NDArray[np.uint64], I64, I64]:
    """``(values, inverse, counts)``: distinct fingerprints (ascending), each input's group,
    group sizes. The compact answer for big groups of identical fingerprints.

    >>> v, inv, c = duplicate_groups(np.array([3, 1, 3], dtype=np.uint64))
    >>> v.tolist(), inv.tolist(), c.tolist()
    ([1, 3], [1, 0, 1], [1, 2])
    """
    values, order, starts = _groups(as_fingerprints(fingerprints))
    counts = np.diff(starts)
    inverse = np.empty(order.shape[0], np.int64)
    inverse[order] = np.repeat(np.arange(values.shape[0], dtype=np.int64), counts)
    return values, inverse, counts


def _groups(fps: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.uint64], I64, I64]:
    """``(values, order, starts)``: input positions of ``values[g]`` are
    ``order[starts[g]:starts[g + 1]]``."""
    ordered, order = sort_with_order(fps)
    n = ordered.shape[0]
    if n == 0:
        return ordered, order, np.zeros(1, np.int64)
    # one mask and one flatnonzero: each fresh 8 MB temporary per 10^6 rows costs its page
    # faults (a fifth of the join's time was the kernel zeroing pages)
    edge = np.ones(n + 1, bool)
    np.not_equal(ordered[1:], ordered[:-1], out=edge[1:n])
    starts = np.flatnonzero(edge)
    return (ordered if starts.shape[0] == n + 1 else ordered[starts[:-1]]), order, starts


def _distinct_pairs(
    values: npt.NDArray[np.uint64], k: int, bits: int = 64, presorted: bool = False
) -> tuple[I64, I64, I64]:
    """Pairs of rows of distinct ``values`` within ``k``; values use only their low ``bits``."""
    n = values.shape[0]
    if n <= _BRUTE_MAX or bits <= k:  # bits <= k: every pair matches, brute is output-bound
        return kernels.collect(join_kernels.brute_pairs, int(n), values, k)
    varying = int(np.bitwise_or.reduce(values) ^ np.bitwise_and.reduce(values))  # no temporary
    if varying.bit_count() < bits:  # constant bits change no distance: drop them
        return _distinct_pairs(_pack(values, varying), k, varying.bit_count(), presorted)
    design = join_design(n, k, bits)
    if design.radius != 0:
        return StaticTables.build(design, values, None, presorted=presorted).self_join(k)
    return _join_by_table(values, design, k, bits, presorted)


def _join_by_table(
    values: npt.NDArray[np.uint64], design: TableDesign, k: int, bits: int, presorted: bool
) -> tuple[I64, I64, I64]:
    """A radius-0 self-join one table at a time: each table is built into the same memory,
    joined (its hot buckets recursively) and overwritten by the next.

    All tables at once took 12 bytes per value per table (48 MB at 10^6 values, k=3): the
    join streamed them back from DRAM and the kernel zeroed every fresh page; one reused
    table made ``all_pairs`` at 10^6 ~20% faster (same-minute A/B).
    """
    n, nt = values.shape[0], design.tables
    q = design.offset_bits(n)
    nb = 1 << q  # buckets per table: the kernel's units are (table, bucket)
    dedup = dedup_masks(design, q)
    # the join kernel takes table t as row t of t + 1 rows (the first-table rule reads
    # dedup[:t + 1, :t + 1]) and starts at row t: the last row holds each table in turn,
    # the rows before it are reserved address space that nothing reads or writes
    keys = np.empty((nt, n), np.uint64)
    pos = np.empty((nt, n), np.uint32)
    offsets = np.empty((nt, (1 << q) + 1), np.uint32)
    table = (keys[-1], pos[-1], offsets[-1])
    parts = []
    for t in range(nt):
        fill_table(design, t, values, None, q, table, presorted)
        rows = slice(nt - 1 - t, nt)
        first = np.ascontiguousarray(dedup[: t + 1, : t + 1])
        args = (k, keys[rows], pos[rows], offsets[rows], first, _HOT)
        parts.append(
            kernels.collect(join_kernels.join_tables_r0, (t + 1) * nb, *args, start=t << q)
        )
        for bucket in np.flatnonzero(np.diff(table[2].astype(np.int64)) > _HOT).tolist():
            parts.append(_hot_bucket_pairs(table, q, t, bucket, k, bits, dedup))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore[return-value]


def _pack(values: npt.NDArray[np.uint64], mask: int) -> npt.NDArray[np.uint64]:
    """The bits of ``values`` selected by ``mask``, packed to the low end (order-preserving)."""
    out = np.zeros_like(values)
    j = 0
    for b in range(64):
        if mask >> b & 1:
            out |= ((values >> np.uint64(b)) & np.uint64(1)) << np.uint64(j)
            j += 1
    return out


def _hot_bucket_pairs(
    table: tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32], npt.NDArray[np.uint32]],
    q: int,
    t: int,
    bucket: int,
    k: int,
    bits: int,
    dedup: npt.NDArray[np.uint64],
) -> tuple[I64, I64, I64]:
    """Pairs inside one big bucket of ``table`` (table ``t``'s keys, positions, offsets):
    its top ``q`` key bits are equal, so join recursively on the other bits (a fresh
    pigeonhole over them), then keep the first-table rule."""
    lo, hi = int(table[2][bucket]), int(table[2][bucket + 1])
    keys, pos = table[0][lo:hi], table[1][lo:hi]
    # the permuted keys hold the design's bits at the top of the word; the top q are equal
    # here, so the varying bits are [64 - bits, 64 - q): move them to the low end
    rest = bits - q
    sub = (keys >> np.uint64(64 - bits)) & np.uint64((1 << rest) - 1)
    a, b, d = _distinct_pairs(sub, k, rest)
    diff = keys[a] ^ keys[b]
    keep = np.ones(a.shape[0], bool)
    for u in range(t):
        keep &= np.bitwise_count(diff & dedup[t, u]) > 0
    return pos[a[keep]].astype(np.int64), pos[b[keep]].astype(np.int64), d[keep]


def all_pairs(fingerprints: npt.ArrayLike, k: int = 3, *, bits: int | None = None) -> Pairs:
    """``(i, j, distance)``: every pair ``i < j`` of input positions within ``k``, once each.

    Sorted by ``(i, j)``; identical fingerprints pair at distance 0. ``bits`` is 64 (uint64
    fingerprints) or 128 (``(n, 2)`` ``[hi, lo]`` or ints below ``2**128``); by default 128 for
    a 2-D array, else 64.
    """
    if bits is None:
        bits = 128 if isinstance(fingerprints, np.ndarray) and fingerprints.ndim == 2 else 64
    fps = as_fingerprints(fingerprints, check_bits(bits))
    if bits == 128:
        return _all_pairs_128(fps, check_k(k, MAX_K_128))
    k = check_k(k)
    values, order, starts = _groups(fps)
    a, b, dist = _distinct_pairs(values, k, presorted=True)
    i, j, d = join_kernels.expand_pairs(a, b, dist, order, starts, np.diff(starts))
    return Pairs(*sort_pairs(i, j, d, int(fps.shape[0])))


_PACK_BITS = 28  # positions below 2**28: i, j and the distance (7 bits) fit one int64


def sort_pairs(i: I64, j: I64, d: I64, n: int) -> tuple[I64, I64, I64]:
    """Distinct pairs ``(i, j, d)`` of positions below ``n`` in ``(i, j)`` order.

    Below 2**28 positions each pair is packed into one int64 and sorted by value: numpy's
    SIMD sort of one key array is many times a two-key ``lexsort`` (which pays a stable
    indirect sort per key).

    >>> i, j, d = (np.array(v) for v in ([2, 0, 0], [3, 5, 1], [1, 2, 3]))
    >>> [x.tolist() for x in sort_pairs(i, j, d, 6)]
    [[0, 0, 2], [1, 5, 3], [3, 2, 1]]
    """
    if n > 1 << _PACK_BITS:
        order = np.lexsort((j, i))
        return i[order], j[order], d[order]
    w = np.int64(_PACK_BITS)
    key = np.sort((i << (w + 7)) | (j << 7) | d)
    return key >> (w + 7), (key >> 7) & ((1 << _PACK_BITS) - 1), key & 127


def _all_pairs_128(fps: npt.NDArray[np.uint64], k: int) -> Pairs:
    """Pigeonhole on the two halves: a pair within ``k`` has one half within ``k // 2``."""
    parts = [all_pairs(fps[:, half], k=min(k // 2, 63)) for half in (0, 1)]
    i, j = unique_pairs(np.concatenate([p.i for p in parts]), np.concatenate([p.j for p in parts]))
    d = distance_128(fps[i], fps[j])
    ok = d <= k
    return Pairs(i[ok], j[ok], d[ok])
