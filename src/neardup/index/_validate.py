"""Input checks shared by the index and the join: one declared place for validation.

>>> as_fingerprints([1, 2**64 - 1]).dtype
dtype('uint64')
>>> as_fingerprints([-1])
Traceback (most recent call last):
...
neardup.errors.BadInputError: fingerprints must be unsigned 64-bit values in [0, 2**64); got -1
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.errors import BadInputError

MAX_K = 63


def _array(values: Any, what: str) -> npt.NDArray[Any]:
    if isinstance(values, np.ndarray):
        return values
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(
            f"{what} must be a 1-D numpy array or a sequence, got {type(values).__name__}"
        )
    values = list(values)
    if values and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        if what == "fingerprints":
            if any(v < 0 or v >= 2**64 for v in values):
                bad = next(v for v in values if v < 0 or v >= 2**64)
                raise BadInputError(
                    f"fingerprints must be unsigned 64-bit values in [0, 2**64); got {bad}"
                )
            return np.array(values, dtype=np.uint64)
        if any(v < -(2**63) or v >= 2**63 for v in values):
            raise BadInputError(f"{what} must fit in int64")
        return np.array(values, dtype=np.int64)
    return np.asarray(values)


def check_bits(bits: Any) -> int:
    """The fingerprint width: 64 or 128."""
    if isinstance(bits, bool) or bits not in (64, 128):
        raise BadInputError(f"bits must be 64 or 128, got {bits!r}")
    return int(bits)


def as_fingerprints(values: Any, bits: int = 64) -> npt.NDArray[np.uint64]:
    """Fingerprints as uint64: ``(n,)`` for 64 bits, ``(n, 2)`` ``[hi, lo]`` for 128 bits, or a
    ValueError/TypeError naming what to pass.

    >>> as_fingerprints([(1 << 64) | 2, [3, 4]], bits=128).tolist()
    [[1, 2], [3, 4]]
    """
    if check_bits(bits) == 128:
        return _as_fingerprints_128(values)
    arr = _array(values, "fingerprints")
    if arr.ndim != 1:
        raise BadInputError(f"fingerprints must be 1-D (one uint64 per row), got shape {arr.shape}")
    if arr.dtype == np.uint64:
        return np.ascontiguousarray(arr)
    if arr.size == 0:
        return np.zeros(0, np.uint64)
    if arr.dtype.kind == "u":
        return arr.astype(np.uint64)
    if arr.dtype.kind == "i":
        if (arr < 0).any():
            raise BadInputError(
                "fingerprints must be unsigned 64-bit values in [0, 2**64); got a "
                f"negative value {int(arr.min())} (use .view(np.uint64) on signed "
                "64-bit fingerprints)"
            )
        return arr.astype(np.uint64)
    raise TypeError(
        f"fingerprints must be uint64 (or non-negative ints), got dtype {arr.dtype}; "
        "pass np.asarray(fps, dtype=np.uint64)"
    )


def _as_fingerprints_128(values: Any) -> npt.NDArray[np.uint64]:
    if isinstance(values, np.ndarray):
        if values.ndim != 2 or values.shape[1] != 2:
            raise BadInputError(
                f"128-bit fingerprints must have shape (n, 2) [hi, lo], got {values.shape}"
            )
        if values.size and values.dtype != np.uint64:
            raise TypeError(
                f"128-bit fingerprints must be uint64 [hi, lo] pairs, got dtype {values.dtype}"
            )
        return np.ascontiguousarray(values, dtype=np.uint64)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(
            "128-bit fingerprints must be an (n, 2) uint64 array or a sequence of "
            f"ints, got {type(values).__name__}"
        )
    out = np.zeros((len(values), 2), np.uint64)
    for row, v in enumerate(values):
        if isinstance(v, (tuple, list, np.ndarray)) and len(v) == 2:
            v = (int(v[0]) << 64) | int(v[1])
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < 2**128:
            raise BadInputError(
                f"128-bit fingerprints must be ints in [0, 2**128) or [hi, lo] pairs, got {v!r}"
            )
        out[row] = (int(v) >> 64, int(v) & (2**64 - 1))
    return out


def as_ids(values: Any, n: int) -> npt.NDArray[np.int64]:
    """A 1-D int64 id array of length ``n`` without duplicates."""
    arr = _array(values, "ids")
    if arr.ndim != 1:
        raise BadInputError(f"ids must be 1-D, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"ids must be integers (int64), got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) >= 2**63:
        raise BadInputError(f"ids must fit in int64, got {int(arr.max())}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    if arr.shape[0] != n:
        raise BadInputError(
            f"ids and fingerprints must have the same length, got {arr.shape[0]} "
            f"ids for {n} fingerprints"
        )
    if n > 1 and not bool((arr[1:] > arr[:-1]).all()):  # increasing ids: no sort needed
        s = np.sort(arr)
        dup = s[1:][s[1:] == s[:-1]]
        if dup.size:
            raise BadInputError(f"duplicate id {int(dup[0])} within the batch; ids must be unique")
    return arr


def as_timestamps(values: Any, n: int) -> npt.NDArray[np.int64]:
    """A 1-D int64 array (seconds) of length ``n``."""
    arr = _array(values, "timestamps") if not isinstance(values, np.ndarray) else values
    if arr.ndim != 1 or arr.shape[0] != n:
        raise BadInputError(
            f"timestamps must be 1-D with one value per fingerprint ({n}), got shape {arr.shape}"
        )
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"timestamps must be integer seconds (int64), got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_k(k: Any, limit: int = MAX_K) -> int:
    """An int distance in ``[0, limit]``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int, got {type(k).__name__} {k!r}")
    if not 0 <= int(k) <= limit:
        raise BadInputError(f"k must be in [0, {limit}], got {k}")
    return int(k)
