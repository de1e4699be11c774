"""The similarity that decided a document, the same in every engine.

It is a pure function of the decision and the two documents (this one and the kept document it
duplicates), so an engine computes it after deciding, from the sketches it already holds:

- ``duplicate``: the verifier's similarity of the two sketches (what was compared with the
  threshold), or ``1 - distance / 64`` without a verifier (the Hamming distance decided);
- ``exact_duplicate``: 1.0 (the same text after normalisation);
- ``unique`` and ``empty``: NaN (no comparison decided them).

A ``duplicate`` through the exact path (a copy of a duplicate ``p`` of ``r``) has the text, so
the sketch, of ``p``: its similarity to ``r`` is ``p``'s.

>>> import numpy as np
>>> decided_similarity(None, np.array([0, 1, 2], np.int8), np.array([-1, 16, 0]), None, None)
array([ nan, 0.75, 1.  ])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.dedup.state import DUPLICATE, EXACT_DUPLICATE


def decided_similarity(
    verifier: Any,
    status: npt.NDArray[np.int8],
    distance: npt.ArrayLike,
    sketches: npt.NDArray[Any] | None,
    rep_sketches: npt.NDArray[Any] | None,
    bits: int = 64,
) -> npt.NDArray[np.float64]:
    """Similarity per document; ``sketches`` / ``rep_sketches`` are the rows of the documents
    and of their kept documents (read only where the status is ``duplicate``)."""
    status = np.asarray(status)
    out = np.full(status.shape, np.nan)
    out[status == EXACT_DUPLICATE] = 1.0
    dup = np.flatnonzero(status == DUPLICATE)
    if not dup.size:
        return out
    if verifier is None or sketches is None or rep_sketches is None:
        out[dup] = 1.0 - np.asarray(distance, np.float64)[dup] / bits
    else:
        out[dup] = np.asarray(verifier.similarity(sketches[dup], rep_sketches[dup]), np.float64)
    return out
