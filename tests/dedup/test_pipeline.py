from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import Deduplicator, connected_components, dedup_batch
from neardup.dedup.clusters import cluster_sizes
from neardup.dedup.exact import exact_keys
from neardup.index import all_pairs

from tests.dedup.dedup_helpers import TableFingerprinter, reference


def _rows(d):
    return list(zip(d.statuses, d.duplicate_of.tolist(), d.distance.tolist(), strict=True))


def _table(**kw):
    # synthetic fingerprints test the Hamming logic alone: no verifier unless a test asks
    kw.setdefault("verifier", None)
    return Deduplicator(fingerprinter=TableFingerprinter(), **kw)  # type: ignore[arg-type]


def test_real_fingerprints_exact_and_empty() -> None:
    texts = [
        "Oil prices rose sharply on Monday after the OPEC meeting in Vienna",
        "oil prices  rose sharply on monday after the OPEC meeting in vienna",
        "",
        "  ...  ",
        "Completely unrelated: the football final ended in a draw",
    ]
    d = Deduplicator().run(texts)
    assert d.statuses == ["unique", "exact_duplicate", "empty", "empty", "unique"]
    assert d.duplicate_of.tolist()[:2] == [-1, 0]
    # empty documents are never clustered together
    assert d.cluster_id[2] != d.cluster_id[3]
    assert d.cluster_id[0] == d.cluster_id[1]


def test_chain_of_small_edits_does_not_make_a_giant_cluster() -> None:
    fps, f = [], 0
    for step in range(30):  # each step flips two fresh bits: neighbours at distance 2
        fps.append(f)
        f ^= (1 << (2 * step)) | (1 << (2 * step + 1))
    texts = [f"{x}:{i}" for i, x in enumerate(fps)]
    i, j, _ = all_pairs(np.array(fps, dtype=np.uint64), k=3)
    assert cluster_sizes(connected_components(len(fps), i, j)).max() == 30  # naive: one blob
    d = _table(k=3).run(texts)
    assert cluster_sizes(d.cluster_id).max() == 2
    dup = d.duplicate_of >= 0
    dist_to_kept = [
        bin(fps[a] ^ fps[b]).count("1")
        for a, b in zip(np.flatnonzero(dup), d.duplicate_of[dup], strict=False)
    ]
    assert max(dist_to_kept) <= 3


fps_strategy = st.lists(st.tuples(st.integers(0, 255), st.integers(0, 3)), max_size=40)


@settings(max_examples=60, deadline=None)
@given(fps_strategy, st.integers(0, 3), st.integers(1, 7))
def test_streaming_and_batch_match_reference(items, k, chunk) -> None:
    # small fingerprints -> many collisions; tag repeats create exact duplicates
    texts = ["   " if tag == 3 and fp % 5 == 0 else f"{fp}:{tag}" for fp, tag in items]
    want = reference(texts, k)
    batch = _table(k=k).run(texts)
    assert _rows(batch) == want
    dd = _table(k=k)
    for s in range(0, len(texts), chunk):
        dd.feed(texts[s : s + chunk])
    assert _rows(dd.state.decisions()) == want
    assert dd.state.decisions().cluster_id.tolist() == batch.cluster_id.tolist()


@settings(max_examples=40, deadline=None)
@given(fps_strategy, st.integers(1, 5))
def test_window_streaming_equals_batch(items, chunk) -> None:
    texts = [f"{fp}:{tag}" for fp, tag in items]
    ts = [float(i) * 0.5 for i in range(len(texts))]  # in time order
    want = reference(texts, 2, ts=ts, window=3.0)
    assert _rows(_table(k=2, window=3.0).run(texts, ts)) == want
    dd = _table(k=2, window=3.0)
    for s in range(0, len(texts), chunk):
        dd.feed(texts[s : s + chunk], ts[s : s + chunk])
    assert _rows(dd.state.decisions()) == want


def test_window_separates_old_copies() -> None:
    day = 86400.0
    texts = ["5:a", "5:a", "7:b", "5:a"]
    d = _table(k=3, window=7 * day).run(texts, [0.0, day, 2 * day, 20 * day])
    assert d.statuses == ["unique", "exact_duplicate", "duplicate", "unique"]
    assert d.duplicate_of.tolist() == [-1, 0, 0, -1]


def test_keep_longest_and_newest() -> None:
    texts = ["1:short", "3:a much longer text", "1:mid length", "1000000:other"]
    d = _table(k=2, keep="longest").run(texts)
    assert d.statuses == ["duplicate", "unique", "duplicate", "unique"]
    assert d.duplicate_of.tolist() == [1, -1, 1, -1]
    d = _table(k=2, keep="newest").run(texts, [1.0, 2.0, 3.0, 0.0])
    assert d.duplicate_of.tolist() == [2, 2, -1, -1]
    with pytest.raises(ValueError, match="whole input"):
        _table(keep="longest").feed(texts)
    with pytest.raises(ValueError, match="timestamps"):
        _table(keep="newest").run(texts)


def test_longest_matches_reference_order() -> None:
    rng = np.random.default_rng(1)
    texts = [
        f"{int(x)}:{'x' * int(n)}"
        for x, n in zip(rng.integers(0, 64, 50), rng.integers(0, 9, 50), strict=False)
    ]
    lengths = np.array([len(t) for t in texts])
    order = np.lexsort((np.arange(50), -lengths)).tolist()
    assert _rows(_table(k=1, keep="longest").run(texts)) == reference(texts, 1, order=order)


class ParityVerifier:
    """Accepts a pair only when both texts have the same length parity."""

    threshold = 0.5

    def sketch_many(self, texts):
        return np.array([[len(t) % 2] for t in texts], dtype=np.int64)

    def similarity(self, a, b):
        return (a[:, 0] == b[:, 0]).astype(np.float64)


def test_verifier_hook_widens_and_filters() -> None:
    texts = ["0:a", "15:bbb", "1:cc", "3:d"]  # sketch = length parity: odd, even, even, odd
    plain = _table(k=1).run(texts)
    assert plain.statuses == ["unique", "unique", "duplicate", "unique"]
    dd = _table(k=1, verifier=ParityVerifier(), candidate_k=4)
    d = dd.run(texts)
    # 1:cc: 0 (d1) rejected by parity, 15 (d3) accepted; 3:d: 0 (d2) accepted, 15 (d2) rejected
    assert d.statuses == ["unique", "unique", "duplicate", "duplicate"]
    assert d.duplicate_of.tolist() == [-1, -1, 1, 0]
    assert d.distance.tolist() == [-1, -1, 3, 2]
    s = _table(k=1, verifier=ParityVerifier(), candidate_k=4)
    s.feed(texts[:2])
    s.feed(texts[2:])
    assert _rows(s.state.decisions()) == _rows(d)
    assert s.describe()["sketch_bytes"] > 0


def test_add_returns_ids() -> None:
    dd = _table(k=3)
    assert dd.add("1:x", id="a").status == "unique"
    dec = dd.add("3:y", id="b")
    assert (dec.status, dec.duplicate_of, dec.distance) == ("duplicate", "a", 1)


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"k": -1}, "k must"),
        ({"keep": "last"}, "keep must"),
        ({"candidate_k": 5, "verifier": None}, "verifier"),
        ({"verifier": "minhash"}, "verifier must be"),
        ({"window": 0}, "window"),
    ],
)
def test_bad_options(kw, msg) -> None:
    with pytest.raises(ValueError, match=msg):
        Deduplicator(**kw)


def test_window_needs_timestamps() -> None:
    with pytest.raises(ValueError, match="timestamps are required"):
        _table(window=5.0).feed(["1:a"])


def test_dedup_batch_function() -> None:
    assert dedup_batch(["a b", "x y"]).statuses == ["unique", "unique"]


def test_prepare_large_batch_equals_small_batches() -> None:
    # from OVERLAP_MIN texts the sketch runs on a second thread beside the fingerprints; rows
    # and keys equal those of small batches (the inline path), empty texts included
    from neardup.dedup.prepare import OVERLAP_MIN

    rng = np.random.default_rng(7)
    words = ["oil", "price", "rose", "bank", "rate", "cut", "Ｆｅｄ", "市场", "!!", "  "]
    texts = [" ".join(rng.choice(words, rng.integers(0, 40))) for _ in range(OVERLAP_MIN + 300)]
    dd = Deduplicator()
    big = dd.prepare(texts)
    small = [dd.prepare(texts[lo : lo + 200]) for lo in range(0, len(texts), 200)]
    assert big.empty.any() and not big.empty.all()
    assert np.array_equal(big.fps, np.concatenate([c.fps for c in small]))
    assert np.array_equal(big.empty, np.concatenate([c.empty for c in small]))
    assert big.keys == [k for c in small for k in c.keys]
    assert big.sketches is not None
    assert np.array_equal(big.sketches, np.concatenate([c.sketches for c in small]))
    live = np.flatnonzero(~big.empty)
    assert dd.verifier is not None
    want = dd.verifier.sketch_many([texts[i] for i in live])  # the public path
    assert np.array_equal(big.sketches[live], want) and not big.sketches[big.empty].any()
    assert [big.keys[i] for i in live] == exact_keys([texts[i] for i in live])
