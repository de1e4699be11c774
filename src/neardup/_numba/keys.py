"""numba kernels of :mod:`neardup.index.keytable`: key packing, bucket lookup and run merge
(C: ``keys.c``; same signatures, same results).

A run is ``(offsets uint32, tags, shift, slots)``: rows sorted by table key ``K``,
bucket ``t = K >> shift`` (``offsets[t] <= row < offsets[t + 1]``), tag ``K``'s low ``shift``
bits (uint8, uint16, uint32 or uint64); slots are uint32, or uint8 with 3 bytes a row
(little-endian, fewer than ``2**24`` slots). These are single passes that numpy can only
express with several temporaries (the lookup) or a full re-sort (the merge); the rest is numpy.
"""

from __future__ import annotations

import numba
import numpy as np

from neardup._arrays import I64, U32, U64, Flags, Slots, Tags

_C1_INV = np.uint64(0x96DE1B173F119089)  # inverses of splitmix64's multipliers mod 2**64
_C2_INV = np.uint64(0x319642B2D24D8EC3)
_M32 = np.uint64(0xFFFFFFFF)


@numba.njit(cache=True, nogil=True)
def key_pack(keys: U64, bits: int, out: U64) -> None:  # pragma: no cover - compiled
    """Table keys: ``x = mix64^-1(key)``; ``(x >> 32 << 32) | fmix32(x & 0xffffffff)`` when
    ``x < 2**bits``, else ``2**64 - 1`` (``bits == 64``: the key itself)."""
    for i in range(keys.shape[0]):
        z = keys[i]
        if bits >= 64:
            out[i] = z
            continue
        z ^= (z >> np.uint64(31)) ^ (z >> np.uint64(62))
        z *= _C2_INV
        z ^= (z >> np.uint64(27)) ^ (z >> np.uint64(54))
        z *= _C1_INV
        z ^= (z >> np.uint64(30)) ^ (z >> np.uint64(60))
        if z >> np.uint64(bits):
            out[i] = np.uint64(0xFFFFFFFFFFFFFFFF)
            continue
        h = z & _M32
        h ^= h >> np.uint64(16)
        h = (h * np.uint64(0x85EBCA6B)) & _M32
        h ^= h >> np.uint64(13)
        h = (h * np.uint64(0xC2B2AE35)) & _M32
        h ^= h >> np.uint64(16)
        out[i] = ((z >> np.uint64(32)) << np.uint64(32)) | h


@numba.njit(cache=True, nogil=True)
def key_lookup(
    offsets: U32, tags: Tags, shift: int, queries: U64, out_q: I64, out_at: I64
) -> int:  # pragma: no cover - compiled
    """Rows ``a`` of the run holding table key ``queries[i]``: writes up to ``len(out_q)``
    (i, a) pairs and returns how many there are (call again if more)."""
    sh = np.uint64(shift)
    mask = (np.uint64(1) << sh) - np.uint64(1)
    nb = np.uint64(offsets.shape[0] - 1)
    n = tags.shape[0]
    c = 0
    cap = out_q.shape[0]
    for i in range(queries.shape[0]):
        q = queries[i]
        t = q >> sh
        if t >= nb:
            continue
        tag = q & mask
        for a in range(offsets[t], min(offsets[t + np.uint64(1)], n)):
            if np.uint64(tags[a]) == tag:
                if c < cap:
                    out_q[c] = i
                    out_at[c] = a
                c += 1
    return c


@numba.njit(cache=True, nogil=True)
def _key_at(
    offsets: U32, tags: Tags, shift: int, i: int, t: int
) -> tuple[np.uint64, int]:  # pragma: no cover - compiled
    """(table key of row ``i``, its bucket), scanning on from bucket ``t``."""
    nb = offsets.shape[0] - 1
    while t < nb and offsets[t + 1] <= i:
        t += 1
    return (np.uint64(t) << np.uint64(shift)) | np.uint64(tags[i]), t


@numba.njit(cache=True, nogil=True)
def _slot_at(slots: Slots, i: int) -> np.uint32:  # pragma: no cover
    """Slot of row ``i``: uint32 slots, or 3 little-endian bytes a row."""
    if slots.itemsize == 4:
        return np.uint32(slots[i])
    lo, mid, hi = np.uint32(slots[3 * i]), np.uint32(slots[3 * i + 1]), np.uint32(slots[3 * i + 2])
    return lo | (mid << np.uint32(8)) | (hi << np.uint32(16))


@numba.njit(cache=True, nogil=True)
def _slot_put(slots: Slots, i: int, v: np.uint32) -> None:  # pragma: no cover
    if slots.itemsize == 4:
        slots[i] = v
        return
    for b in range(3):
        slots[3 * i + b] = (v >> np.uint32(8 * b)) & np.uint32(255)


@numba.njit(cache=True, nogil=True)
def key_merge(
    a_offsets: U32,
    a_tags: Tags,
    a_shift: int,
    a_slots: Slots,
    b_offsets: U32,
    b_tags: Tags,
    b_shift: int,
    b_slots: Slots,
    dead: Flags,
    out_offsets: U32,
    out_tags: Tags,
    out_shift: int,
    out_slots: Slots,
) -> int:  # pragma: no cover - compiled
    """Merge runs ``a`` and ``b`` (``a`` first on equal keys) into the ``out`` arrays, dropping
    rows of dead slots; returns the rows written."""
    na, nb = a_tags.shape[0], b_tags.shape[0]
    onb = out_offsets.shape[0] - 1
    osh = np.uint64(out_shift)
    mask = (np.uint64(1) << osh) - np.uint64(1)
    i = j = o = ta = tb = to = 0
    ka = kb = np.uint64(0)
    if na:
        ka, ta = _key_at(a_offsets, a_tags, a_shift, 0, 0)
    if nb:
        kb, tb = _key_at(b_offsets, b_tags, b_shift, 0, 0)
    while i < na or j < nb:
        if j >= nb or (i < na and ka <= kb):
            k, s = ka, _slot_at(a_slots, i)
            i += 1
            if i < na:
                ka, ta = _key_at(a_offsets, a_tags, a_shift, i, ta)
        else:
            k, s = kb, _slot_at(b_slots, j)
            j += 1
            if j < nb:
                kb, tb = _key_at(b_offsets, b_tags, b_shift, j, tb)
        if dead[s]:
            continue
        bucket = np.int64(k >> osh)
        while to <= bucket and to <= onb:
            out_offsets[to] = o
            to += 1
        out_tags[o] = k & mask
        _slot_put(out_slots, o, s)
        o += 1
    while to <= onb:
        out_offsets[to] = o
        to += 1
    return o


@numba.njit(cache=True, nogil=True)
def key_offsets(keys: U64, shift: int, offsets: U32) -> None:  # pragma: no cover - compiled
    """``offsets[t]``: first row whose ``key >> shift`` is ``>= t`` (keys sorted)."""
    sh = np.uint64(shift)
    a = 0
    n = keys.shape[0]
    for t in range(offsets.shape[0]):
        while a < n and np.int64(keys[a] >> sh) < t:
            a += 1
        offsets[t] = a
