"""Kernels of the self-join: brute force, bucket joins, pair expansion, bucket sort.

Same conventions as :mod:`neardup.index.kernels` (resumable fixed output buffers driven by
:func:`~neardup.index.kernels.collect`, C extension or numba fallback).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neardup._backend import C as _k

__all__ = ["brute_pairs", "expand_pairs", "join_tables", "join_tables_r0", "sort_buckets"]

sort_buckets = _k.sort_buckets
brute_pairs = _k.brute_pairs
join_tables = _k.join_tables
join_tables_r0 = _k.join_tables_r0


def expand_pairs(a: Any, b: Any, dist: Any, order: Any, starts: Any, counts: Any) -> Any:
    """Expand pairs of distinct values (and the groups themselves) to input-position pairs.

    ``order[starts[g]:starts[g + 1]]`` are the input positions holding distinct value ``g``.
    """
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    dup = counts[counts > 1]  # most values are unique: the group term over them only
    total = int((counts[a] * counts[b]).sum()) + int((dup * (dup - 1) // 2).sum())
    out = tuple(np.empty(total, np.int64) for _ in range(3))
    _k.expand_pairs(a, b, dist, order, starts, counts, *out)
    return out
