"""128-bit fingerprints by composition: two 64-bit indexes on the halves, verified on 128 bits.

A pair within ``k`` on 128 bits has ``d_hi + d_lo <= k``, so one half is within ``k // 2``
(pigeonhole on two blocks). ``HammingIndex(bits=128)`` holds a :class:`HalvesIndex`: one
64-bit :class:`~neardup.index.HammingIndex` per half at ``k // 2``; candidates from either are
verified on both halves and de-duplicated. :func:`~neardup.index.all_pairs` does the same for
the join. Fingerprints are ``(n, 2)`` uint64 arrays ``[hi, lo]`` (what
``Fingerprinter(bits=128)`` returns) or Python ints below ``2**128``.

>>> import numpy as np
>>> from neardup.index import HammingIndex, all_pairs
>>> index = HammingIndex(k=4, bits=128)
>>> index.add([1, 2], [(5 << 64) | 7, (5 << 64) | 0])
>>> index.query((4 << 64) | 7)
[(1, 1), (2, 4)]
>>> i, j, d = all_pairs(np.array([[5, 7], [5, 0], [0, 0]], dtype=np.uint64), k=4)
>>> i.tolist(), j.tolist(), d.tolist()
([0, 1], [1, 2], [3, 2])
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from neardup.index.results import Matches

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
MAX_K = 127


def distance_128(a: U64, b: U64) -> I64:
    """Hamming distance of row i of ``a`` and row i of ``b`` (``(n, 2)`` ``[hi, lo]``)."""
    both: I64 = np.bitwise_count(a[:, 0] ^ b[:, 0]).astype(np.int64) + np.bitwise_count(
        a[:, 1] ^ b[:, 1]
    )
    return both


def unique_pairs(a: I64, b: I64) -> tuple[I64, I64]:
    """Each ``(a, b)`` pair once, sorted by ``(a, b)`` (a candidate may come from both halves)."""
    if a.size == 0:
        return a, b
    keep = np.unique(np.stack([a, b]), axis=1)
    return keep[0], keep[1]


class HalfIndex(Protocol):
    """What :class:`HalvesIndex` calls on each half, a 64-bit
    :class:`~neardup.index.HammingIndex` (a protocol: this module is below the index that
    holds it and does not import it)."""

    def add(
        self,
        ids: npt.ArrayLike,
        fingerprints: npt.ArrayLike,
        timestamps: npt.ArrayLike | None = ...,
    ) -> None: ...
    def search(self, fingerprints: npt.ArrayLike, k: int | None = ...) -> Matches: ...
    def _stored_fingerprints(self, ids: I64) -> U64: ...
    def remove(self, ids: npt.ArrayLike, *, missing_ok: bool = ...) -> int: ...
    def expire(self, before_timestamp: int) -> int: ...
    def flush(self) -> None: ...
    def compact(self) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, id_: object) -> bool: ...
    def memory_bytes(self) -> int: ...
    def describe(self) -> dict[str, Any]: ...


class HalvesIndex:
    """What ``HammingIndex(bits=128)`` holds: a 64-bit index per half, searched at ``k // 2``.

    Fingerprints arrive validated as ``(n, 2)`` ``[hi, lo]``; ids live in both halves.
    """

    def __init__(self, k: int, hi: HalfIndex, lo: HalfIndex) -> None:
        self.k = k
        self.halves = (hi, lo)

    def add(self, ids: I64, fps: U64, timestamps: I64 | None) -> None:
        hi, lo = self.halves
        hi.add(ids, fps[:, 0], timestamps)
        lo.add(ids, fps[:, 1], timestamps)

    def search(self, queries: U64, k: int) -> Matches:
        found = [
            index.search(queries[:, h], k=min(k // 2, 63)) for h, index in enumerate(self.halves)
        ]
        qrow, cid = unique_pairs(
            np.concatenate([m.query for m in found]), np.concatenate([m.id for m in found])
        )
        stored = np.stack([index._stored_fingerprints(cid) for index in self.halves], axis=1)
        dist = distance_128(stored, queries[qrow])
        ok = dist <= k
        qrow, cid, dist = qrow[ok], cid[ok], dist[ok]
        order = np.lexsort((cid, dist, qrow))
        return Matches(qrow[order], cid[order], dist[order])

    def remove(self, ids: npt.ArrayLike, *, missing_ok: bool) -> int:
        self.halves[1].remove(ids, missing_ok=True)
        return self.halves[0].remove(ids, missing_ok=missing_ok)

    def expire(self, before_timestamp: int) -> int:
        self.halves[1].expire(before_timestamp)
        return self.halves[0].expire(before_timestamp)

    def flush(self) -> None:
        for index in self.halves:
            index.flush()

    def compact(self) -> None:
        for index in self.halves:
            index.compact()

    def __len__(self) -> int:
        return len(self.halves[0])

    def __contains__(self, id_: object) -> bool:
        return id_ in self.halves[0]

    def memory_bytes(self) -> int:
        return sum(index.memory_bytes() for index in self.halves)

    def describe(self) -> dict[str, Any]:
        return {
            "bits": 128,
            "k": self.k,
            "halves": "[hi, lo], each within k // 2",
            "hi": self.halves[0].describe(),
            "lo": self.halves[1].describe(),
            "memory_bytes": self.memory_bytes(),
            "live": len(self),
        }
