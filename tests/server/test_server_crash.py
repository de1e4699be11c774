"""kill -9 at random moments while a client ingests: nothing acknowledged is lost, the database
stays intact, and re-sending the batch that was in flight gives what it would have given."""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from neardup.dedup.decisions import STATUS_NAMES
from neardup.eval.perturb import plant_copies

from tests.server.server_helpers import Server
from tests.server.test_server_decisions import library
from tests.synthetic import corpus_or_synthetic

KILLS = 20


class Client(threading.Thread):
    """Posts the documents in order, in batches; on a dropped connection it re-sends the same
    batch until it is acknowledged."""

    def __init__(self, url: str, docs: list[dict[str, Any]], seed: int) -> None:
        super().__init__(daemon=True)
        self.url, self.docs, self.rng = url, docs, random.Random(seed)
        self.answers: dict[str, dict[str, Any]] = {}
        self.resent = 0
        self.errors: list[str] = []

    def run(self) -> None:
        i = 0
        while i < len(self.docs):
            batch = self.docs[i : i + self.rng.randint(1, 20)]
            while True:
                try:
                    r = httpx.post(self.url, json={"documents": batch}, timeout=60.0)
                    break
                except httpx.TransportError:
                    self.resent += 1
                    time.sleep(0.02)
            if r.status_code != 200:
                self.errors.append(r.text)
                return
            for doc, res in zip(batch, r.json()["results"], strict=True):
                self.answers[doc["id"]] = res
            i += len(batch)


def leftovers(data: Path, wait: float = 2.0) -> list[int]:
    """Processes still running with ``data`` in their command line (a forked snapshot writer
    outliving its server would be one), after up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and str(data).encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.mark.parametrize("snapshot_every", [None, 150])
def test_kill_9_loop_loses_nothing_acknowledged(tmp_path: Path, snapshot_every: int | None) -> None:
    """With ``--snapshot-every 150`` snapshots are written (by forked children) all along the
    loop: a kill -9 takes the writer with it and a restart loads what was made current."""
    texts = corpus_or_synthetic("reuters", 2500, seed=7)
    texts = plant_copies(texts, per_bucket=4, kinds=("substitute",), rates=(0.05,)).texts
    rng = random.Random(7)
    rng.shuffle(texts)
    ids = [f"d{i}" for i in range(len(texts))]
    docs = [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]
    options = [] if snapshot_every is None else ["--snapshot-every", str(snapshot_every)]
    server = Server(tmp_path / "d", *options).start()
    client = Client(server.url + "/v1/documents", docs, seed=8)
    client.start()
    db_path = tmp_path / "d" / "neardup.db"
    try:
        for _ in range(KILLS):
            time.sleep(rng.uniform(0.03, 0.4))
            acked = dict(client.answers)  # everything acknowledged before this kill
            server.kill()
            if Path("/proc/self/cmdline").exists():
                assert not leftovers(tmp_path / "d"), "a snapshot writer outlived its server"
            db = sqlite3.connect(db_path)
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            rows = db.execute("SELECT id, status, cluster_id FROM documents").fetchall()
            db.close()
            stored = {i: (STATUS_NAMES[s], c) for i, s, c in rows}
            lost = [i for i in acked if i not in stored]
            assert not lost, f"{len(lost)} acknowledged documents lost: {lost[:5]}"
            changed = [i for i, r in acked.items() if stored[i] != (r["status"], r["cluster_id"])]
            assert not changed, f"stored decisions differ from the answers: {changed[:5]}"
            server.start()
        client.join(300)
        assert not client.is_alive() and not client.errors, client.errors
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.kill()
    assert client.resent > 0  # batches really were in flight when the server died
    want = {r["id"]: r for r in library(texts, ids, None)}
    assert client.answers == want  # re-sent batches gave what they would have given


SNAPSHOT_HOLDER = """
import os, sys, time
from neardup.dedup import Deduplicator
from neardup.server import snapshot
from neardup.server.service import Service, Settings
from neardup.server.validate import Item

def slow_save(dd, db_id, path):  # the forked writer, stuck in its save
    with open(sys.argv[2], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)
    return False

snapshot.save_snapshot = slow_save
svc = Service(Deduplicator(), Settings(sys.argv[1], snapshot_every=5))
svc.ingest([Item(f"d{i}", f"document number {i} about apples", None) for i in range(8)], False)
time.sleep(120)
"""


def test_a_forked_snapshot_writer_dies_with_its_server(tmp_path: Path) -> None:
    """kill -9 while the forked child is writing a snapshot: the child goes too (else it
    would keep writing beside the next server, holding its files and sockets)."""
    import os
    import signal
    import subprocess
    import sys

    pid_file = tmp_path / "writer.pid"
    server = subprocess.Popen(
        [sys.executable, "-c", SNAPSHOT_HOLDER, str(tmp_path / "d"), str(pid_file)]
    )
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and server.poll() is None, "no snapshot writer"
            time.sleep(0.05)
        writer = int(pid_file.read_text())
        os.kill(writer, 0)  # alive, writing
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(30)
    deadline = time.monotonic() + 5
    while Path(f"/proc/{writer}").exists():
        stat = Path(f"/proc/{writer}/stat").read_text() if Path(f"/proc/{writer}").exists() else ""
        if ") Z " in stat:  # a zombie waiting for init to reap it: dead
            break
        assert time.monotonic() < deadline, "the snapshot writer outlived its server"
        time.sleep(0.05)
