"""The rows of a verified-pairs file (``dedup --pairs``), the same from every engine.

One row per verified candidate pair (:func:`~neardup.dedup.core.verified_pairs`): ``id_a``
(the earlier document's id), ``id_b``, ``similarity`` (the estimated Jaccard similarity, 4
decimals, as every surface writes it) and ``distance`` (Hamming).

>>> import numpy as np
>>> pair_records(np.array([0]), np.array([2]), np.array([5]), np.array([0.71234]), "abc")
[{'id_a': 'a', 'id_b': 'c', 'similarity': 0.7123, 'distance': 5}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

PAIR_FIELDS = ("id_a", "id_b", "similarity", "distance")


def pair_records(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    distance: npt.ArrayLike,
    similarity: npt.ArrayLike,
    ids: Sequence[Any] | Mapping[int, Any],
) -> list[dict[str, Any]]:
    """Rows for pairs of positions ``(a, b)``; ``ids[p]``: the id of position ``p``."""
    cols = (np.asarray(x).tolist() for x in (a, b, distance, similarity))
    return [
        {"id_a": ids[x], "id_b": ids[y], "similarity": round(float(s), 4), "distance": int(d)}
        for x, y, d, s in zip(*cols, strict=True)
    ]
