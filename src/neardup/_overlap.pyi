"""Typed contract of the C extension ``neardup._overlap`` (``_csrc/overlap.c``).

The Python references in :mod:`neardup.overlap` (``tokens.py``, ``align.py``, ``pairs.py``)
compute the same results when it is missing. Array arguments are any C-contiguous buffer of
the item width named here; a packed document is the ``bytes`` that :func:`prepare` returns.
"""

from collections.abc import Sequence
from typing import final

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

_I64 = npt.NDArray[np.int64]
# (source index, span start, span end, source start, source end, numerator, denominator)
_Passage = tuple[int, int, int, int, int, int, int]
_Job = tuple[Buffer, list[bytes], Buffer, Buffer]  # query, sources, seeds, bounds

def prepare(
    text: str,
    cls: Buffer,
    fold: Buffer,
    word_units: int,
    cjk_units: int,
    coarse: int,
    fine: int,
    /,
) -> bytes | int: ...
def winnow(hashes: Buffer, window: int, out: _I64, /) -> int: ...
def pairs(
    query: Buffer,
    sources: list[bytes],
    seeds: Buffer,
    bounds: Buffer,
    near: int,
    gap: int,
    min_units: int,
    reach: int,
    fanout: int,
    /,
) -> list[_Passage]: ...
def pairs_many(
    jobs: Sequence[_Job], near: int, gap: int, min_units: int, reach: int, fanout: int, /
) -> list[list[_Passage]]: ...

@final
class Index:
    """Gram hash -> postings (see overlap.c)."""

    def add(self, doc: int, hashes: Buffer, first: Buffer, last: Buffer, /) -> None: ...
    def seeds(
        self, hashes: Buffer, first: Buffer, last: Buffer, max_df: int, min_seeds: int, /
    ) -> tuple[bytes, bytes, bytes]: ...
    def seeds_packed(
        self, packed: bytes, max_df: int, min_seeds: int, window: int, /
    ) -> tuple[bytes, bytes, bytes]: ...
    def add_packed(self, doc: int, packed: bytes, window: int, /) -> None: ...
    def arrays(self) -> tuple[bytes, bytes]: ...
    def postings(self) -> int: ...
