"""Typed contract of the C extension ``neardup._overlap`` (``_csrc/overlap_module.c`` over the
kernels of ``_csrc/overlap_kernels.h``), read through ``neardup._backend.OV``.

The Python references in :mod:`neardup.overlap` (``tokens.py``, ``align.py``, ``pairs.py``)
compute the same results when it is missing. Array arguments are any C-contiguous buffer of
the item width named here (numpy arrays of that dtype, or bytes of int64 as ``Index.seeds*``
return them); a packed document is the ``bytes`` that :func:`prepare` returns.
"""

from collections.abc import Sequence
from typing import final

from neardup._arrays import I64 as _I64
from neardup._arrays import U8 as _U8
from neardup._arrays import U32 as _U32
from neardup._arrays import U64 as _U64
from neardup._arrays import Flags as _Flags

_Rows = _I64 | bytes  # int64 items: seed rows (q_first, q_last, d_first, d_last) or offsets
# (source index, span start, span end, source start, source end, numerator, denominator)
_Passage = tuple[int, int, int, int, int, int, int]
_Job = tuple[bytes, list[bytes], _Rows, _Rows]  # query, sources, seeds, bounds
# docs, bounds, seed rows as bytes of int64; Index.seeds* answer their count (an int) instead
# when there are more than max_seeds > 0; cap > 0 leaves out grams with more postings
_Seeds = tuple[bytes, bytes, bytes]

def prepare(
    text: str,
    cls: _U8,
    fold: _U32,
    word_units: int,
    cjk_units: int,
    coarse: int,
    fine: int,
    /,
) -> bytes | int: ...
def prepare_many(
    texts: Sequence[str],
    cls: _U8,
    fold: _U32,
    word_units: int,
    cjk_units: int,
    coarse: int,
    fine: int,
    /,
) -> tuple[list[bytes], int]: ...
def winnow(hashes: _U64, window: int, out: _I64, /) -> int: ...
def pairs(
    query: bytes,
    sources: list[bytes],
    seeds: _Rows,
    bounds: _Rows,
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
def template_keys(
    texts: list[str],
    tokens: list[tuple[_I64, _I64, _I64, _U64]],
    ngram: int,
    mask: int,
    sample: int,
    digit: _Flags,
    first: _I64,
    last: _I64,
    hashes: _U64,
    /,
) -> int: ...
def frame_units(
    q: _U64, s: _U64, weights: _I64, strict: _Flags, loose: _Flags, ngram: int, /
) -> tuple[int, bool]: ...

@final
class Counts:
    """Template key -> documents holding it (see overlap_index.c)."""

    def count(self, keys: _U64, offsets: _I64, add: bool, df: _I64, /) -> None: ...
    def put(self, keys: _U64, counts: _I64, /) -> None: ...
    def arrays(self) -> tuple[bytes, bytes]: ...
    def __len__(self) -> int: ...

@final
class Index:
    """Gram hash -> postings (see overlap_index.c)."""

    def add(self, doc: int, hashes: _U64, first: _I64, last: _I64, /) -> None: ...
    def seeds(
        self,
        hashes: _U64,
        first: _I64,
        last: _I64,
        max_df: int,
        min_seeds: int,
        max_seeds: int = 0,
        cap: int = 0,
        /,
    ) -> _Seeds | int: ...
    def seeds_packed(
        self,
        packed: bytes,
        max_df: int,
        min_seeds: int,
        window: int,
        max_seeds: int = 0,
        cap: int = 0,
        /,
    ) -> _Seeds | int: ...
    def add_packed(self, doc: int, packed: bytes, window: int, /) -> None: ...
    def look_post_many(
        self,
        packed: Sequence[bytes],
        first_doc: int,
        add: bool,
        window: int,
        query_window: int,
        max_df: int,
        min_seeds: int,
        per_gram: int,
        floor: int,
        trim: bool,
        /,
    ) -> tuple[list[tuple[bytes, bytes, bytes, bool]], int, int]: ...
    def arrays(self) -> tuple[bytes, bytes]: ...
    def postings(self) -> int: ...
