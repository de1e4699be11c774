"""Streaming record readers: JSONL, CSV, Parquet, a folder of ``.txt`` files; ``.gz`` and ``-``.

Every reader yields ``(where, record)`` pairs, ``where`` being a human location such as
``"docs.jsonl:12"`` used in error messages. Nothing is read into memory at once: JSONL and CSV
line by line, Parquet by record batches, text folders file by file.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "a.jsonl")
>>> _ = open(p, "w").write('{"id": 1, "text": "hi"}\\n\\n{"id": 2, "text": "yo"}\\n')
>>> [(w.rsplit(os.sep, 1)[-1], r) for w, r in iter_records(p)]
[('a.jsonl:1', {'id': 1, 'text': 'hi'}), ('a.jsonl:3', {'id': 2, 'text': 'yo'})]
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from neardup.io import _json

FORMATS = ("jsonl", "csv", "parquet", "txt")
_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".txt": "txt",
}

Record = dict[str, Any]


class InputError(ValueError):
    """Bad input data; the message names the file and line (or row) at fault."""


class FormatError(ValueError):
    """The input's format cannot be determined or is not supported (a usage error)."""


Row = tuple[str, Record | InputError]


def detect_format(path: str, fmt: str | None = None) -> str:
    """Return the format name for ``path``: ``fmt`` when given, else from the extension.

    ``-`` (stdin/stdout) defaults to JSONL; a directory is a folder of ``.txt`` files.

    >>> detect_format("x.jsonl.gz"), detect_format("-"), detect_format("a.csv", "jsonl")
    ('jsonl', 'jsonl', 'jsonl')
    """
    if fmt is not None:
        if fmt not in FORMATS:
            raise FormatError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    if path == "-":
        return "jsonl"
    if os.path.isdir(path):
        return "txt"
    name = path[:-3] if path.endswith(".gz") else path
    ext = os.path.splitext(name)[1].lower()
    if ext not in _EXTENSIONS:
        raise FormatError(
            f"cannot tell the format of {path!r} from its extension; pass --format "
            f"({', '.join(FORMATS)})"
        )
    return _EXTENSIONS[ext]


def open_binary(path: str) -> IO[bytes]:
    """Open ``path`` for reading bytes, gunzipping when it starts with the gzip magic."""
    if path == "-":
        return sys.stdin.buffer
    raw = open(path, "rb")  # noqa: SIM115 - returned to the caller
    if raw.peek(2)[:2] == b"\x1f\x8b":
        # GzipFile.readline is slow line by line; a large buffer in front of it is ~2x faster
        return io.BufferedReader(gzip.GzipFile(fileobj=raw, mode="rb"), 1 << 20)
    return raw


def _decode(line: bytes, where: str) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{where}: invalid UTF-8 at byte {exc.start}: re-encode the file as UTF-8"
        ) from None


def _iter_jsonl(path: str) -> Iterator[Row]:
    f = open_binary(path)
    try:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                rec = _json.loads(line)
            except UnicodeDecodeError:
                rec = json.loads(_decode(line, where))  # raises the one-line InputError
            except json.JSONDecodeError as exc:
                yield (
                    where,
                    InputError(f"{where}: malformed JSON ({exc.msg} at column {exc.colno})"),
                )
                continue
            if not isinstance(rec, dict):
                yield (
                    where,
                    InputError(
                        f"{where}: expected a JSON object per line, got {type(rec).__name__}"
                    ),
                )
                continue
            yield where, rec
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot read ({exc}); is the file truncated?") from None
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def _iter_csv(path: str) -> Iterator[Row]:
    f = open_binary(path)
    text = io.TextIOWrapper(f, encoding="utf-8", newline="")
    try:
        reader = csv.DictReader(text)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except UnicodeDecodeError:
                raise InputError(
                    f"{path}:{reader.line_num + 1}: invalid UTF-8; re-encode the file as UTF-8"
                ) from None
            except csv.Error as exc:
                raise InputError(f"{path}:{reader.line_num}: malformed CSV ({exc})") from None
            yield f"{path}:{reader.line_num}", dict(row)
    finally:
        if f is not sys.stdin.buffer:
            text.close()


def _iter_parquet(path: str) -> Iterator[Row]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for bad files
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    row = 0
    for batch in pf.iter_batches(batch_size=8192):
        for rec in batch.to_pylist():
            row += 1
            yield f"{path}:row {row}", rec


def _iter_txt_folder(path: str) -> Iterator[Row]:
    root = Path(path)
    if not root.is_dir():
        raise FormatError(
            f"{path!r} is not a directory; the txt format reads a folder of .txt files"
        )
    for file in sorted(root.rglob("*.txt")):
        rel = file.relative_to(root).as_posix()
        where = str(file)
        data = file.read_bytes()
        yield where, {"id": rel, "text": _decode(data, where)}


def iter_records(path: str, fmt: str | None = None) -> Iterator[Row]:
    """Yield ``(where, record)`` for each record of ``path`` in file order.

    A malformed row is yielded as ``(where, InputError)`` so the caller decides to skip or
    fail; errors that make the rest of the file unreadable are raised.
    """
    kind = detect_format(path, fmt)
    if path != "-" and kind != "txt" and not os.path.exists(path):
        raise FileNotFoundError(f"input file {path!r} does not exist")
    if kind == "parquet" and path == "-":
        raise FormatError("Parquet cannot be read from stdin; pass a file path")
    readers = {
        "jsonl": _iter_jsonl,
        "csv": _iter_csv,
        "parquet": _iter_parquet,
        "txt": _iter_txt_folder,
    }
    return readers[kind](path)
