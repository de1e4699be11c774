"""Table designs for exact Hamming search, and the cost model that picks one.

Model (Manku et al. 2007, generalised as multi-index hashing, Norouzi et al. 2012):

* Split the ``bits`` of a fingerprint into ``b`` contiguous blocks of nearly equal width.
* Every table keys on ``s`` of the blocks (all ``C(b, s)`` combinations, so ``t = C(b, s)``
  tables). The chosen blocks are moved to the top of a permuted copy of each fingerprint.
* Two fingerprints at distance ``d <= k`` spread their ``d`` differing bits over the ``b``
  blocks. The ``s`` blocks with the fewest differences carry at most ``r`` of them, where
  ``r = radius(b, s, k)`` is the sum of the ``s`` smallest parts of the most even split of
  ``k`` into ``b`` parts (the adversary's best spread). So some table has its key within
  Hamming distance ``r`` of the query's key: probing, per table, every key within radius
  ``r`` finds every match. ``s = b - k`` gives ``r = 0`` (Manku's pigeonhole tables); fewer
  tables with ``r >= 1`` trade memory for probes.
* A table is bucketed by the top ``q`` bits of its key (``q <= p``, the key's width), and
  ``offsets`` (``2**q + 1`` entries) give each bucket's start in O(1): direct addressing, no
  binary search. Probing radius ``r`` on the ``q``-bit bucket index is a superset of probing
  the full key, so it stays exact; every candidate is verified by popcount.

Costs for ``n`` stored fingerprints (``beta = n / 2**q`` entries per bucket, ``P`` probes per
table ``= sum_{i<=r} C(q, i)``):

* query: ``t * P * (1 + 0.08 * beta)`` units; one unit ~ one random probe (~30 ns here);
  the candidate weight ranks measured designs at N=10^6 for k=3 and k=8 correctly;
* memory: ``t * (12 * n + 4 * 2**q)`` bytes for the tables (uint64 permuted fingerprint and
  uint32 position per entry, uint32 offsets) plus ``17 * n`` for the store (id, fingerprint,
  alive flag; ``+8 * n`` with timestamps).

``auto_design`` evaluates every ``(b, s)`` with ``t <= 64`` and ``P <= 5000`` and keeps the
cheapest that fits the memory budget.

>>> d = TableDesign(k=3, blocks=4)
>>> d.tables, d.radius, d.key_bits
(4, 0, 16)
>>> auto_design(10**8, k=3).blocks
2
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from neardup.errors import BadInputError

BITS = 64
MAX_OFFSET_BITS = 24
MAX_TABLES = 64
MAX_PROBES_PER_TABLE = 5000
DEFAULT_MEMORY_BUDGET = 8 * 2**30
_PROBE_COST = 1.0
_CANDIDATE_COST = 0.08
_STORE_BYTES = 17
_ENTRY_BYTES = 12
_SAVED = ("k", "blocks", "key_blocks", "bits")  # what to_dict writes and from_dict reads


def radius(blocks: int, key_blocks: int, k: int) -> int:
    """Largest number of differing bits the best ``key_blocks`` of ``blocks`` may carry.

    >>> radius(4, 1, 3), radius(2, 1, 3), radius(5, 2, 3)
    (0, 1, 0)
    """
    base, extra = divmod(k, blocks)
    light = blocks - extra  # blocks carrying `base` errors in the most even split
    if key_blocks <= light:
        return key_blocks * base
    return light * base + (key_blocks - light) * (base + 1)


def probes_per_table(q: int, r: int) -> int:
    """Number of bucket indices within Hamming radius ``r`` of a ``q``-bit index.

    >>> probes_per_table(24, 1)
    25
    """
    return sum(math.comb(q, i) for i in range(min(r, q) + 1))


@dataclass(frozen=True)
class TableDesign:
    """``blocks`` blocks, one table per combination of ``key_blocks`` of them.

    ``key_blocks`` defaults to ``blocks - k`` (Manku's pigeonhole design, radius 0) and
    ``blocks=k+1`` when not given.

    >>> TableDesign(k=3, blocks=2, key_blocks=1).radius
    1
    >>> TableDesign(k=3, blocks=5).tables
    10
    """

    k: int = 3
    blocks: int = 0
    key_blocks: int = 0
    bits: int = BITS
    _sizes: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.k, int) or not 0 <= self.k < self.bits:
            raise BadInputError(f"k must be an int in [0, {self.bits}), got {self.k!r}")
        blocks = self.blocks or self.k + 1
        key_blocks = self.key_blocks or max(1, blocks - self.k)
        if not 1 <= blocks <= self.bits:
            raise BadInputError(f"blocks must be in [1, {self.bits}], got {blocks!r}")
        if not 1 <= key_blocks <= blocks:
            raise BadInputError(f"key_blocks must be in [1, blocks={blocks}], got {key_blocks!r}")
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "key_blocks", key_blocks)
        wide, extra = divmod(self.bits, blocks)
        sizes = tuple(wide + 1 if i < extra else wide for i in range(blocks))
        object.__setattr__(self, "_sizes", sizes)

    @property
    def block_sizes(self) -> tuple[int, ...]:
        """Widths of the blocks, most significant first."""
        return self._sizes

    @property
    def tables(self) -> int:
        """Number of tables, ``C(blocks, key_blocks)``."""
        return math.comb(self.blocks, self.key_blocks)

    @property
    def radius(self) -> int:
        """Probe radius needed for the design's ``k``."""
        return radius(self.blocks, self.key_blocks, self.k)

    def radius_for(self, k: int) -> int:
        """Probe radius needed to answer a search at distance ``k``."""
        return radius(self.blocks, self.key_blocks, k)

    @property
    def key_bits(self) -> int:
        """Width of the narrowest table key (``p``)."""
        return sum(sorted(self._sizes)[: self.key_blocks])

    def table_blocks(self) -> list[tuple[int, ...]]:
        """Block indices keyed by each table, in table order."""
        return list(itertools.combinations(range(self.blocks), self.key_blocks))

    def offset_bits(self, n: int) -> int:
        """Bucket bits ``q`` for a table of ``n`` entries."""
        want = max(1, math.ceil(math.log2(max(n, 2))) - 2)
        return min(self.key_bits, MAX_OFFSET_BITS, want)

    def cost(self, n: int, k: int | None = None) -> dict[str, float]:
        """Cost-model figures for ``n`` stored fingerprints (see the module docstring)."""
        q = self.offset_bits(n)
        r = self.radius_for(self.k if k is None else k)
        probes = probes_per_table(q, r)
        beta = n / 2**q
        return {
            "offset_bits": q,
            "radius": r,
            "probes_per_table": probes,
            "probes_per_query": probes * self.tables,
            "candidates_per_probe": beta,
            "query_cost_units": self.tables * probes * (_PROBE_COST + _CANDIDATE_COST * beta),
            "memory_bytes": self.tables * (_ENTRY_BYTES * n + 4 * (2**q + 1)) + _STORE_BYTES * n,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (inverse of :meth:`from_dict`)."""
        return {name: getattr(self, name) for name in _SAVED}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableDesign:
        """Rebuild a design written by :meth:`to_dict`."""
        return cls(**{name: int(data[name]) for name in _SAVED})


def candidate_designs(k: int, bits: int = BITS) -> list[TableDesign]:
    """Every design with at most ``MAX_TABLES`` tables for distance ``k`` over ``bits`` bits."""
    out = []
    for b in range(1, min(bits, 2 * k + 6) + 1):
        for s in range(1, b + 1):
            if math.comb(b, s) <= MAX_TABLES and (b > 1 or k == 0):
                out.append(TableDesign(k=k, blocks=b, key_blocks=s, bits=bits))
    return out


def auto_design(n: int, k: int = 3, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> TableDesign:
    """Cheapest design by the cost model for ``n`` fingerprints within ``memory_budget`` bytes.

    Falls back to the smallest-memory design when nothing fits the budget.

    >>> auto_design(10**6, k=3)
    TableDesign(k=3, blocks=4, key_blocks=1, bits=64)
    """
    n = max(int(n), 1024)
    best: tuple[float, TableDesign] | None = None
    smallest: tuple[float, TableDesign] | None = None
    for d in candidate_designs(k):
        c = d.cost(n)
        if c["probes_per_table"] > MAX_PROBES_PER_TABLE:
            continue
        if smallest is None or c["memory_bytes"] < smallest[0]:
            smallest = (c["memory_bytes"], d)
        if c["memory_bytes"] <= memory_budget and (best is None or c["query_cost_units"] < best[0]):
            best = (c["query_cost_units"], d)
    chosen = best or smallest
    if chosen is None:  # pragma: no cover - k=0 always has the 1-block design
        raise BadInputError(f"no table design for k={k}")
    return chosen[1]
