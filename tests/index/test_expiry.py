"""Window expiry without scans: ExpiryQueue against a brute-force model, and the candidate
indexes (BandCandidates, HammingIndex) after many expiries and compactions against indexes built
fresh from the surviving rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.candidates import BandCandidates
from neardup.index import HammingIndex
from neardup.index.expiry import ExpiryQueue
from neardup.verify import MinHashVerifier

steps = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.lists(st.integers(-50, 50), min_size=0, max_size=20)),
        st.tuples(st.just("pop"), st.integers(-60, 60)),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(steps)
def test_queue_pops_exactly_the_rows_older_than_the_bound(ops: list) -> None:
    q, model, next_row = ExpiryQueue(), {}, 0
    for op, arg in ops:
        if op == "push":
            rows = np.arange(next_row, next_row + len(arg))
            next_row += len(arg)
            q.push(np.array(arg, np.int64), rows)
            model.update(zip(rows.tolist(), arg, strict=True))
        else:
            want = sorted(r for r, t in model.items() if t < arg)
            assert sorted(q.pop_before(arg).tolist()) == want
            for r in want:
                del model[r]
        assert len(q) == len(model)


def _texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(400)]
    base = [" ".join(rng.choice(words, 40)) for _ in range(n // 2)]
    out = []
    for t in base:  # each text twice: once as is, once with one word changed
        w = t.split()
        w[int(rng.integers(len(w)))] = "edited"
        out += [t, " ".join(w)]
    return out


def test_band_candidates_after_expiry_and_compaction_equal_a_fresh_index() -> None:
    texts = _texts(12_000, seed=1)
    v = MinHashVerifier()
    sk = v.sketch_many(texts)
    fps = np.random.default_rng(2).integers(0, 2**63, len(texts)).astype(np.uint64)
    ts = np.arange(len(texts), dtype=np.int64)
    ts[::7] -= 500  # some rows arrive out of time order
    bc = BandCandidates()
    for lo in range(0, len(texts), 250):  # a stream of small batches, expiring as it goes
        rows = np.arange(lo, min(lo + 250, len(texts)))
        bc.add(rows + 10_000, fps[rows], sk[rows], ts[rows])
        bc.expire(int(ts[rows].max()) - 2_000)
    bc.remove(np.array([10_000 + len(texts) - 2]))
    horizon = int(ts.max()) - 2_000
    alive = np.flatnonzero(ts >= horizon)
    alive = alive[alive != len(texts) - 2]
    assert len(bc) == alive.size
    assert bc._pos.size < 2 * alive.size + 4096  # dead slots were reclaimed, not kept forever
    fresh = BandCandidates()
    fresh.add(alive + 10_000, fps[alive], sk[alive], ts[alive])
    probe = np.arange(0, len(texts), 3)
    got, want = bc.query(fps[probe], sk[probe]), fresh.query(fps[probe], sk[probe])
    assert sorted(zip(*(a.tolist() for a in got), strict=True)) == sorted(
        zip(*(a.tolist() for a in want), strict=True)
    )
    assert len(want[0]) >= 1_000  # the probes within the window find their copies


def test_hamming_index_expiry_equals_a_fresh_index() -> None:
    rng = np.random.default_rng(3)
    n = 20_000
    fps = rng.integers(0, 2**63, n).astype(np.uint64)
    fps[1::2] = fps[::2] ^ np.uint64(0b101)  # every other row near its neighbour
    ts = np.arange(n, dtype=np.int64) // 2
    ts[::11] += 300
    idx = HammingIndex(k=3)
    for lo in range(0, n, 100):
        rows = np.arange(lo, lo + 100)
        idx.add(rows, fps[rows], ts[rows])
        idx.expire(int(ts[rows].max()) - 1_000)
    horizon = int(ts.max()) - 1_000
    alive = np.flatnonzero(ts >= horizon)
    assert len(idx) == alive.size
    fresh = HammingIndex(k=3)
    fresh.add(alive, fps[alive], ts[alive])
    probe = fps[::5]
    a, b = idx.search(probe), fresh.search(probe)
    assert sorted(zip(a.query.tolist(), a.id.tolist(), strict=True)) == sorted(
        zip(b.query.tolist(), b.id.tolist(), strict=True)
    )
    assert len(b.id) >= 400  # probes within the window find their neighbours
