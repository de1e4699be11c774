"""Persisted dedup state: save/load, state columns, dry runs, forget, expiry (issue 8 part 1).

The reference everywhere is one Deduplicator deciding all documents in one go: a state saved
after day 1 and loaded for day 2 must give exactly its decisions.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Deduplicator
from neardup.dedup import Decisions, from_state_columns
from neardup.dedup.persist import StateFormatError

FIELDS = ("status", "duplicate_of", "distance", "cluster_id", "fingerprint")


def corpus(n: int, seed: int = 0) -> list[str]:
    """Texts with near duplicates (word edits), exact copies (case, spaces) and empties."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(400)]
    bases: list[list[str]] = []
    out: list[str] = []
    for _ in range(n):
        r = rng.random()
        if bases and r < 0.35:
            doc = list(bases[rng.integers(len(bases))])
            for _ in range(int(rng.integers(1, 4))):
                doc[rng.integers(len(doc))] = words[rng.integers(len(words))]
            out.append(" ".join(doc))
        elif out and r < 0.5:
            out.append("  " + out[rng.integers(len(out))].upper())
        elif r < 0.53:
            out.append("")
        else:
            doc = [words[i] for i in rng.integers(0, len(words), 60)]
            bases.append(doc)
            out.append(" ".join(doc))
    return out


def same(a: Decisions, b: Decisions) -> None:
    """Equal decisions; a state loaded with a window starts at its origin (the rows of expired
    documents left it), so ``a`` may hold only the last rows of ``b``."""
    start = len(b) - len(a)
    assert start >= 0 and np.array_equal(a.position, b.position[start:])
    for name in FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name)[start:]), name


def feed_all(dd: Deduplicator, texts: list[str], ts: list[float] | None, size: int) -> None:
    for s in range(0, len(texts), size):
        dd.feed(texts[s : s + size], None if ts is None else ts[s : s + size])


CONFIGS: list[dict[str, Any]] = [
    {},  # default: MinHash bands + verifier
    {"k": 6, "verifier": None},  # exact Hamming radius, no verifier
    {"k": 10},  # Hamming radius with the verifier
]


@pytest.mark.parametrize("options", CONFIGS)
@pytest.mark.parametrize("window", [None, 50.0])
def test_day2_on_saved_state_equals_one_run(
    tmp_path: Path, options: dict[str, Any], window: float | None
) -> None:
    texts = corpus(600, seed=1)
    ts = [float(i) for i in range(len(texts))] if window else None
    one = Deduplicator(window=window, **options).run(texts, ts)
    day1 = Deduplicator(window=window, **options)
    feed_all(day1, texts[:350], None if ts is None else ts[:350], 97)
    day1.save(tmp_path / "state")
    day2 = Deduplicator.load(tmp_path / "state")
    assert day2.config_id == day1.config_id and day2.n_documents == 350
    feed_all(day2, texts[350:], None if ts is None else ts[350:], 64)
    same(day2.state.decisions(), one)
    counts = one.counts()
    assert counts["duplicate"] > 10 and counts["exact_duplicate"] > 10
    assert day2.describe()["late_documents"] == 0


@settings(max_examples=15, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 299), max_size=4, unique=True),
    window=st.sampled_from([None, 30.0]),
    shuffle=st.integers(0, 2**16),
)
def test_random_splits_with_save_load_between(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int], window: float | None, shuffle: int
) -> None:
    texts = corpus(300, seed=shuffle)
    ts = [float(i) for i in range(len(texts))] if window else None
    one = Deduplicator(window=window).run(texts, ts)
    path = tmp_path_factory.mktemp("s") / "state"
    dd = Deduplicator(window=window)
    bounds = [0, *sorted(cuts), len(texts)]
    for a, b in pairwise(bounds):
        dd.feed(texts[a:b], None if ts is None else ts[a:b])
        dd.save(path)
        dd = Deduplicator.load(path, Deduplicator(window=window))
    same(dd.state.decisions(), one)


def test_ids_survive_and_name_duplicates(tmp_path: Path) -> None:
    dd = Deduplicator()
    dd.feed(["storm hits the coast tonight, says the weather office", "cats"], ids=["a", 7])
    dd.save(tmp_path / "s")
    back = Deduplicator.load(tmp_path / "s")
    d = back.add("STORM hits the coast tonight, says the weather office", id={"x": 1})
    assert (d.id, d.duplicate_of, back.state.external_id(1)) == ({"x": 1}, "a", 7)


def test_other_config_is_refused_in_one_line(tmp_path: Path) -> None:
    dd = Deduplicator(k=6, verifier=None)
    dd.feed(corpus(50))
    dd.save(tmp_path / "s")
    other = Deduplicator(k=5, verifier=None)
    with pytest.raises(StateFormatError) as exc:
        Deduplicator.load(tmp_path / "s", other)
    message = str(exc.value)
    assert "\n" not in message and dd.config_id in message and other.config_id in message
    assert "new state directory" in message


def test_config_id_covers_what_decides() -> None:
    base = Deduplicator().config_id
    changed = [
        Deduplicator(window=10.0),
        Deduplicator(k=14),
        Deduplicator(verifier=None),
        Deduplicator(keep="longest"),
    ]
    assert len({base, *(d.config_id for d in changed)}) == 5
    assert Deduplicator(n_jobs=2).config_id == base  # speed settings do not count
    assert Deduplicator().replace().config_id == base


def test_damaged_state_is_named(tmp_path: Path) -> None:
    dd = Deduplicator()
    dd.feed(corpus(80))
    dd.save(tmp_path / "s")
    live = tmp_path / "s" / (tmp_path / "s" / "CURRENT").read_text().strip()
    target = live / "rep.npy"
    raw = bytearray(target.read_bytes())
    raw[-3] ^= 0xFF
    target.write_bytes(bytes(raw))
    with pytest.raises(StateFormatError, match=r"rep\.npy"):
        Deduplicator.load(tmp_path / "s")
    with pytest.raises(StateFormatError, match="not a saved dedup state"):
        Deduplicator.load(tmp_path / "nothing")


def test_dry_run_leaves_state_unchanged() -> None:
    texts = corpus(400, seed=3)
    dd = Deduplicator(window=40.0)
    ts = [float(i) for i in range(len(texts))]
    dd.feed(texts[:250], ts[:250])
    before = dd.state.columns()
    meta = dd.state.meta()
    dry = dd.feed(texts[250:], ts[250:], commit=False)
    after = dd.state.columns()
    assert dd.state.meta() == meta and before.keys() == after.keys()
    for name in before:
        nan = name in ("timestamp", "similarity", "threshold")
        assert np.array_equal(before[name], after[name], equal_nan=nan), name
    real = dd.feed(texts[250:], ts[250:])
    same(dry, real)


def test_state_columns_round_trip_equals_continuing(tmp_path: Path) -> None:
    texts = corpus(500, seed=4)
    ts = [float(i) for i in range(len(texts))]
    config = Deduplicator(window=60.0)
    a = Deduplicator(window=60.0)
    a.feed(texts[:300], ts[:300], ids=[f"d{i}" for i in range(300)])
    a.state.forget([0, 5, 17])
    cols, meta = a.state.columns(), json.loads(json.dumps(a.state.meta()))
    b = from_state_columns(config, cols, meta)
    for name, col in b.state.columns().items():
        assert np.array_equal(col, cols[name], equal_nan=col.dtype.kind == "f")
    a.save(tmp_path / "s")
    c = Deduplicator.load(tmp_path / "s")
    for dd in (a, b, c):
        dd.feed(texts[300:], ts[300:])
    same(b.state.decisions(), a.state.decisions())
    same(c.state.decisions(), a.state.decisions())
    assert (
        b.state.external_id(3) == "d3"
        and b.state.external_id(299) == c.state.external_id(299) == "d299"
    )
    assert 0 < c.state.meta()["origin"] < 300  # expired documents' rows left the saved state


def test_forget_stops_attracting_and_keeps_cluster() -> None:
    text = "the committee approved the budget for the new bridge after a long debate"
    dd = Deduplicator()
    first = dd.feed([text, text.upper(), text + " today"])
    assert first.statuses == ["unique", "exact_duplicate", "duplicate"]
    assert dd.state.forget([0]) == 1
    assert dd.state.decisions().cluster_id.tolist() == [0, 0, 0]  # the cluster keeps its members
    after = dd.feed([text, text + " today"])
    assert after.statuses == ["unique", "duplicate"]  # searched anew, new kept document
    assert after.duplicate_of.tolist() == [-1, 3]
    with pytest.raises(ValueError, match="position 9"):
        dd.state.forget([9])


def test_batch_run_then_save_and_continue(tmp_path: Path) -> None:
    texts = corpus(400, seed=5)
    one = Deduplicator().run(texts)
    dd = Deduplicator()
    dd.run(texts[:250])
    dd.save(tmp_path / "s")
    back = Deduplicator.load(tmp_path / "s")
    back.feed(texts[250:])
    same(back.state.decisions(), one)


def test_expiry_is_exact_in_time_order_and_counts_late_documents() -> None:
    texts = corpus(600, seed=6)
    ts = [float(i // 3) for i in range(len(texts))]  # several documents per second
    one = Deduplicator(window=20.0).run(texts, ts)
    dd = Deduplicator(window=20.0)
    feed_all(dd, texts, ts, 50)
    same(dd.state.decisions(), one)
    assert dd.describe()["late_documents"] == 0
    assert dd.describe()["kept_in_index"] < int((one.status == 0).sum())  # expiry ran
    late = Deduplicator(window=20.0)
    feed_all(late, texts[:300], ts[:300], 50)
    late.feed(texts[:30], [0.0] * 30)  # far behind the newest timestamp
    assert late.describe()["late_documents"] == 30


def test_band_candidates_round_trip_through_arrays() -> None:
    from neardup.dedup.candidates import BandCandidates
    from neardup.verify import MinHashVerifier

    texts = corpus(3000, seed=7)
    sk = MinHashVerifier().sketch_many(texts)
    fps = np.arange(len(texts), dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    bc = BandCandidates()
    for s in range(0, 2000, 300):  # several runs in the key table
        e = min(s + 300, 2000)
        bc.add(np.arange(s, e), fps[s:e], sk[s:e], None)
    bc.remove(np.arange(0, 2000, 7))
    want = bc.query(fps[2000:], sk[2000:])
    assert want[0].size > 100
    kept = bc.to_arrays()["positions"]
    older = {  # the layout without the table: kept positions, fingerprints and their keys
        "positions": kept,
        "fingerprints": fps[kept],
        "keys": bc._table.keys_by_slot(np.flatnonzero(bc._alive.view()), 32),
    }
    for arrays in (bc.to_arrays(), older):
        restored = BandCandidates()
        restored.load_arrays(arrays)
        got = restored.query(fps[2000:], sk[2000:])
        assert all(np.array_equal(a, b) for a, b in zip(want, got, strict=True))
        assert len(restored) == len(bc)
    bad = bc.to_arrays()
    bad["table_run0_offsets"] = bad["table_run0_offsets"][::-1].copy()
    with pytest.raises(ValueError, match="run 0"):
        BandCandidates().load_arrays(bad)


def test_tf_idf_configuration_and_pending_batches(tmp_path: Path) -> None:
    from neardup import Fingerprinter

    texts = corpus(300, seed=8)
    fp = Fingerprinter(weighting="tfidf", idf=Fingerprinter().fit_idf(texts))
    one = Deduplicator(fingerprinter=fp).run(texts)
    dd = Deduplicator(fingerprinter=fp)
    dd.feed(texts[:150])
    dd.save(tmp_path / "s")
    back = Deduplicator.load(tmp_path / "s")  # the IDF table travels with the state
    assert back.fingerprinter.config_id == fp.config_id
    back.feed(texts[150:])
    same(back.state.decisions(), one)
    batch = Deduplicator()
    batch.state.collect(batch.prepare(texts[:10]))
    with pytest.raises(ValueError, match="resolve"):
        batch.save(tmp_path / "t")


def test_expired_documents_leave_the_saved_state(tmp_path: Path) -> None:
    """Ten days, one save/load per day, a one-day window: the state keeps about the last day's
    rows, and the decisions are those of one run over the ten days."""
    texts = corpus(2000, seed=9)
    ts = [i * 432.0 for i in range(len(texts))]  # 200 documents a day
    one = Deduplicator(window=86400.0).run(texts, ts)
    path, dd = tmp_path / "s", Deduplicator(window=86400.0)
    rows, got = [], []
    for day in range(10):
        a, b = day * 200, day * 200 + 200
        dry = dd.feed(texts[a:b], ts[a:b], commit=False)  # on a loaded state, origin > 0
        got.append(dd.feed(texts[a:b], ts[a:b]))
        same(dry, got[-1])
        dd.save(path)
        dd = Deduplicator.load(path)
        meta = dd.state.meta()
        rows.append(meta["documents"] - meta["origin"])
        cols = dd.state.columns()
        back = from_state_columns(Deduplicator(window=86400.0), cols, meta)
        assert back.state.meta()["origin"] == meta["origin"]
    assert max(rows) <= 420 and rows[-1] < 2000  # about one window of rows, not all
    for name in FIELDS:
        whole = np.concatenate([getattr(d, name) for d in got])
        assert np.array_equal(whole, getattr(one, name)), name
    assert one.counts()["duplicate"] > 50
    dd.state.forget([0, 1999])  # an expired position is accepted (it attracts nothing already)


def test_ids_through_columns_keep_their_values() -> None:
    ids: list[Any] = ["caf\u00e9", "\ud800", {"k": [1, 2]}, 7, None]
    dd = Deduplicator()
    dd.feed(corpus(5, seed=10), ids=ids)
    cols, meta = dd.state.columns(), dd.state.meta()
    back = from_state_columns(Deduplicator(), cols, meta)
    assert [back.state.external_id(i) for i in range(5)] == ids
    cols["id"][1] = "{not json"
    with pytest.raises(ValueError):
        from_state_columns(Deduplicator(), cols, meta)
