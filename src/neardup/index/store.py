"""The index's shared store (id, fingerprint, timestamp, alive per position) and id lookup.

Tables refer to entries by uint32 position into the store, so ids are stored once.

>>> import numpy as np
>>> s = Store()
>>> s.append(np.array([7, 9]), np.array([1, 2], np.uint64), None)
>>> ix = IdIndex()
>>> ix.rebuild(s)
>>> ix.lookup(np.array([9, 8]), s).tolist()
[1, -1]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

NO_EXPIRY = np.iinfo(np.int64).max
I64 = npt.NDArray[np.int64]


def _grow(arr: npt.NDArray[Any], n: int, need: int) -> npt.NDArray[Any]:
    """``arr`` with room for ``need`` rows (first ``n`` kept), copying out of mmaps."""
    if arr.shape[0] >= need and arr.flags.writeable:
        return arr
    cap = max(need, int(arr.shape[0] * 1.5), 1024)
    out = np.empty(cap, arr.dtype)
    out[:n] = arr[:n]
    return out


class Store:
    """Append-only columns with amortised growth; ``alive`` marks removed/expired rows."""

    def __init__(self) -> None:
        self.n = 0
        self.ids_: I64 = np.empty(0, np.int64)
        self.fps_: npt.NDArray[np.uint64] = np.empty(0, np.uint64)
        self.alive_: npt.NDArray[np.uint8] = np.empty(0, np.uint8)
        self.ts_: I64 | None = None
        self.live = 0

    @property
    def ids(self) -> I64:
        return self.ids_[: self.n]

    @property
    def fps(self) -> npt.NDArray[np.uint64]:
        return self.fps_[: self.n]

    @property
    def alive(self) -> npt.NDArray[np.uint8]:
        return self.alive_[: self.n]

    @property
    def ts(self) -> I64 | None:
        return None if self.ts_ is None else self.ts_[: self.n]

    def append(self, ids: I64, fps: npt.NDArray[np.uint64], ts: I64 | None) -> None:
        n, m = self.n, ids.shape[0]
        self.ids_ = _grow(self.ids_, n, n + m)
        self.fps_ = _grow(self.fps_, n, n + m)
        self.alive_ = _grow(self.alive_, n, n + m)
        self.ids_[n : n + m] = ids
        self.fps_[n : n + m] = fps
        self.alive_[n : n + m] = 1
        if ts is not None and self.ts_ is None:
            self.ts_ = np.full(max(self.ids_.shape[0], n + m), NO_EXPIRY, np.int64)
        if self.ts_ is not None:
            self.ts_ = _grow(self.ts_, n, n + m)
            self.ts_[n : n + m] = NO_EXPIRY if ts is None else ts
        self.n = n + m
        self.live += m

    def kill(self, positions: I64) -> int:
        """Mark positions dead; returns how many were alive."""
        if not self.alive_.flags.writeable:
            self.alive_ = self.alive_.copy()
        was = int(self.alive_[positions].sum())
        self.alive_[positions] = 0
        self.live -= was
        return was

    def compacted(self) -> Store:
        """A new store holding only live rows, in position order."""
        keep = np.flatnonzero(self.alive)
        out = Store()
        ts = None if self.ts is None else self.ts[keep]
        out.append(self.ids[keep], self.fps[keep], ts)
        return out

    @classmethod
    def from_arrays(
        cls, ids: I64, fps: npt.NDArray[np.uint64], alive: npt.NDArray[np.uint8], ts: I64 | None
    ) -> Store:
        """A store over existing (possibly memory-mapped, read-only) arrays."""
        s = cls()
        s.ids_, s.fps_, s.alive_, s.ts_ = ids, fps, alive, ts
        s.n = int(ids.shape[0])
        s.live = int(np.count_nonzero(alive))
        return s


class IdIndex:
    """id -> position: a sorted array for older rows plus a dict of recent ones."""

    def __init__(self) -> None:
        self.sorted_ids: I64 = np.empty(0, np.int64)
        self.order: npt.NDArray[Any] | None = None  # None: positions equal ranks
        self.recent: dict[int, int] = {}

    def rebuild(self, store: Store) -> None:
        """Index every live row of ``store`` in the sorted part."""
        ids = store.ids
        if store.live == store.n and (store.n < 2 or bool(np.all(ids[1:] > ids[:-1]))):
            self.sorted_ids, self.order = ids, None
        else:
            keep = np.flatnonzero(store.alive)
            live_ids = ids[keep]
            rank = np.argsort(live_ids, kind="stable")
            self.sorted_ids = live_ids[rank]
            self.order = keep[rank].astype(np.uint32 if store.n < 2**32 else np.int64)
        self.recent = {}

    def needs_rebuild(self) -> bool:
        return len(self.recent) > max(65536, int(self.sorted_ids.shape[0]) // 8)

    def add(self, ids: I64, first_position: int) -> None:
        positions = range(first_position, first_position + len(ids))
        self.recent.update(zip(ids.tolist(), positions, strict=True))

    def lookup(self, ids: I64, store: Store) -> I64:
        """Live position of each id, or -1."""
        if ids.shape[0] == 1:
            return np.array([self._lookup_one(int(ids[0]), store)], np.int64)
        out = np.full(ids.shape[0], -1, np.int64)
        srt = self.sorted_ids
        if srt.shape[0]:
            lo = np.searchsorted(srt, ids, "left")
            hi = np.searchsorted(srt, ids, "right")
            one = np.flatnonzero(hi - lo == 1)
            pos = lo[one] if self.order is None else self.order[lo[one]].astype(np.int64)
            ok = store.alive_[pos] != 0
            out[one[ok]] = pos[ok]
            for sel in np.flatnonzero(hi - lo > 1):
                for rank in range(int(lo[sel]), int(hi[sel])):
                    p = rank if self.order is None else int(self.order[rank])
                    if store.alive_[p]:
                        out[sel] = p
                        break
        if self.recent:
            out = self._lookup_recent(ids, out, store)
        return out

    def _lookup_one(self, x: int, store: Store) -> int:
        p = self.recent.get(x, -1)
        if p >= 0 and store.alive_[p]:
            return p
        srt = self.sorted_ids
        rank = int(np.searchsorted(srt, x))
        while rank < srt.shape[0] and int(srt[rank]) == x:
            p = rank if self.order is None else int(self.order[rank])
            if store.alive_[p]:
                return p
            rank += 1
        return -1

    def _lookup_recent(self, ids: I64, out: I64, store: Store) -> I64:
        if ids.shape[0] < 64:
            for i, x in enumerate(ids.tolist()):
                p = self.recent.get(x, -1)
                if p >= 0 and store.alive_[p]:
                    out[i] = p
            return out
        keys = np.fromiter(self.recent.keys(), np.int64, len(self.recent))
        vals = np.fromiter(self.recent.values(), np.int64, len(self.recent))
        rank = np.argsort(keys)
        keys, vals = keys[rank], vals[rank]
        at = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
        hit = keys[at] == ids
        pos = vals[at]
        ok = hit & (store.alive[np.where(hit, pos, 0)] != 0)
        out[ok] = pos[ok]
        return out
