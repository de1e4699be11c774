"""Sketches of kept documents in a memory-mapped spill file (issue 39): same decisions, same
saved state, nothing left on disk."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import numpy as np
import pytest

from neardup import Deduplicator, _spill
from neardup._spill import SpillGrowable

from tests.dedup.test_state import FIELDS, corpus, feed_all

DIRS = ("spilled", "memory")


def test_rows_survive_spilling_and_growth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEARDUP_SPILL_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 256, (5000, 7), dtype=np.uint8)
    g = SpillGrowable(np.uint8, 7, spill_bytes=100)
    for a in range(0, len(rows), 333):  # many growths of the file
        g.extend(rows[a : a + 333])
    assert g.spilled and g.nbytes == 0 and g.file_bytes >= rows.nbytes
    assert np.array_equal(g.view(), rows)
    assert os.listdir(tmp_path) == []  # the file is unlinked from the start


def test_read_only_rows_are_copied_into_the_spill_file() -> None:
    ro = np.arange(40, dtype=np.int64).reshape(10, 4)
    ro.flags.writeable = False
    g = SpillGrowable.wrap(ro)
    g.spill_bytes = 64
    g.extend(np.full((1, 4), -1))
    assert g.spilled and g.view()[:10].tolist() == ro.tolist() and g.view()[10].tolist() == [-1] * 4


@pytest.mark.parametrize("window", [None, 50.0])
def test_spilled_sketches_decide_and_save_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: float | None
) -> None:
    texts = corpus(900, seed=3)
    ts = [float(i // 9) for i in range(len(texts))] if window else None
    ref = Deduplicator(window=window)
    feed_all(ref, texts, ts, 128)
    monkeypatch.setattr(_spill, "SPILL_BYTES", 1000)  # every run spills after a few documents
    dd = Deduplicator(window=window)
    feed_all(dd, texts[:450], None if ts is None else ts[:450], 128)
    assert dd.state.sketches is not None and dd.state.sketches.spilled
    dd.save(tmp_path / "spilled")
    ref_half = Deduplicator(window=window)
    feed_all(ref_half, texts[:450], None if ts is None else ts[:450], 128)
    monkeypatch.setattr(_spill, "SPILL_BYTES", 64 << 20)
    ref_half.save(tmp_path / "memory")
    live = {d: tmp_path / d / (tmp_path / d / "CURRENT").read_text().strip() for d in DIRS}
    assert "sketches.npy" in os.listdir(live["memory"])
    for name in sorted(os.listdir(live["memory"])):
        if name.endswith(".npy"):
            a, b = (np.load(live[d] / name) for d in DIRS)
            assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
    monkeypatch.setattr(_spill, "SPILL_BYTES", 1000)
    back = Deduplicator.load(tmp_path / "spilled")
    feed_all(back, texts[450:], None if ts is None else ts[450:], 128)
    got, want = back.state.decisions(), ref.state.decisions()
    start = len(want) - len(got)
    for name in FIELDS:
        assert np.array_equal(getattr(got, name), getattr(want, name)[start:]), name


def test_a_forked_child_reads_rows_after_closing_every_descriptor() -> None:
    """The service's snapshot writer forks and closes what it inherited before saving."""
    rows = np.arange(6000, dtype=np.int64).reshape(1000, 6)
    g = SpillGrowable(np.int64, 6, spill_bytes=100)
    g.extend(rows)
    assert g.spilled
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 when it read the right rows
        code = 1
        try:
            os.closerange(3, 65536)
            code = 0 if np.array_equal(g.take([3, 999]), rows[[3, 999]]) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert np.array_equal(g.take([3, 999]), rows[[3, 999]])  # the parent still reads its file


def test_a_deep_copy_holds_the_rows() -> None:
    g = SpillGrowable(np.int64, 2, spill_bytes=100)
    g.extend(np.arange(200).reshape(100, 2))
    twin = copy.deepcopy(g)
    twin.extend([[7, 7]])
    assert g.spilled and g.size == 100 and twin.size == 101
    assert np.array_equal(twin.view()[:100], g.view())


def test_spilled_exact_keys_read_and_forget_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact-key and similarity columns move to spill files too (issue 39): keys read
    back, forget and the later copies of forgotten texts decide as with the columns in memory,
    with the same similarities."""
    texts = corpus(600, seed=5)
    ref = Deduplicator()
    feed_all(ref, texts, None, 100)
    monkeypatch.setattr(_spill, "SPILL_BYTES", 1000)  # 125 keys a column, then the file
    dd = Deduplicator()
    feed_all(dd, texts, None, 100)
    assert isinstance(dd.state.cols.key_hi, SpillGrowable) and dd.state.cols.key_lo.spilled
    assert dd.state.cols.similarity.spilled and dd.state.cols.threshold.spilled  # type: ignore[attr-defined]
    assert not ref.state.cols.key_hi.spilled  # type: ignore[attr-defined]
    at = [0, 7, 124, 125, 599, 600, -1]
    assert dd.state.exact_keys(at) == ref.state.exact_keys(at)
    assert dd.state.exact_keys(at)[-2:] == [None, None] and None not in dd.state.exact_keys(at[:5])
    for d in (ref, dd):
        d.state.forget(list(range(0, 200, 3)))
        feed_all(d, texts[:200], None, 100)  # exact copies of forgotten and held texts
    got, want = dd.state.decisions(), ref.state.decisions()
    for name in FIELDS:
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    for name in ("similarity", "threshold"):
        a, b = getattr(got, name), getattr(want, name)
        assert np.array_equal(a, b, equal_nan=True) and not np.isnan(a).all(), name


def test_more_kept_sketches_than_the_int32_slots_hold_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from neardup.dedup import dedup_state

    monkeypatch.setattr(dedup_state, "MAX_SLOTS", 50)
    dd = Deduplicator()
    with pytest.raises(MemoryError, match="more than 50 kept documents with sketches"):
        feed_all(dd, corpus(300, seed=1), None, 100)
