"""Hot keys: a chunk whose candidate pairs pass the budget is decided in parts, same decisions."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Deduplicator
from neardup.dedup.budget import budget_cuts


def _templated(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    base = (
        "Dear customer, your order {n} has shipped from {c} and arrives in {d} days. "
        "Track it with code {t}. Thank you for shopping with us, see you again soon."
    )
    return [
        base.format(
            n=rng.randrange(10**4), c=rng.choice(["Berlin", "Rome"]), d=rng.randrange(2, 5),
            t=rng.randrange(10**3),
        ) if i % 7 else f"unrelated note {i} about {rng.random()} and other things entirely"
        for i in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize("k", [None, 14])
def test_parts_give_the_same_decisions(k: int | None) -> None:
    texts = _templated(400, seed=3)
    whole = Deduplicator(k=k).feed(texts)
    small = Deduplicator(k=k)
    small.state.pair_budget = 300  # far below this chunk's pairs: many parts
    assert small.state.budget_cuts(small.prepare(texts)), "the budget must cut this chunk"
    parts = small.feed(texts, ids=list(range(400)))
    assert (parts.status == whole.status).all() and (parts.duplicate_of == whole.duplicate_of).all()
    assert (parts.cluster_id == whole.cluster_id).all()
    np.testing.assert_array_equal(parts.similarity, whole.similarity)
    assert (whole.status == 1).sum() > 10


def test_parts_with_a_window_give_the_same_decisions() -> None:
    texts = _templated(300, seed=4)
    ts = [float(i // 3) for i in range(300)]
    whole = Deduplicator(window=40).feed(texts, ts)
    small = Deduplicator(window=40)
    small.state.pair_budget = 200
    parts = small.feed(texts, ts)
    assert (parts.status == whole.status).all() and (parts.duplicate_of == whole.duplicate_of).all()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True), max_size=30),
    st.integers(0, 20),
)
def test_cuts_keep_every_part_within_budget(rows: list[list[int]], budget: int) -> None:
    width = 3
    pad = [[100 + width * i + j for j in range(width - len(r))] for i, r in enumerate(rows)]
    keys = np.array([r + p for r, p in zip(rows, pad, strict=True)], np.uint64)
    keys = keys.reshape(len(rows), width)
    cuts = budget_cuts(keys, np.arange(len(rows)), budget)
    assert cuts == sorted(set(cuts)) and all(0 < c < len(rows) for c in cuts)
    for a, b in zip([0, *cuts], [*cuts, len(rows)], strict=True):
        part = keys[a:b]
        _, counts = np.unique(part.ravel(), return_counts=True)
        pairs = int((counts * (counts - 1) // 2).sum())
        assert pairs <= budget, (a, b, pairs)
    _, counts = np.unique(keys.ravel(), return_counts=True)
    assert (cuts == []) == (int((counts * (counts - 1) // 2).sum()) <= budget)
