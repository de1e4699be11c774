"""On-disk format: a directory with ``manifest.json`` and one ``.npy`` file per array.

``manifest.json`` holds the format version, bits, k, the design, counts, each run's range and
bucket bits, and per array file its dtype, shape and sha256. Arrays are written with
``allow_pickle=False`` into a temporary sibling directory that is then renamed over the
target (an existing index is moved aside first and deleted after). Loading memory-maps the
arrays (``np.load(mmap_mode="r")``); a missing, truncated or corrupted file raises
:class:`IndexFormatError` naming the file, before any search can run on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from neardup.index.design import TableDesign
from neardup.index.store import IdIndex, Store
from neardup.index.tables import StaticTables

if TYPE_CHECKING:
    from neardup.index.hamming_index import HammingIndex

FORMAT = "neardup-hamming-index"
FORMAT_128 = "neardup-hamming-index-128"  # 128 bits: hi/ and lo/ halves
VERSION = 1
_CHUNK = 1 << 24


class IndexFormatError(ValueError):
    """A saved index is missing, truncated, corrupted or of another format."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _arrays(index: HammingIndex) -> dict[str, npt.NDArray[Any]]:
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


def save_index(index: HammingIndex, path: str | os.PathLike[str]) -> None:
    """Write ``index`` (already flushed) to directory ``path`` atomically."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        files = {}
        for name, arr in _arrays(index).items():
            fname = f"{name}.npy"
            np.save(tmp / fname, np.ascontiguousarray(arr), allow_pickle=False)
            files[name] = {
                "file": fname,
                "dtype": arr.dtype.str,
                "shape": list(arr.shape),
                "sha256": _sha256(tmp / fname),
            }
        manifest = {
            "format": FORMAT,
            "version": VERSION,
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
            "arrays": files,
        }
        with (tmp / "manifest.json").open("w") as f:
            json.dump(manifest, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        replace_directory(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def replace_directory(tmp: Path, target: Path, marker: str | None = "manifest.json") -> None:
    """Move ``tmp`` to ``target``, replacing a previous one that holds ``marker`` (never other
    data; ``marker=None`` replaces whatever is there)."""
    if not target.exists():
        os.replace(tmp, target)
        return
    if marker is not None and not (target / marker).exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} exists and is not a saved index; not replacing it")
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    os.replace(target, old)
    os.replace(tmp, target)
    shutil.rmtree(old, ignore_errors=True)


def _read_manifest(path: Path) -> dict[str, Any]:
    mpath = path / "manifest.json"
    try:
        manifest: dict[str, Any] = json.loads(mpath.read_text())
    except FileNotFoundError:
        raise IndexFormatError(f"{mpath} not found: {path} is not a saved HammingIndex") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise IndexFormatError(f"{mpath} is not valid JSON ({e})") from None
    if manifest.get("format") == FORMAT_128 and manifest.get("version") == VERSION:
        return manifest
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise IndexFormatError(
            f"{mpath}: unsupported format {manifest.get('format')!r} "
            f"version {manifest.get('version')!r} "
            f"(expected {FORMAT} v{VERSION})"
        )
    return manifest


def _load_array(path: Path, meta: dict[str, Any], mmap: bool, verify: bool) -> npt.NDArray[Any]:
    fpath = path / str(meta["file"])
    if verify:
        try:
            digest = _sha256(fpath)
        except OSError as e:
            raise IndexFormatError(f"cannot read {fpath}: {e}") from None
        if digest != meta["sha256"]:
            raise IndexFormatError(
                f"{fpath} is corrupted: sha256 {digest} does not match the manifest"
            )
    try:
        arr = np.load(fpath, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise IndexFormatError(f"{fpath} is missing, truncated or not a .npy array ({e})") from None
    if arr.dtype.str != meta["dtype"] or list(arr.shape) != list(meta["shape"]):
        raise IndexFormatError(
            f"{fpath} holds {arr.dtype.str}{list(arr.shape)}, the manifest says "
            f"{meta['dtype']}{meta['shape']}"
        )
    return arr  # type: ignore[no-any-return]


def load_index(
    cls: type[HammingIndex], path: str | os.PathLike[str], *, mmap: bool, verify: bool
) -> HammingIndex:
    """Open a directory written by :func:`save_index`."""
    root = Path(path)
    manifest = _read_manifest(root)
    if manifest.get("bits") == 128:
        from neardup.index.wide import load_halves

        return load_halves(cls, root, manifest, mmap=mmap, verify=verify)
    arrays = {
        name: _load_array(root, meta, mmap, verify) for name, meta in manifest["arrays"].items()
    }
    try:
        option = manifest["design_option"]
        current = manifest["current_design"]
        design: Any = option if option != "fixed" else TableDesign.from_dict(current)
        index = cls(
            k=int(manifest["k"]),
            bits=int(manifest["bits"]),
            design=design,
            memory_budget=int(manifest["memory_budget"]),
            buffer_size=int(manifest["buffer_size"]),
            merge_factor=int(manifest["merge_factor"]),
        )
        if current is not None:
            index.design_ = TableDesign.from_dict(current)
            index._designed_for = int(manifest["stored"])
        store = Store.from_arrays(
            arrays["ids"], arrays["fps"], arrays["alive"], arrays.get("timestamps")
        )
        runs = []
        for i, r in enumerate(manifest["runs"]):
            tables = StaticTables(
                TableDesign.from_dict(r["design"]),
                int(r["q"]),
                arrays[f"run{i}_keys"],
                arrays[f"run{i}_pos"],
                arrays[f"run{i}_offsets"],
            )
            runs.append((int(r["lo"]), int(r["hi"]), tables))
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, IndexFormatError):
            raise
        raise IndexFormatError(f"{root / 'manifest.json'} is inconsistent: {e!r}") from None
    _check_structure(root, store, runs)
    ids = IdIndex()
    if "id_order" in arrays:
        ids.sorted_ids, ids.order = arrays["id_sorted"], arrays["id_order"]
    else:
        ids.sorted_ids, ids.order = store.ids, None
    index._store, index._ids, index._runs = store, ids, runs
    index._indexed = runs[-1][1] if runs else 0
    return index


def _check_structure(root: Path, store: Store, runs: list[tuple[int, int, StaticTables]]) -> None:
    """Cheap O(tables) bounds checks so that even unverified files cannot crash a kernel."""
    for i, (lo, hi, run) in enumerate(runs):
        t = run.design.tables
        ok = (
            run.keys.ndim == 2
            and run.keys.shape[0] == t
            and run.pos.shape == run.keys.shape
            and run.offsets.shape == (t, (1 << run.q) + 1)
            and 0 <= lo <= hi <= store.n
        )
        if ok and run.offsets.size:
            ok = bool(
                (run.offsets[:, 0] == 0).all() and (run.offsets[:, -1] == run.keys.shape[1]).all()
            )
        if not ok:
            raise IndexFormatError(f"{root}/run{i}_*.npy do not match the manifest's run {i}")
