"""The --max-disorder buffer (dedup/disorder.py) against brute force: rows shuffled within the
bound come out stably sorted by time; beyond it no row is lost and only the late ones leave
time order; decisions of a Deduplicator fed through it equal those of the sorted rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import Deduplicator
from neardup.dedup.disorder import DisorderBuffer, in_input_order, release_order

from tests.synthetic import synthetic_corpus

times = st.lists(st.integers(0, 50).map(float), min_size=0, max_size=60)


def _shuffle_within(ts: list[float], bound: float, jitter: list[float]) -> list[int]:
    """An arrival order in which every row is within ``bound`` of every row before it: sort by
    t + u with u in [0, bound] (a row after a newer one is at most u_i - u_j <= bound older)."""
    keys = [t + bound * u for t, u in zip(ts, jitter, strict=True)]
    return sorted(range(len(ts)), key=keys.__getitem__)


@settings(max_examples=200, deadline=None)
@given(times, st.integers(0, 20), st.data())
def test_shuffle_within_bound_gives_sorted_order(
    ts: list[float], bound: int, data: st.DataObject
) -> None:
    jitter = data.draw(st.lists(st.floats(0, 1), min_size=len(ts), max_size=len(ts)))
    arrival = [ts[i] for i in _shuffle_within(ts, bound, jitter)]
    order, late = release_order(arrival, bound)
    assert late.size == 0
    assert order.tolist() == np.argsort(np.asarray(arrival), kind="stable").tolist()


@settings(max_examples=200, deadline=None)
@given(times, st.integers(0, 20))
def test_any_order_loses_nothing_and_only_late_rows_leave_time_order(
    ts: list[float], bound: int
) -> None:
    order, late = release_order(ts, bound)
    assert sorted(order.tolist()) == list(range(len(ts)))  # every row once
    on_time = [i for i in order.tolist() if i not in set(late.tolist())]
    assert [(ts[i], i) for i in on_time] == sorted((ts[i], i) for i in on_time)
    newest = -np.inf
    for i, t in enumerate(ts):  # a late row is more than the bound behind a newer one
        if i in set(late.tolist()):
            assert t < newest - bound
        newest = max(newest, t)


def test_buffer_holds_only_rows_within_the_bound() -> None:
    buf: DisorderBuffer[int] = DisorderBuffer(10)
    held = []
    for i in range(1000):
        buf.push(float(i), i)
        held.append(len(buf))
    assert max(held) == 10  # rows (t-10, t]: memory is bounded by the time span, not the input


def test_deduplicator_through_buffer_equals_sorted_input() -> None:
    docs = synthetic_corpus(300, seed=3, days=6)
    rng = np.random.default_rng(0)
    bound = 36 * 3600.0
    ts = [d["ts"] for d in docs]
    arrival = _shuffle_within(ts, bound, rng.random(len(ts)).tolist())
    rows = [docs[i] for i in arrival]
    order, late = release_order([r["ts"] for r in rows], bound)
    assert late.size == 0
    got = Deduplicator(window=86400.0).feed(
        [rows[i]["text"] for i in order], [rows[i]["ts"] for i in order]
    )
    got = in_input_order(got, order)
    want = Deduplicator(window=86400.0).feed([d["text"] for d in docs], ts)
    back = np.asarray(arrival)  # input position of each sorted row
    assert [got.statuses[i] for i in np.argsort(back)] == want.statuses
    dup = got.duplicate_of[np.argsort(back)]
    assert [-1 if x < 0 else int(back[x]) for x in dup] == want.duplicate_of.tolist()
    assert (want.status != 0).sum() > 30
