"""One growable array for every append-only column (index store, dedup state).

>>> g = Growable(np.int64)
>>> g.extend(np.arange(3)); g.extend(np.arange(2)); g.view().tolist()
[0, 1, 2, 0, 1]
>>> ro = np.arange(4); ro.flags.writeable = False
>>> w = Growable.wrap(ro); w.extend([9]); w.view().tolist(), ro.tolist()
([0, 1, 2, 3, 9], [0, 1, 2, 3])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._heap import zeros


class Growable:
    """A 1-D (or 2-D, rows) array with amortised appends; ``view()`` is the filled part.

    A large buffer has a map of its own (:func:`~neardup._heap.zeros`): the old one goes back
    to the system when a growth frees it. It may wrap an existing (memory-mapped, read-only)
    array: the first write copies it out, so a loaded index or state is never written through
    its map.
    """

    def __init__(self, dtype: Any, width: int | None = None, capacity: int = 0) -> None:
        shape = (capacity,) if width is None else (capacity, width)
        self.data: npt.NDArray[Any] = zeros(shape, dtype)
        self.size = 0

    @classmethod
    def wrap(cls, arr: npt.NDArray[Any]) -> Growable:
        """A growable over ``arr`` (not copied until written)."""
        g = cls(arr.dtype, None if arr.ndim == 1 else arr.shape[1])
        g.data, g.size = arr, int(arr.shape[0])
        return g

    def reserve(self, need: int) -> npt.NDArray[Any]:
        """Make room for ``need`` rows and make the buffer writeable; returns the buffer."""
        data = self.data
        if data.shape[0] < need or not data.flags.writeable:
            cap = max(need, int(data.shape[0] * 1.5), 1024)
            grown = zeros((cap, *data.shape[1:]), data.dtype)  # its own map when large
            grown[: self.size] = data[: self.size]
            self.data = grown
        return self.data

    def extend(self, values: npt.ArrayLike) -> None:
        arr = np.asarray(values, dtype=self.data.dtype)
        need = self.size + len(arr)
        self.reserve(need)[self.size : need] = arr
        self.size = need

    def view(self) -> npt.NDArray[Any]:
        return self.data[: self.size]

    def writable(self) -> npt.NDArray[Any]:
        """The filled part, copied out of a read-only buffer first if needed."""
        return self.reserve(self.size)[: self.size]

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)
