"""Which sources a copied passage names (issue 36): its earliest source (the original), the
closest beside it, or every earlier document holding it; the rule against its invariants."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.overlap import OverlapFinder, Passage
from neardup.overlap.finder import cross_sourced
from neardup.overlap.pairs import (
    COPIED_BY_EACH,
    HOLDS,
    NEAR_COPY,
    PART,
    SOURCE_MODES,
    SPREAD,
    VERBATIM,
    _keep_sweep,
    cross_source_keep,
    holders,
    score,
    source_rows,
)

from tests.overlap_texts import article_last, copy_chain, edited_copies


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


def _sources_of(found: list[Passage], ident: str) -> set[Any]:
    return {p.source_id for p in found if p.id == ident}


def test_a_longer_near_copy_is_not_a_holder_of_a_sentence_inside_it() -> None:
    # the article comes last: its sentence held verbatim by "sentence" (score 1.0) and the
    # whole of it by "whole" (a near copy) are two passages; before aligner 10 the whole copy
    # held the sentence's passage, "sentence" (earlier) was named, and "whole" was lost
    docs = article_last()
    texts, ids = [t for _, t in docs], [i for i, _ in docs]
    for sources in ("original", "all"):
        found = OverlapFinder(sources=sources).find(texts, ids)
        assert {"sentence", "whole"} <= _sources_of(found, "orig"), sources
    whole = next(p for p in OverlapFinder().find(texts, ids) if p.source_id == "whole")
    assert whole.score >= NEAR_COPY and whole.span[1] - whole.span[0] > 0.9 * len(texts[-1])


def test_an_original_after_its_copies_names_a_heavy_copy_of_a_part_with_all() -> None:
    # "heavy" (earliest) rewrote half of the article: inside the whole copy's passage and
    # scoring under half of it, step 6 drops its row; "all" names it as an edited copy of a
    # part (before aligner 10 "who copied orig" missed it); "original" names a full holder
    docs = article_last()
    texts, ids = [t for _, t in docs], [i for i, _ in docs]
    every = OverlapFinder(sources="all").find(texts, ids)
    assert _sources_of(every, "orig") == {"heavy", "sentence", "whole"}
    part = next(p for p in every if p.id == "orig" and p.source_id == "heavy")
    assert part.closest_id == "whole" and part.score < 0.5
    assert "heavy" not in _sources_of(OverlapFinder().find(texts, ids), "orig")
    # dated, the article first: every copy names it, the heavy one too
    dated = OverlapFinder().find(texts, ids, [1.0, 2.0, 3.0, 0.0])
    assert {p.id for p in dated if p.source_id == "orig"} == {"heavy", "sentence", "whole"}


def test_an_original_after_its_edited_copies_names_each_of_them() -> None:
    # "who copied this?" with the article last (no time field): six copies each hold all of
    # it with edits of their own; before aligner 13 the default named the earliest copy only
    # (and the closest beside it): four copies were linked to their original by nothing
    docs = edited_copies()
    texts, ids = [t for _, t in docs], [i for i, _ in docs]
    rows = [p for p in OverlapFinder().find(texts, ids) if p.id == "orig"]
    assert sorted(p.source_id for p in rows) == [f"copy-{c}" for c in range(6)]
    scores = [p.score for p in rows]
    assert max(scores) < VERBATIM and max(scores) - min(scores) >= SPREAD
    assert len({round(x, 2) for x in scores}) == len(scores)  # each its own edits
    assert min(p.span[1] - p.span[0] for p in rows) >= COPIED_BY_EACH
    closest = max(rows, key=lambda p: p.score).source_id
    assert {p.closest_id for p in rows} == {None, closest}
    # bounded by max_sources: the earliest kept, the rest counted
    capped = OverlapFinder(max_sources=3)
    named = [p.source_id for p in capped.find(texts, ids) if p.id == "orig"]
    assert len(named) == 3 and "copy-0" in named and capped.sources_cut >= 3
    # re-issued as it is (every copy holds it verbatim): one row, the earliest, as before
    same = edited_copies(edits=False)
    found = OverlapFinder().find([t for _, t in same], [i for i, _ in same])
    assert [p.source_id for p in found if p.id == "orig"] == ["copy-0"]
    # "all" names every holder, as before
    every = OverlapFinder(sources="all").find(texts, ids)
    assert {p.source_id for p in every if p.id == "orig"} == set(ids[:-1])


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
    # the same rows, fewer of them (a part holder "all" names may be another passage's
    # original: "original" does not gather the parts)
    assert {i for i, _ in original} <= {i for i, _ in every}
    assert {i if c is None else c for i, c in original} == closest
    assert len(original) == len(closest)  # one row per passage
    for i, c in every:
        if c is not None:  # a holder of the closest's passage, in full or in part
            assert _full(rows, keep, i, c) or _part(rows, keep, i, c)
    for i, c in original:
        if c is not None:  # the original holds it in full, is not later
            assert _full(rows, keep, i, c) and rows[i][2] <= rows[c][2]
    bounded, cut = source_rows(rows, "all", limit)
    assert len(bounded) + cut == len(every)
    assert {i if c is None else c for i, c in bounded} == closest  # no closest left out


_long_rows = st.lists(
    st.tuples(st.integers(0, 60), st.integers(1, 60), st.integers(0, 6), st.sampled_from(
        [0.1, 0.3, 0.5, 0.55, 0.7, 0.9, 0.96, 1.0])).map(
            lambda r: (25 * r[0], 25 * (r[0] + r[1]), r[2], r[3])),
    max_size=12,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_long_rows, st.integers(2, 5))
def test_original_names_the_edited_copies_as_written_plainly(
    rows: list[tuple[int, int, int, float]], limit: int
) -> None:
    # "original" (aligner 13): per closest passage, taken by score, its earliest full holder
    # and, on a long passage no holder holds verbatim whose holders' scores spread SPREAD,
    # the holders scoring unlike every other (not the closest), at most limit rows
    keep = cross_source_keep(rows)
    taken: set[int] = set()
    want: list[tuple[int, int | None]] = []
    cut = 0
    for g in sorted((i for i, k in enumerate(keep) if k), key=lambda i: (-rows[i][3], i)):
        if g in taken:
            continue
        full = [i for i in range(len(rows)) if i not in taken and _full(rows, keep, i, g)]
        taken |= set(full)
        full.sort(key=lambda i: (rows[i][2], rows[i][0], i))
        scores = [round(rows[i][3], 2) for i in full]
        edited = (
            rows[g][1] - rows[g][0] >= COPIED_BY_EACH
            and max(scores) < VERBATIM
            and max(scores) - min(scores) >= SPREAD
        )
        others = [i for i in full[1:] if i != g and scores.count(round(rows[i][3], 2)) == 1]
        others = others if edited else []
        cut += len(others) - len(others[: limit - 1])
        want += [(i, None if i == g else g) for i in full[:1] + others[: limit - 1]]
    assert source_rows(rows, "original", limit) == (want, cut)


def _shared(rows: list[tuple[int, int, int, float]], i: int, c: int) -> int:
    return min(rows[i][1], rows[c][1]) - max(rows[i][0], rows[c][0])


def _full(rows: list[tuple[int, int, int, float]], keep: list[bool], i: int, c: int) -> bool:
    """Row ``i`` holds row ``c``'s passage: covers HOLDS of it, and is not a near copy of
    its own (kept, scoring NEAR_COPY or more, ``c`` under half of it)."""
    shared, long = _shared(rows, i, c), rows[i][1] - rows[i][0]
    near_copy = keep[i] and rows[i][3] >= NEAR_COPY and shared < long / 2
    return shared >= HOLDS * (rows[c][1] - rows[c][0]) and not near_copy


def _part(rows: list[tuple[int, int, int, float]], keep: list[bool], i: int, c: int) -> bool:
    """Row ``i``, dropped by step 6, lies inside row ``c``'s passage and is PART of it."""
    long = rows[i][1] - rows[i][0]
    inside = _shared(rows, i, c) >= HOLDS * long
    return not keep[i] and inside and long >= PART * (rows[c][1] - rows[c][0])


@settings(max_examples=300, deadline=None)
@given(_rows)
def test_holders_against_their_definition(rows: list[tuple[int, int, int, float]]) -> None:
    # every closest, its full and part holders split the rows not taken, as defined pairwise
    keep = cross_source_keep(rows)
    for g in range(len(rows)):
        taken = [k % 3 == 0 and k != g for k in range(len(rows))]
        full, part = holders(rows, keep, taken, g)
        free = [i for i in range(len(rows)) if not taken[i]]
        assert full == [i for i in free if _full(rows, keep, i, g)]
        assert part == [i for i in free if not _full(rows, keep, i, g) and _part(rows, keep, i, g)]
        assert g in full


def _keep_plainly(rows: list[tuple[int, int, int, float]]) -> list[bool]:
    """cross_source_keep as written before the sweep (issue 36's cost): every row against
    every row."""
    keep = []
    for s0, s1, src, mine in rows:
        keep.append(
            not any(
                g[2] != src
                and g[0] <= s0
                and s1 <= g[1]
                and g[1] - g[0] > s1 - s0
                and mine * 2 < g[3]
                for g in rows
            )
        )
    return keep


# nested and repeated spans, few sources and scores (ties): where a sweep can go wrong
_nested = st.lists(
    st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(0, 4), st.sampled_from(
        [0.05, 0.1, 0.2, 0.25, 0.4, 0.5, 0.8, 1.0]
    )).map(lambda r: (min(r[0], r[1]), max(r[0], r[1]), r[2], r[3])),
    max_size=40,
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(_nested)
def test_cross_source_keep_equals_the_rule_written_plainly(
    rows: list[tuple[int, int, int, float]],
) -> None:
    # the sweep (over PAIRWISE rows) and the pairwise test (up to it) both decide as before
    assert cross_source_keep(rows) == _keep_plainly(rows)
    assert _keep_sweep(rows) == _keep_plainly(rows)


def _cross_sourced_plainly(found: list[Passage], sources: str, limit: int) -> list[Passage]:
    """finder.cross_sourced as written before issue 36's cost work."""

    def order(p: Passage) -> tuple[Any, ...]:
        return (p.span, p.source_position, p.source_span)

    if len(found) > 1:
        found.sort(key=order)
        rows = [(p.span[0], p.span[1], p.source_position, p.score) for p in found]
        picked, _ = source_rows(rows, sources, limit)
        found = [
            found[i]
            if c is None
            else replace(
                found[i],
                closest_id=found[c].source_id,
                closest_span=found[c].source_span,
                closest_score=found[c].score,
                closest_position=found[c].source_position,
            )
            for i, c in picked
        ]
    return sorted(found, key=order)


# kernel rows (source index, query span, source span, grams shared, grams): repeated spans,
# sources and scores
_kernel_rows = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 30), st.integers(1, 30), st.integers(0, 40),
              st.integers(1, 40), st.integers(0, 8), st.integers(0, 8)).map(
        lambda r: (r[0], r[1], r[1] + r[2], r[3], r[3] + r[4], r[5], r[6])
    ),
    max_size=25,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_kernel_rows, st.sampled_from(SOURCE_MODES))
def test_passages_made_for_the_reported_rows_only_equal_the_rule_as_before(
    found: list[tuple[int, ...]], sources: str
) -> None:
    finder = OverlapFinder(sources=sources, max_sources=3, min_score=0.25)
    for i in range(6):
        finder.add(f"text {i}", id=f"doc-{i}")
    docs = [5, 3, 1, 0, 2, 4]  # the kernel's source index -> document position
    every = [
        Passage("q", (a, b), f"doc-{docs[j]}", (c, d), score(num, den), 9, docs[j])
        for j, a, b, c, d, num, den in found
        if score(num, den) >= 0.25
    ]
    want = _cross_sourced_plainly(every, sources, 3)
    assert finder._passages(found, docs, "q", 9) == want
    assert cross_sourced(list(every), sources, 3)[0] == want
