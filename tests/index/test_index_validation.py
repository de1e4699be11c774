"""Bad input raises TypeError/ValueError naming the problem."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.index import HammingIndex, TableDesign, all_pairs


@pytest.mark.parametrize(
    ("ids", "fps", "exc", "match"),
    [
        ([1], np.array([1.5]), TypeError, "dtype float64"),
        ([1], [-3], ValueError, "got -3"),
        ([1], [2**64], ValueError, "2\\*\\*64"),
        ([1], np.array([-1], np.int64), ValueError, "view\\(np.uint64\\)"),
        ([1], np.zeros((1, 2), np.uint64), ValueError, "1-D"),
        ([1, 2], [1], ValueError, "same length"),
        ([1.0], [1], TypeError, "ids must be integers"),
        ("ab", [1, 2], TypeError, "ids must be"),
        ([1], "x", TypeError, "fingerprints must be"),
    ],
)
def test_add_rejects(ids: object, fps: object, exc: type[Exception], match: str) -> None:
    index = HammingIndex(k=3)
    with pytest.raises(exc, match=match):
        index.add(ids, fps)
    assert len(index) == 0


def test_k_and_design_checks() -> None:
    with pytest.raises(ValueError, match="k must be in"):
        HammingIndex(k=-1)
    with pytest.raises(TypeError, match="k must be an int"):
        HammingIndex(k=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        HammingIndex(bits=96)
    with pytest.raises(ValueError, match="at least 4 blocks"):
        HammingIndex(k=3, design=3)
    with pytest.raises(ValueError, match=r"design\.k=2"):
        HammingIndex(k=3, design=TableDesign(k=2))
    with pytest.raises(ValueError, match="design must be"):
        HammingIndex(design="fast")
    index = HammingIndex(k=3)
    index.add([1], [1])
    with pytest.raises(ValueError, match="k must be in"):
        index.search([1], k=64)
    with pytest.raises(ValueError, match="k must be in"):
        all_pairs(np.array([1], np.uint64), k=99)
    with pytest.raises(ValueError, match="timestamps"):
        index.add([2], [3], timestamps=[1, 2])
    with pytest.raises(TypeError, match="use search"):
        index.query([1, 2])  # type: ignore[arg-type]


def test_search_far_above_index_k_is_still_exact() -> None:
    rng = np.random.default_rng(2)
    index = HammingIndex(k=1, design=TableDesign(k=1, blocks=2, key_blocks=1))
    fps = rng.integers(0, 2**64, size=500, dtype=np.uint64)
    index.add(np.arange(500), fps)
    m = index.search(fps[:3], k=30)
    want = sorted(
        (q, int(d), i)
        for q in range(3)
        for i, d in enumerate(np.bitwise_count(fps ^ fps[q]).tolist())
        if d <= 30
    )
    assert list(zip(m.query.tolist(), m.distance.tolist(), m.id.tolist(), strict=False)) == want
