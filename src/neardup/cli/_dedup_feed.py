"""``neardup dedup``'s pass 1 with a look-ahead of two chunks (issue 24: the mixed collection's
reading and its C kernels ran one after the other on a 2-core machine)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from neardup.dedup import Decisions, Deduplicator
from neardup.io import Document, Record

Chunk = list[tuple[Document, Record]]
# chunks prepared ahead of the one being decided: 2 absorbs the prep thread's waits for the
# GIL (it takes the GIL back several times per chunk while this thread parses)
AHEAD = 2


def feed_ahead(
    dd: Deduplicator,
    chunks: Iterator[tuple[Chunk, list[float] | None]],
    with_ids: bool,
    advance: Callable[[int], None],
    depth: int = AHEAD,
) -> list[Decisions]:
    """``dd.feed`` of every chunk, with the :meth:`~Deduplicator.prepare` of the next
    ``depth`` chunks (C kernels that release the GIL) on a thread while this one reads and
    parses the chunks after them: prepare keeps no state, and the chunks are decided in input
    order, so the decisions are those of feeding one by one. An error of chunk i's prepare
    is raised before one of reading a later chunk, as in the serial loop. Returns each
    chunk's decisions."""

    def submit(item: tuple[Chunk, list[float] | None]) -> tuple[int, Any, Future[Any]]:
        # only the texts (in the prepare call) and ids stay: the records are let go now, so
        # the chunks in flight hold no more than their texts (Reuters peak RSS)
        chunk, ts = item
        ids = [d.id for d, _ in chunk] if with_ids else None
        return len(chunk), ids, pool.submit(dd.prepare, [d.text for d, _ in chunk], ts)

    out: list[Decisions] = []
    with ThreadPoolExecutor(1) as pool:
        pending: deque[tuple[int, Any, Future[Any]]] = deque()
        while True:
            try:
                item = next(chunks, None)
            except BaseException:
                for _, _, prepared in pending:
                    prepared.result()  # their errors first (the serial order)
                raise
            done = item is None
            if item is not None:
                pending.append(submit(item))
            item = None  # (the chunk's records: not kept while deciding)
            if pending and (done or len(pending) > depth):
                size, ids, prepared = pending.popleft()
                out.append(dd.feed_prepared(prepared.result(), ids=ids))
                advance(size)
            if done and not pending:
                return out
