"""Pair and cluster metrics of a predicted clustering against shingle-Jaccard ground truth.

Predicted pairs are transitive: every pair of documents in the same predicted cluster counts,
so chaining (A~B, B~C, A and C unrelated) is charged to precision. A predicted pair is correct
when its Jaccard is >= 0.5 ("may"); recall is the fraction of Jaccard >= 0.8 ("must") pairs that
end in the same cluster. Counting never materialises pairs inside clusters.

>>> import numpy as np
>>> from neardup.eval.groundtruth import GroundTruth
>>> gt = GroundTruth(4, np.array([0, 1]), np.array([1, 2]), np.array([0.9, 0.6]))
>>> s = score(np.array([0, 0, 0, 3]), gt)   # one cluster {0,1,2}: 3 predicted pairs, 2 correct
>>> round(s.precision, 3), s.recall, s.predicted_pairs
(0.667, 1.0, 3)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt

from neardup.dedup.clusters import connected_components
from neardup.eval.groundtruth import GroundTruth

__all__ = ["Scores", "adjusted_rand_index", "score"]


@dataclass(frozen=True)
class Scores:
    """Pair precision/recall/F1 and cluster ARI of one predicted clustering."""

    precision: float
    recall: float
    f1: float
    ari: float
    predicted_pairs: int
    correct_pairs: int
    must_pairs: int
    found_must: int
    largest_cluster: int

    def as_dict(self) -> dict[str, float | int]:
        """Plain dict, for tables and JSON."""
        return asdict(self)


def _comb2(x: npt.NDArray[np.int64]) -> int:
    return int((x * (x - 1) // 2).sum())


def adjusted_rand_index(pred: npt.ArrayLike, truth: npt.ArrayLike) -> float:
    """Adjusted Rand index of two labelings (Hubert & Arabie), 1.0 for identical partitions.

    >>> adjusted_rand_index([0, 0, 1, 2], [5, 5, 6, 7])
    1.0
    """
    p = np.unique(np.asarray(pred), return_inverse=True)[1].astype(np.int64)
    t = np.unique(np.asarray(truth), return_inverse=True)[1].astype(np.int64)
    if len(p) != len(t):
        raise ValueError(f"labelings differ in length: {len(p)} vs {len(t)}")
    n = len(p)
    joint = np.unique(p * (int(t.max()) + 1 if n else 1) + t, return_counts=True)[1]
    sum_ij = _comb2(joint)
    sum_a = _comb2(np.bincount(p))
    sum_b = _comb2(np.bincount(t))
    total = n * (n - 1) // 2
    if total == 0:
        return 1.0
    expected = sum_a * sum_b / total
    maximum = (sum_a + sum_b) / 2
    if maximum == expected:
        return 1.0
    return float((sum_ij - expected) / (maximum - expected))


def score(labels: npt.ArrayLike, gt: GroundTruth, subset: npt.ArrayLike | None = None) -> Scores:
    """Score predicted cluster labels (one per document) against the ground truth.

    ``subset`` (boolean mask) scores only pairs with both documents inside it (e.g. a length
    bucket): documents outside become singletons and ground-truth pairs touching them are dropped.
    """
    lab = np.asarray(labels)
    if lab.shape != (gt.n,):
        raise ValueError(f"labels must have shape ({gt.n},), got {lab.shape}")
    if subset is not None:
        mask = np.asarray(subset, dtype=bool)
        if mask.shape != (gt.n,):
            raise ValueError(f"subset must be a boolean mask of shape ({gt.n},), got {mask.shape}")
        lab = np.where(mask, lab, -1 - np.arange(gt.n))
        gt = gt.restrict(mask)
    sizes = np.unique(lab, return_counts=True)[1].astype(np.int64)
    predicted = _comb2(sizes)
    correct = int((lab[gt.may_i] == lab[gt.may_j]).sum())
    must = gt.must_pairs()
    found = int((lab[must[:, 0]] == lab[must[:, 1]]).sum()) if len(must) else 0
    precision = correct / predicted if predicted else 1.0
    recall = found / len(must) if len(must) else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    truth = connected_components(gt.n, must[:, 0], must[:, 1])
    return Scores(
        precision=precision,
        recall=recall,
        f1=f1,
        ari=adjusted_rand_index(lab, truth),
        predicted_pairs=predicted,
        correct_pairs=correct,
        must_pairs=len(must),
        found_must=found,
        largest_cluster=int(sizes.max()) if len(sizes) else 0,
    )
