"""The C heap and the large arrays that should stay out of it (glibc).

glibc serves allocations below its (dynamic, up to 32 MB) mmap threshold from the heap and keeps
what is freed there: the pieces of the key table's small runs after a merge, a chunk's
temporaries, the rows replayed when a service loads. A process that only grows from there holds
them as resident memory that nothing reuses (34 B per document at 10^7 documents, issue 39):
:func:`release_heap` gives the free pages back.

A large allocation is served from a free hole of the heap when one fits, whatever its size; the
long-lived arrays that grow by copying (the per-document columns, the exact map's base) then
leave their old buffers in the heap at each growth, kept until the next trim: at 10^7
documents the columns growing in one chunk held ~200 MiB there at the peak. :func:`zeros` gives
such an array an anonymous map of its own, unmapped as soon as it is freed.

A process's entry point (the CLI, hence ``neardup serve``) also fixes glibc's mmap threshold
(:func:`fix_mmap_threshold`): the key table's pieces and a chunk's large temporaries then get
maps of their own too. ``import neardup`` does not change its user's allocator.

>>> release_heap() in (True, False)
True
>>> z = zeros((MAP_BYTES // 8 + 1,), np.int64); int(z.sum()), z.flags.writeable
(0, True)
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

MAP_BYTES = 1 << 20  # arrays from this size get their own map (:func:`zeros`)
MMAP_THRESHOLD = 4 << 20  # the CLI's fixed glibc mmap threshold (:func:`fix_mmap_threshold`)
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
_HUGE_BYTES = 4 << 20  # and, from this one, transparent huge pages as numpy gives its own


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim = ctypes.CDLL(None).malloc_trim  # glibc only (not musl, not macOS)
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_heap() -> bool:
    """Give the C heap's free pages back to the system; False where there is no
    ``malloc_trim`` (not glibc)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def zeros(shape: int | tuple[int, ...], dtype: Any) -> npt.NDArray[Any]:
    """``np.zeros(shape, dtype)``; from :data:`MAP_BYTES` in a private anonymous map of its own
    (module docs): untouched pages are not resident (as with ``calloc``), and the map goes back
    to the system when the array and its views are freed, never into a hole of the heap that
    later allocations fill. Private: a forked child (the service's snapshot writer) keeps the
    rows as they were at the fork."""
    dt = np.dtype(dtype)
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    size = int(np.prod(dims, dtype=np.int64)) * dt.itemsize
    if size < MAP_BYTES or not hasattr(mmap, "MAP_PRIVATE"):
        return np.zeros(dims, dt)
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    if size >= _HUGE_BYTES and hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    flat = np.frombuffer(m, dt)
    return flat if len(dims) == 1 else flat.reshape(dims)


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Serve every allocation of ``threshold`` bytes or more with a map of its own, unmapped
    when freed (glibc ``mallopt(M_MMAP_THRESHOLD)``; it also stops the threshold rising to
    32 MB and keeps the heap's automatic trim at its 128 KiB default). For a process's entry
    point only (the CLI); a threshold its user set (``MALLOC_MMAP_THRESHOLD_``,
    ``GLIBC_TUNABLES``) is left alone. False where not glibc or left alone."""
    if os.environ.get("MALLOC_MMAP_THRESHOLD_") or "mmap_threshold" in os.environ.get(
        "GLIBC_TUNABLES", ""
    ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, threshold))
