"""Arrival order and group commit: one decider thread, one committer thread.

A feed platform posts one document per request from many clients at once. Handing each
request to a thread pool, deciding it alone and making it wait for its own commit costs more
than the decision: thread hand-offs, a wake-up of every waiting thread per turn, and one
``state_meta``/SQLite round trip per request. So:

- :class:`Arrivals`: a request is queued when its body is parsed (its place in the queue is
  its arrival order) and the event loop goes on. One *decider* thread takes every request
  queued so far (up to a document limit) and hands them to the service in arrival order, which
  decides consecutive requests as one batch: the library's decisions are a function of the
  ordered documents, not of how they are cut into batches (its streaming = batch tests).
- :class:`GroupCommit`: a decided batch is queued for disk; one *committer* thread writes
  every batch decided so far in one ``BEGIN IMMEDIATE ... COMMIT`` (one fsync with
  ``synchronous=FULL``) while the decider goes on with the next requests, then answers the
  requests of those batches. So a 200 still means "this batch is on disk".

If a group's transaction fails, every batch decided but not yet durable fails with it (later
ones were decided on top of it) and ``on_failure`` rebuilds memory from the store.

>>> got = []
>>> arrivals = Arrivals(lambda reqs: got.extend(reqs), limit=10)
>>> arrivals.put(["a"], 1); arrivals.put(["b"], 1); arrivals.close()
>>> got
[['a'], ['b']]
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from neardup.server.store import NewRow
from neardup.server.validate import Item

Done = Callable[[BaseException | None], None]
log = logging.getLogger("neardup.server")


DECIDE_LIMIT = 1000  # documents of consecutive requests decided (and committed) as one batch
Answer = Callable[[Any, BaseException | None], None]


@dataclass
class Request:
    """A queued batch to decide (``items``) or a batched delete (``items`` None, ``ids``)."""

    items: list[Item] | None
    dry_run: bool
    ids: list[str]
    answer: Answer


def segments(requests: list[Request]) -> list[list[Request]]:
    """Consecutive stored batches with disjoint ids form one segment (decided as one batch:
    the same decisions); a dry run, a delete, or a batch repeating an id of the segment
    starts a new one (it must see the segment decided first)."""
    out: list[list[Request]] = []
    ids: set[str] = set()
    for r in requests:
        mine = [it.id for it in r.items or ()]
        last = out[-1][0] if out else None
        if (
            last is not None
            and last.items is not None
            and r.items is not None
            and not (last.dry_run or r.dry_run)
            and ids.isdisjoint(mine)
        ):
            out[-1].append(r)
        else:
            out.append([r])
            ids = set()
        ids.update(mine)
    return out


def call(answer: Answer, value: Any, error: BaseException | None) -> None:
    """Give a request its answer; a failing callback (a closed event loop at shutdown) must
    not stop the decider or the committer thread."""
    try:
        answer(value, error)
    except Exception as exc:
        log.error("could not deliver an answer (%s)", exc)


def wait_for_answer(submit: Callable[[Answer], None]) -> Any:
    """Submit with a callback and block until it is called (the in-process API)."""
    future: Future[Any] = Future()

    def answer(value: Any, error: BaseException | None) -> None:
        future.set_exception(error) if error is not None else future.set_result(value)

    submit(answer)
    return future.result()


class Arrivals:
    """A queue in arrival order, drained by one thread: ``handle(requests)`` gets every request
    queued so far, at least one, at most ``limit`` documents unless one request alone has more
    (it must answer each request itself and never raise)."""

    def __init__(self, handle: Callable[[list[Any]], None], limit: int) -> None:
        self._handle, self._limit = handle, limit
        self._queue: deque[tuple[Any, int]] = deque()
        self._cv = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="neardup-decider", daemon=True)
        self._thread.start()

    def put(self, request: Any, size: int) -> None:
        """Queue ``request`` (``size`` documents) after every request queued before it."""
        with self._cv:
            if self._closed:
                raise RuntimeError("the service is shutting down")
            self._queue.append((request, size))
            self._cv.notify()

    def _take(self) -> list[Any] | None:
        with self._cv:
            self._cv.wait_for(lambda: self._queue or self._closed)
            if not self._queue:
                return None
            request, total = self._queue.popleft()
            out = [request]
            while self._queue and total + self._queue[0][1] <= self._limit:
                request, size = self._queue.popleft()
                out.append(request)
                total += size
            return out

    def _run(self) -> None:
        while (requests := self._take()) is not None:
            try:
                self._handle(requests)
            except Exception as exc:  # a bug: logged, and the decider goes on
                log.error("the decider failed on %d requests (%s)", len(requests), exc)

    def close(self) -> None:
        """Handle what is queued, then stop the thread."""
        with self._cv:
            self._closed = True
            self._cv.notify()
        if threading.current_thread() is not self._thread:
            self._thread.join()


@dataclass
class Pending:
    """One decided batch on its way to disk."""

    rows: list[NewRow]
    meta: dict[str, Any]
    done: bool = False
    error: BaseException | None = None
    ids: dict[int, str] = field(default_factory=dict)  # position -> id of its documents
    statuses: list[int] = field(default_factory=list)
    requests: int = 1  # the requests decided together in it
    waiters: list[Done] = field(default_factory=list)  # called once it is durable (or failed)


class GroupCommit:
    """Batches decided in order, written by the committer thread (or by :meth:`exclusive`).

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
        self._ready = threading.Condition(self._queue_lock)
        self._commit_lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="neardup-commit", daemon=True)
        self._thread.start()

    def submit(self, batch: Pending) -> Pending:
        """Queue a decided batch (call while holding ``decide_lock``, in decision order)."""
        with self._queue_lock:
            self._queue.append(batch)
            self._ready.notify()
        return batch

    def when_durable(self, batch: Pending, done: Done) -> None:
        """Call ``done(error)`` once ``batch`` is durable (now, if it is already)."""
        with self._queue_lock:
            if not batch.done:
                batch.waiters.append(done)
                return
        done(batch.error)

    def wait(self, batch: Pending) -> None:
        """Return when ``batch`` is durable; raise what its group's transaction raised."""
        event = threading.Event()
        self.when_durable(batch, lambda _: event.set())
        event.wait()
        if batch.error is not None:
            raise batch.error

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Write every queued batch, then hold the store alone (a delete, a shutdown)."""
        with self._commit_lock:
            self._lead()
            yield

    def _run(self) -> None:
        while True:
            with self._queue_lock:
                self._ready.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    return
            with self._commit_lock:
                self._lead()

    def close(self) -> None:
        """Write what is queued, then stop the committer thread."""
        with self._queue_lock:
            self._closed = True
            self._ready.notify()
        self._thread.join()

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
        waiters: list[tuple[Done, BaseException | None]] = []
        with self._queue_lock:
            for b in group:
                b.done = True
                waiters += [(w, b.error) for w in b.waiters]
                b.waiters = []
        for done, error in waiters:
            try:
                done(error)
            except Exception as exc:  # the committer thread must go on
                log.error("could not deliver an answer (%s)", exc)
