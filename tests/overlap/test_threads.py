"""The C objects of the overlap finder shared between threads: the gram index and the template
key counts run their work without the GIL (so the finder's worker runs Python meanwhile), each
holding its own lock, so threads sharing one change it one call at a time, as the GIL made
them: the same postings and counts as one thread adding everything in turn."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

from neardup._backend import overlap_kernels
from neardup.overlap.index import GramIndex
from neardup.overlap.pairs import PairParams, prepare_packed, token_arrays
from neardup.overlap.templates import TemplateBatch, TemplateCounts

pytestmark = pytest.mark.skipif(overlap_kernels() is None, reason="neardup._overlap not built")

THREADS = 4
PARAMS = PairParams(ngram=4, gap=30, min_length=10)


def _texts(n: int) -> list[str]:
    """Texts sharing many grams (a vocabulary of 60 words), so that look-ups find postings."""
    return [" ".join(f"w{(i * 7 + j * j) % 60}" for j in range(80 + i % 40)) for i in range(n)]


def _in_threads(work: Callable[[int], None]) -> None:
    """``work(t)`` for every thread ``t``, all started together."""
    start = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run(t: int) -> None:
        start.wait()
        try:
            work(t)
        except BaseException as exc:  # the assertion below names it
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def _rows(ix: GramIndex) -> list[tuple[int, ...]]:
    """The index's postings as (hash, doc, first, last), sorted: threads add in any order."""
    hashes, posts = ix.arrays()
    return sorted(zip(hashes.tolist(), *posts.T.tolist(), strict=True))


def test_an_index_shared_by_threads_holds_every_posting() -> None:
    """Threads adding their own documents to one index and looking it up meanwhile leave the
    postings one thread adding them all leaves."""
    packed = [prepare_packed(t, PARAMS) for t in _texts(1200)]
    alone = GramIndex()
    for doc, p in enumerate(packed):
        alone.add_packed(doc, p, 4)
    shared = GramIndex()
    found = [0] * THREADS

    def work(t: int) -> None:
        for doc in range(t, len(packed), THREADS):
            found[t] += len(shared.seeds_packed(packed[doc], 50, 2, 2)[0])
            shared.add_packed(doc, packed[doc], 4)
            assert len(shared) > 0

    _in_threads(work)
    assert sum(found) > 0  # the look-ups ran on a growing index
    assert _rows(shared) == _rows(alone)


def test_template_counts_shared_by_threads_count_every_text() -> None:
    """Threads counting their own batches' keys in one table leave the counts one thread
    counting them all leaves."""
    texts = _texts(1024)
    batches = [
        TemplateBatch(chunk, [token_arrays(prepare_packed(x, PARAMS)) for x in chunk], 4)
        for chunk in (texts[i : i + 16] for i in range(0, len(texts), 16))
    ]
    alone = TemplateCounts()
    for b in batches:
        alone.count(b, add=True)
    shared = TemplateCounts()

    def work(t: int) -> None:
        for b in batches[t::THREADS]:
            shared.count(b, add=True)
            assert len(shared) > 0

    _in_threads(work)
    for x, y in zip(shared.arrays(), alone.arrays(), strict=True):
        np.testing.assert_array_equal(x, y)
