"""The default candidate design finds planted copies at 2·10^5 kept documents as at 10^3.

Fingerprints and sketches are synthesised (random for unrelated documents; a copy keeps each
sketch value of its original with probability 0.7, i.e. Jaccard ~0.7, the 5 %-edit regime), so
the test exercises the candidate index at scale in a few seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

from neardup.dedup.candidates import BandCandidates, HammingCandidates
from neardup.dedup.pipeline import Deduplicator
from neardup.verify import MinHashVerifier


def _random_docs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    fps = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
    sk = rng.integers(0, 256, size=(n, MinHashVerifier().width), dtype=np.uint8)
    sk[:, -1] = 0
    return fps, sk


def _copies(
    rng: np.random.Generator, fps: np.ndarray, sk: np.ndarray, orig: np.ndarray, keep: float
) -> tuple[np.ndarray, np.ndarray]:
    noise_fps, noise_sk = _random_docs(rng, orig.size)
    same = rng.random(noise_sk.shape) < keep
    csk = np.where(same, sk[orig], noise_sk)
    csk[:, -1] = 0
    return fps[orig] ^ noise_fps & np.uint64(0xFF), csk


def _found(index: BandCandidates, cfps: np.ndarray, csk: np.ndarray, orig: np.ndarray) -> tuple:
    rows, pos, _ = index.query(cfps, csk)
    hit = set(zip(rows.tolist(), pos.tolist(), strict=True))
    found = np.array([(r, int(o)) in hit for r, o in enumerate(orig)])
    return found, rows.size - int(found.sum())


def test_default_is_band_design_and_exact_radius_on_request() -> None:
    assert isinstance(Deduplicator().state.candidates, BandCandidates)
    assert isinstance(Deduplicator(k=14).state.candidates, HammingCandidates)
    assert isinstance(Deduplicator(candidate_k=18, k=14).state.candidates, HammingCandidates)
    assert isinstance(Deduplicator(verifier=None).state.candidates, HammingCandidates)
    small = MinHashVerifier(num_hashes=64)
    assert isinstance(Deduplicator(verifier=small).state.candidates, HammingCandidates)


@pytest.mark.parametrize("seed", [0, 1])
def test_planted_copies_found_at_scale_as_at_small_n(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_big = 200_000
    fps, sk = _random_docs(rng, n_big)
    orig = rng.integers(0, 1000, size=400)  # originals among the first 10^3 documents
    cfps, csk = _copies(rng, fps, sk, orig, keep=0.7)
    small, big = BandCandidates(), BandCandidates()
    small.add(np.arange(1000), fps[:1000], sk[:1000], None)
    for lo in range(0, n_big, 16384):  # chunked like the pipeline, so several LSM runs exist
        hi = min(n_big, lo + 16384)
        big.add(np.arange(lo, hi), fps[lo:hi], sk[lo:hi], None)
    found_small, _ = _found(small, cfps, csk, orig)
    found_big, random_big = _found(big, cfps, csk, orig)
    # keys are a pure function of each document: the same copies are found at every size
    assert (found_big == found_small).all()
    # model: 1 - (1 - 0.7^4)^32 ~ 0.9998 for the pair; copies here have J ~ 0.70 +- 0.04
    assert found_big.mean() >= 0.98
    # random candidates: ~7.5e-9 per pair -> ~0.0015 per query at 2·10^5
    assert random_big <= 5
    v = MinHashVerifier()
    sims = v.similarity(csk, sk[orig])
    assert (sims[found_big] >= 0.55).mean() > 0.95  # the verifier sees the same pairs


def test_expire_remove_and_arrays_roundtrip() -> None:
    rng = np.random.default_rng(3)
    fps, sk = _random_docs(rng, 3000)
    bc = BandCandidates()
    bc.add(np.arange(3000) * 2, fps, sk, np.arange(3000))
    assert len(bc) == 3000
    assert bc.expire(1000) == 1000
    assert bc.remove(np.array([2000 * 2, 7])) == 1
    rows, pos, dist = bc.query(fps[[500, 1500, 2000, 2500]], sk[[500, 1500, 2000, 2500]])
    assert list(zip(rows.tolist(), pos.tolist(), dist.tolist(), strict=False)) == [
        (1, 3000, 0),
        (3, 5000, 0),
    ]
    again = BandCandidates()
    again.load_arrays(bc.to_arrays())
    assert len(again) == len(bc)
    r2 = again.query(fps[[500, 1500, 2000, 2500]], sk[[500, 1500, 2000, 2500]])
    assert [a.tolist() for a in r2] == [rows.tolist(), pos.tolist(), dist.tolist()]
    assert again.get_config() == bc.get_config()
    with pytest.raises(ValueError, match="need verifier sketches"):
        bc.query(fps[:1], None)
