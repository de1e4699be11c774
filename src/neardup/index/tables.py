"""Static permuted tables: one sorted run of the LSM index (and the join's working set).

Each table holds, per entry, the permuted fingerprint (uint64) and a uint32 position into
the index's shared store, grouped by the top ``q`` bits of the permuted key, plus
``2**q + 1`` uint32 offsets (bucket ``b`` is ``offsets[b]:offsets[b + 1]``).

>>> import numpy as np
>>> from neardup.index.design import TableDesign
>>> fps = np.array([0, 1, 2**63], dtype=np.uint64)
>>> run = StaticTables.build(TableDesign(k=1, blocks=2), fps, np.arange(3, dtype=np.uint32))
>>> qr, pos, dist = run.search(np.array([3], dtype=np.uint64), 1, np.ones(3, np.uint8))
>>> sorted(zip(pos.tolist(), dist.tolist()))
[(1, 1)]
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.errors import BadInputError
from neardup.index import join_kernels, kernels
from neardup.index.design import TableDesign

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
MAX_PROBES = 200_000
WORD = 64  # keys are uint64; a design over fewer bits uses the low ``bits`` bits of the word


def _layout(design: TableDesign) -> list[list[int]]:
    """Per table: the target bit (LSB = 0) of each original bit."""
    sizes = design.block_sizes
    starts = [design.bits - sum(sizes[: i + 1]) for i in range(design.blocks)]  # LSB of block i
    out = []
    for chosen in design.table_blocks():
        order = list(chosen) + [i for i in range(design.blocks) if i not in chosen]
        where = [0] * design.bits
        top = WORD
        for blk in order:
            top -= sizes[blk]
            for bit in range(sizes[blk]):
                where[starts[blk] + bit] = top + bit
        out.append(where)
    return out


@lru_cache(maxsize=64)
def permutation_arrays(design: TableDesign) -> tuple[U64, U64, U64]:
    """``(rshift, mask, lshift)`` arrays of shape (tables, blocks) for the kernels."""
    sizes = design.block_sizes
    starts = [design.bits - sum(sizes[: i + 1]) for i in range(design.blocks)]
    shape = (design.tables, design.blocks)
    rsh, msk, lsh = (np.zeros(shape, np.uint64) for _ in range(3))
    for t, chosen in enumerate(design.table_blocks()):
        order = list(chosen) + [i for i in range(design.blocks) if i not in chosen]
        top = WORD
        for i, blk in enumerate(order):
            top -= sizes[blk]
            rsh[t, i], msk[t, i], lsh[t, i] = starts[blk], (1 << sizes[blk]) - 1, top
    return rsh, msk, lsh


@lru_cache(maxsize=64)
def dedup_masks(design: TableDesign, q: int) -> U64:
    """``[t, u]``: the bits of table ``u``'s top-``q`` bucket index, in table ``t``'s space."""
    layout = _layout(design)
    ntab = design.tables
    out = np.zeros((ntab, ntab), np.uint64)
    for u in range(ntab):
        orig = [b for b in range(design.bits) if layout[u][b] >= WORD - q]
        for t in range(ntab):
            out[t, u] = sum(1 << layout[t][b] for b in orig)
    return out


@lru_cache(maxsize=256)
def probe_masks(q: int, r: int) -> I64:
    """Bucket xors with popcount <= r, by increasing popcount (probe 0 is the bucket itself)."""
    masks = [0]
    for i in range(1, min(r, q) + 1):
        for bits in itertools.combinations(range(q), i):
            masks.append(sum(1 << b for b in bits))
            if len(masks) > MAX_PROBES:
                raise BadInputError(
                    f"radius {r} on {q} bucket bits needs over {MAX_PROBES} probes "
                    "per table; build the index with a larger k or more tables"
                )
    return np.asarray(masks, dtype=np.int64)


SORTED_MIN_QUERIES = 4096  # below: one pass over all tables (sorting would not pay)


def _permuted(x: U64, rsh: U64, msk: U64, lsh: U64) -> U64:
    """Table order of ``x``: each block ``(x >> rsh) & msk`` moved to ``<< lsh``."""
    out = np.zeros_like(x)
    for r, m, sh in zip(rsh.tolist(), msk.tolist(), lsh.tolist(), strict=True):
        out |= ((x >> np.uint64(r)) & np.uint64(m)) << np.uint64(sh)
    return out


def _is_identity(rsh: U64, msk: U64, lsh: U64) -> bool:
    return bool((rsh[0] == lsh[0]).all())


def fill_table(
    design: TableDesign,
    t: int,
    fps: U64,
    positions: npt.NDArray[np.uint32] | None,
    q: int,
    out: tuple[U64, npt.NDArray[np.uint32], npt.NDArray[np.uint32]],
    presorted: bool = False,
) -> None:
    """Write table ``t`` of ``design`` over ``fps[positions]`` into ``out``: its keys and
    positions (one row each) bucketed by their top ``q`` bits, and the bucket offsets.

    ``presorted``: ``fps`` is ascending, so an identity-permutation table 0 is a copy.
    """
    keys, pos, offsets = out
    rsh, msk, lsh = permutation_arrays(design)
    if t == 0 and presorted and positions is None and _is_identity(rsh, msk, lsh):
        keys[:] = fps  # already ordered by its top bits: no bucketing pass
        pos[:] = np.arange(keys.shape[0], dtype=np.uint32)
        kernels.offsets_from_sorted(keys, q, offsets)
        return
    top = min(q, 8)
    if positions is None:
        starts = kernels.top_counts_all(fps, rsh, msk, lsh, t, top)
        kernels.scatter_top_all(fps, rsh, msk, lsh, t, top, starts, keys, pos)
    else:
        starts = kernels.top_counts(fps, positions, rsh, msk, lsh, t, top)
        kernels.scatter_top(fps, positions, rsh, msk, lsh, t, top, starts, keys, pos)
    kernels.bucket_segments(keys, pos, q, top, starts, offsets)


@dataclass(frozen=True, eq=False)  # eq=False: identity, as arrays do not compare to one bool
class StaticTables:
    """An immutable set of bucketed tables over some store positions."""

    design: TableDesign
    q: int
    keys: U64
    pos: npt.NDArray[np.uint32]
    offsets: npt.NDArray[np.uint32]

    @classmethod
    def build(
        cls,
        design: TableDesign,
        fps: U64,
        positions: npt.NDArray[np.uint32] | None,
        q: int | None = None,
        presorted: bool = False,
    ) -> StaticTables:
        """Bucket ``fps[positions]`` (all of ``fps`` when ``positions`` is None) per table.

        ``presorted``: ``fps`` is ascending, so an identity-permutation table 0 is free.
        """
        n = int(fps.shape[0] if positions is None else positions.shape[0])
        q = design.offset_bits(n) if q is None else q
        keys = np.empty((design.tables, n), np.uint64)
        pos = np.empty((design.tables, n), np.uint32)
        offsets = np.empty((design.tables, (1 << q) + 1), np.uint32)
        for t in range(design.tables):
            fill_table(design, t, fps, positions, q, (keys[t], pos[t], offsets[t]), presorted)
        return cls(design, q, keys, pos, offsets)

    def __len__(self) -> int:
        return int(self.keys.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.pos.nbytes + self.offsets.nbytes)

    def positions(self) -> npt.NDArray[np.uint32]:
        """Store positions held by this run (any order)."""
        out: npt.NDArray[np.uint32] = self.pos[0]
        return out

    def search(self, queries: U64, k: int, alive: npt.NDArray[np.uint8]) -> tuple[I64, I64, I64]:
        """(query row, store position, distance) of every live entry within ``k``.

        Large batches go table by table, the queries sorted by that table's bucket, so the
        probes walk each table in address order (at 10^8 entries the random walk was bound
        by TLB and DRAM page misses). Rows come back in the order of one pass over all
        tables: by query, then table, probe and key.
        """
        r = self.design.radius_for(k)
        probes = probe_masks(self.q, r)
        rsh, msk, lsh = permutation_arrays(self.design)
        dedup = dedup_masks(self.design, self.q)
        args: tuple[Any, ...] = (self.keys, self.pos, self.offsets, self.q, rsh, msk, lsh)
        args += (probes, len(probes), dedup, r, alive)
        cap = min(1 << 16, max(256, 4 * int(queries.shape[0])))
        ranged = kernels.search_tables_range
        if ranged is None or queries.shape[0] < SORTED_MIN_QUERIES:
            return kernels.collect_queries(kernels.search_tables, queries, k, *args, capacity=cap)
        parts = []
        for t in range(self.design.tables):
            order = np.argsort(_permuted(queries, rsh[t], msk[t], lsh[t]))
            a, b, d = kernels.collect_queries(
                ranged, queries[order], k, *args, t, t + 1, capacity=cap
            )
            parts.append((order[a], b, d))
        a, b, d = (np.concatenate([p[i] for p in parts]) for i in range(3))
        by_query = np.argsort(a, kind="stable")  # tables were concatenated in table order
        return a[by_query], b[by_query], d[by_query]

    def self_join(self, k: int, hot: int = 2**62) -> tuple[I64, I64, I64]:
        """Pairs of positions within ``k`` among this run's entries, each pair once.

        With a radius-0 design, buckets over ``hot`` entries are skipped (the caller joins
        them recursively on the remaining bits, see :mod:`neardup.index.join`).
        """
        r = self.design.radius_for(k)
        probes = probe_masks(self.q, r)
        units = self.design.tables * (1 << self.q)
        dedup = dedup_masks(self.design, self.q)
        if r == 0:
            return kernels.collect(
                join_kernels.join_tables_r0, units, k, self.keys, self.pos, self.offsets, dedup, hot
            )
        return kernels.collect(
            join_kernels.join_tables,
            units,
            k,
            self.keys,
            self.pos,
            self.offsets,
            probes,
            len(probes),
            dedup,
            r,
        )
