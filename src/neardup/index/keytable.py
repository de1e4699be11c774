"""KeyTable: uint64 key -> slot lookups at constant cost, with appends, tombstones and expiry.

Layout (LSM-style, numpy only): each :meth:`KeyTable.add` writes a *run* -- its (key, slot)
rows sorted by key, plus direct-address offsets on the key's top ``p`` bits (``2**p`` ~ rows /
4, keys are mixed so buckets hold ~4 rows). A lookup reads one offset pair per run and compares
the few keys of that bucket: no binary search, no dependence on the table's size except through
the number of runs, which merging keeps logarithmic (runs of similar size merge, dropping the
rows of dead slots). Slots are small integers the caller assigns (0, 1, 2, ...); a slot is
killed by :meth:`kill` (its rows stay until the next merge, lookups skip them).

>>> import numpy as np
>>> t = KeyTable()
>>> t.add(np.array([[5, 6], [7, 5]], np.uint64), np.array([0, 1]))
>>> q, s = t.lookup(np.array([5, 9, 7], np.uint64))
>>> q.tolist(), s.tolist()
([0, 0, 2], [0, 1, 1])
>>> t.kill(np.array([1]))
>>> t.lookup(np.array([5], np.uint64))[1].tolist()
[0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.index import key_kernels

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]

__all__ = ["KeyTable"]


@dataclass(frozen=True)
class _Run:
    keys: U64  # sorted
    slots: U32  # parallel to keys
    offsets: I64  # (2**p + 1,) bucket starts by top p bits
    p: int

    @classmethod
    def build(cls, keys: U64, slots: U32) -> _Run:
        """A run from unsorted rows."""
        order = np.argsort(keys)
        return cls.sorted(keys[order], slots[order])

    @classmethod
    def sorted(cls, keys: U64, slots: U32) -> _Run:
        """A run from rows already sorted by key: only the offsets are computed."""
        p = max(1, int(np.log2(max(keys.size, 4) / 4)))
        top = keys >> np.uint64(64 - p)
        bounds = np.arange((1 << p) + 1, dtype=np.uint64)
        offsets = np.searchsorted(top, bounds).astype(np.int64)
        return cls(keys, slots, offsets, p)

    def lookup(self, queries: U64) -> tuple[I64, I64]:
        """(query row, row in this run) for every equal key."""
        cap = max(16, queries.size)
        while True:
            out_q = np.empty(cap, np.int64)
            out_at = np.empty(cap, np.int64)
            c = key_kernels.lookup(self.keys, self.offsets, self.p, queries, out_q, out_at)
            if c <= cap:
                return out_q[:c], out_at[:c]
            cap = c

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.slots.nbytes + self.offsets.nbytes)


class KeyTable:
    """Maps uint64 keys to the slots that hold them (see the module docs).

    ``merge_factor``: a run merges into the one before it when that one is at most this many
    times larger.
    """

    def __init__(self, *, merge_factor: int = 4) -> None:
        self.merge_factor = max(2, int(merge_factor))
        self._runs: list[_Run] = []
        self._dead = np.zeros(0, dtype=bool)  # by slot

    def add(self, keys: U64, slots: npt.ArrayLike) -> None:
        """Add the ``(n, m)`` keys of ``n`` new slots (each slot must be new and alive)."""
        keys = np.asarray(keys, dtype=np.uint64)
        slot_arr = np.asarray(slots, dtype=np.int64)
        if keys.ndim != 2 or keys.shape[0] != slot_arr.shape[0]:
            raise ValueError(
                f"keys must be (n, m) for n={slot_arr.shape[0]} slots, got {keys.shape}"
            )
        if slot_arr.size == 0:
            return
        top = int(slot_arr.max())
        if top >= 2**32 - 1 or int(slot_arr.min()) < 0:
            raise ValueError("slots must be in [0, 2**32 - 1)")
        if top >= self._dead.size:
            grown = np.zeros(max(top + 1, 2 * self._dead.size), dtype=bool)
            grown[: self._dead.size] = self._dead
            self._dead = grown
        flat_slots = np.repeat(slot_arr.astype(np.uint32), keys.shape[1])
        self._runs.append(_Run.build(keys.ravel(), flat_slots))
        while len(self._runs) >= 2:
            a, b = self._runs[-2], self._runs[-1]
            if a.keys.size > self.merge_factor * b.keys.size:
                break
            self._runs[-2:] = [self._merge(a, b)]

    def _merge(self, a: _Run, b: _Run) -> _Run:
        n = a.keys.size + b.keys.size
        keys, slots = np.empty(n, np.uint64), np.empty(n, np.uint32)
        m = key_kernels.merge(a.keys, a.slots, b.keys, b.slots, self._dead, keys, slots)
        return _Run.sorted(keys[:m].copy(), slots[:m].copy())

    def kill(self, slots: npt.ArrayLike) -> None:
        """Mark slots dead: lookups skip them, the next merge drops their rows."""
        s = np.asarray(slots, dtype=np.int64)
        self._dead[s[s < self._dead.size]] = True

    def compact(self) -> None:
        """Merge everything into one run without dead rows."""
        if self._runs:
            keys = np.concatenate([r.keys for r in self._runs])
            slots = np.concatenate([r.slots for r in self._runs])
            live = ~self._dead[slots]
            self._runs = [_Run.build(keys[live], slots[live])] if live.any() else []

    def lookup(self, queries: U64) -> tuple[I64, I64]:
        """``(query row, slot)`` for every live slot holding a queried key, sorted, distinct.

        ``queries`` is ``(n,)`` or ``(n, m)`` (row ``i``'s m keys: a slot sharing any is a hit).
        """
        q2 = np.asarray(queries, dtype=np.uint64)
        m = q2.shape[1] if q2.ndim == 2 else 1
        flat = q2.ravel()
        rows, slots = [], []
        for run in self._runs:
            r, at = run.lookup(flat)
            r = r // m
            s = run.slots[at].astype(np.int64)
            live = ~self._dead[s]
            rows.append(r[live])
            slots.append(s[live])
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        row, slot = np.concatenate(rows), np.concatenate(slots)
        order = np.lexsort((slot, row))
        row, slot = row[order], slot[order]
        first = np.ones(row.size, dtype=bool)
        first[1:] = (row[1:] != row[:-1]) | (slot[1:] != slot[:-1])
        return row[first], slot[first]

    def keys_by_slot(self, slots: npt.ArrayLike, m: int) -> U64:
        """The ``(len(slots), m)`` keys of live slots (each must hold exactly ``m`` keys)."""
        want = np.asarray(slots, dtype=np.int64)
        keys = (
            np.concatenate([r.keys for r in self._runs]) if self._runs else np.zeros(0, np.uint64)
        )
        own = (
            np.concatenate([r.slots for r in self._runs]).astype(np.int64)
            if self._runs
            else np.zeros(0, np.int64)
        )
        pick = np.isin(own, want)
        keys, own = keys[pick], own[pick]
        order = np.argsort(own, kind="stable")
        if own.size != want.size * m:
            raise ValueError(f"expected {m} keys per slot, found {own.size} for {want.size} slots")
        return keys[order].reshape(want.size, m)

    @property
    def runs(self) -> list[int]:
        """Rows per run, oldest first."""
        return [int(r.keys.size) for r in self._runs]

    @property
    def nbytes(self) -> int:
        """Bytes of keys, slots and offsets."""
        return sum(r.nbytes for r in self._runs) + int(self._dead.nbytes)
