"""Persisted dedup state: one directory format, one column schema, one config id.

:meth:`Deduplicator.save` writes a *version* of a directory through
:func:`neardup._atomic.atomic_directory` (a writer lock; ``DIR/CURRENT`` names the live
version; a writer killed at any instant leaves the previous version loadable) as a checksummed
bundle (:mod:`neardup._persist`, no pickle): the per-document decision columns, the exact-text
map, the candidate index (:meth:`CandidateIndex.to_arrays`), the sketches of the kept documents
still in it, the external ids and the counters. :meth:`Deduplicator.load` refuses a state of
another configuration with a one-line error naming both config ids.

The same state as plain columns (what the service stores in SQLite, one row per document):
:meth:`Deduplicator.state_columns` / :meth:`Deduplicator.from_state_columns` with
``position, id?, timestamp, fingerprint, sketch?, exact_key_hi, exact_key_lo, status,
duplicate_of, distance, cluster_id, searched, forgotten``. ``searched`` marks documents that
went through the candidate search (step 3 of the rule), from which the exact-text map is
rebuilt: for each key, the last searched document.

Time window and expiry (the exact rule). Let ``M`` be the newest timestamp seen. A kept document
``r`` with ``t_r < M - window`` can never match a later document ``i`` with ``t_i >= M``
(``t_i - t_r > window``), so after each chunk the kept documents with
``floor(t_r) < horizon = floor(M - window)`` leave the candidate index, their sketches leave
the saved state, and exact-map entries whose kept document expired are pruned: for such an
``i`` a pruned entry and a present one lead to the same decision (the window check of the exact
path fails either way and the document is searched). A document is *late* when
``t_i - window < horizon`` at the time it is decided: only late documents can get another
decision than one run over all input; they are counted (``describe()["late_documents"]``, the
CLI prints the count). Input in time order has none. The per-document decision rows themselves
stay in the state (about 60 bytes per document): they are the log that ``decisions()`` and
``state_columns`` read.

``forget(positions)``: a deleted document stops attracting duplicates: it leaves the candidate
index, and the exact-map entries that point to it (or to a duplicate of it) are dropped, so a
later copy of its text is searched like a new text. Its cluster keeps its members and their
decisions; the row stays, marked ``forgotten``.

>>> import tempfile, pathlib
>>> from neardup import Deduplicator
>>> d = pathlib.Path(tempfile.mkdtemp()) / "state"
>>> dd = Deduplicator()
>>> _ = dd.feed(["storm hits the coast tonight", "cats"], ids=["a", "b"])
>>> dd.save(d)
>>> again = Deduplicator.load(d)
>>> again.add("Storm hits the coast tonight", id="c").duplicate_of, again.n_documents
('a', 3)
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import numpy as np
import numpy.typing as npt

from neardup._atomic import atomic_directory, current_version, read_current
from neardup._growable import Growable
from neardup._persist import MANIFEST, FormatError, JsonColumn, read_bundle, write_bundle

if TYPE_CHECKING:
    from neardup.dedup.candidates import CandidateIndex
    from neardup.fingerprint import Fingerprinter

FORMAT = "neardup-dedup-state"
VERSION = 1
SEARCHED, FORGOTTEN = 1, 2  # bits of the per-document flags
UNIQUE = 0
_LOW = (1 << 64) - 1
_COLUMNS = ("fps", "rep", "distance", "cluster", "status", "key_hi", "key_lo", "flags")


class StateFormatError(FormatError):
    """A saved dedup state is missing, damaged, or of another configuration."""


class ExactMap(dict[int, int]):
    """The exact-text map (key -> last searched position) with an optional write log: the
    positions written (the ``searched`` documents) and the values they replaced (for a dry
    run's undo). ``get`` stays the plain dict's."""

    _log: list[tuple[int, int | None, int]] | None = None

    def __setitem__(self, key: int, value: int) -> None:
        if self._log is not None:
            self._log.append((key, self.get(key), value))
        super().__setitem__(key, value)

    def start_log(self) -> None:
        self._log = []

    def stop_log(self) -> list[int]:
        """End the log; returns the positions written while it ran."""
        log, self._log = self._log or [], None
        return [new for _, _, new in log]

    def undo_log(self) -> None:
        log, self._log = self._log or [], None
        for key, old, _ in reversed(log):
            if old is None:
                super().pop(key, None)
            else:
                super().__setitem__(key, old)

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        keys = np.array(list(self.keys()), dtype=object)
        return {
            "exact_hi": (keys >> 64).astype(np.uint64) if keys.size else np.zeros(0, np.uint64),
            "exact_lo": (keys & _LOW).astype(np.uint64) if keys.size else np.zeros(0, np.uint64),
            "exact_pos": np.fromiter(self.values(), np.int64, len(self)),
        }

    @classmethod
    def from_arrays(cls, hi: npt.NDArray[Any], lo: npt.NDArray[Any], pos: npt.NDArray[Any]) -> Self:
        keys = [(h << 64) | low for h, low in zip(hi.tolist(), lo.tolist(), strict=True)]
        return cls(zip(keys, pos.tolist(), strict=True))


def verifier_config(verifier: object) -> dict[str, Any] | None:
    """JSON-able identity of a verifier (its parameters when it has ``get_params``)."""
    if verifier is None:
        return None
    get = getattr(verifier, "get_params", None)
    params = get() if callable(get) else {"repr": repr(verifier)}
    return {"type": type(verifier).__qualname__, **params}


class StateMixin:
    """Persistence, dry runs and forgetting for :class:`~neardup.Deduplicator` (module docs)."""

    if TYPE_CHECKING:  # attributes of the Deduplicator this mixin works on
        fingerprinter: Fingerprinter
        k: int
        candidate_k_: int
        keep: str
        window: float | None
        verifier: Any
        _candidates: CandidateIndex
        _rep: Growable
        _dist: Growable
        _cluster: Growable
        _status: Growable
        _ts: Growable
        _fps: Growable
        _slot: Growable
        _sketches: Growable | None
        _key_hi: Growable
        _key_lo: Growable
        _flags: Growable
        _exact: ExactMap
        _ids: JsonColumn | None
        _n_clusters: int
        _max_ts: float
        _horizon: float
        _late: int
        _unindexed: npt.NDArray[np.int64] | None

        @property
        def n_documents(self) -> int: ...

        def replace(self, **changes: Any) -> Self: ...

        def _expire(self) -> None: ...

    # ------------------------------------------------------------------ identity
    def state_config(self) -> dict[str, Any]:
        """What decides the decisions: fingerprints, k, candidate design, verifier, window,
        keep (not speed settings such as ``n_jobs`` or the index design)."""
        return {
            "fingerprinter": self.fingerprinter.get_config(),
            "k": self.k,
            "candidate_k": self.candidate_k_,
            "candidates": self._candidates.get_config(),
            "verifier": verifier_config(self.verifier),
            "window": self.window,
            "keep": self.keep,
        }

    @property
    def config_id(self) -> str:
        """Short stable id of :meth:`state_config`, carried by every saved state.

        >>> from neardup import Deduplicator
        >>> Deduplicator().config_id == Deduplicator().config_id != Deduplicator(k=3).config_id
        True
        """
        blob = json.dumps(self.state_config(), sort_keys=True, separators=(",", ":"))
        return "dd1-" + hashlib.sha256(blob.encode()).hexdigest()[:16]

    def external_id(self, position: int) -> Any:
        """The id given for the document at ``position`` (its position when none was)."""
        if self._ids is None or position >= len(self._ids):
            return position
        return self._ids[position]

    # ------------------------------------------------------------------ internals
    def _per_document(self) -> list[Growable]:
        return [
            self._rep,
            self._dist,
            self._cluster,
            self._status,
            self._ts,
            self._fps,
            self._slot,
            self._key_hi,
            self._key_lo,
            self._flags,
        ]

    def _truncate(self, n: int) -> None:
        """Forget the rows from ``n`` on (a dry run's undo)."""
        for g in self._per_document():
            g.size = min(g.size, n)

    def _index_unindexed(self) -> None:
        """Put the documents kept by a batch ``resolve()`` into the candidate index."""
        pos, self._unindexed = self._unindexed, None
        if pos is None or not pos.size:
            return
        sk = None
        if self._sketches is not None:
            sk = self._sketches.view()[self._slot.view()[pos]]
        ts = None
        if self.window is not None:
            ts = np.floor(self._ts.view()[pos]).astype(np.int64)
        self._candidates.add(pos, self._fps.view()[pos], sk, ts)
        self._expire()

    def _prune_exact(self, force: bool = False) -> None:
        """Drop exact-map entries whose kept document expired (amortised: when it doubled)."""
        ex = self._exact
        floor = getattr(self, "_pruned_at", 0)
        if self.window is None or (not force and len(ex) < max(2 * floor, 65536)):
            return
        pos = np.fromiter(ex.values(), np.int64, len(ex))
        expired = np.floor(self._ts.view()[self._rep.view()[pos]]) < self._horizon
        for key in np.array(list(ex.keys()), dtype=object)[expired].tolist():
            dict.__delitem__(ex, key)
        self._pruned_at = len(ex)

    # ------------------------------------------------------------------ forget
    def forget(self, positions: npt.ArrayLike) -> int:
        """Deleted documents stop attracting duplicates (see the module docs); returns how many
        left the candidate index.

        >>> from neardup import Deduplicator
        >>> dd = Deduplicator()
        >>> _ = dd.feed(["storm hits the coast tonight"])
        >>> dd.forget([0]), dd.feed(["storm hits the coast tonight"]).statuses
        (1, ['unique'])
        """
        pos = np.unique(np.asarray(positions, np.int64).ravel())
        if pos.size and (pos[0] < 0 or pos[-1] >= self.n_documents):
            bad = int(pos[0] if pos[0] < 0 else pos[-1])
            raise ValueError(
                f"position {bad} is not a decided document (0..{self.n_documents - 1}); "
                "pass positions from Decisions.position"
            )
        self._index_unindexed()
        removed = self._candidates.remove(pos)
        self._flags.writable()[pos] |= FORGOTTEN
        ex = self._exact
        if pos.size and len(ex):
            targets = np.fromiter(ex.values(), np.int64, len(ex))
            gone = np.isin(targets, pos) | np.isin(self._rep.view()[targets], pos)
            for key in np.array(list(ex.keys()), dtype=object)[gone].tolist():
                dict.__delitem__(ex, key)
        return int(removed)

    # ------------------------------------------------------------------ columns
    def state_meta(self) -> dict[str, Any]:
        """The counters that go with :meth:`state_columns` (JSON-able)."""
        return {
            "config_id": self.config_id,
            "config": self.state_config(),
            "documents": self.n_documents,
            "clusters": self._n_clusters,
            "max_timestamp": _finite(self._max_ts),
            "horizon": _finite(self._horizon),
            "late_documents": self._late,
        }

    def state_columns(self, start: int = 0, stop: int | None = None) -> dict[str, np.ndarray]:
        """Rows ``start:stop`` of the per-document state as named columns (module docs).

        ``id`` holds each external id as JSON text (only when ids were given); ``sketch`` the
        verifier sketch of kept documents (zeros for others; only with a verifier).
        """
        n = self.n_documents
        stop = n if stop is None else min(stop, n)
        rows = slice(start, stop)
        positions = np.arange(start, stop, dtype=np.int64)
        rep = self._rep.view()[rows]
        flags = self._flags.view()[rows]
        cols: dict[str, np.ndarray] = {
            "position": positions,
            "timestamp": (
                self._ts.view()[rows].copy()
                if self.window is not None
                else np.full(positions.size, np.nan)
            ),
            "fingerprint": self._fps.view()[rows].copy(),
            "exact_key_hi": self._key_hi.view()[rows].copy(),
            "exact_key_lo": self._key_lo.view()[rows].copy(),
            "status": self._status.view()[rows].copy(),
            "duplicate_of": np.where(rep == positions, -1, rep),
            "distance": self._dist.view()[rows].copy(),
            "cluster_id": self._cluster.view()[rows].copy(),
            "searched": (flags & SEARCHED) != 0,
            "forgotten": (flags & FORGOTTEN) != 0,
        }
        if self._sketches is not None:
            slot = self._slot.view()[rows]
            sk = np.zeros((positions.size, self._sketches.data.shape[1]), self._sketches.data.dtype)
            sk[slot >= 0] = self._sketches.view()[slot[slot >= 0]]
            cols["sketch"] = sk
        if self._ids is not None:
            data, off = self._ids.arrays()
            raw, ends = bytes(data), off.tolist()
            cols["id"] = np.array(
                [raw[ends[i] : ends[i + 1]].decode() for i in range(start, stop)], dtype=object
            )
        return cols

    @classmethod
    def from_state_columns(
        cls, config: Self, columns: dict[str, np.ndarray], meta: dict[str, Any]
    ) -> Self:
        """A Deduplicator of ``config``'s configuration holding the state of ``columns`` (all
        rows, positions 0..n-1) and ``meta`` (:meth:`state_meta`)."""
        _check_config(config, meta.get("config_id"), "these state columns")
        dd = config.replace()
        n = int(meta["documents"])
        if not np.array_equal(columns["position"], np.arange(n)):
            raise ValueError(f"state columns must hold positions 0..{n - 1}, in order")
        pos = columns["position"]
        dup = np.asarray(columns["duplicate_of"], np.int64)
        dd._fill(
            {
                "fps": np.asarray(columns["fingerprint"], np.uint64),
                "rep": np.where(dup < 0, pos, dup),
                "distance": np.asarray(columns["distance"], np.int16),
                "cluster": np.asarray(columns["cluster_id"], np.int64),
                "status": np.asarray(columns["status"], np.int8),
                "key_hi": np.asarray(columns["exact_key_hi"], np.uint64),
                "key_lo": np.asarray(columns["exact_key_lo"], np.uint64),
                "flags": (
                    np.asarray(columns["searched"], bool) * SEARCHED
                    + np.asarray(columns["forgotten"], bool) * FORGOTTEN
                ).astype(np.int8),
                "ts": np.asarray(columns["timestamp"], np.float64),
            },
            meta,
        )
        dd._rebuild_exact()
        if dd.verifier is not None and "sketch" in columns:
            kept = np.flatnonzero(np.asarray(columns["status"]) == UNIQUE)
            dd._set_sketches(kept, np.asarray(columns["sketch"])[kept])
        dd._rebuild_candidates()
        if "id" in columns:
            dd._ids = JsonColumn.of(json.loads(v) for v in columns["id"].tolist())
        return dd

    def _fill(self, arrays: dict[str, npt.NDArray[Any]], meta: dict[str, Any]) -> None:
        """Per-document columns (wrapped, copied on first write) and counters."""
        for name, g in zip(
            ("rep", "distance", "cluster", "status", "fps", "key_hi", "key_lo", "flags"),
            (
                self._rep,
                self._dist,
                self._cluster,
                self._status,
                self._fps,
                self._key_hi,
                self._key_lo,
                self._flags,
            ),
            strict=True,
        ):
            g.data, g.size = arrays[name], int(arrays[name].shape[0])
        if self.window is not None:
            self._ts.data, self._ts.size = arrays["ts"], int(arrays["ts"].shape[0])
        if self.verifier is not None:
            self._slot.data, self._slot.size = (
                np.full(self.n_documents, -1, np.int64),
                self.n_documents,
            )
        self._n_clusters = int(meta["clusters"])
        self._max_ts = _number(meta.get("max_timestamp"))
        self._horizon = _number(meta.get("horizon"))
        self._late = int(meta.get("late_documents", 0))

    def _set_sketches(self, positions: npt.NDArray[np.int64], sketches: npt.NDArray[Any]) -> None:
        self._sketches = Growable.wrap(sketches)
        self._slot.writable()[positions] = np.arange(positions.size)

    def _rebuild_exact(self) -> None:
        """For each key, the last searched document, unless it (or its kept one) is forgotten
        or expired (what the live map holds after pruning)."""
        flags, rep = self._flags.view(), self._rep.view()
        searched = np.flatnonzero((flags & SEARCHED) != 0)
        ex = ExactMap.from_arrays(
            self._key_hi.view()[searched], self._key_lo.view()[searched], searched
        )
        pos = np.fromiter(ex.values(), np.int64, len(ex))
        bad = ((flags[pos] | flags[rep[pos]]) & FORGOTTEN) != 0
        if self.window is not None:
            bad |= np.floor(self._ts.view()[rep[pos]]) < self._horizon
        for key in np.array(list(ex.keys()), dtype=object)[bad].tolist():
            dict.__delitem__(ex, key)
        self._exact = ex

    def _rebuild_candidates(self) -> None:
        """Kept documents neither forgotten nor expired, into an empty candidate index."""
        flags = self._flags.view()
        keep = (self._status.view() == UNIQUE) & ((flags & FORGOTTEN) == 0)
        ts = None
        if self.window is not None:
            whole = np.floor(self._ts.view())
            keep &= whole >= self._horizon
        pos = np.flatnonzero(keep)
        if self.window is not None:
            ts = whole[pos].astype(np.int64)
        sk = None if self._sketches is None else self._sketches.view()[self._slot.view()[pos]]
        if pos.size:
            self._candidates.add(pos, self._fps.view()[pos], sk, ts)

    # ------------------------------------------------------------------ save / load
    def save(self, path: str | os.PathLike[str], *, wait: bool = True) -> None:
        """Write the state as a new version of directory ``path`` (module docs)."""
        with atomic_directory(path, wait=wait) as version:
            self.write_state(version)

    def write_state(self, directory: Path) -> None:
        """Write the state bundle into ``directory`` (inside an ``atomic_directory`` block)."""
        self._index_unindexed()
        self._prune_exact(force=True)
        arrays: dict[str, npt.NDArray[Any]] = {
            name: g.view() for name, g in zip(_COLUMNS, self._column_growables(), strict=True)
        }
        if self.window is not None:
            arrays["ts"] = self._ts.view()
        arrays.update(self._exact.arrays())
        cand = self._candidates.to_arrays()
        arrays.update({f"cand_{k}": v for k, v in cand.items()})
        if self._sketches is not None:
            arrays["sketches"] = self._sketches.view()[self._slot.view()[cand["positions"]]]
        if self._ids is not None:
            arrays["ids_data"], arrays["ids_offsets"] = self._ids.arrays()
        files = []
        if self.fingerprinter.idf is not None:
            self.fingerprinter.idf.save(directory / "idf.tsv")
            files.append("idf.tsv")
        write_bundle(directory, FORMAT, VERSION, self.state_meta(), arrays, files)

    def _column_growables(self) -> list[Growable]:
        return [
            self._fps,
            self._rep,
            self._dist,
            self._cluster,
            self._status,
            self._key_hi,
            self._key_lo,
            self._flags,
        ]

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        config: Self | None = None,
        *,
        verify: bool = True,
    ) -> Self:
        """The state saved in directory ``path`` (its live version).

        ``config``: a Deduplicator whose configuration the state must have (it is not
        changed); without it the configuration is rebuilt from the state (a custom verifier
        needs ``config``). Raises :class:`StateFormatError` for a damaged state or another
        configuration.
        """
        root = Path(path)
        try:
            version = current_version(root)
        except (FileNotFoundError, OSError) as e:
            raise StateFormatError(
                f"{root} is not a saved dedup state ({e}); create it with save()"
            ) from None
        return cls.read_state(version, config, verify=verify, name=str(root))

    @classmethod
    def read_state(
        cls, directory: Path, config: Self | None, *, verify: bool = True, name: str = ""
    ) -> Self:
        """Read a bundle written by :meth:`write_state`."""
        meta, arrays = read_bundle(
            directory, FORMAT, VERSION, mmap=True, verify=verify, error=StateFormatError
        )
        where = name or str(directory)
        if config is None:
            config = cls._from_config(meta["config"], directory, where)
        _check_config(config, meta.get("config_id"), where)
        dd = config.replace()
        try:
            dd._restore(meta, arrays, where)
        except (KeyError, IndexError, ValueError, TypeError) as e:
            if isinstance(e, StateFormatError):
                raise
            raise StateFormatError(
                f"{where}/{MANIFEST}: the saved state is inconsistent ({e!r}); restore it "
                "or start a new state"
            ) from None
        return dd

    def _restore(
        self, meta: dict[str, Any], arrays: dict[str, npt.NDArray[Any]], where: str
    ) -> None:
        n = int(meta["documents"])
        names = list(_COLUMNS) + (["ts"] if self.window is not None else [])
        for name in names:
            if arrays[name].shape != (n,):
                raise StateFormatError(
                    f"{where}: {name}.npy has shape {arrays[name].shape}, the state holds {n} "
                    "documents; restore it or start a new state"
                )
        self._fill(arrays, meta)
        rep = arrays["rep"]
        exact_pos = arrays["exact_pos"]
        cand = {k[5:]: v for k, v in arrays.items() if k.startswith("cand_")}
        for what, values in (
            ("rep", rep),
            ("exact_pos", exact_pos),
            ("positions", cand["positions"]),
        ):
            if values.size and (int(values.min()) < 0 or int(values.max()) >= n):
                raise StateFormatError(
                    f"{where}: {what} holds positions outside 0..{n - 1}; restore it or start "
                    "a new state"
                )
        self._exact = ExactMap.from_arrays(arrays["exact_hi"], arrays["exact_lo"], exact_pos)
        self._candidates.load_arrays(cand)
        if self.verifier is not None and "sketches" in arrays:  # none before a kept document
            self._set_sketches(cand["positions"], arrays["sketches"])
        if "ids_data" in arrays:
            ids = JsonColumn(arrays["ids_data"], arrays["ids_offsets"])
            ids.check(f"{where}/ids_offsets.npy", StateFormatError)
            self._ids = ids

    @classmethod
    def _from_config(cls, cfg: dict[str, Any], directory: Path, where: str) -> Any:
        """A Deduplicator of a saved configuration (for ``load`` without ``config``)."""
        from neardup.features.idf import IdfTable
        from neardup.fingerprint import Fingerprinter
        from neardup.verify import MinHashVerifier

        idf_path = directory / "idf.tsv"
        idf = IdfTable.load(idf_path) if idf_path.exists() else None
        fp = Fingerprinter.from_config(cfg["fingerprinter"], idf=idf)
        ver = cfg["verifier"]
        verifier = None
        if ver is not None:
            params = {k: v for k, v in ver.items() if k != "type"}
            if ver["type"] != "MinHashVerifier":
                raise StateFormatError(
                    f"{where} was saved with verifier {ver['type']}; pass config=Deduplicator("
                    "verifier=...) to load it"
                )
            verifier = MinHashVerifier(**params)
        bands = cfg["candidates"].get("design") == "minhash-bands"
        ck = cfg["candidate_k"]
        return cls(  # type: ignore[call-arg]
            fingerprinter=fp,
            k=None if bands else cfg["k"],
            keep=cfg["keep"],
            window=cfg["window"],
            verifier=verifier,
            candidate_k=None if bands or verifier is None else ck,
        )


def _check_config(config: Any, saved_id: Any, where: str) -> None:
    if saved_id != config.config_id:
        raise StateFormatError(
            f"{where} holds a dedup state of config {saved_id}, but this run's config is "
            f"{config.config_id} (fingerprinter, k, candidates, verifier, window or keep "
            "differ); run with the options the state was made with, or use a new state directory"
        )


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _number(x: Any) -> float:
    return -np.inf if x is None else float(x)


def state_exists(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds a committed state version."""
    root = Path(path)
    return root.is_dir() and read_current(root) is not None
