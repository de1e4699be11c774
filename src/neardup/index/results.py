"""Result types shared by every index width: :class:`Matches` (search) and :class:`Pairs` (join).

A 64-bit and a 128-bit :class:`~neardup.index.HammingIndex` return the same :class:`Matches`;
:func:`~neardup.index.all_pairs` returns the same :class:`Pairs` for both widths.

>>> p = Pairs(np.array([0]), np.array([2]), np.array([1]))
>>> i, j, d = p                      # a named tuple: unpacks like the plain tuple it replaces
>>> p.i.tolist(), p.distance.tolist()
([0], [1])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Matches:
    """Search results as parallel arrays, sorted by (query, distance, id)."""

    query: I64
    id: I64
    distance: I64

    def __len__(self) -> int:
        return int(self.query.shape[0])

    def for_query(self, row: int) -> list[tuple[int, int]]:
        """``(id, distance)`` pairs of one query row."""
        lo, hi = np.searchsorted(self.query, [row, row + 1])
        return list(zip(self.id[lo:hi].tolist(), self.distance[lo:hi].tolist(), strict=False))

    @classmethod
    def empty(cls) -> Matches:
        """No matches."""
        none = np.zeros(0, np.int64)
        return cls(none, none.copy(), none.copy())


class Pairs(NamedTuple):
    """Join results ``(i, j, distance)``: input positions ``i < j``, sorted by ``(i, j)``.

    A named tuple, so ``i, j, d = all_pairs(...)`` keeps working (``len`` is therefore 3; the
    number of pairs is ``len(pairs.i)``).
    """

    i: I64
    j: I64
    distance: I64
