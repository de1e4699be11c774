"""Persisted dedup state: one directory format and one config id (columns: :mod:`.columns`).

:meth:`Deduplicator.save` (:func:`save`) writes a *version* of a directory through
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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

import numpy.typing as npt

from neardup import _fs
from neardup._atomic import BrokenDirectoryError, atomic_directory, read_current, read_live
from neardup._persist import MANIFEST, JsonColumn, read_bundle, write_bundle
from neardup._threads import object_lock
from neardup.dedup.columns import StateConfigError, StateFormatError, check_config
from neardup.dedup.dedup_state import DedupState
from neardup.dedup.exact_map import ExactMap

if TYPE_CHECKING:
    from neardup.fingerprint import Fingerprinter

__all__ = [
    "StateConfigError",
    "StateFormatError",
    "bundle",
    "load",
    "load_bundle",
    "read_state",
    "save",
    "state_exists",
    "write_state",
]

FORMAT = "neardup-dedup-state"
# 2: the key table of band candidates stores tags (keytable.py); a version-1 state is read
# (its full keys are packed and re-sorted once on load); 3: the per-document ``floor`` column
# of the cluster_similarity rule (a version 1 or 2 state has all 1.0: its configuration never
# has the rule); 4: the key table's slots may take 3 bytes and a large run is saved as its 8
# pieces (keytable.py: no copy on save); versions 1-3 are read as before; 5: a key table run
# may hold 1-byte tags (keytable.py, from ~1.6e9 rows); version 4 is read as it is
VERSION = 5
READS = (1, 2, 3, 4, 5)


class Holder(Protocol):
    """What saving and loading read of a :class:`~neardup.Deduplicator`."""

    @property
    def fingerprinter(self) -> Fingerprinter: ...

    @property
    def state(self) -> DedupState: ...

    def replace(self) -> Self: ...


H = TypeVar("H", bound=Holder)


def save(dd: Holder, path: str | os.PathLike[str], *, wait: bool = True) -> None:
    """Write ``dd``'s state as a new version of directory ``path`` (module docs)."""
    with atomic_directory(path, wait=wait) as version:
        write_state(dd, version)


def write_state(dd: Holder, directory: Path) -> None:
    """Write ``dd``'s state bundle into ``directory`` (inside an ``atomic_directory`` block)."""
    with object_lock(dd.state):  # the arrays are views: no thread changes them while written
        if dd.state.pending:
            raise ValueError(
                "this Deduplicator holds collected documents not yet decided; call resolve() "
                "before save()"
            )
        counters, arrays = bundle(dd.state)
        files = []
        if dd.fingerprinter.idf is not None:
            dd.fingerprinter.idf.save(directory / "idf.tsv")
            files.append("idf.tsv")
        meta = {**dd.state.meta(), **counters}
        write_bundle(directory, FORMAT, VERSION, meta, arrays, files)


def load(
    make: Callable[..., H], path: str | os.PathLike[str], config: H | None, *, verify: bool = True
) -> H:
    """The state saved in directory ``path`` (its live version), in a ``make`` (the
    Deduplicator class) of ``config``'s configuration, or of the saved one without it."""
    root = path if isinstance(path, str) else Path(path)  # a str may be a URL (neardup._fs)
    try:
        return read_live(
            root, lambda version: read_state(make, version, config, verify=verify, name=str(root))
        )
    except BrokenDirectoryError as e:
        raise StateFormatError(str(e)) from None
    except OSError as e:  # no CURRENT, or unreadable
        raise StateFormatError(
            f"{root} is not a saved dedup state ({e}); create it with save()"
        ) from None


def read_state(
    make: Callable[..., H],
    directory: Path,
    config: H | None,
    *,
    verify: bool = True,
    name: str = "",
) -> H:
    """Read a bundle written by :func:`write_state` (see :func:`load`)."""
    meta, arrays = read_bundle(
        directory, FORMAT, READS, mmap=True, verify=verify, error=StateFormatError
    )
    where = name or str(directory)
    if config is None:
        config = _from_config(make, meta["config"], directory, where)
    check_config(config.state.config_id, config.state.config, meta, where)
    dd = config.replace()
    try:
        load_bundle(dd.state, meta, arrays, where)
    except (KeyError, IndexError, ValueError, TypeError) as e:
        if isinstance(e, StateFormatError):
            raise
        raise StateFormatError(
            f"{where}/{MANIFEST}: the saved state is inconsistent ({e!r}); restore it "
            "or start a new state"
        ) from None
    return dd


def bundle(state: DedupState) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    """The counters and arrays a saved state holds (hold the state's lock)."""
    state.index_unindexed()
    state.prune_exact(force=True)
    cand = state.candidates.to_arrays()
    origin = state.new_origin(cand["positions"])
    cut = origin - state.origin
    arrays = {c.name: state.cols.saved_view(c, cut) for c in state.cols.saved()}
    arrays.update(state.exact.arrays())
    arrays.update({f"cand_{k}": v for k, v in cand.items()})
    if state.sketches is not None:
        rows = state.cols.slot.view()[cand["positions"] - state.origin]
        arrays["sketches"] = state.sketches.take(rows)
    if state.ids is not None:
        data, off = state.ids.arrays()
        arrays["ids_data"], arrays["ids_offsets"] = data[off[cut] :], off[cut:] - off[cut]
    return {**state.counters(), "origin": origin}, arrays


def load_bundle(
    state: DedupState, meta: dict[str, Any], arrays: dict[str, npt.NDArray[Any]], where: str
) -> None:
    """Fill the empty ``state`` from a saved bundle's ``meta`` and ``arrays``, checked."""
    n, o = int(meta["documents"]), int(meta.get("origin", 0))
    state.origin = o
    state.take_rows(arrays, meta, where, fresh=True)
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
    state.exact = ExactMap.from_arrays(arrays["exact_hi"], arrays["exact_lo"], exact_pos)
    state.candidates.load_arrays(cand)
    if state.verifier is not None and "sketches" in arrays:  # none before a kept document
        state.set_sketches(cand["positions"], arrays["sketches"])
    if "ids_data" in arrays:
        ids = JsonColumn(arrays["ids_data"], arrays["ids_offsets"])
        ids.check(f"{where}/ids_offsets.npy", StateFormatError)
        if len(ids) != n - o:
            raise StateFormatError(f"{where}: {len(ids)} ids for {n - o} rows; restore it")
        state.ids = ids


def state_exists(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds a committed state version."""
    return _fs.isdir(os.fspath(path)) and read_current(path) is not None


def _from_config(cls: Callable[..., H], cfg: dict[str, Any], directory: Path, where: str) -> H:
    """A ``cls`` (Deduplicator) of a saved configuration (for ``load`` without ``config``)."""
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
    return cls(
        fingerprinter=fp,
        k=None if bands else cfg["k"],
        keep=cfg["keep"],
        window=cfg["window"],
        verifier=verifier,
        cluster_similarity=cfg.get("cluster_similarity"),
        candidate_k=None if bands or verifier is None else ck,
    )
