"""HammingIndex and Deduplicator shared by several threads (issue 22): each call runs whole
(a per-object lock), so nothing is lost, every stored row is found, the state still loads,
and the decisions equal those of one thread feeding the same documents in the order the calls
took the lock. A tiny switch interval makes the interpreter change threads inside methods as
it would under load."""

from __future__ import annotations

import pickle
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neardup import Deduplicator
from neardup.index import HammingIndex


@contextmanager
def _busy_switching() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _threads(n: int, work: Callable[[int], None]) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def run(t: int) -> None:
        try:
            start.wait()
            work(t)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(n)]
    with _busy_switching():
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert errors == [], errors[:3]


@pytest.mark.parametrize("bits", [64, 128])
def test_index_adds_and_searches_from_threads(bits: int) -> None:
    rng = np.random.default_rng(7)
    per, batch, writers = 3000, 10, 4
    shape = (writers, per) if bits == 64 else (writers, per, 2)
    fps = rng.integers(0, 2**63, size=shape, dtype=np.uint64)
    index = HammingIndex(k=3, bits=bits, buffer_size=64)
    misses: list[int] = []

    def work(t: int) -> None:
        if t >= writers:  # a reader: what a writer added must be found from then on
            for _ in range(60):
                done = [w for w in range(writers) if w * per in index]
                for w in done:
                    m = index.search(fps[w, :1], k=0)
                    misses.extend([] if w * per in m.id.tolist() else [w * per])
            return
        for a in range(0, per, batch):
            index.add(np.arange(a, a + batch) + t * per, fps[t, a : a + batch])

    _threads(writers + 2, work)
    assert misses == []
    assert len(index) == writers * per
    m = index.search(fps.reshape(writers * per, -1).squeeze(), k=0)
    found = set(zip(m.query.tolist(), m.id.tolist(), strict=True))
    assert all((i, i) in found for i in range(writers * per))


def _docs(t: int, n: int) -> list[str]:
    return [
        f"thread {t} story {i} about the harbour works, ships and {i * 7 % 13} cranes"
        for i in range(n)
    ]


def test_deduplicator_feeds_from_threads(tmp_path: Path) -> None:
    dd = Deduplicator()
    per, batch, writers = 300, 3, 4
    order: list[tuple[int, int]] = []

    def work(t: int) -> None:
        texts = _docs(t, per)
        for a in range(0, per, batch):
            ids = [f"{t}-{i}" for i in range(a, a + batch)]
            d = dd.feed(texts[a : a + batch], ids=ids)
            order.append((t, a)) if len(d) == batch else None

    _threads(writers, work)
    assert dd.n_documents == writers * per
    dd.save(tmp_path / "st")
    again = Deduplicator.load(tmp_path / "st")
    assert again.n_documents == writers * per
    _decided_as_one_thread(dd, writers, per, batch)


def test_the_state_decides_from_threads() -> None:
    """``dd.state`` holds its own lock (the service calls ``state.decide`` on prepared chunks):
    threads deciding through it directly, beside readers of its columns, lose nothing and
    decide as one thread would in the order the calls took the lock."""
    dd = Deduplicator()
    per, batch, writers = 150, 3, 4
    seen: list[int] = []

    def work(t: int) -> None:
        if t == writers:  # a reader: every call sees whole rows
            for _ in range(200):
                seen.append(len(dd.state.columns()["status"]))
            return
        texts = _docs(t, per)
        for a in range(0, per, batch):
            ids = [f"{t}-{i}" for i in range(a, a + batch)]
            dd.state.decide(dd.prepare(texts[a : a + batch]), ids)

    _threads(writers + 1, work)
    assert dd.n_documents == writers * per and seen == sorted(seen)
    _decided_as_one_thread(dd, writers, per, batch)


def test_locked_objects_still_pickle() -> None:
    """Spark ships a Deduplicator to executors with (cloud)pickle: the lock must not travel."""
    dd = Deduplicator()
    dd.add("a short text to decide", id="x")
    copy: Any = pickle.loads(pickle.dumps(dd))
    assert copy.add("a short text to decide", id="y").duplicate_of == "x"
    index = HammingIndex(k=2)
    index.add([1], np.array([5], np.uint64))
    assert 1 in pickle.loads(pickle.dumps(index))


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_every_pickle_protocol_gives_a_working_lock(protocol: int) -> None:
    index = HammingIndex(k=2)
    index.add([1], np.array([5], np.uint64))
    copy = pickle.loads(pickle.dumps(index, protocol=protocol))
    copy.add([2], np.array([6], np.uint64))
    assert 2 in copy and 2 not in index


def _decided_as_one_thread(dd: Deduplicator, writers: int, per: int, batch: int) -> None:
    """``dd`` decided as one thread feeding the same batches in the order the calls were
    decided (its ids in position order), and lost none of the writers' documents."""
    ids = [dd.state.external_id(p) for p in range(dd.n_documents)]
    solo = Deduplicator()
    texts = {f"{t}-{i}": s for t in range(writers) for i, s in enumerate(_docs(t, per))}
    for a in range(0, len(ids), batch):
        solo.feed([texts[i] for i in ids[a : a + batch]], ids=ids[a : a + batch])
    got, want = dd.state.decisions(), solo.state.decisions()
    assert (got.status == want.status).all() and (got.duplicate_of == want.duplicate_of).all()
    assert sorted(ids) == sorted(texts)
