"""BandCandidates against brute force: query, pairs, add / expire / remove / arrays round trip.

The brute-force reference compares the sketches band by band (``rows`` equal values), without
keys, tables or runs: two documents are candidates when any band is equal.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Deduplicator
from neardup.dedup.candidates import BandCandidates

BANDS, ROWS = 6, 4


def _docs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sketches drawn from a few prototypes with mutations, so that bands often collide."""
    protos = rng.integers(0, 256, size=(3, BANDS * ROWS + 1), dtype=np.uint8)
    sk = protos[rng.integers(0, 3, size=n)].copy()
    flip = rng.random(sk.shape) < 0.15
    sk[flip] = rng.integers(0, 256, size=int(flip.sum()), dtype=np.uint8)
    sk[:, -1] = 0
    fps = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
    return fps, sk


def _share(a: np.ndarray, b: np.ndarray) -> bool:
    bands_a = a[: BANDS * ROWS].reshape(BANDS, ROWS)
    bands_b = b[: BANDS * ROWS].reshape(BANDS, ROWS)
    return bool((bands_a == bands_b).all(axis=1).any())


def _brute_query(
    stored: dict[int, tuple[int, np.ndarray]], fps: np.ndarray, sk: np.ndarray
) -> list[tuple[int, int, int]]:
    return sorted(
        (r, pos, int(np.bitwise_count(fps[r] ^ np.uint64(fp))))
        for r in range(fps.size)
        for pos, (fp, s) in stored.items()
        if _share(sk[r], s)
    )


def _as_triples(got: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[tuple[int, int, int]]:
    return sorted(zip(*(a.tolist() for a in got), strict=True))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    ops=st.lists(
        st.sampled_from(["add", "add", "expire", "remove", "roundtrip", "jump"]), max_size=8
    ),
    by_position=st.booleans(),
)
def test_band_candidates_match_brute_force(seed: int, ops: list[str], by_position: bool) -> None:
    rng = np.random.default_rng(seed)
    every_fp: dict[int, int] = {}  # by_position: the owner's column (read_fingerprints)

    def new_index() -> BandCandidates:
        bc = BandCandidates(bands=BANDS, rows=ROWS)
        if by_position:
            bc.read_fingerprints(lambda p: np.array([every_fp[x] for x in p.tolist()], np.uint64))
        return bc

    bc = new_index()
    stored: dict[int, tuple[int, np.ndarray]] = {}  # position -> (fp, sketch) of live documents
    ts_of: dict[int, int] = {}
    next_pos, clock = 0, 0
    for op in ["add", *ops]:
        if op == "add":
            n = int(rng.integers(0, 40))
            fps, sk = _docs(rng, n)
            pos = next_pos + np.arange(n, dtype=np.int64) * 2  # gaps: positions are not slots
            ts = clock + rng.integers(0, 10, size=n)
            bc.add(pos, fps, sk, ts)
            every_fp.update(zip(pos.tolist(), fps.tolist(), strict=True))
            for p, f, s, t in zip(pos.tolist(), fps.tolist(), sk, ts.tolist(), strict=True):
                stored[p], ts_of[p] = (f, s), t
            next_pos += 2 * n + 1
            clock += 5
        elif op == "expire":
            cut = clock - int(rng.integers(0, 12))
            gone = [p for p in stored if ts_of[p] < cut]
            assert bc.expire(cut) == len(gone)
            for p in gone:
                del stored[p]
        elif op == "remove" and next_pos:
            ask = rng.integers(0, next_pos + 3, size=5)
            live = {p for p in set(ask.tolist()) if p in stored}
            assert bc.remove(ask) == len(live)
            for p in live:
                del stored[p]
        elif op == "jump":  # positions past 2**31: the int32 slot positions widen
            next_pos = max(next_pos, 2**31 - 25)
        elif op == "roundtrip":
            arrays = bc.to_arrays()
            assert sorted(arrays["positions"].tolist()) == sorted(stored)
            bc = new_index()
            bc.load_arrays(arrays)
        assert len(bc) == len(stored)
    fps, sk = _docs(rng, 25)
    assert _as_triples(bc.query(fps, sk)) == _brute_query(stored, fps, sk)
    want_pairs = sorted(
        (i, j, int(np.bitwise_count(fps[i] ^ fps[j])))
        for i in range(25)
        for j in range(i + 1, 25)
        if _share(sk[i], sk[j])
    )
    assert _as_triples(bc.pairs(fps, sk)) == want_pairs


def test_slot_positions_take_4_bytes_below_2_31() -> None:
    rng = np.random.default_rng(1)
    fps, sk = _docs(rng, 10)
    bc = BandCandidates(bands=BANDS, rows=ROWS)
    bc.add(np.arange(10) + 2**31 - 5, fps, sk, None)  # the widening is in the property test
    assert bc._pos.view().dtype == np.int64
    bc = BandCandidates(bands=BANDS, rows=ROWS)
    bc.add(np.arange(10), fps, sk, None)
    assert bc._pos.view().dtype == np.int32
    arrays = bc.to_arrays()
    assert arrays["slot_positions"].dtype == arrays["positions"].dtype == np.int64  # format 4
    again = BandCandidates(bands=BANDS, rows=ROWS)
    again.load_arrays(arrays)
    assert again._pos.view().dtype == np.int32
    assert _as_triples(again.query(fps, sk)) == _as_triples(bc.query(fps, sk))


def test_a_state_index_holds_no_copy_of_the_fingerprints(tmp_path: Path) -> None:
    """The dedup state's band index reads the kept fingerprints from the state's column (8 B
    a kept document less, issue 39): same distances, saved arrays, reload and pickling."""
    texts = [
        f"storm number {i % 7} hits the coast tonight with rain and wind {i}" for i in range(40)
    ]
    dd = Deduplicator()
    first = dd.feed(texts)
    assert dd.state.candidates._fps is None  # type: ignore[attr-defined]
    dd.save(tmp_path / "s")
    live = tmp_path / "s" / (tmp_path / "s" / "CURRENT").read_text().strip()
    pos, fps = (np.load(live / f"cand_slot_{n}.npy") for n in ("positions", "fingerprints"))
    assert (fps == first.fingerprint[pos]).all()  # every slot alive: the real fingerprints
    more = [t + " again" for t in texts[:10]]
    want = Deduplicator.load(tmp_path / "s").feed(more)
    back = pickle.loads(pickle.dumps(dd))  # the Spark engine ships a Deduplicator
    for got in (dd.feed(more), back.feed(more)):
        assert got.statuses == want.statuses
        assert got.distance.tolist() == want.distance.tolist()
        assert got.duplicate_of.tolist() == want.duplicate_of.tolist()
    assert "duplicate" in want.statuses


def test_keys_are_a_pure_function_of_the_sketch() -> None:
    """What the Spark engine and the service rely on: same sketch -> same keys, any index."""
    rng = np.random.default_rng(0)
    fps, sk = _docs(rng, 50)
    a, b = BandCandidates(bands=BANDS, rows=ROWS), BandCandidates(bands=BANDS, rows=ROWS)
    b.add(np.arange(50), fps, sk, None)
    assert (a.keys(fps, sk) == b.keys(fps[::-1], sk[::-1])[::-1]).all()
    assert a.keys(fps, sk).shape == (50, BANDS)
