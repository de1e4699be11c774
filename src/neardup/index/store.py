"""The index's shared store (id, fingerprint, timestamp, alive per position) and id lookup.

Tables refer to entries by uint32 position into the store, so ids are stored once.

>>> import numpy as np
>>> s = IndexStore()
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

from neardup._growable import Growable

NO_EXPIRY = np.iinfo(np.int64).max
I64 = npt.NDArray[np.int64]


class IndexStore:
    """Append-only columns with amortised growth; ``alive`` marks removed/expired rows.

    ``ids_``, ``fps_``, ``alive_`` (and ``ts_``) are the whole buffers (kernels take them with
    the row count); ``ids`` etc. the filled part.
    """

    def __init__(self) -> None:
        self._ids = Growable(np.int64)
        self._fps = Growable(np.uint64)
        self._alive = Growable(np.uint8)
        self._ts: Growable | None = None
        self.live = 0

    @property
    def n(self) -> int:
        return self._ids.size

    @property
    def ids_(self) -> I64:
        return self._ids.data

    @property
    def fps_(self) -> npt.NDArray[np.uint64]:
        return self._fps.data

    @property
    def alive_(self) -> npt.NDArray[np.uint8]:
        return self._alive.data

    @property
    def ts_(self) -> I64 | None:
        return None if self._ts is None else self._ts.data

    @property
    def ids(self) -> I64:
        return self._ids.view()

    @property
    def fps(self) -> npt.NDArray[np.uint64]:
        return self._fps.view()

    @property
    def alive(self) -> npt.NDArray[np.uint8]:
        return self._alive.view()

    @property
    def ts(self) -> I64 | None:
        return None if self._ts is None else self._ts.view()

    def append(self, ids: I64, fps: npt.NDArray[np.uint64], ts: I64 | None) -> None:
        n, m = self.n, ids.shape[0]
        if ts is not None and self._ts is None:
            self._ts = Growable.wrap(np.full(n, NO_EXPIRY, np.int64))
        if self._ts is not None:
            self._ts.extend(np.full(m, NO_EXPIRY, np.int64) if ts is None else ts)
        self._fps.extend(fps)
        self._alive.extend(np.ones(m, np.uint8))
        self._ids.extend(ids)  # last: it defines n
        self.live += m

    def kill(self, positions: I64) -> int:
        """Mark positions dead; returns how many were alive."""
        alive = self._alive.writable()
        was = int(alive[positions].sum())
        alive[positions] = 0
        self.live -= was
        return was

    def compacted(self) -> IndexStore:
        """A new store holding only live rows, in position order."""
        keep = np.flatnonzero(self.alive)
        out = IndexStore()
        ts = None if self.ts is None else self.ts[keep]
        out.append(self.ids[keep], self.fps[keep], ts)
        return out

    @classmethod
    def from_arrays(
        cls, ids: I64, fps: npt.NDArray[np.uint64], alive: npt.NDArray[np.uint8], ts: I64 | None
    ) -> IndexStore:
        """A store over existing (possibly memory-mapped, read-only) arrays of equal length."""
        s = cls()
        s._ids, s._fps, s._alive = Growable.wrap(ids), Growable.wrap(fps), Growable.wrap(alive)
        s._ts = None if ts is None else Growable.wrap(ts)
        s.live = int(np.count_nonzero(alive))
        return s


class IdIndex:
    """id -> position: a sorted array for older rows plus a dict of recent ones."""

    def __init__(self) -> None:
        self.sorted_ids: I64 = np.empty(0, np.int64)
        self.order: npt.NDArray[Any] | None = None  # None: positions equal ranks
        self.recent: dict[int, int] = {}

    def rebuild(self, store: IndexStore) -> None:
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

    def lookup(self, ids: I64, store: IndexStore) -> I64:
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

    def _lookup_one(self, x: int, store: IndexStore) -> int:
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

    def _lookup_recent(self, ids: I64, out: I64, store: IndexStore) -> I64:
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
