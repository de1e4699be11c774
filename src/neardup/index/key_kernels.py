"""Two small numba kernels of :mod:`neardup.index.keytable`: bucket lookup and run merge.

Both are single passes that numpy can only express with several temporaries (the lookup) or a
full re-sort (the merge); everything else in the key table is numpy.
"""

from __future__ import annotations

import numba
import numpy as np
import numpy.typing as npt


@numba.njit(cache=True, nogil=True)
def lookup(
    keys: npt.NDArray[np.uint64],
    offsets: npt.NDArray[np.int64],
    p: int,
    queries: npt.NDArray[np.uint64],
    out_q: npt.NDArray[np.int64],
    out_at: npt.NDArray[np.int64],
) -> int:  # pragma: no cover - compiled
    """Rows ``a`` with ``keys[a] == queries[i]`` (bucket = top ``p`` bits): writes up to
    ``len(out_q)`` (i, a) pairs and returns how many there are (call again if more)."""
    shift = np.uint64(64 - p)
    c = 0
    cap = out_q.shape[0]
    for i in range(queries.shape[0]):
        q = queries[i]
        t = np.int64(q >> shift)
        for a in range(offsets[t], offsets[t + 1]):
            if keys[a] == q:
                if c < cap:
                    out_q[c] = i
                    out_at[c] = a
                c += 1
    return c


@numba.njit(cache=True, nogil=True)
def merge(
    ak: npt.NDArray[np.uint64],
    aslot: npt.NDArray[np.uint32],
    bk: npt.NDArray[np.uint64],
    bslot: npt.NDArray[np.uint32],
    dead: npt.NDArray[np.bool_],
    outk: npt.NDArray[np.uint64],
    outslot: npt.NDArray[np.uint32],
) -> int:  # pragma: no cover - compiled
    """Merge two key-sorted runs, dropping rows of dead slots; returns the rows written."""
    i = 0
    j = 0
    o = 0
    na = ak.shape[0]
    nb = bk.shape[0]
    while i < na or j < nb:
        if j >= nb or (i < na and ak[i] <= bk[j]):
            k, s = ak[i], aslot[i]
            i += 1
        else:
            k, s = bk[j], bslot[j]
            j += 1
        if not dead[s]:
            outk[o] = k
            outslot[o] = s
            o += 1
    return o
