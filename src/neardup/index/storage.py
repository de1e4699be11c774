"""On-disk format of a :class:`HammingIndex`: a versioned directory of checksummed arrays.

``DIR/CURRENT`` names the live version ``DIR/v-<n>/`` (see :mod:`neardup._atomic`: one writer at
a time, readers see one consistent version, a killed writer leaves the previous one). A version
is a bundle (:mod:`neardup._persist`): ``manifest.json`` (bits, k, design, counts, each run's
range and bucket bits, the fingerprint config and its config id when given, every file's size
and XXH3-128, and a checksum of the manifest itself) and one ``.npy`` per array: ``ids``,
``fps``, ``alive``, ``timestamps``, the id index, the runs' tables, and optionally the external
ids (any JSON values, one per stored row) and ``idf.tsv``.

Loading memory-maps the arrays. It always checks the manifest's checksum, every file's size,
and the shapes and cross-array invariants (so even ``verify=False`` cannot crash a kernel);
``verify=True`` (default) also checks every file's XXH3-128. Errors are
:class:`IndexFormatError` naming the file and the fix. Format version 1 (sha256, no manifest
checksum) is refused with a message saying to rebuild.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import numpy.typing as npt

from neardup._atomic import atomic_directory, current_version, read_current
from neardup._persist import (
    MANIFEST,
    JsonColumn,
    checksum_json,
    read_bundle,
    read_manifest,
    write_bundle,
)
from neardup.errors import BadInputError, DamagedFileError
from neardup.index._validate import check_k
from neardup.index.design import TableDesign
from neardup.index.store import IdIndex, IndexStore
from neardup.index.tables import StaticTables
from neardup.index.wide import MAX_K as MAX_K_128
from neardup.index.wide import HalfIndex, HalvesIndex

if TYPE_CHECKING:
    from neardup.fingerprint import Fingerprinter

FORMAT = "neardup-hamming-index"
FORMAT_128 = "neardup-hamming-index-128"  # 128 bits: hi/ and lo/ halves
VERSION = 2


class IndexFormatError(DamagedFileError):
    """A saved index is missing, truncated, corrupted, edited or of another format."""


class Persisted(HalfIndex, Protocol):
    """What this module writes and restores of a :class:`~neardup.index.HammingIndex`: the
    index reaches its storage through this interface, so storage does not import the index
    (which imports storage for ``save`` / ``load``)."""

    k: int
    bits: int
    design: str | int | TableDesign
    design_: TableDesign | None
    memory_budget: int
    buffer_size: int
    merge_factor: int
    _designed_for: int
    _store: IndexStore
    _ids: IdIndex
    _runs: list[tuple[int, int, StaticTables]]
    _indexed: int
    _wide: HalvesIndex | None

    def __init__(
        self,
        *,
        k: int,
        bits: int,
        design: str | int | TableDesign,
        memory_budget: int,
        buffer_size: int,
        merge_factor: int,
    ) -> None: ...


IndexT = TypeVar("IndexT", bound=Persisted)


@dataclass
class SavedIndex(Generic[IndexT]):
    """What a saved index directory holds: the index and, when saved with them, the fingerprint
    configuration its fingerprints were made with and the external id of each stored row."""

    index: IndexT
    fingerprinter: Fingerprinter | None = None
    config_id: str | None = None
    external_ids: JsonColumn | None = None


def _arrays(index: Persisted) -> dict[str, npt.NDArray[Any]]:
    s = index._store
    out: dict[str, npt.NDArray[Any]] = {"ids": s.ids, "fps": s.fps, "alive": s.alive}
    if s.ts is not None:
        out["timestamps"] = s.ts
    if index._ids.order is not None:
        out["id_sorted"] = index._ids.sorted_ids
        out["id_order"] = index._ids.order
    for i, (_, _, run) in enumerate(index._runs):
        out[f"run{i}_keys"] = run.keys
        out[f"run{i}_pos"] = run.pos
        out[f"run{i}_offsets"] = run.offsets
    return out


def _meta(index: Persisted) -> dict[str, Any]:
    return {
        "bits": index.bits,
        "k": index.k,
        "design_option": index.design if isinstance(index.design, (str, int)) else "fixed",
        "memory_budget": index.memory_budget,
        "buffer_size": index.buffer_size,
        "merge_factor": index.merge_factor,
        "stored": index._store.n,
        "live": index._store.live,
        "runs": [
            {"lo": lo, "hi": hi, "q": run.q, "design": run.design.to_dict()}
            for lo, hi, run in index._runs
        ],
        "current_design": None if index.design_ is None else index.design_.to_dict(),
    }


def write_index_files(
    index: Persisted,
    directory: Path,
    *,
    fingerprinter: Fingerprinter | None = None,
    external_ids: JsonColumn | None = None,
) -> str:
    """Write a flushed 64-bit ``index`` as a bundle into ``directory`` (no versioning: see
    :func:`save_index`); returns the manifest checksum."""
    index.flush()
    if index._ids.recent:
        index._ids.rebuild(index._store)  # the saved id index is the sorted part only
    arrays, meta, files = _arrays(index), _meta(index), []
    if fingerprinter is not None:
        directory.mkdir(parents=True, exist_ok=True)
        meta["fingerprinter"] = fingerprinter.get_config()
        meta["config_id"] = fingerprinter.config_id
        if fingerprinter.idf is not None:
            fingerprinter.idf.save(directory / "idf.tsv")
            files.append("idf.tsv")
    if external_ids is not None:
        if len(external_ids) != index._store.n:
            raise BadInputError(
                f"{len(external_ids)} external ids for {index._store.n} stored rows; "
                "give one per stored row"
            )
        arrays["external_ids_data"], arrays["external_ids_offsets"] = external_ids.arrays()
    return write_bundle(directory, FORMAT, VERSION, meta, arrays, files)


def save_index(
    index: Persisted,
    path: str | os.PathLike[str],
    *,
    fingerprinter: Fingerprinter | None = None,
    external_ids: JsonColumn | None = None,
    wait: bool = True,
) -> None:
    """Write ``index`` (already flushed) as a new version of directory ``path``."""
    with atomic_directory(path, wait=wait, legacy_marker=MANIFEST) as version:
        write_index_files(index, version, fingerprinter=fingerprinter, external_ids=external_ids)


def open_index(
    cls: type[IndexT],
    path: str | os.PathLike[str],
    *,
    mmap: bool = True,
    verify: bool = True,
    config_id: str | None = None,
) -> SavedIndex[IndexT]:
    """Open the live version of ``path`` (retrying when a writer replaced it meanwhile)."""
    root = Path(path)
    for _ in range(8):
        try:
            version = current_version(root, legacy_marker=MANIFEST)
        except FileNotFoundError:
            raise IndexFormatError(
                f"{root} is not a saved index (no {root / 'CURRENT'}); create it with save()"
            ) from None
        except OSError as e:
            raise IndexFormatError(str(e)) from None
        try:
            saved = read_index_files(cls, version, mmap=mmap, verify=verify)
            break
        except IndexFormatError:
            if version == root or read_current(root) == version.name:
                raise  # not a concurrent replacement: the live version is damaged
    else:
        raise IndexFormatError(f"{root} kept changing while being opened; try again")
    if config_id is not None and saved.config_id != config_id:
        raise IndexFormatError(
            f"{root} holds fingerprints of config {saved.config_id}, not {config_id}; "
            "fingerprint queries with the index's config (or rebuild the index)"
        )
    return saved


def read_index_files(
    cls: type[IndexT], directory: Path, *, mmap: bool, verify: bool
) -> SavedIndex[IndexT]:
    """Read a bundle written by :func:`write_index_files` (or the 128-bit one)."""
    meta, arrays = read_bundle(
        directory, (FORMAT, FORMAT_128), VERSION, mmap=mmap, verify=verify, error=IndexFormatError
    )
    where = directory / MANIFEST
    try:
        if meta.get("bits") == 128:
            index: IndexT = load_halves(cls, directory, meta, mmap=mmap, verify=verify)
        else:
            index = _index_from(cls, directory, meta, arrays)
        saved = SavedIndex(index, config_id=meta.get("config_id"))
        if "fingerprinter" in meta:
            saved.fingerprinter = _fingerprinter(directory, meta["fingerprinter"])
        if "external_ids_data" in arrays:
            ext = JsonColumn(arrays["external_ids_data"], arrays["external_ids_offsets"])
            ext.check(str(directory / "external_ids_offsets.npy"), IndexFormatError)
            if len(ext) != index._store.n:
                raise IndexFormatError(
                    f"{directory}: {len(ext)} external ids for {index._store.n} rows; "
                    "restore the index or rebuild it"
                )
            saved.external_ids = ext
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        if isinstance(e, IndexFormatError):
            raise
        raise IndexFormatError(f"{where} is inconsistent ({e!r}); restore or rebuild") from None
    return saved


def _fingerprinter(directory: Path, config: dict[str, Any]) -> Fingerprinter:
    from neardup.features.idf import IdfTable
    from neardup.fingerprint import Fingerprinter

    idf_path = directory / "idf.tsv"
    idf = IdfTable.load(idf_path) if idf_path.exists() else None
    return Fingerprinter.from_config(config, idf=idf)


def _index_from(
    cls: type[IndexT],
    root: Path,
    meta: dict[str, Any],
    arrays: dict[str, npt.NDArray[Any]],
) -> IndexT:
    option = meta["design_option"]
    current = meta["current_design"]
    design: Any = option if option != "fixed" else TableDesign.from_dict(current)
    index = cls(
        k=int(meta["k"]),
        bits=int(meta["bits"]),
        design=design,
        memory_budget=int(meta["memory_budget"]),
        buffer_size=int(meta["buffer_size"]),
        merge_factor=int(meta["merge_factor"]),
    )
    if current is not None:
        index.design_ = TableDesign.from_dict(current)
        index._designed_for = int(meta["stored"])
    store = _store(root, meta, arrays)
    runs = []
    for i, r in enumerate(meta["runs"]):
        tables = StaticTables(
            TableDesign.from_dict(r["design"]),
            int(r["q"]),
            arrays[f"run{i}_keys"],
            arrays[f"run{i}_pos"],
            arrays[f"run{i}_offsets"],
        )
        runs.append((int(r["lo"]), int(r["hi"]), tables))
    _check_runs(root, store, runs)
    ids = IdIndex()
    if "id_order" in arrays:
        ids.sorted_ids, ids.order = arrays["id_sorted"], arrays["id_order"]
        if ids.order.shape != ids.sorted_ids.shape or ids.order.shape[0] > store.n:
            raise IndexFormatError(f"{root}/id_order.npy does not match id_sorted.npy or ids.npy")
    else:
        ids.sorted_ids, ids.order = store.ids, None
    index._store, index._ids, index._runs = store, ids, runs
    index._indexed = runs[-1][1] if runs else 0
    return index


def _store(root: Path, meta: dict[str, Any], arrays: dict[str, npt.NDArray[Any]]) -> IndexStore:
    """The row store, after checking that its columns agree (a shorter ``fps`` would let a
    kernel read past the end of a memory map)."""
    n = int(meta["stored"])
    ts = arrays.get("timestamps")
    for name in ("ids", "fps", "alive", "timestamps"):
        arr = arrays.get(name)
        if name != "timestamps" and arr is None:
            raise IndexFormatError(f"{root / MANIFEST} lists no {name}.npy; restore or rebuild")
        if arr is not None and arr.shape != (n,):
            raise IndexFormatError(
                f"{root / (name + '.npy')} has shape {arr.shape}, the index stores {n} rows; "
                "restore the index or rebuild it"
            )
    store = IndexStore.from_arrays(arrays["ids"], arrays["fps"], arrays["alive"], ts)
    if store.live != int(meta["live"]):
        raise IndexFormatError(
            f"{root / 'alive.npy'} marks {store.live} live rows, the manifest says "
            f"{meta['live']}; restore the index or rebuild it"
        )
    return store


def _check_runs(root: Path, store: IndexStore, runs: list[tuple[int, int, StaticTables]]) -> None:
    """Cheap O(tables) bounds checks so that even unverified files cannot crash a kernel."""
    prev_hi = 0
    for i, (lo, hi, run) in enumerate(runs):
        t = run.design.tables
        ok = (
            run.keys.ndim == 2
            and run.keys.shape[0] == t
            and run.pos.shape == run.keys.shape
            and run.offsets.shape == (t, (1 << run.q) + 1)
            and prev_hi <= lo <= hi <= store.n
            and run.keys.shape[1] <= hi - lo
        )
        if ok and run.offsets.size:
            ok = bool(
                (run.offsets[:, 0] == 0).all() and (run.offsets[:, -1] == run.keys.shape[1]).all()
            )
        if not ok:
            raise IndexFormatError(
                f"{root}/run{i}_*.npy do not match the manifest's run {i}; restore or rebuild"
            )
        prev_hi = hi


def load_index(
    cls: type[IndexT], path: str | os.PathLike[str], *, mmap: bool, verify: bool
) -> IndexT:
    """Open a directory written by :func:`save_index` (the index only)."""
    return open_index(cls, path, mmap=mmap, verify=verify).index


def save_halves(index: Any, path: str | os.PathLike[str]) -> None:
    """Write a 128-bit index: its two 64-bit halves in ``hi/`` and ``lo/`` of one version, and
    a top manifest holding k and both halves' manifest checksums (halves cannot be swapped)."""
    with atomic_directory(path, legacy_marker=MANIFEST) as version:
        sums = {}
        for name, half in zip(("hi", "lo"), index.halves, strict=True):
            sums[name] = write_index_files(half, version / name)
        write_bundle(version, FORMAT_128, VERSION, {"bits": 128, "k": index.k, "halves": sums}, {})


def read_halves(
    cls: type[IndexT], directory: Path, meta: dict[str, Any], mmap: bool, verify: bool
) -> tuple[IndexT, IndexT]:
    """The two halves of a 128-bit bundle, checked against the top manifest."""
    halves = []
    for name in ("hi", "lo"):
        sub = directory / name
        body = read_manifest(sub, FORMAT, VERSION, IndexFormatError)
        if checksum_json(body) != meta["halves"][name]:
            raise IndexFormatError(
                f"{sub / MANIFEST} is not the half the top manifest lists; restore or rebuild"
            )
        halves.append(read_index_files(cls, sub, mmap=mmap, verify=verify).index)
    return halves[0], halves[1]


def load_halves(
    cls: type[IndexT],
    path: str | os.PathLike[str],
    manifest: dict[str, Any],
    *,
    mmap: bool,
    verify: bool,
) -> IndexT:
    """Open a 128-bit index written by :func:`save_halves` (``manifest`` already read)."""
    k = check_k(manifest["k"], MAX_K_128)
    hi, lo = read_halves(cls, Path(path), manifest, mmap, verify)
    index = cls(
        k=k,
        bits=128,
        design=hi.design,
        memory_budget=hi.memory_budget,
        buffer_size=hi.buffer_size,
        merge_factor=hi.merge_factor,
    )
    index._wide = HalvesIndex(k, hi, lo)
    return index
