"""Exact Hamming-distance search over 64- or 128-bit fingerprints: index, self-join, designs.

Depends only on numpy and the C kernels of ``neardup._native`` (the numba fallback without
them, :mod:`neardup._backend`); nothing above the index (dedup, surfaces) is imported here.

>>> import numpy as np
>>> from neardup.index import HammingIndex, all_pairs
>>> index = HammingIndex(k=3)
>>> index.add([1, 2], np.array([0, 0b111], dtype=np.uint64))
>>> index.query(0b1)
[(1, 1), (2, 2)]
"""

from __future__ import annotations

from neardup.index.design import TableDesign, auto_design
from neardup.index.hamming_index import HammingIndex
from neardup.index.join import all_pairs, duplicate_groups
from neardup.index.results import Matches, Pairs
from neardup.index.storage import IndexFormatError

__all__ = [
    "HammingIndex",
    "IndexFormatError",
    "Matches",
    "Pairs",
    "TableDesign",
    "all_pairs",
    "auto_design",
    "duplicate_groups",
]
