"""Which sources a copied passage names (issue 36): its earliest source (the original), the
closest beside it, or every earlier document holding it; the rule against its invariants."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.overlap import OverlapFinder, Passage
from neardup.overlap.pairs import cross_source_keep, source_rows

from tests.overlap_texts import copy_chain


def _found(sources: str, timestamps: list[float] | None = None, **kw: Any) -> list[Passage]:
    docs = copy_chain(copies=4)
    finder = OverlapFinder(sources=sources, **kw)
    return finder.find([t for _, t in docs], [i for i, _ in docs], timestamps)


def _named(found: list[Passage]) -> dict[str, list[tuple[Any, Any]]]:
    out: dict[str, list[tuple[Any, Any]]] = {}
    for p in found:
        out.setdefault(p.id, []).append((p.source_id, p.closest_id))
    return out


def test_the_original_is_named_before_a_closer_copy() -> None:
    # every copy holds the rewrite verbatim (score 1.0) and the article through it (0.32):
    # the article is the original, the rewrite the closest source
    named = _named(_found("original"))
    assert named["rewrite"] == [("orig", None)]
    for c in range(4):
        assert named[f"copy-{c}"] == [("orig", "rewrite")]
    p = next(p for p in _found("original") if p.id == "copy-0")
    docs = dict(copy_chain(copies=4))
    # both passages cover text that corresponds: the closest span is the rewrite's copy
    assert p.closest_span is not None and p.closest_score == 1.0
    closest_text = docs["rewrite"][p.closest_span[0] : p.closest_span[1]]
    assert closest_text == docs["copy-0"][p.span[0] : p.span[1]]
    assert p.score < 0.5 < p.closest_score


def test_best_names_the_closest_and_all_every_earlier_holder() -> None:
    best = _named(_found("best"))
    assert ("rewrite", None) in best["copy-3"]
    every = _named(_found("all"))
    holders = {"orig", "rewrite", "copy-0", "copy-1", "copy-2"}
    assert {s for s, _ in every["copy-3"]} == holders
    assert {c for s, c in every["copy-3"]} == {None, "rewrite"}  # the closest named by each


def test_time_order_decides_the_original() -> None:
    # the rewrite is dated first: it is the original of the article and of the copies
    named = _named(_found("original", [2.0, 1.0, 3.0, 4.0, 5.0, 6.0]))
    assert named["orig"] == [("rewrite", None)]
    assert named["copy-0"] == [("rewrite", None)]


def test_an_original_after_its_copies_names_every_copy_with_all() -> None:
    # no time field, the article last: "who copied this?" is its own rows' sources
    docs = copy_chain(copies=4)[::-1]
    texts, ids = [t for _, t in docs], [i for i, _ in docs]
    every = _named(OverlapFinder(sources="all").find(texts, ids))
    assert {s for s, _ in every["orig"]} == {"copy-0", "copy-1", "copy-2", "copy-3", "rewrite"}
    one = _named(OverlapFinder().find(texts, ids))
    assert [s for s, _ in one["orig"]] == ["copy-3"]  # the earliest in input order


def test_all_is_bounded_and_counts_what_it_leaves_out() -> None:
    finder = OverlapFinder(sources="all", max_sources=3)
    docs = copy_chain(copies=4)
    found = finder.find([t for _, t in docs], [i for i, _ in docs])
    named = _named(found)
    # copy-3 is held by 5 earlier texts: the earliest, the closest and the next earliest
    assert [s for s, _ in named["copy-3"]] == ["orig", "rewrite", "copy-0"]
    assert finder.sources_cut == 1 + 2  # copy-2: 4 holders, copy-3: 5
    assert OverlapFinder(sources="all").config_id != finder.config_id
    assert OverlapFinder(sources="best").config_id != OverlapFinder().config_id


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"sources": "first"}, "sources must be one of"), ({"max_sources": 1}, "max_sources")],
)
def test_bad_sources_options_are_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        OverlapFinder(**kwargs)


_rows = st.lists(
    st.tuples(st.integers(0, 60), st.integers(1, 60), st.integers(0, 6), st.sampled_from(
        [0.1, 0.3, 0.5, 0.9, 1.0])).map(lambda r: (r[0], r[0] + r[1], r[2], r[3])),
    max_size=12,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_rows, st.integers(2, 5))
def test_source_rows_keeps_every_closest_and_names_no_later_original(
    rows: list[tuple[int, int, int, float]], limit: int
) -> None:
    keep = cross_source_keep(rows)
    best, _ = source_rows(rows, "best", limit)
    assert [i for i, _ in best] == [i for i, k in enumerate(keep) if k]  # as before aligner 8
    every, cut = source_rows(rows, "all", len(rows) + 1)
    assert cut == 0 and len({i for i, _ in every}) == len(every)
    closest = {i if c is None else c for i, c in every}
    assert closest <= {i for i, k in enumerate(keep) if k}
    original, _ = source_rows(rows, "original", limit)
    assert set(original) <= set(every)  # the same pairs, fewer of them
    assert len(original) == len(closest)  # one row per passage
    for i, c in every:
        if c is not None:  # a holder covers half the closest's query span, is not later
            g0, g1 = rows[c][0], rows[c][1]
            assert 2 * (min(rows[i][1], g1) - max(rows[i][0], g0)) >= g1 - g0
    for i, c in original:
        if c is not None:
            assert rows[i][2] <= rows[c][2]
    bounded, cut = source_rows(rows, "all", limit)
    assert len(bounded) + cut == len(every)
    assert {i if c is None else c for i, c in bounded} == closest  # no closest left out
