"""Timestamps the library cannot decide on are refused with the row named (issue 22)."""

from __future__ import annotations

import math

import pytest

from neardup import Deduplicator
from neardup.io import parse_timestamp

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


def test_feed_reads_date_strings_as_the_cli_does() -> None:
    """Issue 38: ISO dates (what the CLI's --time-field reads) gave a raw numpy error."""
    texts = ["storm hits the coast tonight again", "storm hits the coast tonight again"]
    dates = ["2026-11-02T09:00:00Z", "2026-11-10"]
    got = Deduplicator(window=86400.0).feed(texts, dates)
    seconds = [parse_timestamp(d) for d in dates]
    assert got.statuses == Deduplicator(window=86400.0).feed(texts, seconds).statuses
    assert got.statuses == ["unique", "unique"]  # eight days apart: outside the window
    with pytest.raises(ValueError, match=r"timestamps\[1\]: cannot read timestamp 'soon'"):
        Deduplicator(window=86400.0).feed(texts, [dates[0], "soon"])
