"""128-bit fingerprints: two 64-bit indexes on the halves, verified on the full 128 bits.

A pair within ``k`` on 128 bits has ``d_hi + d_lo <= k``, so one half is within ``k // 2``
(pigeonhole on two blocks). Each half gets a :class:`HammingIndex` (or join) at ``k // 2``;
candidates from either are verified on both halves and de-duplicated. Fingerprints are
``(n, 2)`` uint64 arrays ``[hi, lo]`` (what ``Fingerprinter(bits=128)`` returns) or Python
ints below ``2**128``.

>>> import numpy as np
>>> index = HammingIndex(k=4, bits=128)
>>> index.add([1, 2], [(5 << 64) | 7, (5 << 64) | 0])
>>> index.query((4 << 64) | 7)
[(1, 1), (2, 4)]
>>> i, j, d = all_pairs_128(np.array([[5, 7], [5, 0], [0, 0]], dtype=np.uint64), k=4)
>>> i.tolist(), j.tolist(), d.tolist()
([0, 1], [1, 2], [3, 2])
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.index._validate import check_k
from neardup.index.hamming_index import HammingIndex, Matches
from neardup.index.join import all_pairs

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
_MASK = 2**64 - 1


def as_fingerprints_128(values: Any) -> U64:
    """An ``(n, 2)`` uint64 ``[hi, lo]`` array, or a ValueError/TypeError naming the fix."""
    if isinstance(values, np.ndarray):
        if values.ndim != 2 or values.shape[1] != 2:
            raise ValueError(
                f"128-bit fingerprints must have shape (n, 2) [hi, lo], got {values.shape}"
            )
        if values.size and values.dtype != np.uint64:
            raise TypeError(
                f"128-bit fingerprints must be uint64 [hi, lo] pairs, got dtype {values.dtype}"
            )
        return np.ascontiguousarray(values, dtype=np.uint64)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(
            "128-bit fingerprints must be an (n, 2) uint64 array or a sequence of "
            f"ints, got {type(values).__name__}"
        )
    out = np.zeros((len(values), 2), np.uint64)
    for row, v in enumerate(values):
        if isinstance(v, (tuple, list, np.ndarray)) and len(v) == 2:
            v = (int(v[0]) << 64) | int(v[1])
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < 2**128:
            raise ValueError(
                f"128-bit fingerprints must be ints in [0, 2**128) or [hi, lo] pairs, got {v!r}"
            )
        out[row] = (int(v) >> 64, int(v) & _MASK)
    return out


def _distance(a: U64, b: U64) -> I64:
    both: I64 = np.bitwise_count(a[:, 0] ^ b[:, 0]).astype(np.int64) + np.bitwise_count(
        a[:, 1] ^ b[:, 1]
    )
    return both


class WideHammingIndex(HammingIndex):
    """``HammingIndex(bits=128, ...)``: same API, fingerprints as ``(n, 2)`` ``[hi, lo]``."""

    def __init__(self, *, k: int = 3, bits: int = 128, **options: Any) -> None:
        self.k = check_k(k, 127)
        self.bits = bits
        self.options = options
        self.halves = (
            HammingIndex(k=self.k // 2, **options),
            HammingIndex(k=self.k // 2, **options),
        )

    def add(self, ids: Any, fingerprints: Any, timestamps: Any = None) -> None:
        fps = as_fingerprints_128(fingerprints)
        hi, lo = self.halves
        hi.add(ids, fps[:, 0], timestamps)
        lo.add(ids, fps[:, 1], timestamps)

    def search(self, fingerprints: Any, k: int | None = None) -> Matches:
        queries = as_fingerprints_128(fingerprints)
        k = self.k if k is None else check_k(k, 127)
        rows, ids = [], []
        for half, index in enumerate(self.halves):
            m = index.search(queries[:, half], k=min(k // 2, 63))
            rows.append(m.query)
            ids.append(m.id)
        qrow, cid = np.concatenate(rows), np.concatenate(ids)
        if qrow.size:  # one (query, id) per candidate, found in one or both halves
            keep = np.unique(np.stack([qrow, cid]), axis=1)
            qrow, cid = keep[0], keep[1]
        stored = self._fingerprints_of(cid)
        dist = _distance(stored, queries[qrow])
        ok = dist <= k
        qrow, cid, dist = qrow[ok], cid[ok], dist[ok]
        order = np.lexsort((cid, dist, qrow))
        return Matches(qrow[order], cid[order], dist[order])

    def _fingerprints_of(self, ids: I64) -> U64:
        out = np.zeros((ids.shape[0], 2), np.uint64)
        for half, index in enumerate(self.halves):
            pos = index._ids.lookup(ids, index._store)
            out[:, half] = index._store.fps_[pos]
        return out

    def query(self, fingerprint: Any, k: int | None = None) -> list[tuple[int, int]]:
        return self.search([fingerprint], k).for_query(0)

    def remove(self, ids: Any, *, missing_ok: bool = False) -> int:
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

    def __repr__(self) -> str:
        return f"HammingIndex(k={self.k}, bits=128, live={len(self)})"

    def memory_bytes(self) -> int:
        return sum(index.memory_bytes() for index in self.halves)

    def save(self, path: str | os.PathLike[str]) -> None:
        """A versioned directory like the 64-bit format: the halves in ``hi/`` and ``lo/`` and a
        manifest with k and the halves' checksums (see :func:`storage.save_halves`)."""
        from neardup.index.storage import save_halves

        save_halves(self, path)

    @classmethod
    def load_wide(
        cls, path: str | os.PathLike[str], manifest: dict[str, Any], *, mmap: bool, verify: bool
    ) -> WideHammingIndex:
        from neardup.index.storage import read_halves

        index = cls(k=int(manifest["k"]))
        index.halves = read_halves(HammingIndex, Path(path), manifest, mmap, verify)
        return index


def all_pairs_128(fingerprints: Any, k: int = 3) -> tuple[I64, I64, I64]:
    """:func:`~neardup.index.all_pairs` for ``(n, 2)`` ``[hi, lo]`` 128-bit fingerprints."""
    fps = as_fingerprints_128(fingerprints)
    k = check_k(k, 127)
    parts = [all_pairs(fps[:, half], k=min(k // 2, 63)) for half in (0, 1)]
    i = np.concatenate([p[0] for p in parts])
    j = np.concatenate([p[1] for p in parts])
    if i.size:
        keep = np.unique(np.stack([i, j]), axis=1)  # sorted by (i, j), each pair once
        i, j = keep[0], keep[1]
    d = _distance(fps[i], fps[j])
    ok = d <= k
    return i[ok], j[ok], d[ok]
