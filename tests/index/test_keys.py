"""Band keys and pairs sharing keys against brute force (the KeyTable: test_keytable.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.hashing import mix64
from neardup.index.lsh import BandDesign, band_keys, mix64_np, pairs_sharing_keys


def _brute_pairs(keys: np.ndarray) -> set[tuple[int, int]]:
    n = keys.shape[0]
    return {
        (a, b)
        for a in range(n)
        for b in range(a + 1, n)
        if set(keys[a].tolist()) & set(keys[b].tolist())
    }


def test_mix64_matches_numba_kernel() -> None:
    xs = np.array([0, 1, 2**63, 2**64 - 1, 123456789], dtype=np.uint64)
    assert [int(v) for v in mix64_np(xs)] == [int(mix64(x)) for x in xs]


def test_band_keys_equal_exactly_when_band_values_equal() -> None:
    rng = np.random.default_rng(1)
    sk = rng.integers(0, 4, size=(300, 17), dtype=np.uint8)  # few values: many equal bands
    design = BandDesign(bands=4, rows=4)
    keys = band_keys(sk, design)
    for a in range(0, 300, 7):
        for b in range(300):
            for t in range(4):
                same = bool((sk[a, 4 * t : 4 * t + 4] == sk[b, 4 * t : 4 * t + 4]).all())
                assert (keys[a, t] == keys[b, t]) == same
    assert len(set(keys[:, 0].tolist()) & set(keys[:, 1].tolist())) == 0  # band index in key


def test_band_keys_refuse_short_sketch() -> None:
    with pytest.raises(ValueError, match="need 128 sketch values"):
        band_keys(np.zeros((2, 65), np.uint8), BandDesign(bands=32, rows=4))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 4),
    st.integers(0, 2**31),
)
def test_pairs_sharing_keys_brute_force(n: int, m: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 3 * n, size=(n, m)).astype(np.uint64)
    docs = np.repeat(np.arange(n), m)
    a, b = pairs_sharing_keys(keys.ravel(), docs)
    got = list(zip(a.tolist(), b.tolist(), strict=True))
    assert got == sorted(_brute_pairs(keys))


def test_recall_model() -> None:
    d = BandDesign(bands=32, rows=4)
    assert d.recall(0.8) > 0.99999
    assert 0.98 < d.recall(0.6) < 0.995
    assert d.random_pair_rate() == pytest.approx(32 * 256.0**-4, rel=1e-6)
