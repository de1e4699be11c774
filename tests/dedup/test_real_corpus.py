"""Invariants on a real slice (Reuters-21578, the ``reuters_records`` fixture of conftest);
skipped when the corpora are absent."""

from __future__ import annotations

import numpy as np

from neardup.dedup import Deduplicator
from neardup.features.normalize import normalize_text
from neardup.io import parse_timestamp


def test_batch_equals_streaming_and_invariants(reuters_records: list[dict]) -> None:
    texts = [d["text"] for d in reuters_records]
    batch = Deduplicator(k=3).run(texts)
    stream = Deduplicator(k=3)
    for s in range(0, len(texts), 257):
        stream.feed(texts[s : s + 257])
    got = stream.state.decisions()
    for name in ("status", "duplicate_of", "distance", "cluster_id", "fingerprint"):
        assert np.array_equal(getattr(batch, name), getattr(got, name)), name
    counts = batch.counts()
    assert counts["exact_duplicate"] > 0 and counts["duplicate"] > 0
    for i in np.flatnonzero(batch.duplicate_of >= 0).tolist():
        r = int(batch.duplicate_of[i])
        d = int(batch.fingerprint[i] ^ batch.fingerprint[r]).bit_count()
        assert d == batch.distance[i] <= 3 and batch.status[r] == 0  # kept doc is unique
        if batch.statuses[i] == "exact_duplicate":
            assert normalize_text(texts[i]) == normalize_text(texts[r])


def test_window_on_real_dates(reuters_records: list[dict]) -> None:
    docs = sorted(reuters_records, key=lambda d: parse_timestamp(d["date"]))
    texts = [d["text"] for d in docs]
    ts = [parse_timestamp(d["date"]) for d in docs]
    batch = Deduplicator(k=3, window=86400.0).run(texts, ts)
    stream = Deduplicator(k=3, window=86400.0)
    for s in range(0, len(texts), 500):
        stream.feed(texts[s : s + 500], ts[s : s + 500])
    assert np.array_equal(batch.duplicate_of, stream.state.decisions().duplicate_of)
    dup = np.flatnonzero(batch.duplicate_of >= 0)
    tsa = np.array(ts)
    assert (np.abs(tsa[dup] - tsa[batch.duplicate_of[dup]]) <= 86400).all()
    assert batch.counts()["unique"] >= Deduplicator(k=3).run(texts).counts()["unique"]
