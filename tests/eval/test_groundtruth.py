from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.eval.groundtruth import GroundTruth, jaccard_join

sets_strategy = st.lists(
    st.frozensets(st.integers(0, 12), min_size=0, max_size=8), min_size=0, max_size=14
)


def brute(sets: list[frozenset[int]], t: float) -> dict[tuple[int, int], float]:
    out = {}
    for a, b in itertools.combinations(range(len(sets)), 2):
        if sets[a] and sets[b]:
            j = len(sets[a] & sets[b]) / len(sets[a] | sets[b])
            if j >= t:
                out[(a, b)] = j
    return out


@settings(max_examples=150, deadline=None)
@given(sets_strategy, st.sampled_from([0.3, 0.5, 0.6, 0.8, 1.0]))
def test_join_equals_brute_force(sets: list[frozenset[int]], t: float) -> None:
    arrays = [np.array(sorted(s), dtype=np.uint64) for s in sets]
    i, j, sim = jaccard_join(arrays, t, chunk=3)
    got = {(int(a), int(b)): float(s) for a, b, s in zip(i, j, sim, strict=False)}
    want = brute(sets, t)
    assert got.keys() == want.keys()
    for key, val in want.items():
        assert got[key] == pytest.approx(val)
    assert list(zip(i.tolist(), j.tolist(), strict=False)) == sorted(got)


def test_texts_identical_edited_and_unrelated() -> None:
    base = "the central bank raised its key interest rate by half a point on friday"
    edited = base.replace("friday", "thursday")
    gt = GroundTruth.from_texts([base, "completely unrelated words about football", edited, base])
    # 10 shingles each, 9 shared after the one-word edit: J = 9/11
    assert gt.may_pairs().tolist() == [[0, 2], [0, 3], [2, 3]]
    assert gt.may_sim.tolist() == pytest.approx([9 / 11, 1.0, 9 / 11])
    assert gt.must_pairs().tolist() == [[0, 2], [0, 3], [2, 3]]


def test_chinese_uses_char_ngrams_after_nfkc() -> None:
    a = "这个手机质量很好，电池也耐用"
    b = "这个手机质量很好,电池也耐用"  # half-width comma: same after NFKC and punctuation drop
    gt = GroundTruth.from_texts([a, b, "完全不同的一句评论内容"])
    assert gt.may_pairs().tolist() == [[0, 1]]
    assert gt.may_sim.tolist() == [1.0]


def test_empty_texts_never_match() -> None:
    gt = GroundTruth.from_texts(["", "!!", "", "a b c d e f"])
    assert len(gt.may_i) == 0


def test_restrict_keeps_pairs_inside_mask() -> None:
    gt = GroundTruth(4, np.array([0, 1]), np.array([1, 3]), np.array([0.9, 0.6]))
    sub = gt.restrict(np.array([True, True, False, False]))
    assert sub.may_pairs().tolist() == [[0, 1]]


def test_bad_threshold() -> None:
    with pytest.raises(ValueError, match="threshold"):
        jaccard_join([], 0.0)
