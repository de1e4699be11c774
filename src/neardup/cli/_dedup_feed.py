"""``neardup dedup``'s pass 1 with a one-chunk look-ahead (issue 24: the mixed collection's
reading and its C kernels ran one after the other on a 2-core machine)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from neardup.dedup import Deduplicator
from neardup.io import Document, Record

Chunk = list[tuple[Document, Record]]


def feed_ahead(
    dd: Deduplicator,
    chunks: Iterator[tuple[Chunk, list[float] | None]],
    with_ids: bool,
    advance: Callable[[int], None],
) -> None:
    """``dd.feed`` of every chunk, with chunk i's :meth:`~Deduplicator.prepare` (C kernels
    that release the GIL) on a thread while this one reads and parses chunk i+1: prepare
    keeps no state, and the chunks are decided in input order, so the decisions are those
    of feeding one by one. An error of chunk i's prepare is raised before one of reading
    chunk i+1, as in the serial loop."""

    def submit(item: tuple[Chunk, list[float] | None]) -> tuple[Chunk, Future[Any]]:
        chunk, ts = item
        return chunk, pool.submit(dd.prepare, [d.text for d, _ in chunk], ts)

    with ThreadPoolExecutor(1) as pool:
        pending = None
        while True:
            try:
                item = next(chunks, None)
            except BaseException:
                if pending is not None:
                    pending[1].result()  # its error first (the serial order)
                raise
            ahead = None if item is None else submit(item)
            if pending is not None:
                chunk, prepared = pending
                ids = [d.id for d, _ in chunk] if with_ids else None
                dd.feed_prepared(prepared.result(), ids=ids)
                advance(len(chunk))
            if ahead is None:
                return
            pending = ahead
