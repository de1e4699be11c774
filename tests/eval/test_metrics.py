from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.eval.groundtruth import GroundTruth
from neardup.eval.metrics import adjusted_rand_index, score


def gt_of(n: int, pairs: dict[tuple[int, int], float]) -> GroundTruth:
    keys = sorted(pairs)
    return GroundTruth(
        n,
        np.array([a for a, _ in keys], dtype=np.int64),
        np.array([b for _, b in keys], dtype=np.int64),
        np.array([pairs[k] for k in keys], dtype=np.float64),
    )


def test_perfect_clustering() -> None:
    gt = gt_of(5, {(0, 1): 0.9, (2, 3): 1.0})
    s = score(np.array([7, 7, 3, 3, 9]), gt)
    assert (s.precision, s.recall, s.f1, s.ari) == (1.0, 1.0, 1.0, 1.0)
    assert s.predicted_pairs == 2 and s.must_pairs == 2


def test_chaining_is_charged_to_precision() -> None:
    # 0~1 (must), 1~2 (may); 0 and 2 unrelated: cluster {0,1,2} has 3 pairs, 2 correct
    gt = gt_of(4, {(0, 1): 0.85, (1, 2): 0.55})
    s = score(np.array([0, 0, 0, 1]), gt)
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == 1.0
    assert s.f1 == pytest.approx(2 * (2 / 3) / (2 / 3 + 1))


def test_missed_pair_lowers_recall_only() -> None:
    gt = gt_of(4, {(0, 1): 0.9, (2, 3): 0.95})
    s = score(np.array([0, 0, 2, 3]), gt)
    assert (s.precision, s.recall) == (1.0, 0.5)


def test_no_predicted_pairs_is_precision_one() -> None:
    s = score(np.arange(3), gt_of(3, {(0, 1): 0.9}))
    assert (s.precision, s.recall, s.f1) == (1.0, 0.0, 0.0)


def test_may_pair_counts_as_correct_but_not_required() -> None:
    gt = gt_of(3, {(0, 1): 0.6})
    assert score(np.array([0, 0, 2]), gt).precision == 1.0
    assert score(np.array([0, 1, 2]), gt).recall == 1.0  # no must pairs


def test_subset_scores_only_pairs_inside() -> None:
    gt = gt_of(4, {(0, 1): 0.9, (2, 3): 0.9})
    s = score(np.array([0, 0, 1, 2]), gt, subset=np.array([False, False, True, True]))
    assert (s.precision, s.recall, s.must_pairs) == (1.0, 0.0, 1)


def test_bad_labels_shape() -> None:
    with pytest.raises(ValueError, match="shape"):
        score(np.zeros(2), gt_of(3, {}))


def brute_ari(a: list[int], b: list[int]) -> float:
    n = len(a)
    pairs = list(itertools.combinations(range(n), 2))
    both = sum(1 for i, j in pairs if a[i] == a[j] and b[i] == b[j])
    in_a = sum(1 for i, j in pairs if a[i] == a[j])
    in_b = sum(1 for i, j in pairs if b[i] == b[j])
    total = len(pairs)
    expected = in_a * in_b / total
    top = (in_a + in_b) / 2
    return 1.0 if top == expected else (both - expected) / (top - expected)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=25))
def test_ari_equals_pair_counting(labels: list[tuple[int, int]]) -> None:
    a = [x for x, _ in labels]
    b = [y for _, y in labels]
    assert adjusted_rand_index(a, b) == pytest.approx(brute_ari(a, b))


def test_ari_independent_partition_near_zero() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 10, 5000), rng.integers(0, 10, 5000)
    assert abs(adjusted_rand_index(a, b)) < 0.01
