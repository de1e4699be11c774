"""Restarts from a snapshot: snapshot + the rows after it gives the state every row gives; a
snapshot of another configuration or with a bad checksum is ignored (log line) and every row is
replayed. In-process (real SQLite files and snapshot directories; HTTP restarts with snapshots
are in test_server_decisions.py)."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

import numpy as np
import pytest

from neardup.dedup import Deduplicator
from neardup.server.service import Service, Settings
from neardup.server.snapshot import load_state
from neardup.server.store import ROW, StoredRow
from neardup.server.validate import Item

from tests.server.test_server_decisions import corpus

pytest.importorskip("fastapi")


def items(texts: list[str], start: int = 0) -> list[Item]:
    return [Item(f"d{start + i}", t, None) for i, t in enumerate(texts)]


def crash(svc: Service) -> None:
    """Drop the service without its shutdown snapshot (as kill -9 would; a snapshot being
    written in the background finishes first, as a kill -9 at any other moment than that)."""
    svc.wait_snapshot()
    svc.store.db.close()


def assert_same_state(a: Deduplicator, b: Deduplicator) -> None:
    """Equal state columns (the threshold that applied too: a snapshot keeps it); sketches
    compared where they are used (kept, not deleted). The similarity that decided is stored
    rounded to 4 decimals, as answered, and a snapshot keeps it whole: compared is what later
    decisions read of it, the floors of the cluster_similarity rule."""
    x, y = a.state.columns(), b.state.columns()
    assert x.keys() == y.keys()
    live = (x["status"] == 0) & ~x["forgotten"]
    for name in x:
        if name == "sketch":
            assert np.array_equal(x[name][live], y[name][live])
        elif name != "similarity":  # NaN: no time, no threshold (kept documents, exact copies)
            assert np.array_equal(x[name], y[name], equal_nan=x[name].dtype.kind == "f"), name
    fa, fb = a.state.cols.floor.view(), b.state.cols.floor.view()
    assert np.array_equal(fa, fb) and (fa < 1).any()  # the rule's state, and a real test


def test_snapshot_plus_later_rows_equals_every_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    texts = corpus("reuters", 260, seed=5)
    data = tmp_path / "d"
    svc = Service(Deduplicator(), Settings(str(data), snapshot_every=100))
    rng = random.Random(6)
    i = 0
    while i < 220:
        n = rng.randint(1, 30)
        svc.ingest(items(texts[i : i + n], i), False)
        i += n
        if i > 120:
            svc.delete(f"d{rng.randrange(i)}")  # tombstones before and after the snapshot
    svc.wait_snapshot()
    # snapshots start in the background when one is due and none is being written, so where
    # the last one falls depends on timing: none from here on, and a tail of rows after it
    svc.settings.snapshot_every = 0
    svc.ingest(items(texts[i:250], i), False)
    svc.delete(f"d{rng.randrange(i)}")
    snapped = json.loads(svc.store.meta("snapshot") or "{}")["documents"]
    assert 100 <= snapped < svc.dd.n_documents  # a tail of rows after the snapshot
    uninterrupted = svc.ingest(items(texts[250:], 250), True)  # dry run: what comes next
    crash(svc)
    with caplog.at_level(logging.INFO, logger="neardup.server"):
        fast = Service(Deduplicator(), Settings(str(data)))
    assert f"snapshot of {snapped} documents + " in caplog.text
    full = load_state(fast.store, fast._config, str(tmp_path / "no-snapshot"))  # every row
    assert_same_state(fast.dd, full)
    assert fast.ingest(items(texts[250:], 250), True) == uninterrupted
    crash(fast)


@pytest.mark.parametrize("damage", ["config", "checksum"])
def test_a_bad_snapshot_is_ignored_and_every_row_replayed(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    texts = corpus("reuters", 120, seed=7)
    data = tmp_path / "d"
    svc = Service(Deduplicator(), Settings(str(data), snapshot_every=50))
    svc.ingest(items(texts[:110]), False)
    svc.close()  # a snapshot covering every row
    want = Service(Deduplicator(), Settings(str(data)))
    expected = want.ingest(items(texts[110:], 110), True)
    crash(want)
    snap = data / "snapshot"
    if damage == "config":  # another configuration's state where the snapshot was
        other = Deduplicator(k=3, verifier=None)
        other.feed(texts[:110])
        other.save(snap)
    else:
        version = snap / (snap / "CURRENT").read_text().strip()
        victim = max(version.glob("*.npy"), key=lambda p: p.stat().st_size)
        raw = bytearray(victim.read_bytes())
        raw[-1] ^= 0xFF
        victim.write_bytes(bytes(raw))
    with caplog.at_level(logging.WARNING, logger="neardup.server"):
        again = Service(Deduplicator(), Settings(str(data)))
    assert any("ignoring the snapshot" in r.getMessage() for r in caplog.records)
    assert again.ingest(items(texts[110:], 110), True) == expected
    crash(again)


def test_concurrent_batches_share_commits_and_decide_in_arrival_order(tmp_path: Path) -> None:
    """Four threads post at once: groups of batches share one transaction, and the stored
    decisions are the library's on the documents in stored (arrival) order."""
    import threading

    texts = corpus("reuters", 300, seed=9)
    svc = Service(Deduplicator(), Settings(str(tmp_path / "d")))
    batches = [items(texts[i : i + 10], i) for i in range(0, len(texts), 10)]
    answers: dict[str, dict[str, object]] = {}

    def client(mine: list[list[Item]]) -> None:
        for b in mine:
            for it, r in zip(b, svc.ingest(b, False), strict=True):
                answers[it.id] = r

    threads = [threading.Thread(target=client, args=(batches[k::4],)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    q = f"SELECT {ROW} FROM documents ORDER BY position"
    rows = [StoredRow._make(r) for r in svc.store.db.execute(q)]
    assert [r.position for r in rows] == list(range(len(texts)))
    by_id = {it.id: it.text for b in batches for it in b}
    want = Deduplicator().feed([by_id[r.id] for r in rows])
    assert [r.status for r in rows] == want.status.tolist()
    dup = [-1 if r.duplicate_of is None else r.duplicate_of for r in rows]
    assert dup == want.duplicate_of.tolist()
    assert [r.cluster_id for r in rows] == want.cluster_id.tolist()
    for r in rows:  # every answer is what was stored
        assert answers[r.id]["cluster_id"] == r.cluster_id
    commits = sum(svc.commit_seconds._counts[()])
    assert commits <= len(batches)
    svc.close()


def _synthetic(n: int, seed: int) -> list[str]:
    from tests.synthetic import synthetic_corpus

    return [r["text"] for r in synthetic_corpus(n, seed=seed)]


def test_a_snapshot_of_another_database_is_not_loaded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import shutil

    texts, others = _synthetic(200, seed=21), _synthetic(40, seed=23)
    a, b = tmp_path / "a", tmp_path / "b"
    for data, part in ((a, others), (b, texts[:60])):
        svc = Service(Deduplicator(), Settings(str(data), snapshot_every=20))
        svc.ingest(items(part), False)
        svc.close()  # a's snapshot covers its 40 rows (other texts), b's its 60
    # b's own later rows, then a's snapshot put where b's was (a copied directory)
    svc = Service(Deduplicator(), Settings(str(b), snapshot_every=0))
    svc.ingest(items(texts[150:], 150), False)
    crash(svc)
    shutil.rmtree(b / "snapshot")
    shutil.copytree(a / "snapshot", b / "snapshot")
    with caplog.at_level(logging.WARNING, logger="neardup.server"):
        again = Service(Deduplicator(), Settings(str(b)))
    assert any("another database" in r.getMessage() for r in caplog.records)
    replay = Deduplicator()
    replay.feed(texts[:60])
    replay.feed(texts[150:])
    assert_same_state(again.dd, replay)
    crash(again)


def test_a_deleted_database_beside_its_snapshot_is_refused(tmp_path: Path) -> None:
    texts = _synthetic(80, seed=22)
    data = tmp_path / "d"
    svc = Service(Deduplicator(), Settings(str(data), snapshot_every=20))
    svc.ingest(items(texts), False)
    svc.close()
    for p in data.glob("neardup.db*"):
        p.unlink()
    with pytest.raises(ValueError, match="deleted or replaced"):
        Service(Deduplicator(), Settings(str(data)))
    assert (data / "snapshot" / "CURRENT").is_file()  # nothing of it deleted


def test_after_retention_a_late_copy_never_points_at_nothing(tmp_path: Path) -> None:
    day, t0 = 86_400.0, 1_700_000_000.0
    svc = Service(
        Deduplicator(window=day), Settings(str(tmp_path / "d"), retention=day, max_future=None)
    )
    text = "the harbour strike stopped every ferry at dawn and the port stayed closed all week"
    svc.ingest([Item("A", text, t0), Item("B", text + " today", t0 + 5)], False)
    svc.ingest([Item("C", "apples and the autumn harvest in the north", t0 + 3 * day)], False)
    assert svc.get("A") is None  # retention deleted A (older than newest - 1 day)
    late = svc.ingest([Item("late", text, t0 + 10), Item("late2", text, t0 + 3 * day)], False)
    for r in late:
        assert r["status"] in ("unique", "duplicate", "exact_duplicate")
        assert (r["duplicate_of"] is None) == (r["status"] == "unique"), r
    assert late[1]["duplicate_of"] in (None, "late")  # never the deleted A
    crash(svc)


def test_a_repost_is_answered_only_once_the_first_post_is_durable(tmp_path: Path) -> None:
    import threading

    svc = Service(Deduplicator(), Settings(str(tmp_path / "d")))
    batch = items(_synthetic(20, seed=24))
    answers: dict[str, list[dict[str, object]]] = {}

    def post(name: str) -> None:
        answers[name] = svc.ingest(batch, False)

    with svc.group._commit_lock:  # the first post's commit cannot start yet
        first = threading.Thread(target=post, args=("first",))
        first.start()
        while not svc._undurable:  # decided, on its way to disk
            first.join(0.01)
        again = threading.Thread(target=post, args=("again",))
        again.start()
        again.join(0.5)
        assert again.is_alive(), "a 200 for ids whose first post has not committed"
    first.join(30)
    again.join(30)
    assert answers["again"] == answers["first"]
    assert svc.store.lookup_ids([it.id for it in batch]).keys() == {it.id for it in batch}
    crash(svc)
