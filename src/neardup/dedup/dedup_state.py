"""The one state of a :class:`~neardup.Deduplicator`: what it has decided and what it searches.

:class:`DedupState` holds the per-document columns (:mod:`neardup.dedup.columns`: decisions,
fingerprints, exact keys, timestamps, flags), the exact-text map, the candidate index, the
sketches of kept documents, the external ids and the counters. It runs the decision core's
step (:func:`neardup.dedup.core.decide_batch`) on itself, and is what a saved state, the
service's SQLite rows and a snapshot hold. The :class:`~neardup.Deduplicator` facade owns the
configuration and the public API; it holds one ``DedupState`` and a fresh one per
:meth:`~neardup.Deduplicator.replace`.

>>> from neardup import Deduplicator
>>> dd = Deduplicator()
>>> _ = dd.feed(["storm hits the coast tonight", "storm hits the coast tonight"])
>>> state = dd._state
>>> state.n_documents, state.n_clusters, state.decisions(0, 2).statuses
(2, 1, ['unique', 'exact_duplicate'])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._growable import Growable
from neardup._persist import JsonColumn
from neardup._spill import SpillGrowable
from neardup.dedup.budget import PAIR_BUDGET, budget_cuts
from neardup.dedup.candidates import CandidateIndex
from neardup.dedup.columns import FORGOTTEN, SEARCHED, StateColumns, StateFormatError
from neardup.dedup.core import DecideConfig, StateView, decide_batch, processing_order
from neardup.dedup.exact_map import ExactMap
from neardup.dedup.greedy import Considered, Ledger, horizons
from neardup.dedup.rerun import NEW, IdPositions, merge_repeats, repeats
from neardup.dedup.similarity import decided_evidence
from neardup.dedup.state import (
    DUPLICATE,
    STATUS_NAMES,
    UNIQUE,
    Chunk,
    Decisions,
    slice_chunk,
    take_chunk,
)

__all__ = ["DedupState"]


class DedupState(StateColumns):
    """Per-document columns, exact map, candidate index, sketches, ids and counters of one
    Deduplicator (module docs); ``core`` is the decide step's configuration."""

    def __init__(
        self,
        core: DecideConfig,
        candidates: CandidateIndex,
        verifier: Any,
        pair_budget: int = PAIR_BUDGET,
    ) -> None:
        self.core = core
        self.keep = core.keep
        self.window = core.window
        self.verifier = verifier
        self.candidates = candidates
        self.pair_budget = pair_budget  # candidate pairs per streaming part (dedup/budget.py)
        self.rep = Growable(np.int64)
        self.dist = Growable(np.int16)
        self.cluster = Growable(np.int64)
        self.status = Growable(np.int8)
        self.ts = Growable(np.float64)
        self.fps = Growable(np.uint64)
        self.slot = Growable(np.int64)  # row in sketches for kept docs (with a verifier)
        # read only for verified candidates: moves to a spill file past 64 MiB (issue 39)
        self.sketches: SpillGrowable | None = None
        self.key_hi = Growable(np.uint64)  # exact keys (xxh3_128 halves), 0 when empty
        self.key_lo = Growable(np.uint64)
        self.flags = Growable(np.int8)  # SEARCHED | FORGOTTEN (dedup/columns.py)
        self.sim = Growable(np.float64)  # the similarity that decided (saved; NaN: unknown)
        self.need = Growable(np.float64)  # the threshold it was compared with (saved too)
        self.trace: dict[int, list[Considered]] | None = None  # see greedy.Ledger.trace
        # per kept document the lowest similarity of a member (the cluster_similarity rule)
        self.floor = Growable(np.float32)  # float32 everywhere: the same floors in every engine
        self.exact = ExactMap()
        self.ids: JsonColumn | None = None  # external ids, once any were given
        self.n_clusters = 0
        self.origin = 0  # per-document arrays start at this position (see dedup/columns.py)
        self.max_ts = -np.inf
        self.horizon: float = -np.inf  # kept documents with floor(t) < horizon have expired
        self.late = 0  # documents decided after the kept ones they could match expired
        self.pruned_at = 0  # exact-map size after the last pruning
        self.unindexed: np.ndarray | None = None  # kept by resolve(), not yet in the index
        self.id_positions = IdPositions()  # the rerun rule's id look-up (dedup/rerun.py)
        self.already = 0  # documents fed again (same id and text): not added (not saved)

    @property
    def n_documents(self) -> int:
        """Documents decided so far."""
        return self.origin + self.status.size

    def decide_chunk(
        self, chunk: Chunk, ids: Sequence[Any] | None = None, *, commit: bool = True
    ) -> Decisions:
        """Decide ``chunk`` against this state (streaming order); ``commit=False`` leaves the
        state exactly as it was (a dry run). With ``ids``, documents already decided (same id
        and text) get their stored decision and are not added (:mod:`neardup.dedup.rerun`)."""
        if ids is not None and len(ids):
            rep = repeats(ids, chunk.keys, self.held)
            if (rep != NEW).any():
                new = np.flatnonzero(rep == NEW).tolist()
                decided = self.decide_new(take_chunk(chunk, new), [ids[i] for i in new], commit)
                self.already += int((rep != NEW).sum()) if commit else 0
                return merge_repeats(rep, decided, self.decisions_at)
        return self.decide_new(chunk, ids, commit)

    def held(self, ids: list[Any]) -> list[tuple[int, int]]:
        """Per id, the last held (not forgotten) position with it and its exact key (-1, 0)."""
        out = []
        positions = self.id_positions.lookup(self.ids, self.origin, ids)
        for p, key in zip(positions, self.exact_keys(positions), strict=True):
            forgotten = key is not None and self.flags.view()[p - self.origin] & FORGOTTEN
            out.append((-1, 0) if key is None or forgotten else (p, key))
        return out

    def exact_keys(self, positions: Sequence[int]) -> list[int | None]:
        """The exact key of each position (None: not held)."""
        out: list[int | None] = []
        for p in positions:
            row = p - self.origin
            if 0 <= row < self.status.size:
                out.append((int(self.key_hi.view()[row]) << 64) | int(self.key_lo.view()[row]))
            else:
                out.append(None)
        return out

    def decide_new(self, chunk: Chunk, ids: Sequence[Any] | None, commit: bool) -> Decisions:
        """:meth:`decide_chunk` of documents not decided before."""
        if commit and (cuts := self.budget_cuts(chunk)):  # hot keys: in parts, same decisions
            base, n = self.n_documents, len(chunk.fps)
            for a, b in pairwise([0, *cuts, n]):
                self.decide_new(slice_chunk(chunk, a, b), None if ids is None else ids[a:b], True)
            return self.decisions(base, base + n)
        self.index_unindexed()
        base, n = self.n_documents, len(chunk.fps)
        saved = (self.n_clusters, self.max_ts)
        hz = self.chunk_horizons(chunk)
        self.extend(chunk)
        self.exact.start_log(chunk.keys)  # its keys move into the map's dict
        floor_log: list[tuple[int, float]] = []
        new = self.decide_rows(chunk, np.arange(n), base, streaming=True, hz=hz, log=floor_log)
        self.fill_similarity(base, chunk)
        out = self.decisions(base, base + n)
        if not commit:
            self.exact.undo_log()
            floor = self.floor.writable() if floor_log else None
            for row, old in reversed(floor_log):  # kept documents of earlier calls
                assert floor is not None
                floor[row] = old
            self.truncate(base)
            self.n_clusters, self.max_ts = saved
            return out
        self.commit(base, chunk, ids, hz)
        self.index_new(base, new, chunk)
        return out

    def append_columns(self, columns: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Append rows decided earlier (positions ``n_documents``..``meta["documents"] - 1``)
        without deciding them again; forgotten rows are forgotten again."""
        self.index_unindexed()
        base, stop = self.n_documents, int(meta["documents"])
        pos = np.asarray(columns["position"], np.int64)
        if not np.array_equal(pos, np.arange(base, stop)):
            raise ValueError(f"state columns must hold positions {base}..{stop - 1}, in order")
        status = np.asarray(columns["status"], np.int8)
        hi = np.asarray(columns["exact_key_hi"], np.uint64).tolist()
        lo = np.asarray(columns["exact_key_lo"], np.uint64).tolist()
        sketches = columns.get("sketch") if self.verifier is not None else None
        chunk = Chunk(
            np.asarray(columns["fingerprint"], np.uint64),
            status == STATUS_NAMES.index("empty"),
            [(h << 64) | x for h, x in zip(hi, lo, strict=True)],
            np.asarray(columns["timestamp"], np.float64),
            np.zeros(pos.size, np.int64),
            None if sketches is None else np.asarray(sketches),
        )
        self.extend(chunk)
        rows = slice(base - self.origin, stop - self.origin)
        dup = np.asarray(columns["duplicate_of"], np.int64)
        searched = np.asarray(columns["searched"], bool)
        forgotten = np.asarray(columns["forgotten"], bool)
        self.rep.writable()[rows] = np.where(dup < 0, pos, dup)
        self.dist.writable()[rows] = columns["distance"]
        self.cluster.writable()[rows] = columns["cluster_id"]
        self.status.writable()[rows] = status
        self.flags.writable()[rows] = searched * SEARCHED
        keys = np.array(chunk.keys, dtype=object)[searched].tolist()
        self.exact.start_log(keys)
        for key, p in zip(keys, pos[searched].tolist(), strict=True):
            self.exact[key] = p  # the last searched document of each key, in order
        self.exact.stop_log()
        self.n_clusters = int(meta["clusters"])
        self.late = int(meta.get("late_documents", 0))
        if "threshold" in columns:
            self.need.writable()[rows] = np.asarray(columns["threshold"], np.float64)
        if "similarity" in columns:
            self.sim.writable()[rows] = np.asarray(columns["similarity"], np.float64)
            self.lower_floors(rows)
        kept = np.flatnonzero((status == UNIQUE) & ~forgotten)
        self.index_new(base, kept.tolist(), chunk)
        if forgotten.any():
            self.forget(pos[forgotten])

    def resolve_chunk(self, chunk: Chunk) -> Decisions:
        """Batch: decide every document of ``chunk`` (an empty state) in keep-policy order;
        returns decisions in input order."""
        n = len(chunk.fps)
        hz = self.chunk_horizons(chunk)
        self.extend(chunk)
        order = processing_order(self.keep, np.arange(n), chunk.lengths, chunk.ts)
        self.exact.start_log(chunk.keys)  # its keys move into the map's dict
        new = self.decide_rows(chunk, order, 0, streaming=False, hz=hz)
        self.fill_similarity(0, chunk)
        self.commit(0, chunk, None, hz)
        if self.keep == "first":  # later feed() / save() go on from here: index lazily
            self.keep_sketches(np.asarray(new, np.int64), 0, chunk)
            self.unindexed = np.asarray(new, np.int64)
        return self.decisions(0, n)

    def bundle(self) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
        """The counters and arrays a saved state holds (dedup/persist.py writes them)."""
        self.index_unindexed()
        self.prune_exact(force=True)
        cand = self.candidates.to_arrays()
        origin = self.new_origin(cand["positions"])
        cut = origin - self.origin
        arrays: dict[str, npt.NDArray[Any]] = {
            name: g.view()[cut:] for name, g in self.named_columns().items()
        }
        # the similarity that decided and its threshold: a document fed again gets them back
        # (dedup/rerun.py)
        arrays["similarity"] = self.sim.view()[cut:]
        arrays["threshold"] = self.need.view()[cut:]
        arrays.update(self.exact.arrays())
        arrays.update({f"cand_{k}": v for k, v in cand.items()})
        if self.sketches is not None:
            rows = self.slot.view()[cand["positions"] - self.origin]
            arrays["sketches"] = self.sketches.take(rows)
        if self.ids is not None:
            data, off = self.ids.arrays()
            arrays["ids_data"], arrays["ids_offsets"] = data[off[cut] :], off[cut:] - off[cut]
        return {**self.counters(), "origin": origin}, arrays

    def budget_cuts(self, chunk: Chunk) -> list[int]:
        """Where to cut ``chunk`` so that its pairs stay within the budget (dedup/budget.py)."""
        first: dict[int, int] = {}
        for row in np.flatnonzero(~chunk.empty).tolist():
            first.setdefault(chunk.keys[row], row)  # later copies take the exact path: no pairs
        live = np.fromiter(first.values(), np.int64, len(first))
        if len(live) < 2:
            return []
        keys = self.candidates.keys(chunk.fps[live], _rows(chunk.sketches, live))
        return budget_cuts(keys, live, self.pair_budget)

    def commit(
        self, base: int, chunk: Chunk, ids: Sequence[Any] | None, hz: np.ndarray | None
    ) -> None:
        """Bookkeeping of a decided chunk: searched flags, late count, external ids."""
        flags = self.flags.view()
        flags[np.asarray(self.exact.stop_log(), np.int64) - self.origin] |= SEARCHED
        if hz is not None:  # late: older than the newest minus the window (greedy.horizons)
            self.late += int((chunk.ts < hz).sum())
        if ids is not None and self.ids is None:
            self.ids = JsonColumn.of(range(self.origin, base))  # earlier ones: positions
        if self.ids is not None:
            self.ids.extend(range(base, base + len(chunk.fps)) if ids is None else ids)

    def extend(self, chunk: Chunk) -> None:
        n = len(chunk.fps)
        for g in (self.rep, self.dist, self.cluster):
            g.extend(np.full(n, -1))
        self.status.extend(np.full(n, -1))
        if self.verifier is not None:  # per-document arrays only when they are used
            self.slot.extend(np.full(n, -1))
        if self.window is not None:
            self.ts.extend(chunk.ts)
        self.fps.extend(chunk.fps)
        keys = np.array(chunk.keys, dtype=object)
        self.key_hi.extend((keys >> 64).astype(np.uint64) if n else [])
        self.key_lo.extend((keys & ((1 << 64) - 1)).astype(np.uint64) if n else [])
        self.flags.extend(np.zeros(n, np.int8))
        self.sim.extend(np.full(n, np.nan))
        self.need.extend(np.full(n, np.nan))
        if self.core.cluster_similarity is not None:
            self.floor.extend(np.ones(n, np.float32))
        if chunk.ts.size and not np.isnan(chunk.ts).all():
            self.max_ts = max(self.max_ts, float(np.nanmax(chunk.ts)))

    def chunk_horizons(self, chunk: Chunk) -> np.ndarray | None:
        """Per document of the chunk, the horizon of :func:`~neardup.dedup.greedy.horizons`
        (``keep='first'`` with a window: the streaming order), from the newest timestamp before
        the chunk; None otherwise. Call it before ``_extend_state`` moves the newest one."""
        if self.window is None or self.keep != "first":
            return None
        return horizons(chunk.ts, self.window, self.max_ts)

    def decide_rows(
        self,
        chunk: Chunk,
        order: np.ndarray,
        base: int,
        *,
        streaming: bool,
        hz: np.ndarray | None = None,
        log: list[tuple[int, float]] | None = None,
    ) -> list[int]:
        """The decision core's step (:func:`~neardup.dedup.core.decide_batch`) on this state;
        returns the new kept (local) rows. ``log``: changes of earlier rows' ``floor`` are
        appended to it (a dry run undoes them)."""
        origin = self.origin
        tight = self.core.cluster_similarity is not None
        ledger = Ledger(
            self.rep.writable(),
            self.dist.writable(),
            self.cluster.writable(),
            self.status.writable(),
            self.ts.view(),
            self.exact,
            self.n_clusters,
            self.floor.writable() if tight else None,
            log,
            self.trace,
        )
        view = StateView(
            self.exact,
            lambda pos: self.ts.view()[pos - origin],
            self.kept_sketches,
            self.candidates if streaming else None,
        )
        new = decide_batch(
            self.core, self.candidates, self.verifier, view, ledger, chunk, order,
            base=base, origin=origin, horizon=hz,
        )  # fmt: skip
        self.n_clusters = ledger.n_clusters
        return new

    def fill_similarity(self, base: int, chunk: Chunk) -> None:
        """The similarity that decided each document of the chunk and the threshold that
        applied (dedup/similarity.py)."""
        rows = slice(base - self.origin, base - self.origin + len(chunk.fps))
        status, sk = self.status.view()[rows], chunk.sketches
        rep_sk = None
        if sk is not None and self.verifier is not None:
            dup = np.flatnonzero(status == DUPLICATE)
            r = self.rep.view()[rows][dup]
            rep_sk = np.zeros_like(sk)
            inside = r >= base
            rep_sk[dup[inside]] = sk[r[inside] - base]
            if (~inside).any():  # kept in earlier chunks: their sketches are in the state
                slot = self.slot.view()[r[~inside] - self.origin]
                known = slot >= 0  # (a kept document expired before a reload has none)
                assert self.sketches is not None
                rep_sk[dup[~inside][known]] = self.sketches.take(slot[known])
        sim, need = decided_evidence(self.verifier, status, self.dist.view()[rows], sk, rep_sk)
        if rep_sk is not None and (~inside).any():
            sim[dup[~inside][~known]] = need[dup[~inside][~known]] = np.nan
        self.sim.writable()[rows] = sim
        self.need.writable()[rows] = need

    def kept_sketches(self, pos: np.ndarray) -> np.ndarray:
        assert self.sketches is not None
        rows: np.ndarray = self.sketches.take(self.slot.view()[pos - self.origin])
        return rows

    def index_new(self, base: int, new: list[int], chunk: Chunk) -> None:
        local = np.asarray(new, dtype=np.int64)
        if local.size:
            # the index keeps whole seconds; flooring only ever keeps entries a little longer
            ts = np.floor(chunk.ts[local]).astype(np.int64) if self.window is not None else None
            self.candidates.add(local + base, chunk.fps[local], _rows(chunk.sketches, local), ts)
            self.keep_sketches(local, base, chunk)
        self.expire()

    def keep_sketches(self, local: np.ndarray, base: int, chunk: Chunk) -> None:
        if chunk.sketches is not None and local.size:
            if self.sketches is None:
                self.sketches = SpillGrowable(chunk.sketches.dtype, chunk.sketches.shape[1])
            rows = local + base - self.origin
            self.slot.writable()[rows] = np.arange(local.size) + self.sketches.size
            self.sketches.extend(chunk.sketches[local])

    def expire(self) -> None:
        """Drop kept documents that no in-order later document can match (see persist.py)."""
        if self.window is not None and np.isfinite(self.max_ts):
            horizon = int(np.floor(self.max_ts - self.window))
            if horizon > self.horizon:
                self.horizon = horizon
                self.candidates.expire(horizon)
                self.prune_exact()

    def decisions(self, start: int, stop: int) -> Decisions:
        return self.decisions_at(np.arange(start, stop, dtype=np.int64))

    def decisions_at(self, positions: npt.NDArray[np.int64]) -> Decisions:
        """The decisions of held documents at ``positions`` (copies)."""
        rows = positions - self.origin
        rep = self.rep.view()[rows]
        return Decisions(
            positions,
            self.fps.view()[rows],
            self.status.view()[rows],
            np.where(rep == positions, -1, rep),
            self.dist.view()[rows],
            self.cluster.view()[rows],
            self.sim.view()[rows].astype(np.float64),
            self.need.view()[rows].astype(np.float64),
        )

    def shared_ids(self, ids: Iterable[Any], before: int) -> list[Any]:
        """The distinct values of ``ids`` that a document before position ``before`` also has
        (among the rows still held: with a window, expired documents are not kept).

        >>> from neardup import Deduplicator
        >>> dd = Deduplicator()
        >>> _ = dd.feed(["one text", "another one", "a third"], ids=["a", "b", "a"])
        >>> dd.shared_ids(["a", "z"], 2), dd.shared_ids(["a", "z"], 0)
        (['a'], [])
        """
        if self.ids is None:
            return []
        return self.ids.shared(ids, max(0, before - self.origin))

    def new_origin(self, kept: npt.NDArray[np.int64]) -> int:
        """With a window, the first position a later decision can read: kept documents still
        in the index, exact-map entries and their kept documents. The rows before it (expired
        documents) are not saved."""
        if self.window is None:
            return self.origin
        first = [self.n_documents]
        if kept.size:
            first.append(int(kept.min()))
        if len(self.exact):
            at = self.exact.positions()
            first += [int(at.min()), int(self.rep.view()[at - self.origin].min())]
        return max(self.origin, min(first))

    def restore(
        self, meta: dict[str, Any], arrays: dict[str, npt.NDArray[Any]], where: str
    ) -> None:
        """Fill this empty state from a saved bundle's ``meta`` and ``arrays``, checked."""
        n, o = int(meta["documents"]), int(meta.get("origin", 0))
        for name in self.named_columns():
            if not 0 <= o <= n or arrays[name].shape != (n - o,):
                raise StateFormatError(
                    f"{where}: {name}.npy has shape {arrays[name].shape}, the state holds rows "
                    f"{o}..{n - 1}; restore it or start a new state"
                )
        for name in ("similarity", "threshold"):  # (states written before: unknown, NaN)
            got = arrays.get(name)
            if got is not None and got.shape != (n - o,):
                raise StateFormatError(
                    f"{where}: {name}.npy has shape {got.shape}, the state holds rows "
                    f"{o}..{n - 1}; restore it or start a new state"
                )
        self.fill(arrays, meta)
        exact_pos = arrays["exact_pos"]
        cand = {k[5:]: v for k, v in arrays.items() if k.startswith("cand_")}
        for what, values, low in (
            ("rep", arrays["rep"], 0),
            ("exact_pos", exact_pos, o),
            ("positions", cand["positions"], o),
        ):
            if values.size and (int(values.min()) < low or int(values.max()) >= n):
                raise StateFormatError(
                    f"{where}: {what} holds positions outside {low}..{n - 1}; restore it or "
                    "start a new state"
                )
        if exact_pos.size and int(arrays["rep"][exact_pos - o].min()) < o:
            raise StateFormatError(
                f"{where}: an exact-map entry names a dropped row; restore it or start a new state"
            )
        self.exact = ExactMap.from_arrays(arrays["exact_hi"], arrays["exact_lo"], exact_pos)
        self.candidates.load_arrays(cand)
        if self.verifier is not None and "sketches" in arrays:  # none before a kept document
            self.set_sketches(cand["positions"], arrays["sketches"])
        if "ids_data" in arrays:
            ids = JsonColumn(arrays["ids_data"], arrays["ids_offsets"])
            ids.check(f"{where}/ids_offsets.npy", StateFormatError)
            if len(ids) != n - o:
                raise StateFormatError(f"{where}: {len(ids)} ids for {n - o} rows; restore it")
            self.ids = ids


def _rows(sketches: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if sketches is None else sketches[rows]
