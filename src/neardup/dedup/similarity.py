"""The similarity that decided a document, and the threshold that applied, the same in every
engine.

They are a pure function of the decision and the two documents (this one and the kept document
it duplicates), so an engine computes them after deciding, from the sketches it already holds:

- ``duplicate``: the verifier's similarity of the two sketches (the estimated Jaccard similarity
  for :class:`~neardup.verify.MinHashVerifier`) and the threshold it was compared with (the
  ``short_threshold`` when either text is short: the short-text rule shows there, never as a
  lower similarity), or ``1 - distance / 64`` without a verifier (the Hamming distance decided;
  no threshold);
- ``exact_duplicate``: 1.0 (the same text after normalisation), no threshold;
- ``unique`` and ``empty``: NaN (no comparison decided them).

A ``duplicate`` through the exact path (a copy of a duplicate ``p`` of ``r``) has the text, so
the sketch, of ``p``: its similarity to ``r`` is ``p``'s.

>>> import numpy as np
>>> sim, need = decided_evidence(None, np.array([0, 1, 2], np.int8), np.array([-1, 16, 0]),
...                              None, None)
>>> sim, need
(array([ nan, 0.75, 1.  ]), array([nan, nan, nan]))
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.dedup.core import verify_pairs
from neardup.dedup.decisions import DUPLICATE, EXACT_DUPLICATE


def decided_evidence(
    verifier: Any,
    status: npt.NDArray[np.int8],
    distance: npt.ArrayLike,
    sketches: npt.NDArray[Any] | None,
    rep_sketches: npt.NDArray[Any] | None,
    bits: int = 64,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``(similarity, threshold that applied)`` per document; ``sketches`` / ``rep_sketches``
    are the rows of the documents and of their kept documents (read only where the status is
    ``duplicate``)."""
    status = np.asarray(status)
    out = np.full(status.shape, np.nan)
    need = np.full(status.shape, np.nan)
    out[status == EXACT_DUPLICATE] = 1.0
    dup = np.flatnonzero(status == DUPLICATE)
    if not dup.size:
        return out, need
    if verifier is None or sketches is None or rep_sketches is None:
        out[dup] = 1.0 - np.asarray(distance, np.float64)[dup] / bits
    else:
        threshold = float(verifier.threshold)
        out[dup], need[dup] = verify_pairs(verifier, sketches[dup], rep_sketches[dup], threshold)
    return out, need
