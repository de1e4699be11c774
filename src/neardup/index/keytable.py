"""KeyTable: uint64 key -> slot lookups at constant cost, with appends, tombstones and expiry.

Layout (LSM-style, numpy only): each :meth:`KeyTable.add` writes a *run* -- its rows sorted by
*table key* ``K`` (below), plus direct-address uint32 offsets on ``K``'s top ``p`` bits (``2**p``
~ rows / 8 buckets). A row stores only what its bucket does not imply: ``K``'s low bits as a
*tag* (uint16 when they fit, else uint32 or uint64; uint8 in a run large enough that
``2**(bits - 8)`` buckets cost less than a second tag byte a row) and its slot (3 bytes while
the table has fewer than ``2**24`` slots, else uint32). A lookup reads one
offset pair per run and compares the few tags of that bucket: no binary search, no dependence
on the table's size except through the number of runs, which merging keeps logarithmic (runs of
similar size merge, dropping the rows of dead slots), and through the caches: a table of
``2**27`` rows or more is probed in key order (the queries sorted by their top 16 bits). Slots
are small integers the caller assigns (0, 1, 2, ...); a slot is killed by :meth:`kill` (its rows
stay until the next merge, lookups skip them).

Memory (issue 39): a run of ``2**21`` rows or more is held as 8 *pieces*, piece ``j`` the rows
whose table key's top 3 bits are ``j`` (its own tags, slots and offsets on the bits below). A
merge goes piece by piece and releases each input piece once merged, so it holds one piece
beyond the runs instead of a second copy of them (the peak of a growing table was about twice
the table). Runs are saved as they are held, piece by piece (no copy on save; state format
4); a whole run saved by formats 2-3 is loaded as one piece over its memory map until a merge
cuts it. A merge that
fails half-way (out of memory) has consumed input pieces: the table then refuses every use
with an error instead of missing candidates.

A piece's slots are read only for the rows whose tag matches (a candidate, or a tag collision),
so from ``spill_bytes`` (:data:`SLOT_SPILL_BYTES`, a run's from ``SPILL_BYTES``) they live in
an unlinked spill file of their own (:func:`~neardup._spill.spill_array`; a merge writes them
through its shared map, a build copies them there): the page cache holds them, not anonymous
memory; freeing the piece frees its file. Tags and offsets, which every look-up reads, stay
in memory. A look-up reads a spill file's few slots with ``pread``
(:func:`~neardup._spill.read_rows`): a read through the map would make a whole large folio
resident; a loaded state's slots, mapped from its files, are read the same way. Pages read or
written through a map (a merge, a save, a batch's many rows of one piece) are dropped from it
after the pass (a later read is a minor fault). Decisions and the saved layout do not depend on
where slots live.

``value_bits``: band keys are ``mix64(x)`` of ``x = (band << 32) | values < 2**value_bits``
(:func:`~neardup.index.lsh.band_keys`; 37 bits for 32 bands) and mix64 is a bijection, so the
table key ``K = (x >> 32 << 32) | fmix32(x & 0xffffffff)`` (fmix32: murmur3's 32-bit
finaliser, also a bijection, spreading the values over the buckets) determines the key: two
keys are equal exactly when their table keys are, and (bucket, tag) is ``K`` itself. No hash
is truncated, so the candidate set is exactly that of the full keys; a band key of ``x >=
2**value_bits`` is refused by :meth:`add` and matches nothing in :meth:`lookup`. With the
default ``value_bits=64`` any uint64 keys work and ``K`` is the key itself. At 10^6 documents x
32 bands a row is 2 + 3 bytes (+ 0.25-0.5 of offsets) instead of 8 + 4 (+ 1-2); at 10^8, 1 + 4
(+ 0.7).

>>> import numpy as np
>>> t = KeyTable()
>>> t.add(np.array([[5, 6], [7, 5]], np.uint64), np.array([0, 1]))
>>> q, s = t.lookup(np.array([5, 9, 7], np.uint64))
>>> q.tolist(), s.tolist()
([0, 0, 2], [0, 1, 1])
>>> t.kill(np.array([1]))
>>> t.lookup(np.array([5], np.uint64))[1].tolist()
[0]
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._backend import C as _k
from neardup._heap import release_heap
from neardup._spill import SPILL_BYTES, drop_pages, file_map, open_rows, read_rows, spill_array
from neardup.errors import BadInputError, ConfigMismatchError, DamagedFileError
from neardup.index.lsh import mix64_np

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]
Slots = npt.NDArray[np.unsignedinteger[Any]]  # uint32, or uint8 with 3 bytes a row

__all__ = ["KeyTable"]

_M32 = np.uint64(0xFFFFFFFF)
_MAX_ROWS = 2**32 - 1  # offsets are uint32: a run never grows past this (runs stop merging)
_PIECE_BITS = 3  # a run is 2**3 pieces by the table key's top bits (module docs)
_COUNT_BLOCK = 1 << 16  # rows per step when counting dead rows (bounded temporaries)
_ALL = slice(None)
_NARROW_SLOTS = 1 << 24  # slots below this are stored in 3 bytes (C checks it)
_PIECE_ROWS = 1 << 21  # a run this large is cut in pieces (smaller: one, fewer lookup calls)
_TRIM_ROWS = 1 << 20  # a merge this large gives the heap back (rare: runs grow 4x a merge)
SLOT_SPILL_BYTES = SPILL_BYTES >> _PIECE_BITS  # a piece's slots from this size: a spill file
_NO_SPILL = 1 << 62
_SORT_ROWS = 1 << 27  # a table this large is probed in key order (KeyTable._probe_order)
_SORT_BITS = 16  # ... by the table key's top 16 bits (a radix sort of 2 passes)


def _tag_dtype(shift: int) -> np.dtype[Any]:
    for dtype in (np.uint8, np.uint16, np.uint32):
        if shift <= 8 * np.dtype(dtype).itemsize:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def _layout(rows: int, bits: int) -> tuple[int, np.dtype[Any]]:
    """``(p, tag dtype)`` of a run: 8-16 rows per bucket, or up to 4x the buckets where that
    narrows the tags enough to pay for the offsets (bytes of offsets + tags, the smaller).
    A bucket's uint16 tags are then 16-32 bytes, still one or two cache lines; the offsets
    cost half of 4-8 rows' (issue 39: 16.9 -> 8.4 B/doc at 10^7 documents x 32 bands; 4-8
    rows were measured ~8 % faster on lookups under load, to re-time quietly). uint8 tags
    take ``2**(bits - 8)`` buckets: with 32 bands (37 bits) from ~1.6e9 rows, the big run of
    ~5·10^7 documents (10^8: -19.6 B/doc)."""
    p0 = min(bits - 1, max(_PIECE_BITS, (max(rows, 16) // 8).bit_length() - 1))
    options = [p0] + [bits - w for w in (8, 16, 32) if p0 < bits - w <= p0 + 2]

    def cost(p: int) -> int:
        return 4 * (1 << p) + rows * _tag_dtype(bits - p).itemsize

    p = min(options, key=cost)
    return p, _tag_dtype(bits - p)


def _slots_of(values: npt.NDArray[Any], wide: bool) -> Slots:
    """Slots as a run stores them: uint32 (``wide``), else 3 little-endian bytes a row (uint8;
    a table of fewer than ``2**24`` slots: 3 bytes of the ~5-6 a row)."""
    v = np.ascontiguousarray(values, dtype="<u4")
    return v if wide else v.view(np.uint8).reshape(-1, 4)[:, :3].reshape(-1)


def _slot_values(slots: Slots, at: npt.NDArray[np.integer[Any]] | slice = _ALL) -> U32:
    """The slots of rows ``at`` of stored ``slots`` (:func:`_slots_of`)."""
    if slots.dtype != np.uint8:
        return np.asarray(slots[at], np.uint32)
    b = slots.reshape(-1, 3)[at].astype(np.uint32)
    return np.asarray(b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16), np.uint32)


def _new_slots(size: int, dtype: Any, spill_bytes: int) -> Slots:
    """Storage for ``size`` stored slot values (:func:`_slots_of`): anonymous, or a spill
    file from ``spill_bytes`` bytes (module docs)."""
    if size and size * np.dtype(dtype).itemsize >= spill_bytes:
        return spill_array(size, dtype)
    return np.empty(size, dtype)


def _stored(slots: Slots, spill_bytes: int) -> Slots:
    """A copy of ``slots`` of its own (:func:`_new_slots`), its file pages dropped."""
    out = _new_slots(slots.size, slots.dtype, spill_bytes)
    out[:] = slots
    drop_pages(out)
    return out


def _read_slots(slots: Slots, at: I64) -> U32:
    """The slots of rows ``at``: a spill file's few with ``pread``, else through memory (a
    file's map then dropped: many rows of one piece, a batch's, stay resident otherwise)."""
    w = 3 if slots.dtype == np.uint8 else 1
    raw = read_rows(slots, at, w * slots.itemsize)
    if raw is not None:
        return _slot_values(raw.view(slots.dtype).reshape(-1))
    out = _slot_values(slots, at)
    drop_pages(slots)
    return out


def _slot_rows(slots: Slots) -> int:
    return int(slots.size) // (3 if slots.dtype == np.uint8 else 1)


def _live_rows(dead: npt.NDArray[np.bool_], slots: Slots) -> int:
    """Rows of ``slots`` whose slot is not dead (in blocks: no run-sized index temporaries)."""
    rows = _slot_rows(slots)
    dead_rows = sum(
        int(np.count_nonzero(dead[_slot_values(slots, slice(i, i + _COUNT_BLOCK))]))
        for i in range(0, rows, _COUNT_BLOCK)
    )
    drop_pages(slots)  # read whole before a merge: mapped pages out of resident memory
    return rows - dead_rows


def _unfmix32(h: U64) -> U64:
    """Inverse of fmix32 (values < 2**32 in uint64)."""
    h = h ^ (h >> np.uint64(16))
    h = (h * np.uint64(0x7ED1B41D)) & _M32
    h = h ^ (h >> np.uint64(13)) ^ (h >> np.uint64(26))
    h = (h * np.uint64(0xA5CB9243)) & _M32
    return h ^ (h >> np.uint64(16))


@dataclass(frozen=True)
class _Piece:
    """Rows of one run sorted by their *local* key (the table key less its top piece bits)."""

    tags: npt.NDArray[np.unsignedinteger[Any]]  # low `shift` bits of the sorted local keys
    slots: Slots  # parallel to tags (:func:`_slots_of`)
    offsets: U32  # (2**(p - _PIECE_BITS) + 1,) bucket starts by the local key's top bits
    shift: int  # value_bits - p

    def lookup(self, queries: U64) -> tuple[I64, I64]:
        """(query row, row in this piece) for every equal local key."""
        cap = max(16, queries.size)
        while True:
            out_q = np.empty(cap, np.int64)
            out_at = np.empty(cap, np.int64)
            c = _k.key_lookup(self.offsets, self.tags, self.shift, queries, out_q, out_at)
            if c <= cap:
                return out_q[:c], out_at[:c]
            cap = c

    def split(self, *, copy: bool, spill_bytes: int = _NO_SPILL) -> list[_Piece]:
        """This whole run (bucket bits ``p >= _PIECE_BITS``) as ``2**_PIECE_BITS`` pieces: views
        of its tags and slots, or copies (``copy``: each can then be freed on its own; slots
        from ``spill_bytes`` in a spill file)."""
        p = int(self.offsets.size - 1).bit_length() - 1
        per = 1 << (p - _PIECE_BITS)
        pieces = []
        for j in range(1 << _PIECE_BITS):
            o0, o1 = int(self.offsets[j * per]), int(self.offsets[(j + 1) * per])
            w = 3 if self.slots.dtype == np.uint8 else 1
            t, s = self.tags[o0:o1], self.slots[w * o0 : w * o1]
            local = self.offsets[j * per : (j + 1) * per + 1] - np.uint32(o0)
            pieces.append(
                _Piece(
                    t.copy() if copy else t,
                    _stored(s, spill_bytes) if copy else s,
                    local,
                    self.shift,
                )
            )
        return pieces

    def local_keys(self) -> U64:
        """Every row's local key (bucket and tag), sorted."""
        buckets = np.repeat(
            np.arange(self.offsets.size - 1, dtype=np.uint64), np.diff(self.offsets)
        )
        return (buckets << np.uint64(self.shift)) | self.tags.astype(np.uint64)

    @property
    def size(self) -> int:
        return int(self.tags.size)

    @property
    def nbytes(self) -> int:
        """Bytes of tags, offsets and slots not in a file (:attr:`file_bytes`)."""
        return int(self.tags.nbytes + self.offsets.nbytes + self.slots.nbytes - self.file_bytes)

    @property
    def file_bytes(self) -> int:
        """Bytes of slots mapped from a file (a spill file, or a loaded state's)."""
        return int(self.slots.nbytes) if file_map(self.slots) is not None else 0


_EMPTY = _Piece(np.zeros(0, np.uint64), np.zeros(0, np.uint32), np.zeros(2, np.uint32), 63)


@dataclass(frozen=True)
class _Run:
    """One sorted run: a single piece (its keys are the table keys), or, from
    ``_PIECE_ROWS`` rows, ``2**_PIECE_BITS`` pieces, piece ``j`` holding the rows whose table
    key's top ``_PIECE_BITS`` bits (of ``bits``) are ``j``, keyed by the bits below. Laid end to
    end the pieces are the run's saved layout (:meth:`layout`)."""

    pieces: list[_Piece]
    bits: int

    @classmethod
    def build(
        cls, table_keys: U64, slots: U32, bits: int, wide: bool, spill_bytes: int = _NO_SPILL
    ) -> _Run:
        """A run from unsorted rows (``wide``: 4-byte slots; a piece's slots from
        ``spill_bytes`` bytes in a spill file)."""
        order = np.argsort(table_keys)
        keys = table_keys[order]
        p, dtype = _layout(keys.size, bits)
        offsets = np.empty((1 << p) + 1, np.uint32)
        _k.key_offsets(keys, bits - p, offsets)  # one linear pass
        tags = (keys & np.uint64((1 << (bits - p)) - 1)).astype(dtype)
        whole = _Piece(tags, _slots_of(slots[order], wide), offsets, bits - p)
        if keys.size < _PIECE_ROWS:
            if whole.slots.nbytes < spill_bytes:
                return cls([whole], bits)
            return cls([_Piece(tags, _stored(whole.slots, spill_bytes), offsets, bits - p)], bits)
        return cls(whole.split(copy=True, spill_bytes=spill_bytes), bits)

    @classmethod
    def empty(cls, bits: int) -> _Run:
        return cls([_EMPTY], bits)

    def cut(self, parts: int) -> list[_Piece]:
        """The run as ``parts`` pieces (1 or ``2**_PIECE_BITS``): its own list when it is cut
        so (a merge empties it as it goes), else views or, for one piece, a copy."""
        if len(self.pieces) == parts:
            return self.pieces
        if not self.size:
            return [_EMPTY] * parts
        if parts > 1:
            return self.pieces[0].split(copy=False)
        tags, slots, offsets = self.layout()
        return [_Piece(tags, slots, offsets, self.pieces[0].shift)]

    def layout(self) -> tuple[npt.NDArray[np.unsignedinteger[Any]], U32, U32]:
        """``(tags, slots, offsets)`` of the whole run (the pieces concatenated)."""
        if len(self.pieces) == 1:
            one = self.pieces[0]
            return one.tags, _slot_values(one.slots), one.offsets
        starts = np.cumsum([0] + [pc.size for pc in self.pieces], dtype=np.int64).tolist()
        offsets = [
            pc.offsets[:-1] + np.uint32(a) for pc, a in zip(self.pieces, starts, strict=False)
        ]
        return (
            np.concatenate([pc.tags for pc in self.pieces]),
            self.slots,
            np.concatenate([*offsets, np.array([starts[-1]], np.uint32)]),
        )

    def table_keys(self) -> U64:
        """Every row's table key, sorted."""
        if len(self.pieces) == 1:
            return self.pieces[0].local_keys()
        top = np.uint64(self.bits - _PIECE_BITS)
        return np.concatenate(
            [(np.uint64(j) << top) | pc.local_keys() for j, pc in enumerate(self.pieces)]
        )

    @property
    def slots(self) -> U32:
        """Every row's slot, in table key order."""
        return np.concatenate([_slot_values(pc.slots) for pc in self.pieces])

    @property
    def size(self) -> int:
        return sum(pc.size for pc in self.pieces)

    @property
    def nbytes(self) -> int:
        return sum(pc.nbytes for pc in self.pieces)

    @property
    def file_bytes(self) -> int:
        return sum(pc.file_bytes for pc in self.pieces)


class KeyTable:
    """Maps uint64 keys to the slots that hold them (see the module docs).

    ``merge_factor``: a run merges into the one before it when that one is at most this many
    times larger. ``value_bits``: the keys are ``mix64`` of values below ``2**value_bits``
    (32..64; 64: any keys). ``spill_bytes``: a piece's slots from this size live in a spill
    file (default :data:`SLOT_SPILL_BYTES`; module docs).
    """

    def __init__(
        self, *, merge_factor: int = 4, value_bits: int = 64, spill_bytes: int | None = None
    ) -> None:
        if not 32 <= value_bits <= 64:
            raise BadInputError(f"value_bits must be in 32..64, got {value_bits}")
        self.merge_factor = max(2, int(merge_factor))
        self.value_bits = int(value_bits)
        self._runs: list[_Run] = []
        self._dead = np.zeros(0, dtype=bool)  # by slot
        self._failed: str | None = None  # a merge that failed: see _merging
        self._top = -1  # the highest slot added: 3-byte slots below 2**24
        self.spill_bytes = SLOT_SPILL_BYTES if spill_bytes is None else max(1, int(spill_bytes))

    def pack(self, keys: npt.ArrayLike) -> U64:
        """Table keys of ``keys`` (flattened); ``2**64 - 1`` for a key outside ``value_bits``."""
        flat = np.ascontiguousarray(keys, dtype=np.uint64).ravel()
        out = np.empty(flat.size, np.uint64)
        _k.key_pack(flat, self.value_bits, out)
        return out

    def unpack(self, table_keys: U64) -> U64:
        """The keys of table keys (inverse of :meth:`pack`)."""
        if self.value_bits == 64:
            return table_keys
        x = (table_keys >> np.uint64(32) << np.uint64(32)) | _unfmix32(table_keys & _M32)
        return mix64_np(x)

    def add(self, keys: U64, slots: npt.ArrayLike) -> None:
        """Add the ``(n, m)`` keys of ``n`` new slots (each slot must be new and alive)."""
        keys = np.asarray(keys, dtype=np.uint64)
        slot_arr = np.asarray(slots, dtype=np.int64)
        if keys.ndim != 2 or keys.shape[0] != slot_arr.shape[0]:
            raise BadInputError(
                f"keys must be (n, m) for n={slot_arr.shape[0]} slots, got {keys.shape}"
            )
        self._usable()
        if slot_arr.size == 0:
            return
        top = int(slot_arr.max())
        if top >= 2**32 - 1 or int(slot_arr.min()) < 0:
            raise BadInputError("slots must be in [0, 2**32 - 1)")
        packed = self.pack(keys)
        if self.value_bits < 64 and bool((packed == np.uint64(2**64 - 1)).any()):
            raise BadInputError(f"keys must be mix64 of values below 2**{self.value_bits}")
        if top >= self._dead.size:
            grown = np.zeros(max(top + 1, 2 * self._dead.size), dtype=bool)
            grown[: self._dead.size] = self._dead
            self._dead = grown
        flat_slots = np.repeat(slot_arr.astype(np.uint32), keys.shape[1])
        self._top = max(self._top, top)
        self._runs.append(
            _Run.build(packed, flat_slots, self.value_bits, self._wide, self.spill_bytes)
        )
        while len(self._runs) >= 2:
            a, b = self._runs[-2], self._runs[-1]
            if a.size > self.merge_factor * b.size or a.size + b.size > _MAX_ROWS:
                break
            rows = a.size + b.size
            with self._merging():
                self._runs[-2:] = [self._merge(a, b)]
            if rows >= _TRIM_ROWS:  # the merged runs' freed pieces stay in the heap otherwise
                release_heap()

    def _merge(self, a: _Run, b: _Run) -> _Run:
        """``a`` and ``b`` as one run without dead rows (laid out for its live rows). A large
        one is merged piece by piece, each input piece released once merged: the merge holds
        one piece more than the runs, not a second copy of them. ``a`` and ``b`` are consumed."""
        parts = 1 << _PIECE_BITS if a.size + b.size >= _PIECE_ROWS else 1
        a_in, b_in = a.cut(parts), b.cut(parts)
        counted = bool(self._dead.any())  # no slot dead (no window, nothing forgotten): no pass
        live = [
            _live_rows(self._dead, pa.slots) + _live_rows(self._dead, pb.slots)
            if counted
            else pa.size + pb.size
            for pa, pb in zip(a_in, b_in, strict=True)
        ]
        p, dtype = _layout(sum(live), self.value_bits)
        shift, bucket_bits = self.value_bits - p, p if parts == 1 else p - _PIECE_BITS
        pieces = []
        for j, n in enumerate(live):
            pa, pb = a_in[j], b_in[j]
            offsets = np.empty((1 << bucket_bits) + 1, np.uint32)
            tags = np.empty(n, dtype)
            size, sdt = (n, np.uint32) if self._wide else (3 * n, np.uint8)
            slots = _new_slots(size, sdt, self.spill_bytes)
            m = _k.key_merge(
                pa.offsets, pa.tags, pa.shift, pa.slots, pb.offsets, pb.tags, pb.shift, pb.slots,
                self._dead, offsets, tags, shift, slots,
            )  # fmt: skip
            assert m == n
            for done in (slots, pa.slots, pb.slots):  # written or read whole: out of RSS
                drop_pages(done)
            pieces.append(_Piece(tags, slots, offsets, shift))
            a_in[j] = b_in[j] = _EMPTY  # released (when the run was cut so)
        return _Run(pieces, self.value_bits)

    def kill(self, slots: npt.ArrayLike) -> None:
        """Mark slots dead: lookups skip them, the next merge drops their rows."""
        s = np.asarray(slots, dtype=np.int64)
        self._dead[s[s < self._dead.size]] = True

    def compact(self, live: npt.ArrayLike | None = None) -> None:
        """Merge everything into one run without dead rows.

        ``live``: the sorted live slots, to renumber them ``0..len(live)-1`` (the caller drops
        its dead slots the same way); the runs are merged (each is sorted), never re-sorted.
        """
        self._usable()
        merged: _Run | None = None
        with self._merging():
            for run in self._runs:
                merged = run if merged is None else self._merge(merged, run)
            if merged is not None and len(self._runs) == 1:  # one run: still drop its dead rows
                merged = self._merge(merged, _Run.empty(self.value_bits))
        if live is None:
            self._runs = [merged] if merged is not None and merged.size else []
            return
        slots = np.asarray(live, np.int64)
        renumber = np.zeros(max(self._dead.size, 1), np.uint32)
        renumber[slots] = np.arange(slots.size, dtype=np.uint32)
        self._dead = np.zeros(slots.size, dtype=bool)
        self._top = slots.size - 1
        if merged is None or not merged.size:
            self._runs = []
            return
        pieces = [
            _Piece(pc.tags, self._renumbered(pc.slots, renumber), pc.offsets, pc.shift)
            for pc in merged.pieces
        ]
        self._runs = [_Run(pieces, self.value_bits)]

    def _renumbered(self, slots: Slots, renumber: U32) -> Slots:
        """``renumber[slots]`` stored anew (:func:`_new_slots`), in blocks: no run-sized
        temporaries, and spilled slots go from file to file."""
        rows, w = _slot_rows(slots), 1 if self._wide else 3
        out = _new_slots(w * rows, np.uint32 if self._wide else np.uint8, self.spill_bytes)
        for i in range(0, rows, _COUNT_BLOCK):
            block = renumber[_slot_values(slots, slice(i, i + _COUNT_BLOCK))]
            out[w * i : w * (i + block.size)] = _slots_of(block, self._wide)
        drop_pages(out)
        return out

    @contextmanager
    def _merging(self) -> Iterator[None]:
        """Merges consume their input runs: one that fails (out of memory) leaves the table
        without some rows, so it refuses every later use instead of missing candidates."""
        try:
            yield
        except BaseException as e:
            self._failed = f"{type(e).__name__}: {e}"
            raise

    def _usable(self) -> None:
        if self._failed is not None:
            raise RuntimeError(
                f"the key table lost rows in a merge that failed ({self._failed}); load the "
                "saved state again (or rebuild the index) before using it"
            )

    def lookup(self, queries: U64) -> tuple[I64, I64]:
        """``(query row, slot)`` for every live slot holding a queried key, sorted, distinct.

        ``queries`` is ``(n,)`` or ``(n, m)`` (row ``i``'s m keys: a slot sharing any is a hit).
        """
        self._usable()
        q2 = np.asarray(queries, dtype=np.uint64)
        m = q2.shape[1] if q2.ndim == 2 else 1
        flat = self.pack(q2)  # outside value_bits: 2**64 - 1, a bucket no run has
        flat, back = self._probe_order(flat)
        found: list[tuple[I64, I64, _Piece]] = []  # (query index, row in the piece, piece)
        for run in self._runs:
            if len(run.pieces) == 1:
                found.append((*run.pieces[0].lookup(flat), run.pieces[0]))
        cut = [run for run in self._runs if len(run.pieces) > 1]
        if cut:
            found += self._lookup_pieces(cut, flat, grouped=back is not None)
        found = [f for f in found if f[1].size]  # gathers only where there are hits
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        row = np.concatenate([q for q, _, _ in found])
        row = (row if back is None else back[row]) // m
        slot = np.concatenate([_read_slots(pc.slots, at).astype(np.int64) for _, at, pc in found])
        alive = ~self._dead[slot]
        row, slot = row[alive], slot[alive]
        order = np.lexsort((slot, row))
        row, slot = row[order], slot[order]
        first = np.ones(row.size, dtype=bool)
        first[1:] = (row[1:] != row[:-1]) | (slot[1:] != slot[:-1])
        return row[first], slot[first]

    def _probe_order(self, flat: U64) -> tuple[U64, I64 | None]:
        """``(queries, their index in flat)`` in the order to probe the runs: as given, or, in a
        table of ``_SORT_ROWS`` rows or more, sorted by their top ``_SORT_BITS`` bits (keys
        outside ``value_bits``, which match nothing, dropped). A lookup at scale is a cache
        miss per run and key (offsets, then tags); in key order consecutive queries fall in
        nearby buckets: the same pages (TLB) and DRAM rows, a sweep forward instead of random
        (issue 39: -0.1 to -0.9 us a document at 10^7, loaded machine). The pieces' queries are then
        contiguous (their bits are the top ones)."""
        if sum(self.runs) < _SORT_ROWS:
            return flat, None
        rows = None  # every query (no index array: a lookup's temporaries stay few)
        if self.value_bits < 64 and bool((out := flat == np.uint64(2**64 - 1)).any()):
            rows = np.flatnonzero(~out)
            flat = flat[rows]
        top = (flat >> np.uint64(self.value_bits - _SORT_BITS)).astype(np.uint16)
        order = np.argsort(top, kind="stable")  # a radix sort of uint16
        return flat[order], order if rows is None else rows[order]

    def _lookup_pieces(
        self, runs: list[_Run], flat: U64, *, grouped: bool = False
    ) -> list[tuple[I64, I64, _Piece]]:
        """Lookups of table keys ``flat`` in runs cut in pieces: each key in its piece
        (``grouped``: ``flat`` is sorted by its top bits, each piece's keys a slice)."""
        top = np.uint64(self.value_bits - _PIECE_BITS)
        piece = np.minimum(flat >> top, 1 << _PIECE_BITS).astype(np.uint8)  # 8: no piece
        order = None if grouped else np.argsort(piece, kind="stable")
        in_order = piece if order is None else piece[order]
        bounds = np.searchsorted(in_order, np.arange((1 << _PIECE_BITS) + 1)).tolist()
        local = flat & ((np.uint64(1) << top) - np.uint64(1))
        found = []
        for j in range(1 << _PIECE_BITS):
            a, b = bounds[j], bounds[j + 1]
            if a < b:
                queries_j = local[a:b] if order is None else local[order[a:b]]
                for run in runs:
                    r, at = run.pieces[j].lookup(queries_j)
                    found.append((r + a if order is None else order[a:b][r], at, run.pieces[j]))
        return found

    def keys_by_slot(self, slots: npt.ArrayLike, m: int) -> U64:
        """The ``(len(slots), m)`` keys of live slots (each must hold exactly ``m`` keys)."""
        want = np.asarray(slots, dtype=np.int64)
        keys, own = [np.zeros(0, np.uint64)], [np.zeros(0, np.int64)]
        for run in self._runs:
            pick = np.isin(run.slots, want)
            keys.append(run.table_keys()[pick])
            own.append(run.slots[pick].astype(np.int64))
        key, slot = np.concatenate(keys), np.concatenate(own)
        order = np.argsort(slot, kind="stable")
        if slot.size != want.size * m:
            raise BadInputError(
                f"expected {m} keys per slot, found {slot.size} for {want.size} slots"
            )
        return self.unpack(key[order]).reshape(want.size, m)

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The runs, the dead-slot mask and ``value_bits`` as named arrays, saved as they are
        (no re-sort on load, no copy on save): ``run{i}_tags/_slots/_offsets`` for a run of one
        piece, ``run{i}_piece{j}_...`` for each piece of a cut one; slots of 3 bytes are uint8."""
        out: dict[str, npt.NDArray[Any]] = {
            "dead": self._dead,
            "value_bits": np.array([self.value_bits], np.int64),
        }
        for i, run in enumerate(self._runs):
            cut = len(run.pieces) > 1
            for j, pc in enumerate(run.pieces):
                name = f"run{i}_piece{j}" if cut else f"run{i}"
                out[f"{name}_tags"], out[f"{name}_slots"] = pc.tags, pc.slots
                out[f"{name}_offsets"] = pc.offsets
        return out

    @classmethod
    def from_arrays(
        cls,
        arrays: dict[str, npt.NDArray[Any]],
        *,
        merge_factor: int = 4,
        value_bits: int = 64,
        spill_bytes: int | None = None,
    ) -> KeyTable:
        """A table over :meth:`to_arrays` output (memory maps are used read-only); checks the
        shapes and offsets the lookup kernel relies on (O(buckets)).

        The layout of state format 1 (``run{i}_keys``: full uint64 keys, int64 offsets) is
        converted: its keys are packed and re-sorted (O(rows log rows), once). Formats 2-3
        (whole runs, uint32 slots) are read as they are.
        """
        table = cls(merge_factor=merge_factor, value_bits=value_bits, spill_bytes=spill_bytes)
        table._dead = np.array(arrays["dead"], dtype=bool)  # a copy: kill() writes it
        table._top = table._dead.size - 1  # at most
        if "run0_keys" in arrays:
            table._runs = [table._old_run(arrays, i) for i in range(_count(arrays, "keys"))]
            return table
        saved = arrays.get("value_bits")
        bits = int(saved[0]) if saved is not None and saved.shape == (1,) else None
        if bits != value_bits:
            raise ConfigMismatchError(
                f"the key table was saved with value_bits {bits}, this design has {value_bits}"
            )
        i = 0
        while f"run{i}_tags" in arrays or f"run{i}_piece0_tags" in arrays:
            if f"run{i}_tags" in arrays:
                whole, p = _saved_piece(arrays, f"run{i}", value_bits, f"run {i}")
                table._runs.append(table._loaded_run(whole, p))
            else:
                where = [f"run {i} piece {j}" for j in range(1 << _PIECE_BITS)]
                pieces = [
                    _saved_piece(arrays, f"run{i}_piece{j}", value_bits - _PIECE_BITS, where[j])[0]
                    for j in range(1 << _PIECE_BITS)
                ]
                if len({(pc.shift, pc.tags.dtype) for pc in pieces}) != 1:
                    raise DamagedFileError(f"key table run {i}: its pieces disagree in layout")
                table._runs.append(_Run(pieces, value_bits))
            i += 1
        return table

    def _loaded_run(self, whole: _Piece, p: int) -> _Run:
        """A saved whole run: one piece over its arrays (a memory map stays one), or, saved on
        fewer bucket bits than the pieces take, re-laid out (a small run)."""
        if p >= _PIECE_BITS:
            return _Run([whole], self.value_bits)
        return _Run.build(
            whole.local_keys(),
            _slot_values(whole.slots),
            self.value_bits,
            self._wide,
            self.spill_bytes,
        )

    def _old_run(self, arrays: dict[str, npt.NDArray[Any]], i: int) -> _Run:
        """Run ``i`` of the format-1 layout, converted (its keys are checked here)."""
        keys, slots = arrays[f"run{i}_keys"], arrays[f"run{i}_slots"]
        if keys.dtype != np.uint64 or slots.dtype != np.uint32 or keys.shape != slots.shape:
            raise DamagedFileError(f"key table run {i} is inconsistent (keys, slots)")
        packed = self.pack(keys)
        if self.value_bits < 64 and bool((packed == np.uint64(2**64 - 1)).any()):
            raise DamagedFileError(f"key table run {i} holds keys of another design")
        return _Run.build(packed, np.array(slots), self.value_bits, self._wide, self.spill_bytes)

    @property
    def _wide(self) -> bool:
        """Whether new runs store 4-byte slots (3 below ``2**24`` slots)."""
        return self._top >= _NARROW_SLOTS

    @property
    def runs(self) -> list[int]:
        """Rows per run, oldest first."""
        return [r.size for r in self._runs]

    @property
    def nbytes(self) -> int:
        """Bytes of tags, slots and offsets in memory (not :attr:`file_bytes`)."""
        return sum(r.nbytes for r in self._runs) + int(self._dead.nbytes)

    @property
    def file_bytes(self) -> int:
        """Bytes of slots mapped from files (spill files, a loaded state's)."""
        return sum(r.file_bytes for r in self._runs)


def _saved_piece(
    arrays: dict[str, npt.NDArray[Any]], name: str, key_bits: int, where: str
) -> tuple[_Piece, int]:
    """Saved piece ``name`` (keys of ``key_bits`` bits) checked, and its bucket bits."""
    tags, slots, offsets = (arrays[f"{name}_{part}"] for part in ("tags", "slots", "offsets"))
    p = int(offsets.size - 1).bit_length() - 1
    rows = tags.size if tags.ndim == 1 else -1
    ok = (  # any layout whose tags hold the bits the buckets leave (not only _layout's)
        tags.dtype in (np.uint8, np.uint16, np.uint32, np.uint64)
        and 0 <= p <= key_bits
        and key_bits - p <= 8 * tags.dtype.itemsize
        and slots.ndim == 1
        and slots.size == rows * (3 if slots.dtype == np.uint8 else 1)
        and slots.dtype in (np.uint32, np.uint8)
        and offsets.dtype == np.uint32
        and offsets.size == (1 << p) + 1
        and int(offsets[0]) == 0
        and int(offsets[-1]) == rows
        and bool((offsets[1:] >= offsets[:-1]).all())
    )
    if not ok:
        raise DamagedFileError(f"key table {where} is inconsistent (tags, slots, offsets)")
    open_rows(slots)  # a saved state's slots: read with pread, as a spill file's
    return _Piece(tags, slots, offsets, key_bits - p), p


def _count(arrays: dict[str, npt.NDArray[Any]], what: str) -> int:
    """How many runs ``run0_<what>``, ``run1_<what>``, ... the arrays hold."""
    i = 0
    while f"run{i}_{what}" in arrays:
        i += 1
    return i
