"""Idempotent re-runs (issue 38): a document already decided is not decided, nor added, again.

The rule, written once for every surface: a document fed with an external id is *already
decided* when a document the state still holds (from an earlier call, or earlier in the same
call) has the same id and the same exact-text key (its normalised text's xxh3_128, the key of
the exact fast path). It gets that document's stored decision (status, ``duplicate_of``,
distance, cluster, similarity, and its position) and adds nothing to the state, so feeding a
day again, or re-running a failed shard on a ``--state``, changes nothing. A known id with
another text is decided afresh as a new document (the id is then repeated: the CLI warns).
Without ids the rule does not apply. Rows that left the state (expired by a window) are not
held, so their documents are decided again.

>>> from neardup import Deduplicator
>>> dd = Deduplicator()
>>> first = dd.feed(["storm hits the coast", "cats and dogs"], ids=["a", "b"])
>>> again = dd.feed(["storm hits the coast", "cats and dogs", "storm hits the coast"],
...                 ids=["a", "b2", "c"])
>>> again.position.tolist(), again.statuses, dd.n_documents
([0, 2, 3], ['unique', 'exact_duplicate', 'exact_duplicate'], 4)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._persist import JsonColumn
from neardup.dedup.decisions import Decisions, concat_decisions

__all__ = ["IdPositions", "merge_repeats", "repeats", "run_positions"]

NEW = -1  # repeats(): a row to decide


def _id_key(value: Any) -> bytes:
    return json.dumps(value).encode()  # as JsonColumn.arrays() encodes ids


class IdPositions:
    """The last position of each external id in a state's id column, kept up to date as the
    column grows (rebuilt when the state loads another column). The rows present when it was
    (re)built are held as sorted 64-bit hashes of their ids' JSON (16 bytes a row, checked
    against the column on a hit); rows added since, in a dict, merged in once it outgrows them.

    >>> col = JsonColumn.of(["a", "b", "a"])
    >>> ix = IdPositions()
    >>> ix.lookup(col, 10, ["a", "z"])
    [12, -1]
    >>> col.extend(["z"]); ix.lookup(col, 10, ["a", "z"])
    [12, 13]
    """

    def __init__(self, merge_at: int = 65536) -> None:
        self._merge_at = merge_at  # recent rows that trigger a new base (at least the base's)
        self._col: JsonColumn | None = None
        self._seen = 0  # rows of the column taken in (base + recent)
        self._hash = np.zeros(0, np.int64)  # base rows: hashes, sorted, and their rows
        self._rows = np.zeros(0, np.int64)
        self._recent: dict[bytes, int] = {}  # rows added since the base was built -> row

    def lookup(self, col: JsonColumn | None, origin: int, ids: list[Any]) -> list[int]:
        """Per id, the last position holding it (-1: none)."""
        if col is None:
            return [-1] * len(ids)
        self._sync(col)
        data, off = col.arrays()
        out = []
        for v in ids:
            key = _id_key(v)
            row = self._recent.get(key, -1)
            if row < 0:
                h = np.int64(hash(key))
                a = np.searchsorted(self._hash, h, "left")
                b = np.searchsorted(self._hash, h, "right")
                hits = [int(r) for r in self._rows[a:b] if bytes(data[off[r] : off[r + 1]]) == key]
                row = max(hits, default=-1)
            out.append(-1 if row < 0 else origin + row)
        return out

    def _sync(self, col: JsonColumn) -> None:
        if col is not self._col or len(col) < self._seen:
            self._col, self._seen, self._recent = col, 0, {}
            self._hash, self._rows = np.zeros(0, np.int64), np.zeros(0, np.int64)
        n = len(col)
        if n == self._seen:
            return
        data, off = col.arrays()
        if len(self._recent) + n - self._seen > max(self._merge_at, self._rows.size):
            hashes = [hash(bytes(data[off[r] : off[r + 1]])) for r in range(n)]
            h = np.asarray(hashes, np.int64)
            self._rows = np.argsort(h, kind="stable").astype(np.int64)
            self._hash, self._recent = h[self._rows], {}
        else:
            for r in range(self._seen, n):
                self._recent[bytes(data[off[r] : off[r + 1]])] = r
        self._seen = n


def repeats(
    ids: Sequence[Any], keys: Sequence[int], held: Callable[[list[Any]], list[tuple[int, int]]]
) -> npt.NDArray[np.int64]:
    """Per row: the position of the held document with the same id and exact key (>= 0),
    ``-2 - j`` when row ``j`` earlier in this batch has them, else ``NEW`` (-1). ``held(ids)``
    gives per id the last held position with it and that document's exact key (-1, 0: none).

    >>> held = lambda ids: [(7, 11) if i == "a" else (-1, 0) for i in ids]
    >>> repeats(["a", "a", "b", "b", "a"], [11, 12, 5, 5, 12], held).tolist()
    [7, -1, -1, -4, -3]
    """
    out = np.full(len(ids), NEW, np.int64)
    first: dict[tuple[bytes, int], int] = {}
    for i, ((pos, key), v, k) in enumerate(zip(held(list(ids)), ids, keys, strict=True)):
        mine = (_id_key(v), k)
        if mine in first:
            out[i] = -2 - first[mine]
        elif pos >= 0 and key == k:
            out[i] = pos
        else:
            first[mine] = i
    return out


def merge_repeats(
    rep: npt.NDArray[np.int64],
    decided: Decisions,
    stored: Callable[[npt.NDArray[np.int64]], Decisions],
) -> Decisions:
    """One decision per row of the batch: ``decided`` for the ``NEW`` rows (in order), the
    stored decisions (``stored(positions)``) or the earlier row's for the others.

    >>> d = Decisions(*(np.asarray(x) for x in ([9], [1], [0], [-1], [-1], [4], [np.nan])))
    >>> s = lambda p: Decisions(*(np.asarray(x) for x in (p, [2], [2], [0], [0], [0], [1.0])))
    >>> merge_repeats(np.asarray([3, -1, -3]), d, s).position.tolist()
    [3, 9, 9]
    """
    fresh, known = np.flatnonzero(rep == NEW), np.flatnonzero(rep >= 0)
    both = concat_decisions([decided, stored(rep[known])])
    take = np.empty(rep.size, np.int64)
    take[fresh] = np.arange(fresh.size)
    take[known] = fresh.size + np.arange(known.size)
    inner = np.flatnonzero(rep <= -2)  # an earlier row of the batch, always a NEW one
    take[inner] = take[-2 - rep[inner]]
    return Decisions(*(getattr(both, f.name)[take] for f in fields(Decisions)))


def run_positions(d: Decisions, base: int) -> tuple[Decisions, list[int]]:
    """A run's decisions (one per input row, from position ``base`` on in the state) with row
    numbers for positions: ``position`` 0..n-1, ``duplicate_of`` the row of the run that holds
    the kept document (its first row), or ``n + p`` for a document ``p`` of an earlier run;
    also those earlier positions.

    >>> d = Decisions(*(np.asarray(x) for x in ([5, 6, 5, 2], [0] * 4, [0, 1, 0, 0],
    ...                                         [-1, 5, -1, -1], [-1, 1, -1, -1], [0, 0, 0, 1],
    ...                                         [np.nan] * 4)))
    >>> view, earlier = run_positions(d, base=5)
    >>> view.position.tolist(), view.duplicate_of.tolist(), earlier
    ([0, 1, 2, 3], [-1, 0, -1, -1], [])
    >>> run_positions(Decisions(*(np.asarray(x) for x in ([5], [0], [1], [2], [1], [0],
    ...                                                   [0.9]))), base=5)[0].duplicate_of
    array([3])
    """
    n = len(d)
    holder: dict[int, int] = {}
    for row, p in enumerate(d.position.tolist()):
        holder.setdefault(p, row)
    dup = d.duplicate_of.tolist()
    earlier = sorted({p for p in dup if 0 <= p < base})
    local = [p if p < 0 else holder[p] if p >= base else n + p for p in dup]
    out = Decisions(
        np.arange(n, dtype=np.int64),
        d.fingerprint,
        d.status,
        np.asarray(local, np.int64),
        d.distance,
        d.cluster_id,
        d.similarity,
        d.threshold,
    )
    return out, earlier
