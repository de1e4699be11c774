"""ExpiryQueue: rows by timestamp, so that a time window expires rows without scanning them all.

A window expires, after every document, the rows older than ``newest - window``. Scanning every
stored row for that made one-document-at-a-time streams with a window run at a quarter of the
speed without one (issue 26). The queue keeps the rows in a few timestamp-sorted runs (an
LSM of sorted arrays: a new batch is one run, runs of similar size merge, so there are about
log2(n) of them): popping the rows older than a bound is one binary search per run, and each row
is moved O(log n) times over its life. Timestamps need not arrive in order.

Row numbers are the owner's (store rows or slots). When the owner renumbers its rows
(compaction) it drops the queue and builds a new one from the live rows (:meth:`ExpiryQueue.of`):
O(n log n) once per compaction, which happens after as many rows died as live, so the cost per
row stays amortised O(log n).

>>> import numpy as np
>>> q = ExpiryQueue.of(np.array([30, 10, 20]), np.array([0, 1, 2]))
>>> q.push(np.array([5]), np.array([3]))
>>> sorted(q.pop_before(21).tolist())
[1, 2, 3]
>>> len(q), q.pop_before(21).tolist()
(1, [])
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup.errors import BadInputError

I64 = npt.NDArray[np.int64]

__all__ = ["ExpiryQueue"]


class ExpiryQueue:
    """Rows by timestamp: :meth:`push` new rows, :meth:`pop_before` the old ones."""

    def __init__(self) -> None:
        # each run: (timestamps sorted, rows in the same order, first row not yet popped)
        self._runs: list[tuple[I64, I64, int]] = []

    @classmethod
    def of(cls, timestamps: npt.ArrayLike, rows: npt.ArrayLike) -> ExpiryQueue:
        """A queue holding ``rows`` with their ``timestamps``."""
        q = cls()
        q.push(timestamps, rows)
        return q

    def push(self, timestamps: npt.ArrayLike, rows: npt.ArrayLike) -> None:
        """Add ``rows`` (int64) with their ``timestamps`` (int64 seconds)."""
        ts = np.asarray(timestamps, np.int64).ravel()
        r = np.asarray(rows, np.int64).ravel()
        if ts.shape != r.shape:
            raise BadInputError(f"{ts.size} timestamps for {r.size} rows")
        if not ts.size:
            return
        order = np.argsort(ts, kind="stable")
        self._runs.append((ts[order], r[order], 0))
        while len(self._runs) >= 2 and _left(self._runs[-2]) <= 2 * _left(self._runs[-1]):
            a, b = self._runs.pop(), self._runs.pop()
            ts = np.concatenate([b[0][b[2] :], a[0][a[2] :]])
            r = np.concatenate([b[1][b[2] :], a[1][a[2] :]])
            order = np.argsort(ts, kind="stable")  # timsort: a merge of two sorted runs, O(n)
            self._runs.append((ts[order], r[order], 0))

    def pop_before(self, bound: int) -> I64:
        """Remove and return the rows with timestamp ``< bound`` (oldest first per run)."""
        out: list[I64] = []
        kept: list[tuple[I64, I64, int]] = []
        for ts, rows, start in self._runs:
            stop = int(np.searchsorted(ts, bound, "left"))
            if stop > start:
                out.append(rows[start:stop])
                start = stop
            if start < ts.size:
                kept.append((ts, rows, start))
        self._runs = kept
        return np.concatenate(out) if out else np.zeros(0, np.int64)

    def __len__(self) -> int:
        return sum(_left(run) for run in self._runs)


def _left(run: tuple[I64, I64, int]) -> int:
    return int(run[0].size - run[2])
