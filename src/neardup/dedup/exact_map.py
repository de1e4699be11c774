"""The exact-text map (normalised-text key -> last searched position) in two tiers (issue 39).

A Python dict of 128-bit keys costs ~114 bytes per entry at 10^6 documents (the dict slot, the
key's int object, the value's). Here the bulk lives in sorted numpy arrays (``hi``, ``lo``
halves of the key, ``pos``: 20 bytes per entry, positions int32 until one reaches ``2**31``,
then int64) and only recent entries in the dict (the tail). Every key lives in one tier only.
Before a chunk is decided, :meth:`ExactMap.start_log` moves the base entries of the chunk's
keys into the tail (one vectorised search), so the decision loop reads and writes the plain
dict (``get`` is the dict's own, as fast as before) and sees exactly what one dict would hold.
When the tail has grown (past ``FREEZE_AT`` entries and a sixteenth of the base),
:meth:`ExactMap.stop_log` merges it into the base, in place: the base's buffers keep room
(1.5x when they grow) and rows move back to front in blocks, so a merge holds no second copy of
the base (it held ~28 B per document at the peak of 10^6 documents).

>>> ex = ExactMap()
>>> ex.start_log([5, 7]); ex[5] = 0; ex[7] = 1; ex.stop_log()
[0, 1]
>>> ex.freeze(force=True); len(ex), dict.__len__(ex), ex.get(5)  # in the base: not in the dict
(2, 0, None)
>>> ex.start_log([5, 9]); ex.get(5), ex.get(9)  # moved back into the dict for this chunk
(0, None)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from neardup._heap import zeros

_LOW = (1 << 64) - 1
FREEZE_AT = 1 << 16  # tail entries before a merge into the base (and >= base / TAIL_SHARE)
# a dict entry costs ~114 B, a base entry 24: a tail of base / 8 held up to 14 B/doc at the peak
# of 10^7 documents, base / 16 7 B/doc for one more linear merge per doubling (issue 39)
TAIL_SHARE = 16


class ExactMap(dict[int, int]):
    """Key -> last searched position, a sorted base and a dict tail (module docs), with an
    optional write log: the positions written (the ``searched`` documents) and the values they
    replaced (for a dry run's undo)."""

    _log: list[tuple[int, int | None, int]] | None = None

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        # base, sorted by (hi, lo): rows ``:_n`` of buffers with room to merge a tail in place
        # (:meth:`freeze`); ``_pos`` -1: moved to the tail or dropped (narrow_positions)
        self._bufs: tuple[npt.NDArray[Any], ...] = (
            np.zeros(0, np.uint64),
            np.zeros(0, np.uint64),
            np.zeros(0, np.int32),
        )
        self._n = 0
        self._live = 0

    @property
    def _hi(self) -> npt.NDArray[np.uint64]:
        return self._bufs[0][: self._n]

    @property
    def _lo(self) -> npt.NDArray[np.uint64]:
        return self._bufs[1][: self._n]

    @property
    def _pos(self) -> npt.NDArray[Any]:
        return self._bufs[2][: self._n]

    @property
    def nbytes(self) -> int:
        """Bytes of the base's buffers (room included; the dict tail not counted)."""
        return sum(int(b.nbytes) for b in self._bufs)

    def __reduce__(self) -> tuple[Any, ...]:
        # a dict subclass unpickles its items through __setitem__ before its attributes are
        # back (Spark ships a Deduplicator to executors): rebuild with both at once instead
        return (_rebuilt, (dict(self), dict(self.__dict__)))

    def __len__(self) -> int:
        return super().__len__() + self._live

    def __setitem__(self, key: int, value: int) -> None:
        if self._log is not None:
            self._log.append((key, self.get(key), value))
        elif self._live and not super().__contains__(key):
            self.promote([key])  # outside a chunk: keep each key in one tier
        super().__setitem__(key, value)

    def start_log(self, keys: Iterable[int] = ()) -> None:
        """Log the writes of a chunk whose keys are ``keys`` (moved into the dict first)."""
        self.promote(keys)
        self._log = []

    def stop_log(self) -> list[int]:
        """End the log; returns the positions written while it ran."""
        log, self._log = self._log or [], None
        self.freeze()
        return [new for _, _, new in log]

    def undo_log(self) -> None:
        log, self._log = self._log or [], None
        for key, old, _ in reversed(log):
            if old is None:
                super().pop(key, None)
            else:
                super().__setitem__(key, old)

    def promote(self, keys: Iterable[int]) -> None:
        """Move the base entries of ``keys`` into the dict."""
        if not self._live:
            return
        hi, lo = _halves(list(keys))
        for j in np.unique(self._find(hi, lo)).tolist():
            if j >= 0 and self._pos[j] >= 0:
                key = (int(self._hi[j]) << 64) | int(self._lo[j])
                super().__setitem__(key, int(self._pos[j]))
                self._pos[j] = -1
                self._live -= 1

    def _rank(self, hi: npt.NDArray[np.uint64], lo: npt.NDArray[np.uint64]) -> npt.NDArray[Any]:
        """Where each key ``(hi, lo)`` goes in the base (lexicographic, before equal keys)."""
        # searched in key order: each search starts where the last ended (numpy's binsearch),
        # a walk forward through the cache instead of ~log2(n) misses a key (issue 39: 1.9 ->
        # 0.7 us a document at 10^7 keys)
        order = np.argsort(hi)
        left, right = np.empty(hi.size, np.intp), np.empty(hi.size, np.intp)
        left[order] = np.searchsorted(self._hi, hi[order], "left")
        right[order] = np.searchsorted(self._hi, hi[order], "right")
        at = left.copy()
        one = right - left == 1  # the usual case: high halves of xxh3_128 keys do not repeat
        at[one] += self._lo[left[one]] < lo[one]
        for i in np.flatnonzero(right - left > 1).tolist():  # equal high halves (small keys)
            a, b = int(left[i]), int(right[i])
            at[i] = a + int(np.searchsorted(self._lo[a:b], lo[i]))
        return at

    def _find(self, hi: npt.NDArray[np.uint64], lo: npt.NDArray[np.uint64]) -> npt.NDArray[Any]:
        """Base row of each key (-1: none)."""
        at = self._rank(hi, lo)
        inside = np.flatnonzero(at < self._hi.size)
        j = at[inside]
        same = (self._hi[j] == hi[inside]) & (self._lo[j] == lo[inside])
        hit = np.full(hi.size, -1, np.int64)
        hit[inside[same]] = j[same]
        return hit

    def freeze(self, force: bool = False) -> None:
        """Merge the dict into the base when it has grown (``force``: always): the sorted tail
        is inserted into the base (linear, no sort of the whole)."""
        tail = super().__len__()
        if not tail or (not force and tail < max(FREEZE_AT, self._live // TAIL_SHARE)):
            return
        if self._live < self._n:  # entries moved to the tail or dropped
            self._n = _compact(self._bufs, self._pos >= 0)
        hi, lo = _halves(list(super().keys()))
        pos = np.fromiter(super().values(), np.int64, tail)
        order = np.lexsort((lo, hi))
        hi, lo, pos = hi[order], lo[order], narrow_positions(pos[order], self._pos)
        at = self._rank(hi, lo)
        self._room(self._n + tail, pos.dtype)
        for buf, values in zip(self._bufs, (hi, lo, pos), strict=True):
            _insert_sorted(buf, self._n, at, values)
        self._n = self._live = self._n + tail
        dict.clear(self)

    def _room(self, rows: int, pos_dtype: np.dtype[Any]) -> None:
        """Buffers of at least ``rows`` rows (1.5x when they grow: merges in place until the
        next growth, which copies one array at a time) and positions of ``pos_dtype``."""
        bufs, n = list(self._bufs), self._n
        cap = bufs[0].size if bufs[0].size >= rows else max(rows, bufs[0].size * 3 // 2, 1024)
        for i, dtype in enumerate((np.dtype(np.uint64), np.dtype(np.uint64), pos_dtype)):
            if bufs[i].size != cap or bufs[i].dtype != dtype:
                grown = zeros(cap, dtype)  # untouched room is not resident
                grown[:n] = bufs[i][:n]
                bufs[i] = grown
                self._bufs = tuple(bufs)  # the old one is freed

    def positions(self) -> npt.NDArray[np.int64]:
        """Every entry's position (base first, then the dict, in :meth:`drop` order)."""
        tail = np.fromiter(super().values(), np.int64, super().__len__())
        return np.concatenate([self._pos[self._pos >= 0].astype(np.int64), tail])

    def drop(self, mask: npt.NDArray[np.bool_]) -> None:
        """Drop the entries where ``mask`` (over :meth:`positions`) is true."""
        base = np.flatnonzero(self._pos >= 0)
        self._pos[base[mask[: base.size]]] = -1
        self._live -= int(mask[: base.size].sum())
        keys = list(super().keys())
        for i in np.flatnonzero(mask[base.size :]).tolist():
            super().__delitem__(keys[i])

    def _arrays(self) -> tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any]]:
        live = self._pos >= 0
        hi, lo = _halves(list(super().keys()))
        return (
            np.concatenate([self._hi[live], hi]),
            np.concatenate([self._lo[live], lo]),
            self.positions(),
        )

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        hi, lo, pos = self._arrays()
        return {"exact_hi": hi, "exact_lo": lo, "exact_pos": pos}

    @classmethod
    def from_arrays(cls, hi: npt.NDArray[Any], lo: npt.NDArray[Any], pos: npt.NDArray[Any]) -> Self:
        """The map of keys ``hi << 64 | lo`` -> ``pos`` (all in the base); of a key given more
        than once the last entry wins, as in a dict."""
        ex = cls()
        order = np.lexsort((lo, hi))  # stable: equal keys stay in the given order
        hi, lo = np.asarray(hi, np.uint64)[order], np.asarray(lo, np.uint64)[order]
        last = np.ones(hi.size, bool)
        last[:-1] = (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1])
        ex._bufs = (hi[last], lo[last], narrow_positions(np.asarray(pos, np.int64)[order][last]))
        ex._n = ex._live = int(ex._bufs[2].size)
        return ex


def narrow_positions(
    pos: npt.NDArray[np.int64], like: npt.NDArray[Any] | None = None
) -> npt.NDArray[Any]:
    """``pos`` as int32 (4 bytes an entry less; issue 39) while every position fits and ``like``
    (the base) is int32, else int64: a map past ``2**31`` positions widens once, never wraps.

    >>> narrow_positions(np.array([0, 2**31 - 1])).dtype, narrow_positions(np.array([2**31])).dtype
    (dtype('int32'), dtype('int64'))
    """
    fits = (not pos.size or int(pos.max()) < 2**31) and (like is None or like.dtype == np.int32)
    return pos.astype(np.int32 if fits else np.int64)


_BLOCK = 1 << 16  # rows per step of the in-place moves (bounded temporaries)


def _compact(bufs: tuple[npt.NDArray[Any], ...], keep: npt.NDArray[np.bool_]) -> int:
    """Move the rows ``keep`` (of the first ``keep.size``) of each of ``bufs`` to the front, in
    place and in order (forward blocks: a write never passes the rows still to read); returns
    how many.

    >>> b = (np.array([1, 2, 3, 4]),); _compact(b, np.array([False, True, False, True])), b[0][:2]
    (2, array([2, 4]))
    """
    w = 0
    for s in range(0, keep.size, _BLOCK):
        k = keep[s : s + _BLOCK]
        m = int(k.sum())
        for buf in bufs:
            buf[w : w + m] = buf[s : s + k.size][k]
        w += m
    return w


def _insert_sorted(
    buf: npt.NDArray[Any], n: int, at: npt.NDArray[Any], values: npt.NDArray[Any]
) -> None:
    """Insert ``values[i]`` before row ``at[i]`` of ``buf[:n]`` (``at`` non-decreasing), in
    place: ``buf`` has room for them. Rows move back to front in blocks, no copy of the whole
    (a merge held old and new arrays at once: ~28 B per document at its peak, issue 39).

    >>> b = np.array([10, 20, 30, 0, 0]); _insert_sorted(b, 3, np.array([0, 2]), np.array([5, 25]))
    >>> b.tolist()
    [5, 10, 20, 25, 30]
    """
    for e in range(n, 0, -_BLOCK):
        s = max(0, e - _BLOCK)
        shift = np.searchsorted(at, np.arange(s, e), "right")  # values before each row
        if shift[0] == shift[-1]:
            buf[s + int(shift[0]) : e + int(shift[0])] = buf[s:e]  # numpy copes with overlap
        else:
            buf[np.arange(s, e) + shift] = buf[s:e].copy()
    buf[at + np.arange(at.size)] = values


def _halves(keys: list[int]) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """The high and low 64-bit halves of 128-bit keys."""
    if not keys:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    k = np.array(keys, dtype=object)
    return (k >> 64).astype(np.uint64), (k & _LOW).astype(np.uint64)


def _rebuilt(items: dict[int, int], state: dict[str, Any]) -> ExactMap:
    """An unpickled :class:`ExactMap`: its tail ``items`` and its attributes ``state``.

    >>> import pickle
    >>> ex = ExactMap(); ex.start_log([5]); ex[5] = 3; _ = ex.stop_log(); ex.freeze(force=True)
    >>> back = pickle.loads(pickle.dumps(ex)); len(back), back.positions().tolist()
    (1, [3])
    """
    ex = ExactMap(items)
    ex.__dict__.update(state)
    return ex
