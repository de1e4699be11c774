"""Saved bundles: ``.npy`` arrays and files listed, with size and XXH3-128, in ``manifest.json``.

One format for everything neardup persists (indexes, dedup state). ``manifest.json`` holds::

    {"format": ..., "version": ..., "meta": {...}, "files": {name: {file, bytes, xxh3_128,
     dtype?, shape?}}, "checksum": XXH3-128 of the canonical JSON of everything above}

so every byte that shapes an answer is covered: array data (header included), extra files,
and the manifest's own fields (bits, k, runs, config). Loading always checks the manifest's
checksum and every file's size (cheap); ``verify=True`` also hashes the files (XXH3-128 over
16 MB blocks, ~2-4 GB/s). Arrays never go through pickle. A memory-mapped array (a spill
file's, issue 39) is written in blocks with its pages dropped after each, and files are hashed
in blocks: a save or a verified load of a large state holds a block resident, not a file.

>>> import tempfile, pathlib, numpy as np
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = write_bundle(d, "demo", 1, {"k": 3}, {"xs": np.arange(4)})
>>> meta, arrays = read_bundle(d, "demo", 1)
>>> meta, arrays["xs"].tolist()
({'k': 3}, [0, 1, 2, 3])
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

from neardup._atomic import MANIFEST as MANIFEST  # one name: what a bundle writes last
from neardup._atomic import SLEEP_PER_FILE
from neardup._spill import drop_pages, file_map
from neardup.errors import DamagedFileError

_BLOCK = 16 << 20  # bytes written at a time (module docs)
_HASH_BLOCK = 1 << 20  # bytes hashed at a time: a fixed buffer, kept small (fresh pages are RSS)


def checksum_file(path: Path) -> str:
    """XXH3-128 of a file's bytes (hex), read in blocks (a populated map of a whole file made
    it resident: a verified load of a 10^8-document state held its largest file)."""
    h = xxhash.xxh3_128()
    buf = bytearray(_HASH_BLOCK)
    with path.open("rb", buffering=0) as f:
        while n := f.readinto(buf):
            h.update(memoryview(buf)[:n])
    return h.hexdigest()


def _save_array(path: Path, arr: npt.NDArray[Any]) -> None:
    """``np.save`` of ``arr``; a memory-mapped one in blocks, its pages dropped after each (the
    same bytes: ``np.save``'s version-1.0 header, then the data)."""
    arr = np.ascontiguousarray(arr)
    if file_map(arr) is None or arr.ndim != 1:
        np.save(path, arr, allow_pickle=False)
        return
    with path.open("wb") as f:
        np.lib.format.write_array_header_1_0(f, np.lib.format.header_data_from_array_1_0(arr))
        step = max(1, _BLOCK // max(arr.itemsize, 1))
        for i in range(0, arr.size, step):
            f.write(arr[i : i + step].data)
            drop_pages(arr)


def checksum_json(body: dict[str, Any]) -> str:
    blob = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return xxhash.xxh3_128(blob.encode()).hexdigest()


def write_bundle(
    directory: Path,
    fmt: str,
    version: int,
    meta: dict[str, Any],
    arrays: dict[str, npt.NDArray[Any]],
    files: Iterable[str] = (),
) -> str:
    """Write ``arrays`` as ``NAME.npy`` and ``manifest.json`` listing them and ``files``
    (already written in ``directory``); returns the manifest's checksum."""
    directory.mkdir(parents=True, exist_ok=True)
    listed: dict[str, dict[str, Any]] = {}
    for name, arr in arrays.items():
        fname = f"{name}.npy"
        _save_array(directory / fname, arr)
        listed[name] = {"file": fname, "dtype": arr.dtype.str, "shape": list(arr.shape)}
        if os.environ.get(SLEEP_PER_FILE):
            time.sleep(float(os.environ[SLEEP_PER_FILE]))
    for fname in files:
        listed[fname] = {"file": fname}
    for entry in listed.values():
        p = directory / entry["file"]
        entry["bytes"] = p.stat().st_size
        entry["xxh3_128"] = checksum_file(p)
    body = {"format": fmt, "version": version, "meta": meta, "files": listed}
    checksum = checksum_json(body)
    with (directory / MANIFEST).open("w", encoding="utf-8") as f:
        json.dump({**body, "checksum": checksum}, f, indent=1, ensure_ascii=False)
    return checksum


def read_manifest(
    directory: Path,
    fmt: str | Sequence[str],
    version: int | Sequence[int],
    error: type[DamagedFileError] = DamagedFileError,
) -> dict[str, Any]:
    """The checked manifest body (format, version, meta, files); ``version``: the one this
    neardup writes, or every version it reads (newest last)."""
    path = directory / MANIFEST
    formats = (fmt,) if isinstance(fmt, str) else tuple(fmt)
    versions = (version,) if isinstance(version, int) else tuple(version)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path} not found: {directory} is not a saved {formats[0]}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise error(f"{path} is not valid JSON ({e}); restore it or rebuild") from None
    if not isinstance(manifest, dict):
        raise error(f"{path} is not a manifest (a JSON object); restore it or rebuild")
    if manifest.get("format") not in formats or manifest.get("version") not in versions:
        raise error(
            f"{path}: format {manifest.get('format')!r} version {manifest.get('version')!r} is "
            f"not supported (this neardup reads {formats[0]} version "
            f"{' or '.join(map(str, versions))}); rebuild it "
            "with this version of neardup"
        )
    claimed = manifest.pop("checksum", None)
    if claimed != checksum_json(manifest) or not isinstance(manifest.get("files"), dict):
        raise error(
            f"{path} was edited or damaged (its checksum does not match its fields); "
            "restore it or rebuild"
        )
    return manifest


def check_file(
    directory: Path, entry: dict[str, Any], verify: bool, error: type[DamagedFileError]
) -> Path:
    """The path of a listed file after the size (always) and checksum (``verify``) checks."""
    path = directory / str(entry["file"])
    try:
        size = path.stat().st_size
    except OSError as e:
        raise error(f"{path} is missing ({e.strerror}); restore it or rebuild") from None
    if size != entry["bytes"]:
        raise error(
            f"{path} has {size} bytes, the manifest says {entry['bytes']} (truncated or "
            "replaced); restore it or rebuild"
        )
    if verify and checksum_file(path) != entry["xxh3_128"]:
        raise error(
            f"{path} is corrupted: its XXH3-128 does not match the manifest; restore it or "
            "rebuild (verify=False skips this check)"
        )
    return path


def _load_array(
    directory: Path,
    entry: dict[str, Any],
    mmap_mode: bool,
    verify: bool,
    error: type[DamagedFileError],
) -> npt.NDArray[Any]:
    path = check_file(directory, entry, verify, error)
    try:
        arr = np.load(path, mmap_mode="r" if mmap_mode else None, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise error(f"{path} is truncated or not a .npy array ({e}); restore or rebuild") from None
    if arr.dtype.str != entry["dtype"] or list(arr.shape) != list(entry["shape"]):
        raise error(
            f"{path} holds {arr.dtype.str}{list(arr.shape)}, the manifest says "
            f"{entry['dtype']}{entry['shape']}; restore it or rebuild"
        )
    return arr  # type: ignore[no-any-return]


def read_bundle(
    directory: Path,
    fmt: str | Sequence[str],
    version: int | Sequence[int],
    *,
    mmap: bool = True,
    verify: bool = True,
    error: type[DamagedFileError] = DamagedFileError,
) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    """``(meta, arrays)`` of a bundle; extra files are size/checksum-checked but not read."""
    manifest = read_manifest(directory, fmt, version, error)
    arrays = {}
    try:
        for name, entry in manifest["files"].items():
            if "dtype" in entry:
                arrays[name] = _load_array(directory, entry, mmap, verify, error)
            else:
                check_file(directory, entry, verify, error)
        meta = manifest["meta"]
    except (KeyError, TypeError) as e:
        where = directory / MANIFEST
        raise error(f"{where} lacks a field ({e!r}); restore it or rebuild") from None
    return meta, arrays


# ---------------------------------------------------------------------------------- JSON column
class JsonColumn:
    """A read-mostly column of JSON values (external ids) stored as two arrays.

    ``data`` is the UTF-8 JSON of every value concatenated, ``offsets`` (n + 1 int64) where each
    starts; a value is decoded only when read, so opening a large column costs nothing.

    >>> col = JsonColumn.of(["a", 7, None])
    >>> col.extend([{"k": 1}]); len(col), col[0], col[3], col.to_list()[1:3]
    (4, 'a', {'k': 1}, [7, None])
    """

    def __init__(self, data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> None:
        self.data, self.offsets = data, offsets
        self._tail: list[Any] = []

    @classmethod
    def of(cls, values: Iterable[Any]) -> JsonColumn:
        col = cls(np.zeros(0, np.uint8), np.zeros(1, np.int64))
        col.extend(values)
        return col

    def check(self, what: str, error: type[DamagedFileError] = DamagedFileError) -> None:
        """Raise ``error`` unless the offsets are a valid partition of the data (O(n))."""
        off = self.offsets
        ok = off.ndim == 1 and off.shape[0] >= 1 and self.data.ndim == 1
        ok = ok and int(off[0]) == 0 and int(off[-1]) == self.data.shape[0]
        if not ok or bool((np.diff(off) < 0).any()):
            raise error(f"{what}: the external ids' offsets are inconsistent; restore or rebuild")

    def __len__(self) -> int:
        return int(self.offsets.shape[0]) - 1 + len(self._tail)

    def __getitem__(self, i: int) -> Any:
        n = int(self.offsets.shape[0]) - 1
        if i >= n:
            return self._tail[i - n]
        return json.loads(bytes(self.data[self.offsets[i] : self.offsets[i + 1]]))

    def extend(self, values: Iterable[Any]) -> None:
        self._tail.extend(values)

    def to_list(self) -> list[Any]:
        return [self[i] for i in range(len(self))]

    def shared(self, values: Iterable[Any], stop: int) -> list[Any]:
        """The ``values`` that one of rows ``0..stop-1`` also holds (equal JSON), in C: rows
        of each length are compared as fixed-size byte strings, a few MB at a time.

        >>> JsonColumn.of(["a", 7, "b", "c"]).shared(["b", 7, "c", "z"], 3)
        [7, 'b']
        """
        data, off = self.arrays()
        off = off[: stop + 1]
        starts, lengths = off[:-1], np.diff(off)
        by_size: dict[int, dict[bytes, Any]] = {}
        for v in values:
            blob = json.dumps(v).encode()  # as arrays() encodes them
            by_size.setdefault(len(blob), {})[blob] = v
        found: list[Any] = []
        for size, wanted in sorted(by_size.items()):
            rows = starts[lengths == size]
            keys = np.frombuffer(b"".join(wanted), f"V{size}")
            hit = np.zeros(len(keys), bool)
            step = max(1, (4 << 20) // max(size, 1))
            for a in range(0, len(rows), step):
                block = data[rows[a : a + step, None] + np.arange(size)]
                hit |= np.isin(keys, np.ascontiguousarray(block).view(f"V{size}").ravel())
            found += [v for v, h in zip(wanted.values(), hit.tolist(), strict=True) if h]
        return found

    def arrays(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
        """``(data, offsets)`` including appended values."""
        if not self._tail:
            return self.data, self.offsets
        blobs = [json.dumps(v).encode() for v in self._tail]  # ASCII: lone surrogates too
        lengths = np.fromiter(map(len, blobs), np.int64, len(blobs))
        data = np.concatenate([self.data, np.frombuffer(b"".join(blobs), np.uint8)])
        offsets = np.concatenate([self.offsets, self.offsets[-1] + np.cumsum(lengths)])
        return data, offsets
