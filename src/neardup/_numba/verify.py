"""numba kernels of the verifier: shingle hash sets and MinHash minima (C: ``verify.c``).

The definitions are in :mod:`neardup.verify`.
"""

from __future__ import annotations

import numba
import numpy as np

from neardup._arrays import I8, I64, U8, U64
from neardup._numba.features import is_cjk, token_spans
from neardup._numba.hashing import mix64, xxh3_64


@numba.njit(cache=True, nogil=True)
def _units_of(
    buf: U8,
    lo: int,
    hi: int,
    cls: U8,
    mode: int,
    seed: np.uint64,
    starts: I64,
    ends: I64,
    units: U64,
) -> int:  # pragma: no cover - compiled
    """XXH3 of each unit of buf[lo:hi]: word tokens, or (CJK text) each word character."""
    spans = token_spans(buf, lo, hi, cls, False, starts, ends)
    char_mode = mode == 2 or (mode == 0 and is_cjk(buf, lo, hi, cls))
    u = 0
    for t in range(spans):
        if not char_mode:
            units[u] = xxh3_64(buf, starts[t], ends[t] - starts[t], seed)
            u += 1
            continue
        p = starts[t]
        while p < ends[t]:
            q = p + 1
            while q < ends[t] and (buf[q] & 0xC0) == 0x80:
                q += 1
            units[u] = xxh3_64(buf, p, q - p, seed)
            u += 1
            p = q
    return u


@numba.njit(cache=True, nogil=True)
def _shingle_kernel(
    buf: U8, offsets: I64, modes: I8, cls: U8, n: int, seed: np.uint64
) -> tuple[U64, I64]:  # pragma: no cover - compiled
    """Sorted unique shingle hashes per document: flat values and document offsets."""
    docs = offsets.shape[0] - 1
    flat = np.empty(buf.shape[0] + docs + 1, dtype=np.uint64)
    out_off = np.zeros(docs + 1, dtype=np.int64)
    units = np.empty(buf.shape[0] + 1, dtype=np.uint64)
    starts = np.empty(buf.shape[0] + 2, dtype=np.int64)
    ends = np.empty(buf.shape[0] + 2, dtype=np.int64)
    mult = np.uint64(0x9E3779B97F4A7C15)
    pos = 0
    for d in range(docs):
        u = _units_of(buf, offsets[d], offsets[d + 1], cls, modes[d], seed, starts, ends, units)
        count = 0 if u == 0 else (1 if u <= n else u - n + 1)
        width = min(n, u)
        for s in range(count):
            acc = units[s]
            for j in range(1, width):
                acc = acc * mult + units[s + j]
            flat[pos + s] = mix64(acc)
        seg = np.sort(flat[pos : pos + count])
        m = 0
        for s in range(count):
            if s == 0 or seg[s] != seg[s - 1]:
                flat[pos + m] = seg[s]
                m += 1
        pos += m
        out_off[d + 1] = pos
    return flat[:pos].copy(), out_off


@numba.njit(cache=True, nogil=True)
def _minhash_kernel(flat: U64, offsets: I64, salts: U64) -> U64:  # pragma: no cover - compiled
    n = offsets.shape[0] - 1
    k = salts.shape[0]
    out = np.full((n, k), np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    c1 = np.uint64(0xBF58476D1CE4E5B9)
    c2 = np.uint64(0x94D049BB133111EB)
    for d in range(n):
        for p in range(offsets[d], offsets[d + 1]):
            x = flat[p]
            for s in range(k):
                z = x ^ salts[s]
                z ^= z >> np.uint64(30)
                z *= c1
                z ^= z >> np.uint64(27)
                z *= c2
                z ^= z >> np.uint64(31)
                if z < out[d, s]:
                    out[d, s] = z
    return out


def shingles(
    buf: U8, offsets: I64, modes: I8, cls: U8, n: int, seed: int, flat: U64, out_off: I64
) -> int:
    """The C signature: hashes into ``flat``, offsets into ``out_off``; returns how many."""
    values, off = _shingle_kernel(buf, offsets, modes, cls, n, np.uint64(seed))
    flat[: values.shape[0]] = values
    out_off[:] = off
    return int(values.shape[0])


def minhash(flat: U64, offsets: I64, salts: U64, out: U64) -> None:
    """The C signature: minima into ``out`` (documents x salts)."""
    out[:] = _minhash_kernel(flat, offsets, salts)


def sketch(
    buf: U8, offsets: I64, modes: I8, cls: U8, n: int, seed: int, salts: U64, out: U64
) -> None:
    """The C signature: minhash() over shingles(), minima into ``out`` (documents x salts)."""
    values, off = _shingle_kernel(buf, offsets, modes, cls, n, np.uint64(seed))
    out[:] = _minhash_kernel(values, off, salts)
