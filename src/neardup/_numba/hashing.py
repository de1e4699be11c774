"""XXH3-64, splitmix64 and the bit-word rule in numba (the fallback of ``_csrc/xxh3.h``).

The definitions are in :mod:`neardup.hashing`; ``tests/test_native.py`` checks this copy
against the ``xxhash`` package and the C one.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

# XXH3's primes (PRIME32_1..3, PRIME64_1..5, PRIME_MX1..2) and masks, as uint64 scalars
_P32_1, _P32_2, _P32_3 = map(np.uint64, (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D))
_P64_1, _P64_2, _P64_3, _P64_4, _P64_5 = map(
    np.uint64,
    (
        0x9E3779B185EBCA87,
        0xC2B2AE3D27D4EB4F,
        0x165667B19E3779F9,
        0x85EBCA77C2B2AE63,
        0x27D4EB2F165667C5,
    ),
)
_PMX1, _PMX2 = map(np.uint64, (0x165667919E3779F9, 0x9FB21C651E98DF25))
_M32, _GOLDEN, _ZERO = map(np.uint64, (0xFFFFFFFF, 0x9E3779B97F4A7C15, 0))

_SECRET = np.frombuffer(
    bytes.fromhex(
        "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
        "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
        "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
        "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
        "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e"
        "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e"
    ),
    dtype=np.uint8,
).copy()


def _secret_words(secret: np.ndarray) -> np.ndarray:
    """``_r64(secret, j)`` for every byte offset ``j``: one load instead of eight in the kernels."""
    padded = np.concatenate([secret, np.zeros(8, dtype=np.uint8)])
    return np.array(
        [int.from_bytes(padded[j : j + 8].tobytes(), "little") for j in range(secret.size)],
        dtype=np.uint64,
    )


_S64 = _secret_words(_SECRET)


@njit(inline="always", cache=True)
def _r64(b: np.ndarray, i: int) -> np.uint64:
    r = uint64(0)
    for j in range(7, -1, -1):
        r = (r << uint64(8)) | uint64(b[i + j])
    return r


@njit(inline="always", cache=True)
def _r32(b: np.ndarray, i: int) -> np.uint64:
    return (  # type: ignore[no-any-return]
        uint64(b[i])
        | (uint64(b[i + 1]) << uint64(8))
        | (uint64(b[i + 2]) << uint64(16))
        | (uint64(b[i + 3]) << uint64(24))
    )


@njit(inline="always", cache=True)
def _rotl(x: np.uint64, r: int) -> np.uint64:
    return (x << uint64(r)) | (x >> uint64(64 - r))


@njit(inline="always", cache=True)
def _swap64(x: np.uint64) -> np.uint64:
    r = uint64(0)
    for _ in range(8):
        r = (r << uint64(8)) | (x & uint64(0xFF))
        x >>= uint64(8)
    return r


@njit(inline="always", cache=True)
def _mul128_fold64(a: np.uint64, b: np.uint64) -> np.uint64:
    a_lo = a & _M32
    a_hi = a >> uint64(32)
    b_lo = b & _M32
    b_hi = b >> uint64(32)
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> uint64(32)) + (hi_lo & _M32) + lo_hi
    upper = (hi_lo >> uint64(32)) + (cross >> uint64(32)) + hi_hi
    lower = (cross << uint64(32)) | (lo_lo & _M32)
    return lower ^ upper


@njit(inline="always", cache=True)
def _xxh64_avalanche(h: np.uint64) -> np.uint64:
    h ^= h >> uint64(33)
    h *= _P64_2
    h ^= h >> uint64(29)
    h *= _P64_3
    h ^= h >> uint64(32)
    return h


@njit(inline="always", cache=True)
def _avalanche(h: np.uint64) -> np.uint64:
    h ^= h >> uint64(37)
    h *= _PMX1
    h ^= h >> uint64(32)
    return h


@njit(inline="always", cache=True)
def _rrmxmx(h: np.uint64, n: int) -> np.uint64:
    h ^= _rotl(h, 49) ^ _rotl(h, 24)
    h *= _PMX2
    h ^= (h >> uint64(35)) + uint64(n)
    h *= _PMX2
    h ^= h >> uint64(28)
    return h


@njit(inline="always", cache=True)
def _mix16(b: np.ndarray, i: int, s: np.ndarray, j: int, seed: np.uint64) -> np.uint64:
    lo = _r64(b, i) ^ (_S64[j] + seed)
    hi = _r64(b, i + 8) ^ (_S64[j + 8] - seed)
    return _mul128_fold64(lo, hi)


@njit(cache=True)
def _hash_long(b: np.ndarray, start: int, n: int, seed: np.uint64) -> np.uint64:
    if seed == uint64(0):
        s = _SECRET
    else:
        s = np.empty(192, dtype=np.uint8)
        for i in range(12):
            lo = _r64(_SECRET, 16 * i) + seed
            hi = _r64(_SECRET, 16 * i + 8) - seed
            for k in range(8):
                s[16 * i + k] = np.uint8((lo >> uint64(8 * k)) & uint64(0xFF))
                s[16 * i + 8 + k] = np.uint8((hi >> uint64(8 * k)) & uint64(0xFF))
    acc = np.empty(8, dtype=np.uint64)
    acc[0] = _P32_3
    acc[1] = _P64_1
    acc[2] = _P64_2
    acc[3] = _P64_3
    acc[4] = _P64_4
    acc[5] = _P32_2
    acc[6] = _P64_5
    acc[7] = _P32_1
    stripes_per_block = 16
    block_len = 1024
    nb_blocks = (n - 1) // block_len
    for blk in range(nb_blocks):
        base = start + blk * block_len
        for st in range(stripes_per_block):
            _acc512(acc, b, base + st * 64, s, st * 8)
        for i in range(8):  # scramble
            a = acc[i]
            a ^= a >> uint64(47)
            a ^= _r64(s, 128 + 8 * i)
            acc[i] = a * _P32_1
    nb_stripes = ((n - 1) - block_len * nb_blocks) // 64
    base = start + nb_blocks * block_len
    for st in range(nb_stripes):
        _acc512(acc, b, base + st * 64, s, st * 8)
    _acc512(acc, b, start + n - 64, s, 192 - 64 - 7)
    result = uint64(n) * _P64_1
    for i in range(4):
        result += _mul128_fold64(
            acc[2 * i] ^ _r64(s, 11 + 16 * i), acc[2 * i + 1] ^ _r64(s, 19 + 16 * i)
        )
    return _avalanche(result)


@njit(inline="always", cache=True)
def _acc512(acc: np.ndarray, b: np.ndarray, i: int, s: np.ndarray, j: int) -> None:
    for lane in range(8):
        v = _r64(b, i + 8 * lane)
        key = v ^ _r64(s, j + 8 * lane)
        acc[lane ^ 1] += v
        acc[lane] += (key & _M32) * (key >> uint64(32))


@njit(cache=True)
def xxh3_64(b: np.ndarray, start: int, n: int, seed: np.uint64 = _ZERO) -> np.uint64:
    """XXH3-64 of ``b[start:start+n]`` (a uint8 array) with ``seed``; equals xxhash's value."""
    s = _SECRET
    if n <= 16:
        if n > 8:
            bf1 = (_S64[24] ^ _S64[32]) + seed
            bf2 = (_S64[40] ^ _S64[48]) - seed
            lo = _r64(b, start) ^ bf1
            hi = _r64(b, start + n - 8) ^ bf2
            acc = uint64(n) + _swap64(lo) + hi + _mul128_fold64(lo, hi)
            return _avalanche(acc)
        if n >= 4:
            sd = seed ^ (_swap32(seed & _M32) << uint64(32))
            in1 = _r32(b, start)
            in2 = _r32(b, start + n - 4)
            bf = (_S64[8] ^ _S64[16]) - sd
            keyed = (in2 + (in1 << uint64(32))) ^ bf
            return _rrmxmx(keyed, n)
        if n > 0:
            c1 = uint64(b[start])
            c2 = uint64(b[start + (n >> 1)])
            c3 = uint64(b[start + n - 1])
            combined = (c1 << uint64(16)) | (c2 << uint64(24)) | c3 | (uint64(n) << uint64(8))
            bf = (_r32(s, 0) ^ _r32(s, 4)) + seed
            return _xxh64_avalanche(combined ^ bf)
        return _xxh64_avalanche(seed ^ (_S64[56] ^ _S64[64]))
    if n <= 128:
        acc = uint64(n) * _P64_1
        if n > 32:
            if n > 64:
                if n > 96:
                    acc += _mix16(b, start + 48, s, 96, seed)
                    acc += _mix16(b, start + n - 64, s, 112, seed)
                acc += _mix16(b, start + 32, s, 64, seed)
                acc += _mix16(b, start + n - 48, s, 80, seed)
            acc += _mix16(b, start + 16, s, 32, seed)
            acc += _mix16(b, start + n - 32, s, 48, seed)
        acc += _mix16(b, start, s, 0, seed)
        acc += _mix16(b, start + n - 16, s, 16, seed)
        return _avalanche(acc)
    if n <= 240:
        acc = uint64(n) * _P64_1
        for i in range(8):
            acc += _mix16(b, start + 16 * i, s, 16 * i, seed)
        acc = _avalanche(acc)
        for i in range(8, n // 16):
            acc += _mix16(b, start + 16 * i, s, 16 * (i - 8) + 3, seed)
        acc += _mix16(b, start + n - 16, s, 136 - 17, seed)
        return _avalanche(acc)
    return _hash_long(b, start, n, seed)


@njit(inline="always", cache=True)
def _swap32(x: np.uint64) -> np.uint64:
    return (
        ((x & uint64(0xFF)) << uint64(24))
        | ((x & uint64(0xFF00)) << uint64(8))
        | ((x >> uint64(8)) & uint64(0xFF00))
        | ((x >> uint64(24)) & uint64(0xFF))
    )


@njit(inline="always", cache=True)
def mix64(x: np.uint64) -> np.uint64:
    """The splitmix64 finaliser: a bijective 64-bit mixer."""
    x ^= x >> uint64(30)
    x *= uint64(0xBF58476D1CE4E5B9)
    x ^= x >> uint64(27)
    x *= uint64(0x94D049BB133111EB)
    x ^= x >> uint64(31)
    return x


@njit(inline="always", cache=True)
def bit_word(key: np.uint64, seed: np.uint64, word: int) -> np.uint64:
    """Bit word ``word`` (0 = high 64 bits) of a feature with key ``key`` under ``seed``.

    Word 0 with seed 0 is the key itself; every other (seed, word) pair is
    ``mix64(key + (2 * seed + word) * 0x9E3779B97F4A7C15)``.
    """
    if seed == uint64(0) and word == 0:
        return key
    return mix64(key + (uint64(2) * seed + uint64(word)) * _GOLDEN)
