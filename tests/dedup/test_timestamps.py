"""Timestamps the library cannot decide on are refused with the row named (issue 22)."""

from __future__ import annotations

import math

import pytest

from neardup import Deduplicator

TEXTS = ["storm hits the coast tonight, thousands without power", "cats and dogs play outside"]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_window_refuses_non_finite_timestamps(bad: float) -> None:
    dd = Deduplicator(window=86400.0)
    with pytest.raises(ValueError, match=r"timestamps\[1\] is (nan|inf|-inf): give finite"):
        dd.feed(TEXTS, [1.7e9, bad])
    assert dd.n_documents == 0  # nothing was decided
    with pytest.raises(ValueError, match=r"timestamps\[1\]"):
        Deduplicator(keep="newest").run(TEXTS, [1.7e9, bad])


def test_infinity_refused_even_without_a_window() -> None:
    with pytest.raises(ValueError, match=r"timestamps\[0\] is inf"):
        Deduplicator().add(TEXTS[0], timestamp=math.inf)


def test_nan_means_no_timestamp_without_a_window() -> None:
    d = Deduplicator().run(TEXTS + TEXTS[:1], [math.nan, 1.0, math.nan])
    assert d.statuses == ["unique", "unique", "exact_duplicate"]
