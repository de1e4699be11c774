"""Stable 64-bit hashing of feature bytes: XXH3-64, plus the bit-word mixer.

Every feature is hashed as ``XXH3_64(utf8(feature), seed=0)`` (the reference algorithm of
xxHash 0.8, bit-identical to ``xxhash.xxh3_64_intdigest``). That value is the feature's *key*
(used for stop-word and IDF look-ups) and, for the default seed 0, also its first bit word.
Further bit words (128-bit fingerprints, non-zero seeds) come from :func:`bit_word`, a
splitmix64 finaliser of the key, so one hash of the bytes serves every fingerprint width.

The kernels run in C (``_csrc/xxh3.h``) or, without the extension, in numba
(:mod:`neardup._numba.hashing`); ``xxh3_64(buf, start, n, seed)`` and ``mix64(x)`` here are
whichever is active, imported on first use.

>>> import xxhash
>>> import numpy as np
>>> from neardup.hashing import mix64, xxh3_64
>>> data = np.frombuffer("hello world".encode(), dtype=np.uint8)
>>> int(xxh3_64(data, 0, data.size)) == xxhash.xxh3_64_intdigest(b"hello world")
True
>>> bit_word(123, 0, 0), bit_word(123, 0, 1) == int(mix64(123 + 0x9E3779B97F4A7C15))
(123, True)
"""

from __future__ import annotations

from typing import Any

__all__ = ["bit_word", "key_of"]  # plus mix64 and xxh3_64, resolved by __getattr__

_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def __getattr__(name: str) -> Any:
    """``xxh3_64`` and ``mix64`` from the active kernels (no numba import with the extension)."""
    if name in ("xxh3_64", "mix64"):
        from neardup._backend import C

        return getattr(C, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _mix64(x: int) -> int:
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def bit_word(key: Any, seed: Any, word: int) -> int:
    """Bit word ``word`` (0 = high 64 bits) of a feature with key ``key`` under ``seed``.

    Word 0 with seed 0 is the key itself; every other (seed, word) pair is
    ``mix64(key + (2 * seed + word) * 0x9E3779B97F4A7C15)``. (Pure Python: the kernels
    inline the same rule.)
    """
    k, s = int(key), int(seed)
    if s == 0 and word == 0:
        return k
    return _mix64((k + (2 * s + word) * _GOLDEN) & _M64)


def key_of(feature: str) -> int:
    """The 64-bit key of one feature string (pure Python, via the ``xxhash`` package).

    >>> import numpy as np
    >>> from neardup.hashing import xxh3_64
    >>> key_of("news") == int(xxh3_64(np.frombuffer(b"news", dtype=np.uint8), 0, 4))
    True
    """
    import xxhash

    return int(xxhash.xxh3_64_intdigest(feature.encode("utf-8", "surrogatepass")))
