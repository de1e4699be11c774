"""``cluster_similarity`` (issue 20): every two documents of one cluster are at least this
similar, bounded through their kept document; checked against an independent brute-force
greedy over all pairs, across streaming, dry runs, saved states and state columns."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from neardup import Deduplicator, Fingerprinter
from neardup._persist import checksum_json
from neardup.dedup import from_state_columns
from neardup.verify import MinHashVerifier

from tests.synthetic import remix_corpus

Q = 0.5


def _reference(
    texts: list[str], q: float | None, forced: set[int] | None = None
) -> tuple[list[int], list[float]]:
    """Brute force: every earlier kept document is a candidate (sorted by similarity, then
    Hamming distance, then position); a document joins the first whose cluster stays
    ``q``-tight (on similarities rounded to 4 decimals), else the first all the same (added to
    ``forced``), and with no candidate it is kept. A copy of an earlier
    text joins that text's cluster (the exact path: an identical member loosens nothing)."""
    v = MinHashVerifier()
    sk = v.sketch_many(texts)
    fps = [Fingerprinter().fingerprint(t) for t in texts]
    rep, sim_of = list(range(len(texts))), [float("nan")] * len(texts)
    forced = set() if forced is None else forced
    kept: list[int] = []
    floor: dict[int, float] = {}
    first: dict[str, int] = {}
    for g in range(len(texts)):
        if texts[g] in first:
            p = first[texts[g]]
            rep[g], sim_of[g] = rep[p], 1.0 if rep[p] == p else sim_of[p]
            continue
        first[texts[g]] = g
        sims = v.similarity(np.repeat(sk[g : g + 1], len(kept), 0), sk[kept]) if kept else []
        ranked = sorted(
            (-float(s), bin(fps[g] ^ fps[r]).count("1"), r)
            for s, r in zip(sims, kept, strict=True)
            if s >= v.threshold
        )
        if not ranked:
            kept.append(g)
            continue
        ok = [(round(-n, 4), r) for n, _, r in ranked]
        joins = [(s, r) for s, r in ok if q is None or s + floor.get(r, 1.0) >= 1.0 + q]
        s, r = (joins or ok)[0]  # every cluster refused: the closest all the same (issue 38)
        floor[r] = min(floor.get(r, 1.0), s)
        rep[g], sim_of[g] = r, s
        if not joins:
            forced.add(g)
    return rep, sim_of


def _reps(d) -> list[int]:  # type: ignore[no-untyped-def]
    return [i if r < 0 else int(r) for i, r in enumerate(d.duplicate_of.tolist())]


@pytest.mark.parametrize(("seed", "q"), [(1, Q), (2, Q), (3, Q), (1, 0.25), (2, 0.25)])
def test_equals_brute_force_and_bounds_every_pair(seed: int, q: float) -> None:
    texts = remix_corpus(160, seed=seed, pool=16)
    # radius 63: every kept document is a candidate; 0.25 is the default
    d = Deduplicator(k=63, **({} if q == 0.25 else {"cluster_similarity": q})).feed(texts)
    forced: set[int] = set()
    rep, sim = _reference(texts, q, forced)
    assert _reps(d) == rep
    assert forced or q < Q  # every cluster refused some documents here
    star = _reference(texts, None)[0]
    # the rule picks clusters, never whether a document is kept (issue 38)
    assert [r == i for i, r in enumerate(rep)] == [r == i for i, r in enumerate(star)]
    for members in _clusters(rep).values():
        for a in members:
            for b in members:  # a later member that joined by the bound is q-similar to all
                if a < b and rep[a] != a and b not in forced and texts[a] != texts[b]:
                    assert sim[a] + sim[b] - 1 >= q - 1e-9
    loose = [
        (a, b)
        for m in _clusters(star).values()
        for a in m
        for b in m
        if a < b and _jaccard(texts[a], texts[b]) < Q
    ]
    assert loose  # star clusters held pairs below 0.5 on this input


def _clusters(rep: list[int]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for i, r in enumerate(rep):
        out.setdefault(r, []).append(i)
    return out


def _jaccard(a: str, b: str) -> float:
    from neardup.verify import shingle_hashes

    x, y = set(shingle_hashes(a, 4).tolist()), set(shingle_hashes(b, 4).tolist())
    return len(x & y) / len(x | y)


def test_streaming_chunks_dry_runs_and_batch_agree() -> None:
    texts = remix_corpus(300, seed=5, pool=40)
    batch = Deduplicator(cluster_similarity=Q).run(texts)
    dd = Deduplicator(cluster_similarity=Q)
    parts = []
    for a in range(0, 300, 37):
        chunk = texts[a : a + 37]
        dry = dd.feed(chunk, commit=False)
        dd.feed(texts[:5], commit=False)  # a dry run that would lower early floors
        real = dd.feed(chunk)
        assert dry.statuses == real.statuses
        parts.append(real)
    assert [s for p in parts for s in p.statuses] == batch.statuses
    assert np.array_equal(np.concatenate([p.duplicate_of for p in parts]), batch.duplicate_of)


def test_saved_state_and_columns_continue_alike(tmp_path: Path) -> None:
    texts = remix_corpus(400, seed=6, pool=50)
    whole = Deduplicator(cluster_similarity=Q).feed(texts)
    a = Deduplicator(cluster_similarity=Q)
    a.feed(texts[:200])
    assert (a.state.cols.floor.view() < 1).any()  # floors to carry across the boundary
    a.save(tmp_path / "s")
    cols, meta = a.state.columns(), json.loads(json.dumps(a.state.meta()))
    b = Deduplicator.load(tmp_path / "s")
    c = from_state_columns(Deduplicator(cluster_similarity=Q), cols, meta)
    for dd in (b, c):
        rest = dd.feed(texts[200:])
        assert rest.statuses == whole.statuses[200:]
        assert np.array_equal(rest.duplicate_of, whole.duplicate_of[200:])


def test_configuration_and_refusals(tmp_path: Path) -> None:
    assert Deduplicator().state.decide_config.cluster_similarity == 0.25
    assert Deduplicator(threshold=0.2).state.decide_config.cluster_similarity == 0.2  # never above
    assert Deduplicator(verifier=None).state.decide_config.cluster_similarity is None
    old = Deduplicator(cluster_similarity=None)
    assert old.config_id != Deduplicator().config_id
    assert "cluster_similarity" not in old.state.config  # ids of states from before the rule
    old.feed(remix_corpus(50, seed=7))
    old.save(tmp_path / "old")
    assert Deduplicator.load(tmp_path / "old").state.decide_config.cluster_similarity is None
    with pytest.raises(ValueError, match=old.config_id) as info:
        Deduplicator.load(tmp_path / "old", Deduplicator())
    assert "cluster_similarity: none -> 0.25" in str(info.value)  # names what differs
    _refuses_rule_version_1(tmp_path / "v1")
    for bad in (1.5, -0.1, "tight", True):
        with pytest.raises(ValueError, match="cluster_similarity must be"):
            Deduplicator(cluster_similarity=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="verifier=None"):
        Deduplicator(verifier=None, cluster_similarity=0.5)


def _refuses_rule_version_1(path: Path) -> None:
    """A state decided by the rule's version 1 (kept what every cluster refused; its config has
    no ``cluster_rule``, so another config_id) is refused, saying why (issue 38)."""
    dd = Deduplicator()
    dd.feed(remix_corpus(40, seed=8))
    dd.save(path)
    assert dd.state.config["cluster_rule"] == 2
    (manifest,) = path.glob("v-*/manifest.json")
    saved = json.loads(manifest.read_text())
    meta = saved["meta"]
    del meta["config"]["cluster_rule"]
    blob = json.dumps(meta["config"], sort_keys=True, separators=(",", ":"))
    meta["config_id"] = "dd1-" + hashlib.sha256(blob.encode()).hexdigest()[:16]
    saved["checksum"] = checksum_json({k: v for k, v in saved.items() if k != "checksum"})
    manifest.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="cluster_rule: none -> 2") as info:
        Deduplicator.load(path)
    assert "kept a document every cluster refused" in str(info.value)
    assert "Decide its input again into a new state directory" in str(info.value)
    assert meta["config_id"] in str(info.value)
