"""numba kernels: UTF-8 bytes -> tokens -> feature keys -> SimHash bit words (C: features.c).

The fallback of the C kernels, bit for bit: the definitions (the fingerprint contract) and the
signatures are written once, in :mod:`neardup.features.kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._numba.hashing import bit_word, xxh3_64

WORD_MODE, SHINGLE_MODE, CHAR_MODE, AUTO_MODE = 0, 1, 2, 3
W_NONE, W_TF, W_TFIDF = 0, 1, 2
_SPACE = np.uint8(32)
_LOW_BITS = np.uint64(0x0101010101010101)


@njit(inline="always", cache=True)
def _decode(buf: np.ndarray, i: int, hi: int) -> tuple[int, int]:
    """Code point at byte ``i`` and its length; a malformed byte decodes as U+FFFD, length 1."""
    b0 = int(buf[i])
    if b0 < 0x80:
        return b0, 1
    if b0 >= 0xF0 and i + 3 < hi:
        return ((b0 & 7) << 18) | ((int(buf[i + 1]) & 63) << 12) | ((int(buf[i + 2]) & 63) << 6) | (
            int(buf[i + 3]) & 63
        ), 4
    if b0 >= 0xE0 and i + 2 < hi:
        return ((b0 & 15) << 12) | ((int(buf[i + 1]) & 63) << 6) | (int(buf[i + 2]) & 63), 3
    if b0 >= 0xC0 and i + 1 < hi:
        return ((b0 & 31) << 6) | (int(buf[i + 1]) & 63), 2
    return 0xFFFD, 1


@njit(cache=True, nogil=True)
def token_spans(
    buf: np.ndarray,
    lo: int,
    hi: int,
    cls: np.ndarray,
    han_single: bool,
    starts: np.ndarray,
    ends: np.ndarray,
) -> int:
    """Write the byte spans of the tokens of ``buf[lo:hi]``; return how many."""
    n = 0
    cur = 0  # class of the open token, 0 = none
    i = lo
    while i < hi:
        if cur == 1 or cur == 0:  # fast-forward over ASCII bytes that keep the state
            while i < hi and buf[i] < 128 and cls[buf[i]] == cur:
                i += 1
            if i == hi:
                break
        cp, ln = _decode(buf, i, hi)
        c = int(cls[cp]) if cp < 0x110000 else 0
        if c == 3 or (c == 2 and han_single) or c != cur:
            if cur != 0:
                ends[n] = i
                n += 1
            if c == 0:
                cur = 0
            elif c == 3 or (c == 2 and han_single):
                starts[n] = i
                ends[n] = i + ln
                n += 1
                cur = 0
            else:
                starts[n] = i
                cur = c
        i += ln
    if cur != 0:
        ends[n] = hi
        n += 1
    return n


@njit(cache=True, nogil=True)
def is_cjk(buf: np.ndarray, lo: int, hi: int, cls: np.ndarray) -> bool:
    """True when CJK characters are at least a third of the word characters of ``buf[lo:hi]``."""
    cjk = 0
    word = 0
    i = lo
    while i < hi:
        if buf[i] < 128:
            word += cls[buf[i]] != 0
            i += 1
            continue
        cp, ln = _decode(buf, i, hi)
        c = int(cls[cp]) if cp < 0x110000 else 0
        if c != 0:
            word += 1
            if c >= 2 or 0xAC00 <= cp <= 0xD7A3:
                cjk += 1
        i += ln
    return cjk > 0 and 3 * cjk >= word


@njit(cache=True, nogil=True)
def char_stream(
    buf: np.ndarray,
    lo: int,
    hi: int,
    cls: np.ndarray,
    out: np.ndarray,
    cp_starts: np.ndarray,
    joined: bool = False,
) -> tuple[int, int]:
    """Copy ``buf[lo:hi]`` to ``out`` with separator runs as one space (or none if ``joined``).

    Returns (bytes written, code points written); ``cp_starts[k]`` is the byte offset of code
    point ``k`` and ``cp_starts[count]`` the end.
    """
    nb = 0
    ncp = 0
    pending_space = False
    i = lo
    while i < hi:
        cp, ln = _decode(buf, i, hi)
        c = int(cls[cp]) if cp < 0x110000 else 0
        if c == 0:
            pending_space = ncp > 0 and not joined
        else:
            if pending_space:
                cp_starts[ncp] = nb
                out[nb] = _SPACE
                nb += 1
                ncp += 1
                pending_space = False
            cp_starts[ncp] = nb
            for k in range(ln):
                out[nb + k] = buf[i + k]
            nb += ln
            ncp += 1
        i += ln
    cp_starts[ncp] = nb
    return nb, ncp


@njit(inline="always", cache=True)
def _is_member(keys: np.ndarray, key: np.uint64) -> bool:
    if keys.size == 0:
        return False
    j = np.searchsorted(keys, key)
    return bool(j < keys.size and keys[j] == key)


@njit(cache=True, nogil=True)
def feature_keys(
    buf: np.ndarray,
    lo: int,
    hi: int,
    cls: np.ndarray,
    mode: int,
    n: int,
    han_single: bool,
    stop_keys: np.ndarray,
    scratch: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    keys: np.ndarray,
    n_cjk: int = 5,
) -> int:
    """Write the feature keys of ``buf[lo:hi]`` in text order to ``keys``; return how many."""
    joined = False
    if mode == AUTO_MODE:
        if is_cjk(buf, lo, hi, cls):
            mode, n, joined = CHAR_MODE, n_cjk, True
        else:
            mode = SHINGLE_MODE
    if mode == CHAR_MODE:
        nb, ncp = char_stream(buf, lo, hi, cls, scratch, starts, joined)
        if ncp == 0:
            return 0
        if ncp <= n:
            keys[0] = xxh3_64(scratch, 0, nb)
            return 1
        for k in range(ncp - n + 1):
            keys[k] = xxh3_64(scratch, starts[k], starts[k + n] - starts[k])
        return ncp - n + 1
    ntok = token_spans(buf, lo, hi, cls, han_single, starts, ends)
    kept = ntok
    if mode == WORD_MODE or stop_keys.size > 0 or n == 1:  # else shingles skip this
        kept = 0
        for t in range(ntok):  # stop words out; keep spans compacted
            key = xxh3_64(buf, starts[t], ends[t] - starts[t])
            if not _is_member(stop_keys, key):
                starts[kept] = starts[t]
                ends[kept] = ends[t]
                keys[kept] = key
                kept += 1
    if mode == WORD_MODE or kept == 0 or (n == 1 and mode == SHINGLE_MODE):
        return kept
    width = min(n, kept)
    for k in range(kept - width + 1):
        nb = 0
        for t in range(k, k + width):
            if t > k:
                scratch[nb] = _SPACE
                nb += 1
            for p in range(starts[t], ends[t]):
                scratch[nb] = buf[p]
                nb += 1
        keys[k] = xxh3_64(scratch, 0, nb)
    return kept - width + 1


@njit(cache=True, nogil=True)
def weigh(
    keys: np.ndarray,
    m: int,
    weighting: int,
    top_n: int,
    idf_keys: np.ndarray,
    idf_vals: np.ndarray,
    idf_default: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys and their weights (sorted by key) for the first ``m`` keys."""
    ks = np.sort(keys[:m])
    uk = np.empty(m, dtype=np.uint64)
    w = np.empty(m, dtype=np.float64)
    u = 0
    for i in range(m):
        if u > 0 and ks[i] == uk[u - 1]:
            w[u - 1] += 1.0
        else:
            uk[u] = ks[i]
            w[u] = 1.0
            u += 1
    uk = uk[:u]
    w = w[:u]
    if weighting == W_NONE:
        w[:] = 1.0
    elif weighting == W_TFIDF:
        for i in range(u):
            j = np.searchsorted(idf_keys, uk[i])
            w[i] *= idf_vals[j] if j < idf_keys.size and idf_keys[j] == uk[i] else idf_default
    if 0 < top_n < u:
        order = np.argsort(-w, kind="mergesort")  # stable: equal weights keep key order
        sel = np.sort(order[:top_n])
        uk = uk[sel]
        w = w[sel]
    return uk, w


@njit(cache=True, nogil=True)
def simhash_words(
    keys: np.ndarray, weights: np.ndarray, unit: bool, seed: np.uint64, words: int, out: np.ndarray
) -> None:
    """SimHash of weighted keys into ``out[:words]`` (``unit``: every weight is 1)."""
    m = keys.size
    for j in range(words):
        r = uint64(0)
        if unit:  # the common TF path: SWAR byte counters, 8 adds per feature instead of 64
            cnt = np.zeros(64, dtype=np.int64)
            lanes = np.zeros(8, dtype=np.uint64)  # lanes[b] byte k counts bit 8k+b
            pending = 0
            for i in range(m):
                h = bit_word(keys[i], seed, j)
                for b in range(8):
                    lanes[b] += (h >> uint64(b)) & _LOW_BITS
                pending += 1
                if pending == 255 or i == m - 1:  # flush before a byte counter overflows
                    for b in range(8):
                        v = lanes[b]
                        for k in range(8):
                            cnt[8 * k + b] += np.int64((v >> uint64(8 * k)) & uint64(0xFF))
                        lanes[b] = 0
                    pending = 0
            for b in range(64):
                if 2 * cnt[b] > m:
                    r |= uint64(1) << uint64(b)
        else:
            acc = np.zeros(64, dtype=np.float64)
            total = 0.0
            for i in range(m):
                h = bit_word(keys[i], seed, j)
                wt = weights[i]
                total += wt
                for b in range(64):
                    acc[b] += wt * np.float64((h >> uint64(b)) & uint64(1))
            for b in range(64):
                if 2.0 * acc[b] > total:
                    r |= uint64(1) << uint64(b)
        out[j] = r


@njit(cache=True, nogil=True)
def distinct_in_place(
    keys: np.ndarray, m: int, set_keys: np.ndarray, set_stamp: np.ndarray, stamp: int
) -> int:
    """Move the distinct values of ``keys[:m]`` to its front (first-seen order); return how many.

    Open addressing over the low bits of the (already uniformly hashed) keys, in a table of at
    least twice ``m`` slots; ``stamp`` marks this call's slots, so no clearing is needed.
    """
    cap = 16
    while cap < 2 * m:
        cap *= 2
    mask = np.uint64(cap - 1)
    u = 0
    for i in range(m):
        k = keys[i]
        slot = np.int64(k & mask)
        while set_stamp[slot] == stamp and set_keys[slot] != k:
            slot = (slot + 1) & (cap - 1)
        if set_stamp[slot] != stamp:
            set_stamp[slot] = stamp
            set_keys[slot] = k
            keys[u] = k
            u += 1
    return u


@njit(cache=True, nogil=True)
def _batch_scratch(offsets: np.ndarray) -> tuple[np.ndarray, ...]:
    """Buffers sized for the longest document of a batch: tokenizer scratch, token starts and
    ends, feature keys, and the distinct-key set (keys, stamps)."""
    longest = 1
    for d in range(offsets.size - 1):
        longest = max(longest, offsets[d + 1] - offsets[d])
    set_size = 16
    while set_size < 2 * (longest + 2):
        set_size *= 2
    return (
        np.empty(longest * 2 + 8, dtype=np.uint8),
        np.empty(longest + 2, dtype=np.int64),
        np.empty(longest + 2, dtype=np.int64),
        np.empty(longest + 2, dtype=np.uint64),
        np.empty(set_size, dtype=np.uint64),
        np.zeros(set_size, dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def fingerprint_batch(
    buf: np.ndarray,
    offsets: np.ndarray,
    cls: np.ndarray,
    mode: int,
    n: int,
    han_single: bool,
    stop_keys: np.ndarray,
    weighting: int,
    top_n: int,
    idf_keys: np.ndarray,
    idf_vals: np.ndarray,
    idf_default: float,
    seed: np.uint64,
    out: np.ndarray,
    empty: np.ndarray,
    n_cjk: int = 5,
) -> None:
    """Fingerprint documents ``buf[offsets[d]:offsets[d+1]]`` into ``out[d, :]``."""
    ndoc = offsets.size - 1
    scratch, starts, ends, keys, set_keys, set_stamp = _batch_scratch(offsets)
    no_weights = np.empty(0, dtype=np.float64)
    words = out.shape[1]
    linear = weighting == W_TF and top_n == 0
    binary = weighting == W_NONE and top_n == 0
    for d in range(ndoc):
        m = feature_keys(
            buf,
            offsets[d],
            offsets[d + 1],
            cls,
            mode,
            n,
            han_single,
            stop_keys,
            scratch,
            starts,
            ends,
            keys,
            n_cjk,
        )
        if m == 0:
            empty[d] = True
            out[d, :] = 0
            continue
        if linear:  # tf is linear in occurrences: no need to group equal keys
            simhash_words(keys[:m], no_weights, True, seed, words, out[d])
        elif binary:  # distinct keys, weight 1 each: compact them, then the unit path
            u = distinct_in_place(keys, m, set_keys, set_stamp, d + 1)
            simhash_words(keys[:u], no_weights, True, seed, words, out[d])
        else:
            uk, w = weigh(keys, m, weighting, top_n, idf_keys, idf_vals, idf_default)
            simhash_words(uk, w, False, seed, words, out[d])
