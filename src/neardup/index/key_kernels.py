"""Two small kernels of :mod:`neardup.index.keytable`: bucket lookup and run merge.

Both are single passes that numpy can only express with several temporaries (the lookup) or a
full re-sort (the merge); everything else in the key table is numpy. They run in C
(``_csrc/keys.c``) or, without the extension, in numba (:mod:`neardup._numba.keys`); numba is
imported only in the second case.

>>> import numpy as np
>>> keys = np.array([3, 5, 5, 9], dtype=np.uint64)
>>> offsets = np.array([0, 4, 4], dtype=np.int64)  # p=1: every key has top bit 0
>>> out_q, out_at = np.empty(4, np.int64), np.empty(4, np.int64)
>>> c = lookup(keys, offsets, 1, np.array([5, 7], dtype=np.uint64), out_q, out_at)
>>> c, out_q[:c].tolist(), out_at[:c].tolist()
(2, [0, 0], [1, 2])
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._backend import kernels


def lookup(
    keys: npt.NDArray[np.uint64],
    offsets: npt.NDArray[np.int64],
    p: int,
    queries: npt.NDArray[np.uint64],
    out_q: npt.NDArray[np.int64],
    out_at: npt.NDArray[np.int64],
) -> int:
    """Rows ``a`` with ``keys[a] == queries[i]`` (bucket = top ``p`` bits of the key): writes
    up to ``len(out_q)`` (i, a) pairs and returns how many there are (call again if more)."""
    return int(kernels("keys").key_lookup(keys, offsets, p, queries, out_q, out_at))


def merge(
    ak: npt.NDArray[np.uint64],
    aslot: npt.NDArray[np.uint32],
    bk: npt.NDArray[np.uint64],
    bslot: npt.NDArray[np.uint32],
    dead: npt.NDArray[np.bool_],
    outk: npt.NDArray[np.uint64],
    outslot: npt.NDArray[np.uint32],
) -> int:
    """Merge two key-sorted runs (ties: ``a`` first), dropping rows whose slot is ``dead``;
    returns the rows written to ``outk``/``outslot``."""
    return int(kernels("keys").key_merge(ak, aslot, bk, bslot, dead, outk, outslot))
