"""Persisted dedup state: one directory format and one config id (columns: :mod:`.columns`).

:meth:`Deduplicator.save` writes a *version* of a directory through
:func:`neardup._atomic.atomic_directory` (a writer lock; ``DIR/CURRENT`` names the live
version; a writer killed at any instant leaves the previous version loadable) as a checksummed
bundle (:mod:`neardup._persist`, no pickle): the per-document decision columns, the exact-text
map, the candidate index (:meth:`CandidateIndex.to_arrays`), the sketches of the kept documents
still in it, the external ids and the counters. :meth:`Deduplicator.load` refuses a state of
another configuration with a one-line error naming both config ids and the fix.

>>> import tempfile, pathlib
>>> from neardup import Deduplicator
>>> d = pathlib.Path(tempfile.mkdtemp()) / "state"
>>> dd = Deduplicator()
>>> _ = dd.feed(["storm hits the coast tonight", "cats"], ids=["a", "b"])
>>> dd.save(d)
>>> again = Deduplicator.load(d)
>>> again.add("Storm hits the coast tonight", id="c").duplicate_of, again.n_documents
('a', 3)

A reader loading a state while a writer saves a new version sees the old or the new version
(:func:`neardup._atomic.read_live`); a directory whose ``CURRENT`` is missing or names a
version that is gone is refused with the fix, nothing deleted.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from neardup._atomic import BrokenDirectoryError, atomic_directory, read_current, read_live
from neardup._persist import MANIFEST, JsonColumn, read_bundle, write_bundle
from neardup.dedup.columns import (
    ExactMap,
    StateColumns,
    StateConfigError,
    StateFormatError,
    check_config,
)

__all__ = [
    "LOCKED_METHODS",
    "StateConfigError",
    "StateFormatError",
    "StateMixin",
    "state_exists",
]

# Deduplicator methods that hold the object's lock (neardup._threads): all that read or change
# its state; not prepare() (no shared state: the service prepares batches in parallel).
LOCKED_METHODS = (
    "add",
    "feed",
    "feed_prepared",
    "extend_state_columns",
    "run",
    "collect",
    "resolve",
    "decisions",
    "describe",
    "forget",
    "save",
    "write_state",
    "state_columns",
    "state_meta",
    "external_id",
    "shared_ids",
)

FORMAT = "neardup-dedup-state"
VERSION = 1


class StateMixin(StateColumns):
    """``save`` / ``load`` of a :class:`~neardup.Deduplicator`'s state (module docs)."""

    # ------------------------------------------------------------------ save / load
    def save(self, path: str | os.PathLike[str], *, wait: bool = True) -> None:
        """Write the state as a new version of directory ``path`` (module docs)."""
        with atomic_directory(path, wait=wait) as version:
            self.write_state(version)

    def write_state(self, directory: Path) -> None:
        """Write the state bundle into ``directory`` (inside an ``atomic_directory`` block)."""
        if getattr(self, "_pending", None):
            raise ValueError(
                "this Deduplicator holds collected documents not yet decided; call resolve() "
                "before save()"
            )
        self._index_unindexed()
        self._prune_exact(force=True)
        cand = self._candidates.to_arrays()
        origin = self._new_origin(cand["positions"])
        cut = origin - self._origin
        arrays: dict[str, npt.NDArray[Any]] = {
            name: g.view()[cut:] for name, g in self._named_columns().items()
        }
        arrays.update(self._exact.arrays())
        arrays.update({f"cand_{k}": v for k, v in cand.items()})
        if self._sketches is not None:
            rows = self._slot.view()[cand["positions"] - self._origin]
            arrays["sketches"] = self._sketches.view()[rows]
        if self._ids is not None:
            data, off = self._ids.arrays()
            arrays["ids_data"], arrays["ids_offsets"] = data[off[cut] :], off[cut:] - off[cut]
        files = []
        if self.fingerprinter.idf is not None:
            self.fingerprinter.idf.save(directory / "idf.tsv")
            files.append("idf.tsv")
        meta = {**self.state_meta(), "origin": origin}
        write_bundle(directory, FORMAT, VERSION, meta, arrays, files)

    def shared_ids(self, ids: Iterable[Any], before: int) -> list[Any]:
        """The distinct values of ``ids`` that a document before position ``before`` also has
        (among the rows still held: with a window, expired documents are not kept).

        >>> from neardup import Deduplicator
        >>> dd = Deduplicator()
        >>> _ = dd.feed(["one text", "another one", "a third"], ids=["a", "b", "a"])
        >>> dd.shared_ids(["a", "z"], 2), dd.shared_ids(["a", "z"], 0)
        (['a'], [])
        """
        ids_column: JsonColumn | None = getattr(self, "_ids", None)
        if ids_column is None:
            return []
        return ids_column.shared(ids, max(0, before - self._origin))

    def _new_origin(self, kept: npt.NDArray[np.int64]) -> int:
        """With a window, the first position a later decision can read: kept documents still
        in the index, exact-map entries and their kept documents. The rows before it (expired
        documents) are not saved."""
        if self.window is None:
            return self._origin
        first = [self.n_documents]
        if kept.size:
            first.append(int(kept.min()))
        if len(self._exact):
            at = np.fromiter(self._exact.values(), np.int64, len(self._exact))
            first += [int(at.min()), int(self._rep.view()[at - self._origin].min())]
        return max(self._origin, min(first))

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
            return read_live(
                root, lambda version: cls.read_state(version, config, verify=verify, name=str(root))
            )
        except BrokenDirectoryError as e:
            raise StateFormatError(str(e)) from None
        except OSError as e:  # no CURRENT, or unreadable
            raise StateFormatError(
                f"{root} is not a saved dedup state ({e}); create it with save()"
            ) from None

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
        check_config(config, meta.get("config_id"), where)
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
        n, o = int(meta["documents"]), int(meta.get("origin", 0))
        for name in self._named_columns():
            if not 0 <= o <= n or arrays[name].shape != (n - o,):
                raise StateFormatError(
                    f"{where}: {name}.npy has shape {arrays[name].shape}, the state holds rows "
                    f"{o}..{n - 1}; restore it or start a new state"
                )
        self._fill(arrays, meta)
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
        self._exact = ExactMap.from_arrays(arrays["exact_hi"], arrays["exact_lo"], exact_pos)
        self._candidates.load_arrays(cand)
        if self.verifier is not None and "sketches" in arrays:  # none before a kept document
            self._set_sketches(cand["positions"], arrays["sketches"])
        if "ids_data" in arrays:
            ids = JsonColumn(arrays["ids_data"], arrays["ids_offsets"])
            ids.check(f"{where}/ids_offsets.npy", StateFormatError)
            if len(ids) != n - o:
                raise StateFormatError(f"{where}: {len(ids)} ids for {n - o} rows; restore it")
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


def state_exists(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds a committed state version."""
    root = Path(path)
    return root.is_dir() and read_current(root) is not None
