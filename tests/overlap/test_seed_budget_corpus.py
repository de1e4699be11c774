"""A raw corpus with a text over its seed budget: 20 Newsgroups' comp.os.ms-windows.misc
posts a uuencoded bitmap in 14 parts; part 7 repeats one gram 5,508 times, and part 6 (one
document: ``max_df`` counts documents, not postings) posted it 1,866 times, so its look-ups
find ~10^7 postings. The run goes on: that text is compared without its grams of too many
postings, counted and named, by ``find`` and ``stream`` alike; ``budget="refuse"`` stops."""

from __future__ import annotations

import pytest

from neardup.overlap import OverlapFinder, SeedBudgetError

from tests.conftest import corpus_records

UUENCODED = "20ng-comp.os.ms-windows.misc-9981"


@pytest.mark.corpus
def test_20_newsgroups_runs_through_its_uuencoded_parts() -> None:
    records = corpus_records("20news", 3000)
    texts, ids = [r["text"] for r in records], [r["id"] for r in records]
    assert UUENCODED in ids
    found = OverlapFinder()
    passages = found.find(texts, ids)
    count, named = found.over_budget_texts
    assert count >= 1 and named[0] == UUENCODED and passages
    streamed = OverlapFinder()
    rows = [p for got in streamed.stream(zip(texts, ids, strict=True)) for p in got]
    assert rows == passages and streamed.over_budget_texts == (count, named)
    with pytest.raises(SeedBudgetError, match=f"text '{UUENCODED}': its "):
        OverlapFinder(budget="refuse").find(texts, ids)
