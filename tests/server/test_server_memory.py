"""Memory of the service (issue 21): the heap's free pages go back after loading."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from neardup import _spill
from neardup._heap import release_heap
from neardup.dedup import Deduplicator
from neardup.server.service import Service, Settings
from neardup.server.validate import Item

from tests.server.test_server_decisions import corpus
from tests.server.test_server_snapshot import crash, items


def test_release_heap_trims_where_glibc_is() -> None:
    assert release_heap() is (platform.libc_ver()[0] == "glibc")


def test_a_batch_that_keeps_nothing_is_stored_once_the_sketches_spilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past 64 MiB (about 350,000 kept documents) the sketches live in a spill file (issue 39);
    a stored batch that keeps no document (an exact copy) then read zero sketch rows of that
    file, and every such request of a server of that size failed with a 500 (TypeError)."""
    monkeypatch.setattr(_spill, "SPILL_BYTES", 4096)  # spill after a few dozen sketches
    texts = corpus("reuters", 120, seed=11)
    svc = Service(Deduplicator(), Settings(str(tmp_path / "d"), snapshot_every=0))
    got = svc.ingest(items(texts), False)
    assert svc.dd.state.sketches is not None and svc.dd.state.sketches.spilled
    got += svc.ingest([Item("copy", texts[0], None)], False)  # keeps nothing
    crash(svc)  # and a server restarted on it (the replay of every row spills again)
    svc = Service(Deduplicator(), Settings(str(tmp_path / "d"), snapshot_every=0))
    got += svc.ingest([Item("copy2", texts[1], None)], False)
    assert svc.dd.state.sketches is not None and svc.dd.state.sketches.spilled
    d = Deduplicator().feed([*texts, texts[0], texts[1]])  # the library, one stream
    ids = [it.id for it in items(texts)] + ["copy", "copy2"]
    assert [r["status"] for r in got] == d.statuses
    assert d.statuses[-2:] == ["exact_duplicate"] * 2
    assert [r["duplicate_of"] for r in got] == [
        None if p < 0 else ids[p] for p in d.duplicate_of.tolist()
    ]
