"""Bounded out-of-orderness for time windows: a heap keyed by time, released by a watermark.

A time window decides in time order (kept documents older than the newest minus the window
expire, see :mod:`neardup.dedup.columns`), so input that is only roughly sorted would lose
matches: a copy that comes after a much newer row finds its original expired. Stream
processors solve this with a watermark and an allowed lateness; so does this buffer. Rows are
held in a min-heap keyed by ``(timestamp, arrival)``; when a row arrives, every held row with
``t <= newest - max_disorder`` is released in that order. A row that arrives within
``max_disorder`` of every newer row before it is therefore released in time order: the
decisions are those of the same rows stably sorted by time. A row whose timestamp is below one
already released (it came more than ``max_disorder`` after a newer row, and rows later than it
were decided) cannot be put in order any more: it is released at once and counted as *late*
(:attr:`DisorderBuffer.late`), never dropped. Memory: the rows of the last ``max_disorder``
of time.

>>> order, late = release_order([3.0, 1.0, 2.0, 9.0, 0.0], max_disorder=5)
>>> order.tolist(), late.tolist()
([1, 2, 0, 4, 3], [4])
>>> release_order([3.0, 1.0, 2.0], max_disorder=0)[1].tolist()
[1, 2]
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from neardup.dedup.decisions import Decisions

__all__ = [
    "DEFAULT_MAX_DISORDER",
    "DisorderBuffer",
    "disorder_note",
    "in_input_order",
    "release_order",
]

T = TypeVar("T")

#: seconds (``--max-disorder 48h``): Reuters-21578 in file order has rows up to 46.8 h behind
#: a newer one (723 of 21,249 more than 24 h, none more than 48 h); benchmarks/README.md
DEFAULT_MAX_DISORDER = 48 * 3600.0


class DisorderBuffer(Generic[T]):
    """Rows in, rows out in time order as far as ``max_disorder`` (seconds) allows (module
    docs). ``late`` counts the rows released out of order; ``late_items`` keeps the first
    ``keep_late`` of them (to name them).

    >>> buf: DisorderBuffer[str] = DisorderBuffer(10)
    >>> buf.push(5, "a"), buf.push(0, "b"), buf.push(20, "c"), buf.push(1, "d"), buf.flush()
    ([], [], ['b', 'a'], ['d'], ['c'])
    >>> buf.late, buf.late_items
    (1, ['d'])
    """

    def __init__(self, max_disorder: float, keep_late: int = 3) -> None:
        if not max_disorder >= 0:
            raise ValueError(f"max_disorder must be >= 0 seconds, got {max_disorder!r}")
        self.max_disorder = float(max_disorder)
        self.late = 0
        self.late_items: list[T] = []
        self._keep_late = keep_late
        self._heap: list[tuple[float, int, T]] = []
        self._arrived = 0
        self._newest = -np.inf
        self._released = -np.inf

    def __len__(self) -> int:
        return len(self._heap)

    def push(self, ts: float, item: T) -> list[T]:
        """Take one row; returns the rows released by it, in decision order."""
        if ts < self._released:  # behind a decided row: no place in time order is left
            self.late += 1
            if len(self.late_items) < self._keep_late:
                self.late_items.append(item)
            return [item]
        heapq.heappush(self._heap, (ts, self._arrived, item))
        self._arrived += 1
        self._newest = max(self._newest, ts)
        return self._pop_until(self._newest - self.max_disorder)

    def flush(self) -> list[T]:
        """Release every held row (the end of the input)."""
        return self._pop_until(np.inf)

    def _pop_until(self, watermark: float) -> list[T]:
        heap, out = self._heap, []
        while heap and heap[0][0] <= watermark:
            ts, _, item = heapq.heappop(heap)
            self._released = ts
            out.append(item)
        return out

    def reorder(self, items: Iterable[T], time_of: Callable[[T], float]) -> Iterator[T]:
        """``items`` in decision order (the buffer flushed at their end)."""
        for item in items:
            yield from self.push(time_of(item), item)
        yield from self.flush()


def release_order(
    ts: npt.ArrayLike, max_disorder: float
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The order in which :class:`DisorderBuffer` decides rows with timestamps ``ts`` (input
    order), and the input positions of its late rows (in arrival order)."""
    buf: DisorderBuffer[int] = DisorderBuffer(max_disorder, keep_late=len(np.atleast_1d(ts)))
    times = np.asarray(ts, np.float64).tolist()
    order = list(buf.reorder(range(len(times)), times.__getitem__))
    return np.asarray(order, np.int64), np.asarray(buf.late_items, np.int64)


def in_input_order(d: Decisions, order: npt.ArrayLike) -> Decisions:
    """Decisions of rows decided in ``order`` (``order[i]``: the input position of the i-th
    decided row) put back in input order; ``duplicate_of`` positions below ``len(d)`` are
    mapped the same way (higher ones, e.g. a state's earlier documents, are left as they are).
    ``d.position`` must be ``0..len(d) - 1`` (a run's own positions).

    >>> d = Decisions(*(np.asarray(x) for x in ([0, 1], [7, 8], [0, 1], [-1, 0], [-1, 2],
    ...                                         [0, 0], [np.nan, 0.9])))
    >>> back = in_input_order(d, [1, 0])
    >>> back.position.tolist(), back.duplicate_of.tolist(), back.fingerprint.tolist()
    ([0, 1], [1, -1], [8, 7])
    """
    order = np.asarray(order, np.int64)
    n = len(d)
    if order.shape != (n,):
        raise ValueError(f"order has {order.size} rows for {n} decisions")
    inv = np.empty(n, np.int64)
    inv[order] = np.arange(n)
    dup = d.duplicate_of[inv]
    local = (dup >= 0) & (dup < n)
    dup = np.where(local, order[np.where(local, dup, 0)], dup)
    return Decisions(
        d.position.copy(),  # the same slots, now holding input positions
        d.fingerprint[inv],
        d.status[inv],
        dup,
        d.distance[inv],
        d.cluster_id[inv],
        d.similarity[inv],
        d.threshold[inv],  # the threshold that applied travels with its row
    )


def disorder_note(late: int, max_disorder: float, examples: list[Any]) -> str:
    """The summary line naming the rows a buffer could not put in time order (both engines).

    >>> disorder_note(2, 7200, ["a", 3])[:60]
    'out of order: 2 documents came more than --max-disorder (2h)'
    """
    some = ", ".join(repr(v) for v in examples)
    return (
        f"out of order: {late:,} documents came more than --max-disorder "
        f"({max_disorder / 3600:g}h) after a newer one (e.g. {some}) and were decided on "
        "arrival, not in time order: they may miss matches that sorted input finds; raise "
        "--max-disorder or sort the input by time"
    )
