"""The frozen Unicode character-class table used by the tokenising kernels.

One byte per code point (0x110000 entries): 0 separator, 1 word character (letters, digits,
marks), 2 Han ideograph, 3 a character of a script written without spaces (kana, Thai, Lao,
Khmer, Myanmar), always a token of its own. Generated from Unicode 14.0 by
``tools/gen_charclass.py`` and shipped as data, so tokens do not change with the Python version.

>>> table = char_classes()
>>> [int(table[ord(c)]) for c in "a 中か1"]
[1, 0, 2, 3, 1]
"""

from __future__ import annotations

import hashlib
import re
import zlib
from functools import lru_cache
from importlib import resources

import numpy as np

SEPARATOR, WORD, HAN, SINGLE = 0, 1, 2, 3
TABLE_FILE = "charclass.bin.zlib"


@lru_cache(maxsize=1)
def _raw() -> bytes:
    return resources.files("neardup.data").joinpath(TABLE_FILE).read_bytes()


@lru_cache(maxsize=1)
def char_classes() -> np.ndarray:
    """The class table as a read-only uint8 array indexed by code point."""
    table = np.frombuffer(zlib.decompress(_raw()), dtype=np.uint8)
    if table.size != 0x110000:
        raise RuntimeError(f"corrupt neardup data file {TABLE_FILE}: reinstall neardup")
    return table


@lru_cache(maxsize=1)
def table_digest() -> str:
    """Short sha256 of the shipped table: part of every fingerprint config id."""
    return hashlib.sha256(_raw()).hexdigest()[:16]


@lru_cache(maxsize=1)
def han_run_pattern() -> re.Pattern[str]:
    """A regex matching maximal runs of class-2 (Han) characters, with one capture group."""
    is_han = (char_classes() == HAN).astype(np.int8)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], is_han, [0]))))
    ranges = "".join(
        f"{re.escape(chr(lo))}-{re.escape(chr(hi - 1))}"
        for lo, hi in zip(edges[::2], edges[1::2], strict=True)
    )
    return re.compile(f"([{ranges}]+)")
