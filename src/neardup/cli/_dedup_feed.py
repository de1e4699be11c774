"""``neardup dedup``'s pass 1 as a pipeline of three threads: this one reads and parses,
a second prepares (fingerprints, sketches: C kernels that release the GIL), a third decides
(issue 24: the mixed collection's reading and its C kernels ran one after the other on a
2-core machine; issue 39: deciding on the reading thread made it the critical path)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from neardup.dedup import Decisions, Deduplicator
from neardup.io import Document, Record

# a chunk of the input: each document read with its record
DocumentRecords = list[tuple[Document, Record]]
# chunks read ahead of the one whose decisions are collected: 2 absorbs the other threads'
# waits for the GIL (they take it back several times per chunk while this thread parses)
AHEAD = 2


def feed_ahead(
    dd: Deduplicator,
    chunks: Iterator[tuple[DocumentRecords, list[float] | None]],
    with_ids: bool,
    advance: Callable[[int], None],
    depth: int = AHEAD,
) -> list[Decisions]:
    """``dd.feed`` of every chunk: :meth:`~Deduplicator.prepare` on one thread and
    ``Deduplicator.state.decide`` on another, while this one reads and parses the
    next ``depth`` chunks. Prepare keeps no state and the decide thread takes the chunks in
    input order, each after the one before succeeded, so the decisions are those of feeding
    one by one. An error of chunk i (prepare or decide) is raised before one of reading a
    later chunk, as in the serial loop. Returns each chunk's decisions."""
    out: list[Decisions] = []
    with ThreadPoolExecutor(1) as prep, ThreadPoolExecutor(1) as decide:
        pending: deque[tuple[int, Future[Decisions]]] = deque()
        while True:
            try:
                item = next(chunks, None)
            except BaseException:
                for _, decided in pending:
                    decided.result()  # their errors first (the serial order)
                raise
            done = item is None
            if item is not None:
                before = pending[-1][1] if pending else None
                pending.append(_submit(dd, item, with_ids, (prep, decide), before))
            item = None  # (the chunk's records: not kept while deciding)
            if pending and (done or len(pending) > depth):
                size, decided = pending.popleft()
                out.append(decided.result())
                advance(size)
            if done and not pending:
                return out


def _submit(
    dd: Deduplicator,
    item: tuple[DocumentRecords, list[float] | None],
    with_ids: bool,
    pools: tuple[ThreadPoolExecutor, ThreadPoolExecutor],
    before: Future[Decisions] | None,
) -> tuple[int, Future[Decisions]]:
    """Chunk ``item``'s prepare and decide steps, queued on the two threads ``pools``."""
    # only the texts (in the prepare call) and ids stay: the records are let go now, so the
    # chunks in flight hold no more than their texts (Reuters peak RSS)
    chunk, ts = item
    ids = [d.id for d, _ in chunk] if with_ids else None
    prepared = pools[0].submit(dd.prepare, [d.text for d, _ in chunk], ts)
    return len(chunk), pools[1].submit(_decide, dd, prepared, ids, before)


def _decide(
    dd: Deduplicator,
    prepared: Future[Any],
    ids: Sequence[Any] | None,
    before: Future[Decisions] | None,
) -> Decisions:
    """Chunk i's decisions on the decide thread, only once chunk i-1 was decided (its error,
    re-raised here, stops every later chunk from being fed)."""
    if before is not None:
        before.result()
    return dd.state.decide(prepared.result(), ids=ids)
