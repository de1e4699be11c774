"""The state's positions and cluster numbers are int32 in memory until one reaches 2**31 - 1
(issue 39): past it they widen, and every decision, saved array and reload is the same as a
state that never narrowed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neardup import Deduplicator

TEXTS = [
    "the storm hits the coast tonight with heavy rain and strong winds near the harbour",
    "the storm hits the coast tonight with heavy rain and strong winds near the harbor",
    "central bank leaves interest rates unchanged after its meeting on tuesday morning",
    "the storm hits the coast tonight with heavy rain and strong winds near the harbour",
    "a completely different text about cats, dogs and other household animals at home",
    "central bank leaves interest rates unchanged after its meeting on tuesday morning!",
]


def _fields(d: object, shift: int) -> tuple[list[str], list[int], list[int], list[int]]:
    dup = [p - shift if p >= 0 else p for p in d.duplicate_of.tolist()]  # type: ignore[attr-defined]
    return d.statuses, dup, d.cluster_id.tolist(), d.distance.tolist()  # type: ignore[attr-defined]


def test_columns_are_int32_below_2_31() -> None:
    dd = Deduplicator()
    dd.feed(TEXTS)
    assert dd.state.cols.rep.data.dtype == dd.state.cols.cluster.data.dtype == np.int32
    d = dd.state.decisions()
    assert d.duplicate_of.dtype == d.cluster_id.dtype == np.int64  # handed out as before


def test_positions_past_2_31_widen_with_the_same_decisions(tmp_path: Path) -> None:
    shift = 2**31 - 4  # the chunks cross 2**31 - 1: rep, cluster, the exact map and the index
    ref, big = Deduplicator(), Deduplicator()
    big.state.origin = shift  # positions start there (as in a loaded window state)
    for a, b in ((0, 3), (3, 6)):
        want = ref.feed(TEXTS[a:b])
        got = big.feed(TEXTS[a:b])
        assert got.position.tolist() == [shift + p for p in want.position.tolist()]
        assert _fields(got, shift) == _fields(want, 0)
    assert big.state.cols.rep.data.dtype == np.int64
    assert int(big.state.cols.rep.view().max()) >= 2**31
    big.save(tmp_path / "s")
    back = Deduplicator.load(tmp_path / "s")
    more = [TEXTS[1] + " again", TEXTS[4]]
    assert _fields(back.feed(more), shift) == _fields(ref.feed(more), 0)
    for name in ("rep", "cluster", "exact_pos", "cand_slot_positions", "cand_positions"):
        saved = np.load(tmp_path / "s" / "v-1" / f"{name}.npy")  # saved as before (format 4)
        assert saved.dtype == np.int64, name
    assert int(np.load(tmp_path / "s" / "v-1" / "rep.npy").max()) >= 2**31
