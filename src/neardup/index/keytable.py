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
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._backend import kernels

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]

__all__ = ["KeyTable"]

_k: Any = kernels("keys")  # C (neardup._native) or the numba fallback


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
        offsets = np.empty((1 << p) + 1, np.int64)
        _k.key_offsets(keys, p, offsets)  # one linear pass (a binary search per bucket was 8x)
        return cls(keys, slots, offsets, p)

    def lookup(self, queries: U64) -> tuple[I64, I64]:
        """(query row, row in this run) for every equal key."""
        cap = max(16, queries.size)
        while True:
            out_q = np.empty(cap, np.int64)
            out_at = np.empty(cap, np.int64)
            c = _k.key_lookup(self.keys, self.offsets, self.p, queries, out_q, out_at)
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
        m = _k.key_merge(a.keys, a.slots, b.keys, b.slots, self._dead, keys, slots)
        return _Run.sorted(keys[:m].copy(), slots[:m].copy())

    def kill(self, slots: npt.ArrayLike) -> None:
        """Mark slots dead: lookups skip them, the next merge drops their rows."""
        s = np.asarray(slots, dtype=np.int64)
        self._dead[s[s < self._dead.size]] = True

    def compact(self, live: npt.ArrayLike | None = None) -> None:
        """Merge everything into one run without dead rows.

        ``live``: the sorted live slots, to renumber them ``0..len(live)-1`` (the caller drops
        its dead slots the same way); the runs are merged (each is sorted), never re-sorted.
        """
        merged: _Run | None = None
        for run in self._runs:
            merged = run if merged is None else self._merge(merged, run)
        if merged is not None and len(self._runs) == 1:  # one run: still drop its dead rows
            keep = ~self._dead[merged.slots]
            merged = _Run.sorted(merged.keys[keep], merged.slots[keep])
        if live is None:
            self._runs = [merged] if merged is not None and merged.keys.size else []
            return
        slots = np.asarray(live, np.int64)
        renumber = np.zeros(max(self._dead.size, 1), np.uint32)
        renumber[slots] = np.arange(slots.size, dtype=np.uint32)
        self._dead = np.zeros(slots.size, dtype=bool)
        if merged is None or not merged.keys.size:
            self._runs = []
            return
        self._runs = [_Run(merged.keys, renumber[merged.slots], merged.offsets, merged.p)]

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

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The runs and the dead-slot mask as named arrays (saved as they are: no re-sort on
        load)."""
        out: dict[str, npt.NDArray[Any]] = {"dead": self._dead}
        for i, run in enumerate(self._runs):
            out[f"run{i}_keys"], out[f"run{i}_slots"] = run.keys, run.slots
            out[f"run{i}_offsets"] = run.offsets
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[Any]], *, merge_factor: int = 4) -> KeyTable:
        """A table over :meth:`to_arrays` output (memory maps are used read-only); checks the
        shapes and offsets the lookup kernel relies on (O(buckets))."""
        table = cls(merge_factor=merge_factor)
        table._dead = np.array(arrays["dead"], dtype=bool)  # a copy: kill() writes it
        i = 0
        while f"run{i}_keys" in arrays:
            keys, slots = arrays[f"run{i}_keys"], arrays[f"run{i}_slots"]
            offsets = arrays[f"run{i}_offsets"]
            p = int(offsets.size - 1).bit_length() - 1
            ok = (
                keys.dtype == np.uint64
                and slots.dtype == np.uint32
                and keys.ndim == 1
                and slots.shape == keys.shape
                and offsets.dtype == np.int64
                and p >= 1
                and offsets.size == (1 << p) + 1
                and int(offsets[0]) == 0
                and int(offsets[-1]) == keys.size
                and bool((np.diff(offsets) >= 0).all())
            )
            if not ok:
                raise ValueError(f"key table run {i} is inconsistent (keys, slots, offsets)")
            table._runs.append(_Run(keys, slots, offsets, p))
            i += 1
        return table

    @property
    def runs(self) -> list[int]:
        """Rows per run, oldest first."""
        return [int(r.keys.size) for r in self._runs]

    @property
    def nbytes(self) -> int:
        """Bytes of keys, slots and offsets."""
        return sum(r.nbytes for r in self._runs) + int(self._dead.nbytes)
