"""Index kernels: permutation, bucketed table build, batched probe search.

They run in C (``_csrc/index.c``, built at install time, nothing compiles at run time) or,
without the extension, in numba (:mod:`neardup._numba.index`, compiled on first use and cached
on disk). Arithmetic stays in uint64. A table's permutation is given per block as
``(rshift, mask, lshift)``: the block ``(x >> rshift) & mask`` lands at ``<< lshift`` in the
permuted word. Tables: keys uint64 and positions uint32 of shape (tables, n), offsets uint32 of
shape (tables, 2**q + 1).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from neardup._backend import C as _k
from neardup.errors import BadInputError

__all__ = [
    "bucket_segments",
    "collect",
    "collect_queries",
    "offsets_from_sorted",
    "scan_range",
    "scatter_top",
    "scatter_top_all",
    "search_tables",
    "search_tables_range",
    "top_counts",
    "top_counts_all",
]

bucket_segments = _k.bucket_segments
offsets_from_sorted = _k.offsets_from_sorted
search_tables = _k.search_tables
# tables t_lo..t_hi-1 only (C); None: callers search every table in one pass
search_tables_range: Any = getattr(_k, "search_tables_range", None)
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


def collect(
    kernel: Any, total: int, *args: Any, capacity: int = 4096, start: int = 0
) -> tuple[Any, Any, Any]:
    """Run a resumable kernel from unit ``start`` until done; concatenate its
    ``(a, b, distance)`` output.

    A kernel fills caller-given int64 buffers and, when they are full, returns
    ``(rows written, unit to resume from)``: outputs never grow inside a hot loop.
    """
    parts: list[tuple[Any, Any, Any]] = []
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


PARALLEL_MIN_QUERIES = 8192  # below this a batch is one thread's work (thread start-up > gain)


def search_threads() -> int:
    """Threads for one large search batch: ``NEARDUP_THREADS`` (default 1).

    One by default: on the shared 2-core benchmark machine a second thread gave no gain at
    10^8 (the search is bound by random memory accesses) and lost ~25% when the other core was
    busy. On a machine with idle cores, ``NEARDUP_THREADS=<cores>`` overlaps more misses.
    """
    env = os.environ.get("NEARDUP_THREADS", "").strip()
    try:
        return max(1, int(env)) if env else 1
    except ValueError:
        raise BadInputError(f"NEARDUP_THREADS must be an integer, got {env!r}") from None


def collect_queries(
    kernel: Any, queries: Any, *args: Any, capacity: int = 4096, threads: int | None = None
) -> tuple[Any, Any, Any]:
    """:func:`collect` of a query kernel ``kernel(start, queries, *args, *out)``, the batch
    split into contiguous slices searched by parallel threads (the C kernels release the GIL;
    the search is memory-latency bound, so threads overlap their cache misses).

    Rows come back in query order, exactly as one :func:`collect` over the whole batch gives
    them: each slice's query numbers are shifted back by its start.
    """
    n = int(queries.shape[0])
    t = search_threads() if threads is None else max(1, threads)
    t = min(t, n // (PARALLEL_MIN_QUERIES // 2))
    if t <= 1 or n < PARALLEL_MIN_QUERIES:
        return collect(kernel, n, queries, *args, capacity=capacity)
    bounds = np.linspace(0, n, t + 1).astype(np.int64).tolist()

    def part(lo: int, hi: int) -> tuple[Any, Any, Any]:
        a, b, d = collect(kernel, hi - lo, queries[lo:hi], *args, capacity=capacity)
        return a + lo, b, d

    with ThreadPoolExecutor(t) as pool:
        parts = list(pool.map(part, bounds[:-1], bounds[1:]))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore[return-value]
