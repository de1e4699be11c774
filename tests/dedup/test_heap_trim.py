"""The dedup state gives the C heap back once per ``TRIM_DOCS`` decided documents (issue 39:
a chunk's temporaries stay resident in glibc's heap otherwise), not once per call: the
service's single-document feeds do not pay a trim each."""

from __future__ import annotations

import pytest

from neardup import Deduplicator
from neardup.dedup import dedup_state


def test_the_heap_is_given_back_once_per_trim_docs_decided(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[bool] = []
    real = dedup_state.release_heap

    def counted() -> bool:  # the real malloc_trim, counted
        calls.append(real())
        return calls[-1]

    monkeypatch.setattr(dedup_state, "release_heap", counted)
    monkeypatch.setattr(dedup_state, "TRIM_DOCS", 10)
    texts = [f"report {i} on the storm that hit the coast on day {i % 7}" for i in range(45)]
    dd = Deduplicator()
    for t in texts[:25]:  # single-document feeds
        dd.feed([t])
    assert len(calls) == 2 and dd.state.untrimmed == 5
    dd.feed(texts[:3], commit=False)  # a dry run decides nothing for good
    assert len(calls) == 2
    dd.feed(texts[25:])  # 5 + 20
    assert len(calls) == 3 and dd.state.untrimmed == 0
    batch = Deduplicator()
    assert batch.run(texts).statuses == Deduplicator().run(texts).statuses
    assert len(calls) == 5  # one resolve of 45 documents each
