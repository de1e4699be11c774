"""Index kernels: permutation, bucketed table build, batched probe search.

They run in C (``_csrc/index.c``, built at install time, nothing compiles at run time) or,
without the extension, in numba (:mod:`neardup._numba.index`, compiled on first use and cached
on disk). Arithmetic stays in uint64. A table's permutation is given per block as
``(rshift, mask, lshift)``: the block ``(x >> rshift) & mask`` lands at ``<< lshift`` in the
permuted word. Tables: keys uint64 and positions uint32 of shape (tables, n), offsets uint32 of
shape (tables, 2**q + 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neardup._backend import kernels

__all__ = [
    "bucket_segments",
    "collect",
    "offsets_from_sorted",
    "scan_range",
    "scatter_top",
    "scatter_top_all",
    "search_tables",
    "top_counts",
    "top_counts_all",
]

_k: Any = kernels("index")
bucket_segments = _k.bucket_segments
offsets_from_sorted = _k.offsets_from_sorted
search_tables = _k.search_tables
scan_range = _k.scan_range


def top_counts(fps: Any, positions: Any, rsh: Any, msk: Any, lsh: Any, t: int, top: int) -> Any:
    """Group starts (``2**top + 1``) of table ``t``'s top ``top`` key bits, ``fps[positions]``."""
    counts = np.empty((1 << top) + 1, np.int64)
    _k.top_counts(fps, positions, rsh, msk, lsh, t, top, counts)
    return counts


def top_counts_all(fps: Any, rsh: Any, msk: Any, lsh: Any, t: int, top: int) -> Any:
    """:func:`top_counts` over every row (no position array to allocate)."""
    return top_counts(fps, None, rsh, msk, lsh, t, top)


def scatter_top(
    fps: Any,
    positions: Any,
    rsh: Any,
    msk: Any,
    lsh: Any,
    t: int,
    top: int,
    starts: Any,
    keys: Any,
    pos: Any,
) -> None:
    """Write permuted ``fps[positions]`` into ``keys``/``pos`` grouped by the top key bits.

    Straight from the store into the table (stable, streaming into ``2**top`` fronts): no
    full-size scratch, so a 10^8-row build stays within memory.
    """
    _k.scatter_top(fps, positions, rsh, msk, lsh, t, top, starts, keys, pos)


def scatter_top_all(
    fps: Any, rsh: Any, msk: Any, lsh: Any, t: int, top: int, starts: Any, keys: Any, pos: Any
) -> None:
    """:func:`scatter_top` over every row."""
    _k.scatter_top(fps, None, rsh, msk, lsh, t, top, starts, keys, pos)


def collect(kernel: Any, total: int, *args: Any, capacity: int = 4096) -> tuple[Any, Any, Any]:
    """Run a resumable kernel until done; concatenate its ``(a, b, distance)`` output.

    A kernel fills caller-given int64 buffers and, when they are full, returns
    ``(rows written, unit to resume from)``: outputs never grow inside a hot loop.
    """
    parts: list[tuple[Any, Any, Any]] = []
    start = 0
    while True:
        bufs = (
            np.empty(capacity, np.int64),
            np.empty(capacity, np.int64),
            np.empty(capacity, np.int64),
        )
        m, start = kernel(start, *args, *bufs)
        parts.append((bufs[0][:m], bufs[1][:m], bufs[2][:m]))
        if start >= total:
            break
        if m < capacity // 2:  # one unit did not fit: give it room
            capacity *= 2
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore[return-value]
