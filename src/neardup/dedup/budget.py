"""Bounded work per hot key: where to cut a streaming chunk so its candidate pairs stay few.

Inside one chunk every two documents sharing a candidate key form a pair, so ``m`` templated
documents on one key cost ``m^2`` pairs (20,000 order confirmations: 2x10^8 pairs, 25 GiB).
Streaming decisions do not depend on how the input is cut into chunks (the greedy rule keeps
the first document; later parts query the kept ones through the index), so a chunk whose pairs
would pass :data:`PAIR_BUDGET` is fed in parts whose pairs stay within it: the decisions are the
same and the memory is bounded by the budget (and by the documents kept on a hot key).

>>> keys = np.array([[1, 2], [1, 3], [1, 4], [1, 5]], np.uint64)
>>> budget_cuts(keys, np.arange(4), budget=10)  # 6 pairs on key 1: one part
[]
>>> budget_cuts(keys, np.arange(4), budget=1)  # at most one pair per part
[2]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["PAIR_BUDGET", "budget_cuts"]

# ~350 bytes a pair while a part is decided (~17 MB); measured faster and smaller than 10^6
# pairs (benchmarks/README.md, "Templated data": 20,000 documents 11.7 s / 562 MB at 10^6)
PAIR_BUDGET = 50_000


def budget_cuts(
    keys: npt.NDArray[np.uint64], rows: npt.NDArray[np.int64], budget: int = PAIR_BUDGET
) -> list[int]:
    """Chunk rows (increasing) at which to start a new part so that the pairs sharing a key
    inside each part (counted once per shared key) stay within ``budget``; ``keys`` holds the
    candidate keys of the searched ``rows``, one row each. ``[]``: the chunk fits whole."""
    if len(rows) < 2:
        return []
    _, counts = np.unique(keys.ravel(), return_counts=True)
    if int((counts * (counts - 1) // 2).sum()) <= budget:
        return []
    cuts: list[int] = []
    seen: dict[int, int] = {}
    pairs = 0
    for row, row_keys in zip(rows.tolist(), keys.tolist(), strict=True):
        add = sum(seen.get(k, 0) for k in row_keys)
        if pairs + add > budget and seen:
            cuts.append(row)
            seen, pairs, add = {}, 0, 0
        for k in row_keys:
            seen[k] = seen.get(k, 0) + 1
        pairs += add
    return cuts
