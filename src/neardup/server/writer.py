"""Arrival order and group commit: how concurrent requests share one decider and one fsync.

A request takes a *ticket* when it arrives (:class:`Turns`), prepares its documents
(fingerprints, sketches: no shared state) in parallel with the others, then waits for its turn
to be decided: decisions are made strictly in ticket order, so they are the library's decisions
on the sequence of batches in arrival order, however many requests are in flight.

A decided batch is handed to :class:`GroupCommit` and its request waits until the batch is
durable. The first waiting request becomes the *leader*: it writes every batch decided so far
in one ``BEGIN IMMEDIATE ... COMMIT`` (one fsync with ``synchronous=FULL``) and wakes the
others; batches decided while it commits go into the next group. So a 200 still means "this
batch is on disk", and with one request in flight a group is one batch (nothing changes).

If a group's transaction fails, every batch decided but not yet durable fails with it (later
ones were decided on top of it) and ``on_failure`` rebuilds memory from the store.

>>> turns = Turns()
>>> a, b = turns.ticket(), turns.ticket()
>>> with turns.turn(a):
...     pass
>>> with turns.turn(b):
...     print("b after a")
b after a
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


class Turns:
    """Tickets in arrival order; :meth:`turn` runs its block when every earlier ticket's did."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._issued = 0
        self._serving = 0

    def ticket(self) -> int:
        with self._cv:
            self._issued += 1
            return self._issued - 1

    @contextmanager
    def turn(self, ticket: int) -> Iterator[None]:
        """Wait for ``ticket``'s turn; the next ticket's turn starts when the block exits
        (normally or by an exception: a failed request never blocks the ones after it)."""
        with self._cv:
            self._cv.wait_for(lambda: self._serving == ticket)
        try:
            yield
        finally:
            with self._cv:
                self._serving += 1
                self._cv.notify_all()


@dataclass
class Pending:
    """One decided batch on its way to disk."""

    rows: list[tuple[Any, ...]]
    meta: dict[str, Any]
    done: bool = False
    error: BaseException | None = None
    ids: dict[int, str] = field(default_factory=dict)  # position -> id of its documents
    statuses: list[int] = field(default_factory=list)


class GroupCommit:
    """Batches decided in order, written by whichever waiting request leads the next group.

    ``write(batches)`` writes the batches' rows in one transaction (it runs under the commit
    lock, in decision order); ``on_failure()`` rebuilds memory (it runs holding ``decide_lock``,
    so that no batch is decided on the state being thrown away)."""

    def __init__(
        self,
        write: Callable[[Sequence[Pending]], None],
        on_failure: Callable[[Sequence[Pending]], None],
        decide_lock: threading.RLock,
    ) -> None:
        self._write, self._on_failure = write, on_failure
        self.decide_lock = decide_lock
        self._queue: list[Pending] = []
        self._queue_lock = threading.Lock()
        self._commit_lock = threading.Lock()

    def submit(self, batch: Pending) -> Pending:
        """Queue a decided batch (call while holding ``decide_lock``, in decision order)."""
        with self._queue_lock:
            self._queue.append(batch)
        return batch

    def wait(self, batch: Pending) -> None:
        """Return when ``batch`` is durable; raise what its group's transaction raised."""
        with self._commit_lock:
            if not batch.done:
                self._lead()
        if batch.error is not None:
            raise batch.error

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Write every queued batch, then hold the store alone (a delete, a shutdown)."""
        with self._commit_lock:
            self._lead()
            yield

    def _lead(self) -> None:
        with self._queue_lock:
            group, self._queue = self._queue, []
        if not group:
            return
        try:
            self._write(group)
        except BaseException as exc:
            with self.decide_lock:  # memory ran ahead of the disk: every undurable batch fails
                with self._queue_lock:
                    group += self._queue
                    self._queue = []
                for b in group:
                    b.error = exc
                self._on_failure(group)
        for b in group:
            b.done = True
