"""Feed traffic: many single-document requests queued at once are decided as one batch (one
transaction), and the answers and stored rows are still the library's decisions on the
documents in arrival order. In-process (real SQLite files; the HTTP path is the same queue)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from neardup.dedup import Deduplicator
from neardup.server.service import Service, Settings
from neardup.server.store import ROW, StoredRow
from neardup.server.validate import Item
from neardup.server.writer import Request, segments

from tests.synthetic import synthetic_corpus

pytest.importorskip("fastapi")


def _request(ids: list[str] | None, dry_run: bool = False) -> Request:
    items = None if ids is None else [Item(i, "x", None) for i in ids]
    return Request(items, dry_run, [] if ids is not None else ["z"], lambda v, e: None)


def test_segments_merge_consecutive_stored_batches_only() -> None:
    a, b, c = _request(["a"]), _request(["b"]), _request(["a"])  # c repeats a's id
    dry, delete, d = _request(["d"], dry_run=True), _request(None), _request(["e"])
    assert segments([a, b, c, dry, d, delete, d]) == [[a, b], [c], [dry], [d], [delete], [d]]


def _queued(svc: Service, batches: list[list[Item]], dry: set[int]) -> list[Any]:
    """Submit every batch while the decider is held, so that they queue up together."""
    answers: list[Any] = [None] * len(batches)
    done = threading.Semaphore(0)

    def answer(k: int) -> Any:
        def call(value: Any, error: BaseException | None) -> None:
            answers[k] = error if error is not None else value
            done.release()

        return call

    with svc.lock:  # the decider takes the first request and waits here; the rest queue up
        for k, batch in enumerate(batches):
            svc.submit(batch, k in dry, answer(k))
    for _ in batches:
        assert done.acquire(timeout=60)
    return answers


def test_queued_single_documents_are_one_batch_with_the_library_decisions(
    tmp_path: Path,
) -> None:
    docs = synthetic_corpus(120, seed=21)
    svc = Service(Deduplicator(), Settings(str(tmp_path / "d")))
    singles = [[Item(d["id"], d["text"], None)] for d in docs]
    singles.insert(60, [Item("d5", docs[5]["text"], None)])  # a re-post inside the queue
    singles.insert(90, [Item("probe", docs[80]["text"], None)])  # a dry run of a copy
    answers = _queued(svc, singles, dry={90})
    assert not any(isinstance(a, BaseException) for a in answers)

    want = Deduplicator().feed([d["text"] for d in docs])
    q = f"SELECT {ROW} FROM documents ORDER BY position"
    rows = [StoredRow._make(r) for r in svc.store.db.execute(q)]
    assert [r.id for r in rows] == [d["id"] for d in docs]  # arrival order, d5 stored once
    assert [r.status for r in rows] == want.status.tolist()
    dup = [-1 if r.duplicate_of is None else r.duplicate_of for r in rows]
    assert dup == want.duplicate_of.tolist()
    assert [r.cluster_id for r in rows] == want.cluster_id.tolist()
    by_id = {a[0]["id"]: a[0] for k, a in enumerate(answers) if k not in (60, 90)}
    for r in rows:
        assert by_id[r.id]["cluster_id"] == r.cluster_id
    assert answers[60] == answers[5]  # the re-post answers the stored decision
    # the dry run saw every document queued before it (the first 89 of them), not later ones
    first = Deduplicator()
    first.feed([d["text"] for d in docs[:89]])
    expected = first.feed([docs[80]["text"]], commit=False)
    assert answers[90][0]["cluster_id"] == int(expected.cluster_id[0])
    assert svc.store.lookup_ids(["probe"]) == {}
    commits = sum(svc.commit_seconds._counts[()])
    assert commits <= 5, f"{len(singles)} queued requests took {commits} transactions"
    svc.close()


def test_a_failing_request_does_not_fail_the_others(tmp_path: Path) -> None:
    svc = Service(Deduplicator(), Settings(str(tmp_path / "d")))
    bad = [Item("bad", "text", None)]
    original = svc._decide

    def decide(segment: list[Request]) -> Any:
        if any(it.id == "bad" for r in segment for it in r.items or ()):
            raise RuntimeError("boom")
        return original(segment)

    svc._decide = decide  # type: ignore[method-assign]
    answers = _queued(svc, [[Item("a", "alpha beta gamma", None)], bad], dry={1})
    assert answers[0][0]["status"] == "unique"
    assert isinstance(answers[1], RuntimeError)
    assert svc.ingest([Item("c", "gamma delta", None)], False)[0]["id"] == "c"
    svc.close()


def test_a_document_that_fails_to_prepare_fails_only_its_request(tmp_path: Path) -> None:
    """Three queued requests decided as one batch; preparing one of them fails: the others are
    decided (each alone) and stored, the failing one gets the error."""
    svc = Service(Deduplicator(), Settings(str(tmp_path / "d")))
    original = svc._prepare

    def prepare(items: list[Item]) -> Any:
        if any(it.text == "boom" for it in items):
            raise ValueError("cannot prepare")
        return original(items)

    svc._prepare = prepare  # type: ignore[method-assign]
    batches = [[Item("a", "alpha beta gamma", None)], [Item("b", "boom", None)]]
    batches.append([Item("c", "gamma delta epsilon", None)])
    answers = _queued(svc, batches, dry=set())
    assert [answers[0][0]["id"], answers[2][0]["id"]] == ["a", "c"]
    assert isinstance(answers[1], ValueError)
    assert svc.store.lookup_ids(["a", "b", "c"]).keys() == {"a", "c"}
    svc.close()


def test_snapshots_are_taken_under_concurrent_traffic_and_restart_to_the_same_state(
    tmp_path: Path,
) -> None:
    """Four threads post without pause (the decider always has a batch on its way to disk):
    snapshots are still taken (from a copy, in the background), and a restart from the last
    one plus the rows after it is the state every row gives."""
    from neardup.server.snapshot import load_state

    from tests.server.test_server_snapshot import assert_same_state, crash

    docs = synthetic_corpus(400, seed=22)
    data = tmp_path / "d"
    svc = Service(Deduplicator(), Settings(str(data), snapshot_every=60))

    def client(k: int) -> None:
        for d in docs[k::4]:
            svc.ingest([Item(d["id"], d["text"], None)], False)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    svc.wait_snapshot()
    snapped = svc._snap_at
    assert snapped >= 60, snapped  # (a snapshot due while one is written waits for the next)
    crash(svc)
    again = Service(Deduplicator(), Settings(str(data)))
    assert again.dd.n_documents == 400
    full = load_state(again.store, again._config, str(tmp_path / "none"))
    assert_same_state(again.dd, full)
    crash(again)


def test_a_snapshot_forks_only_once_no_other_thread_is_inside_the_deduplicator(
    tmp_path: Path,
) -> None:
    """A /metrics scrape runs ``describe()`` on the event loop's thread, holding the
    Deduplicator's lock: a child forked at that moment would inherit the lock held by a thread
    it does not have and wait forever in its save. The snapshot must wait and then complete."""
    from neardup._threads import object_lock

    svc = Service(Deduplicator(), Settings(str(tmp_path / "d"), snapshot_every=0))
    svc.ingest([Item(d["id"], d["text"], None) for d in synthetic_corpus(30, seed=25)], False)
    held, release = threading.Event(), threading.Event()

    def scrape() -> None:
        with object_lock(svc.dd):
            held.set()
            release.wait(10)

    scraper = threading.Thread(target=scrape)
    scraper.start()
    held.wait(10)
    threading.Timer(0.3, release.set).start()
    with svc.lock:
        svc.background.start(svc.dd)
    assert svc.background.wait(20), "the snapshot writer hangs"
    assert svc.background.done_at == 30
    scraper.join()
    svc.close()
