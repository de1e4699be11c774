"""all_pairs: every pair of fingerprints within ``k`` bits (batch self-join).

Identical fingerprints are collapsed first (``np.unique``), so a hot value (say 10^5 copies)
costs one table entry, not a quadratic bucket. The distinct values are bucketed per table
(:class:`~neardup.index.tables.StaticTables`); pairs are enumerated within a bucket (and
between buckets within the probe radius), verified by popcount, and kept only in the first
table where they collide, so each pair comes out once. Distinct-value pairs are expanded back
to input positions; a group of ``g`` identical fingerprints still yields ``g(g-1)/2`` pairs,
because that is the output asked for: use :func:`duplicate_groups` to get the groups instead.

>>> import numpy as np
>>> i, j, d = all_pairs(np.array([5, 4, 5, 2**63], dtype=np.uint64), k=1)
>>> i.tolist(), j.tolist(), d.tolist()
([0, 0, 1], [1, 2, 2], [1, 0, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.index import kernels
from neardup.index._validate import as_fingerprints, check_k
from neardup.index.design import TableDesign, probes_per_table
from neardup.index.tables import StaticTables

I64 = npt.NDArray[np.int64]
_BRUTE_MAX = 64


def join_design(n: int, k: int) -> TableDesign:
    """Design for a self-join, scored by bucket visits and pair checks per table."""
    best: tuple[float, TableDesign] | None = None
    for b in range(1 if k == 0 else 2, min(64, 2 * k + 6) + 1):
        for s in range(1, b + 1):
            d = TableDesign(k=k, blocks=b, key_blocks=s)
            if d.tables > 64:
                continue
            q = d.offset_bits(n)
            beta = n / 2**q
            probes = probes_per_table(q, d.radius)
            if probes > 5000:
                continue
            cost = d.tables * (n * 2.0 + 2**q * probes * 0.2 + n * beta * probes * 0.5)
            if best is None or cost < best[0]:
                best = (cost, d)
    if best is None:  # pragma: no cover
        raise ValueError(f"no join design for k={k}")
    return best[1]


def duplicate_groups(fingerprints: Any) -> tuple[npt.NDArray[np.uint64], I64, I64]:
    """``(values, inverse, counts)``: distinct fingerprints, each input's group, group sizes.

    >>> v, inv, c = duplicate_groups(np.array([3, 1, 3], dtype=np.uint64))
    >>> v.tolist(), inv.tolist(), c.tolist()
    ([1, 3], [1, 0, 1], [1, 2])
    """
    fps = as_fingerprints(fingerprints)
    values, inverse, counts = np.unique(fps, return_inverse=True, return_counts=True)
    return values, inverse.astype(np.int64).ravel(), counts.astype(np.int64)


def _distinct_pairs(values: npt.NDArray[np.uint64], k: int) -> tuple[I64, I64, I64]:
    if values.shape[0] <= _BRUTE_MAX:
        result: Any = kernels.brute_pairs(values, k)
        return result  # type: ignore[no-any-return]
    n = values.shape[0]
    run = StaticTables.build(join_design(n, k), values, np.arange(n, dtype=np.uint32))
    return run.self_join(k)


def all_pairs(fingerprints: Any, k: int = 3) -> tuple[I64, I64, I64]:
    """``(i, j, distance)``: every pair ``i < j`` of input positions within ``k``, once each.

    Sorted by ``(i, j)``; identical fingerprints pair at distance 0.
    """
    k = check_k(k)
    values, inverse, counts = duplicate_groups(fingerprints)
    a, b, dist = _distinct_pairs(values, k)
    order = np.argsort(inverse, kind="stable")  # input positions grouped by distinct value
    starts = np.zeros(values.shape[0] + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    i, j, d = kernels.expand_pairs(a, b, dist, order, starts, counts)
    sort = np.lexsort((j, i))
    return i[sort], j[sort], d[sort]
