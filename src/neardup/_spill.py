"""A :class:`~neardup._growable.Growable` whose rows move to a memory-mapped spill file once
they pass a size: the bulk of a long run (the verifier sketches of kept documents, read only
for verified candidates) then lives in the page cache, not in anonymous memory (issue 39).

The spill file is created unlinked (``tempfile.TemporaryFile`` in ``$NEARDUP_SPILL_DIR`` or the
system's temporary directory): nothing is left behind at exit, after an exception or a
``kill -9``. Rows are appended; growing the file (``ftruncate``) copies nothing, unlike an
anonymous array that holds old and new buffers at once while it grows. What is read back is
what was written, so decisions do not change.

>>> g = SpillGrowable(np.uint8, 4, spill_bytes=8192)
>>> g.extend(np.arange(12, dtype=np.uint8).reshape(3, 4)); g.spilled
False
>>> g.extend(np.full((3000, 4), 7, np.uint8)); g.spilled, g.view()[[0, 3002]].tolist()
(True, [[0, 1, 2, 3], [7, 7, 7, 7]])
"""

from __future__ import annotations

import mmap
import os
import tempfile
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from neardup._growable import Growable

SPILL_BYTES = 64 << 20  # below this the rows stay in memory (small runs make no file)
_SPILL_DIR = "NEARDUP_SPILL_DIR"


class SpillGrowable(Growable):
    """A growable whose buffer becomes a shared map of an unlinked temporary file once it would
    pass ``spill_bytes`` (module docs). ``nbytes`` counts anonymous memory only; ``file_bytes``
    the mapped file."""

    def __init__(
        self,
        dtype: Any,
        width: int | None = None,
        capacity: int = 0,
        spill_bytes: int | None = None,
    ) -> None:
        super().__init__(dtype, width, capacity)
        self.spill_bytes = SPILL_BYTES if spill_bytes is None else spill_bytes
        self._file: IO[bytes] | None = None

    @classmethod
    def wrap(cls, arr: npt.NDArray[Any]) -> SpillGrowable:
        g = cls(arr.dtype, None if arr.ndim == 1 else arr.shape[1])
        g.data, g.size = arr, int(arr.shape[0])
        return g

    @property
    def spilled(self) -> bool:
        """Whether the rows live in the spill file."""
        return self._file is not None

    def reserve(self, need: int) -> npt.NDArray[Any]:
        data = self.data
        if data.shape[0] >= need and data.flags.writeable:
            return data
        row = int(np.prod(data.shape[1:], dtype=np.int64)) * data.dtype.itemsize
        cap = max(need, int(data.shape[0] * 1.5), 1024)
        if self._file is None and cap * row <= self.spill_bytes:
            return super().reserve(need)
        first = self._file is None
        if self._file is None:  # open as long as the rows live: closed with this object
            self._file = tempfile.TemporaryFile(prefix="neardup-spill-", dir=_spill_dir())  # noqa: SIM115
        os.ftruncate(self._file.fileno(), cap * row)  # sparse: no copy, no zero-filling
        m = mmap.mmap(self._file.fileno(), cap * row, flags=mmap.MAP_SHARED)
        grown = np.frombuffer(m, data.dtype).reshape(cap, *data.shape[1:])
        if first:  # later growth maps the same file: its rows are there already
            grown[: self.size] = data[: self.size]
        self.data = grown
        return grown

    @property
    def nbytes(self) -> int:
        return 0 if self._file is not None else int(self.data.nbytes)

    @property
    def file_bytes(self) -> int:
        return int(self.data.nbytes) if self._file is not None else 0


def _spill_dir() -> str | None:
    return os.environ.get(_SPILL_DIR) or None
