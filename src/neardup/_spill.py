"""A :class:`~neardup._growable.Growable` whose rows move to a memory-mapped spill file once
they pass a size: the bulk of a long run (the verifier sketches of kept documents, read only
for verified candidates) then lives in the page cache, not in anonymous memory (issue 39).

The spill file is created unlinked (``tempfile.TemporaryFile`` in ``$NEARDUP_SPILL_DIR`` or the
system's temporary directory): nothing is left behind at exit, after an exception or a
``kill -9``. Rows are appended with ``pwrite`` (growing copies nothing, unlike an anonymous array
that holds old and new buffers at once while it grows) and the few rows a look-up needs are read
with ``pread`` (:meth:`SpillGrowable.take`): the rows stay in the page cache, which the kernel
may drop, and out of the process's resident memory. What is read back is what was written, so
decisions do not change.

Fixed-size arrays go to such a file too (:func:`spill_array`: the key table's slots, written
once through a shared map, then read-only); :func:`read_rows` reads a few of their rows with
``pread`` (a read through the map makes a whole large folio resident: ~2 µs and up to 2 MB of
RSS each), and :func:`drop_pages` takes a mapped array's pages out of the process's resident
memory after a pass over it (they stay in the page cache: a later read is a minor fault).

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
import weakref
from typing import IO, Any, cast

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
        self._mapped: npt.NDArray[Any] | None = None  # in a forked child: the rows, mapped
        _LIVE.add(self)

    @classmethod
    def wrap(cls, arr: npt.NDArray[Any]) -> SpillGrowable:
        """The rows ``arr`` (a restored state's): past ``spill_bytes`` they go to the spill
        file at once; wrapped as they are, they would stay in memory until the next append
        (a service restarted on its store held every sketch in anonymous memory)."""
        g = cls(arr.dtype, None if arr.ndim == 1 else arr.shape[1])
        if g._bytes(int(arr.shape[0])) > g.spill_bytes:
            g.extend(arr)
        else:
            g.data, g.size = arr, int(arr.shape[0])
        return g

    @property
    def spilled(self) -> bool:
        """Whether the rows live in the spill file."""
        return self._file is not None

    def extend(self, values: npt.ArrayLike) -> None:
        arr = np.ascontiguousarray(values, dtype=self.data.dtype)
        need = self.size + len(arr)
        if self._file is None:
            if self._bytes(need) <= self.spill_bytes:
                super().extend(arr)
                return
            self._file = tempfile.TemporaryFile(prefix="neardup-spill-", dir=_spill_dir())  # noqa: SIM115
            _pwrite_all(self._file.fileno(), self.data[: self.size], 0)
            self.data = self.data[:0].copy()  # dtype and width only
        _pwrite_all(self._file.fileno(), arr, self._bytes(self.size))
        self.size = need

    def reserve(self, need: int) -> npt.NDArray[Any]:
        if self._file is not None:
            raise TypeError("rows in a spill file are append-only")
        return super().reserve(need)

    def view(self) -> npt.NDArray[Any]:
        """The rows; once spilled, a read-only map of the file, unmapped when it is freed."""
        if self._file is None or not self.size:
            return super().view()
        if self._mapped is not None:
            return self._mapped[: self.size]
        m = mmap.mmap(self._file.fileno(), self._bytes(self.size), prot=mmap.PROT_READ)
        return np.frombuffer(m, self.data.dtype).reshape(self.size, *self.data.shape[1:])

    def take(self, rows: npt.ArrayLike) -> npt.NDArray[Any]:
        """``view()[rows]``; a few rows of a spill file are read with ``pread`` (a map would
        make whole 2 MB folios of the page cache resident in this process)."""
        rows = np.asarray(rows, np.int64)
        if self._file is None or self._mapped is not None or rows.size * 64 > self.size:
            picked: npt.NDArray[Any] = self.view()[rows]
            return picked
        out = np.empty((rows.size, *self.data.shape[1:]), self.data.dtype)
        if not rows.size:  # (a memoryview of no bytes cannot be cast)
            return out
        width = self._bytes(1)
        buf, fd = out.data.cast("B"), self._file.fileno()
        for i, r in enumerate(rows.tolist()):
            if not 0 <= r < self.size:
                raise IndexError(f"row {r} of {self.size}")
            os.preadv(fd, [buf[i * width : (i + 1) * width]], r * width)
        return out

    def _bytes(self, rows: int) -> int:
        return rows * int(np.prod(self.data.shape[1:], dtype=np.int64)) * self.data.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return 0 if self._file is not None else int(self.data.nbytes)

    @property
    def file_bytes(self) -> int:
        return self._bytes(self.size) if self._file is not None else 0

    def __reduce__(self) -> tuple[Any, ...]:
        """A copy (``copy.deepcopy``, pickle) gets the rows (a spill file of its own past
        ``SPILL_BYTES``, see :meth:`wrap`)."""
        return (SpillGrowable.wrap, (np.array(self.view()),))

    def map_rows(self) -> None:
        """Read the rows through a map from now on (it outlives the file's descriptor)."""
        if self._file is not None and self.size:
            self._mapped = self.view()


def _pwrite_all(fd: int, arr: npt.NDArray[Any], offset: int) -> None:
    """Write the rows ``arr`` at ``offset`` from their own buffer (``tobytes`` would hold a
    second copy of them while they are written; one ``pwrite`` may write less than asked)."""
    if not arr.size:
        return
    view = np.ascontiguousarray(arr).data.cast("B")
    while view.nbytes:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def spill_array(size: int, dtype: Any) -> npt.NDArray[Any]:
    """A writable ``(size,)`` array over a shared map of a new unlinked spill file (module
    docs). Its blocks are allocated first, so a full disk raises ``OSError`` here, not a
    ``SIGBUS`` when a page is written; the file is freed when the array is.

    >>> a = spill_array(3, np.uint32); a[:] = 7; drop_pages(a), a.tolist()
    (True, [7, 7, 7])
    """
    nbytes = max(1, size * np.dtype(dtype).itemsize)
    f = tempfile.TemporaryFile(prefix="neardup-slots-", dir=_spill_dir())  # noqa: SIM115
    try:
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(f.fileno(), 0, nbytes)
        else:
            os.ftruncate(f.fileno(), nbytes)
        m = mmap.mmap(f.fileno(), nbytes)
    except BaseException:
        f.close()
        raise
    _register(m, f, 0)
    return np.frombuffer(m, dtype, size)


def open_rows(arr: npt.NDArray[Any]) -> None:
    """Let :func:`read_rows` read ``arr``, a whole ``np.load(mmap_mode="r")`` array, with
    ``pread``: its file is opened now (a later save may delete it; it then stays readable
    while open); nothing if it cannot be (its rows are read through the map)."""
    m, base = file_map(arr), cast(Any, arr.base)  # whole: the map's own array, not a view
    if m is None or not isinstance(arr, np.memmap) or base is not m or id(m) in _FILES:
        return
    try:
        f = open(arr.filename or "", "rb")  # noqa: SIM115
    except OSError:
        return
    _register(m, f, int(arr.offset))


def _register(m: mmap.mmap, f: IO[bytes], offset: int) -> None:
    """``m`` maps ``f`` from ``offset`` (read_rows); ``f`` is closed with ``m``."""
    _FILES[id(m)] = (f, offset)
    weakref.finalize(m, _FILES.pop, id(m), None)


def read_rows(arr: npt.NDArray[Any], rows: npt.NDArray[np.int64], width: int) -> Any:
    """Rows ``rows`` of ``width`` bytes of a whole :func:`spill_array` or :func:`open_rows`
    array read with ``pread`` (``(len(rows), width)`` uint8; module docs), or None: not one,
    or so many rows that a pass through its map costs less."""
    m, base = file_map(arr), cast(Any, arr.base)
    whole = base is m or (isinstance(base, memoryview) and base.obj is m)
    entry = _FILES.get(id(m)) if m is not None and whole else None
    if entry is None or rows.size * 64 > arr.nbytes // width:
        return None
    out = np.empty((rows.size, width), np.uint8)
    if rows.size:
        buf, fd, at = out.data.cast("B"), entry[0].fileno(), entry[1]
        for i, r in enumerate(rows.tolist()):
            os.preadv(fd, [buf[i * width : (i + 1) * width]], at + r * width)
    return out


def file_map(arr: npt.NDArray[Any]) -> mmap.mmap | None:
    """The file map under ``arr`` (a :func:`spill_array`, a ``np.load(mmap_mode="r")`` array
    or a view of one), else None."""
    base: Any = arr
    while isinstance(base, (np.ndarray, memoryview)):
        base = base.obj if isinstance(base, memoryview) else base.base
    return base if isinstance(base, mmap.mmap) and not base.closed else None


def drop_pages(arr: npt.NDArray[Any]) -> bool:
    """Unmap the resident pages of the file map under ``arr`` (:func:`file_map`); whether
    there is one. The pages stay in the page cache (written ones are still written back): a
    later read maps them again (a minor fault)."""
    m = file_map(arr)
    if m is None:
        return False
    if hasattr(mmap, "MADV_DONTNEED"):
        m.madvise(mmap.MADV_DONTNEED)
    return True


def _spill_dir() -> str | None:
    return os.environ.get(_SPILL_DIR) or None


_LIVE: weakref.WeakSet[SpillGrowable] = weakref.WeakSet()
_FILES: dict[int, tuple[IO[bytes], int]] = {}  # id of a map -> its open file, where it maps


def _map_in_child() -> None:
    """A forked child (the service's snapshot writer) may close every inherited descriptor
    before it reads the rows: map them while the descriptors are open."""
    for g in list(_LIVE):
        g.map_rows()
    _FILES.clear()  # the child's copies: closed now, never a number the child reuses later


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_map_in_child)
