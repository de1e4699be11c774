"""Typed contract of the C extension ``neardup._native`` (``_csrc/module.c`` and its headers).

The numba fallback (:mod:`neardup._numba`) has the same names and signatures, except the
C-only kernels ``prepare_batch``, ``prepare_pack``, ``collapse_spaces`` and
``search_tables_range``. Arrays must be C-contiguous with the dtype named here (a dtype of
the same kind and width passes; anything else raises ``TypeError``); ``out*`` arrays are
written. Functions returning ``tuple[int, int]`` return ``(written, resume)``: the pairs
written into the output arrays and where to resume when they were full.
"""

from collections.abc import Callable

from typing_extensions import Buffer

from neardup._arrays import F64 as _F64
from neardup._arrays import I8 as _I8
from neardup._arrays import I64 as _I64
from neardup._arrays import U8 as _U8
from neardup._arrays import U32 as _U32
from neardup._arrays import U64 as _U64
from neardup._arrays import Flags as _Flags
from neardup._arrays import Seed as _Seed
from neardup._arrays import Slots as _Slots
from neardup._arrays import Tags as _Tags

# hashing
def xxh3_64(data: Buffer, start: int, n: int, seed: _Seed = 0, /) -> int: ...
def mix64(x: _Seed, /) -> int: ...

# features: one text buf[lo:hi] (UTF-8) with the 0x110000-entry class table cls
def token_spans(
    buf: _U8, lo: int, hi: int, cls: _U8, han_single: bool, starts: _I64, ends: _I64, /
) -> int: ...
def is_cjk(buf: _U8, lo: int, hi: int, cls: _U8, /) -> bool: ...
def char_stream(
    buf: _U8, lo: int, hi: int, cls: _U8, out: _U8, cp_starts: _I64, joined: bool = False, /
) -> tuple[int, int]: ...
def feature_keys(
    buf: _U8,
    lo: int,
    hi: int,
    cls: _U8,
    mode: int,
    n: int,
    han_single: bool,
    stop_keys: _U64,
    scratch: _U8,
    starts: _I64,
    ends: _I64,
    keys: _U64,
    n_cjk: int = 5,
    /,
) -> int: ...
def simhash_words(
    keys: _U64, weights: _F64, unit: bool, seed: _Seed, words: int, out: _U64, /
) -> None: ...

# features: a batch of texts buf[offsets[d]:offsets[d + 1]]
def fingerprint_batch(
    buf: _U8,
    offsets: _I64,
    cls: _U8,
    mode: int,
    n: int,
    han_single: bool,
    stop_keys: _U64,
    weighting: int,
    top_n: int,
    idf_keys: _U64,
    idf_vals: _F64,
    idf_default: float,
    seed: _Seed,
    out: _U64,
    empty: _Flags,
    n_cjk: int = 5,
    /,
) -> None: ...
def prepare_batch(
    buf: _U8,
    offsets: _I64,
    cls: _U8,
    mode: int,
    n: int,
    han_single: bool,
    stop_keys: _U64,
    weighting: int,
    top_n: int,
    idf_keys: _U64,
    idf_vals: _F64,
    idf_default: float,
    seed: _Seed,
    n_cjk: int,
    fps: _U64,
    empty: _Flags,
    sk_mode: int,
    ngrams: _I64,
    sk_seed: _Seed,
    salts: _U64,
    mins: _U64,
    segment: _Flags,
    /,
) -> None: ...
def prepare_pack(
    texts: list[str], table: _U32, pool: _U8, fallback: Callable[[str], str], offsets: _I64, /
) -> bytes: ...
def collapse_spaces(buf: _U8, offsets: _I64, out: _U8, out_off: _I64, /) -> None: ...

# the verifier (MinHash)
def shingles(
    buf: _U8,
    offsets: _I64,
    modes: _I8,
    cls: _U8,
    n: int,
    seed: _Seed,
    flat: _U64,
    out_off: _I64,
    /,
) -> int: ...
def minhash(flat: _U64, offsets: _I64, salts: _U64, out: _U64, /) -> None: ...
def sketch(
    buf: _U8,
    offsets: _I64,
    modes: _I8,
    cls: _U8,
    n: int,
    seed: _Seed,
    salts: _U64,
    out: _U64,
    /,
) -> None: ...

# the Hamming index: tables keys/pos (tables, n), offsets (tables, 2**q + 1), permutation
# rsh/msk/lsh (tables, blocks), dedup (tables, blocks)
def search_tables(
    start: int,
    queries: _U64,
    k: int,
    keys: _U64,
    pos: _U32,
    offsets: _U32,
    q: int,
    rsh: _U64,
    msk: _U64,
    lsh: _U64,
    probes: _I64,
    nprobes: int,
    dedup: _U64,
    radius: int,
    alive: _Flags,
    out_q: _I64,
    out_p: _I64,
    out_d: _I64,
    /,
) -> tuple[int, int]: ...
def search_tables_range(
    start: int,
    queries: _U64,
    k: int,
    keys: _U64,
    pos: _U32,
    offsets: _U32,
    q: int,
    rsh: _U64,
    msk: _U64,
    lsh: _U64,
    probes: _I64,
    nprobes: int,
    dedup: _U64,
    radius: int,
    alive: _Flags,
    t_lo: int,
    t_hi: int,
    out_q: _I64,
    out_p: _I64,
    out_d: _I64,
    /,
) -> tuple[int, int]: ...
def scan_range(
    start: int,
    queries: _U64,
    k: int,
    fps: _U64,
    lo: int,
    hi: int,
    alive: _Flags,
    out_q: _I64,
    out_p: _I64,
    out_d: _I64,
    /,
) -> tuple[int, int]: ...
def brute_pairs(
    start: int, fps: _U64, k: int, out_i: _I64, out_j: _I64, out_d: _I64, /
) -> tuple[int, int]: ...
def join_tables(
    start: int,
    k: int,
    keys: _U64,
    pos: _U32,
    offsets: _U32,
    probes: _I64,
    nprobes: int,
    dedup: _U64,
    radius: int,
    out_i: _I64,
    out_j: _I64,
    out_d: _I64,
    /,
) -> tuple[int, int]: ...
def join_tables_r0(
    start: int,
    k: int,
    keys: _U64,
    pos: _U32,
    offsets: _U32,
    dedup: _U64,
    hot: int,
    out_i: _I64,
    out_j: _I64,
    out_d: _I64,
    /,
) -> tuple[int, int]: ...
def top_counts(
    fps: _U64,
    positions: _U32 | None,
    rsh: _U64,
    msk: _U64,
    lsh: _U64,
    t: int,
    top: int,
    counts: _I64,
    /,
) -> None: ...
def scatter_top(
    fps: _U64,
    positions: _U32 | None,
    rsh: _U64,
    msk: _U64,
    lsh: _U64,
    t: int,
    top: int,
    starts: _I64,
    keys: _U64,
    pos: _U32,
    /,
) -> None: ...
def bucket_segments(
    keys: _U64, pos: _U32, q: int, top: int, starts: _I64, offsets: _U32, /
) -> None: ...
def offsets_from_sorted(keys: _U64, q: int, offsets: _U32, /) -> None: ...
def sort_buckets(keys: _U64, pos: _U32, offsets: _U32, /) -> None: ...
def expand_pairs(
    a: _I64,
    b: _I64,
    dist: _I64,
    order: _I64,
    starts: _I64,
    counts: _I64,
    out_i: _I64,
    out_j: _I64,
    out_d: _I64,
    /,
) -> None: ...

# key tables (LSH bands): a run is (offsets uint32, tags uint8/16/32/64, shift, slots uint32)
def key_pack(keys: _U64, bits: int, out: _U64, /) -> None: ...
def key_lookup(
    offsets: _U32, tags: _Tags, shift: int, queries: _U64, out_q: _I64, out_at: _I64, /
) -> int: ...
def key_merge(
    a_offsets: _U32,
    a_tags: _Tags,
    a_shift: int,
    a_slots: _Slots | None,
    b_offsets: _U32,
    b_tags: _Tags,
    b_shift: int,
    b_slots: _Slots | None,
    dead: _Flags,
    out_offsets: _U32,
    out_tags: _Tags,
    out_shift: int,
    out_slots: _Slots,
    /,
) -> int: ...
def key_offsets(keys: _U64, shift: int, offsets: _U32, /) -> None: ...
