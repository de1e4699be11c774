"""Streaming record readers: JSONL, CSV, Parquet, folders of parts or of ``.txt``; ``.gz``, ``-``.

Every reader yields ``(where, record)`` pairs, ``where`` being a human location such as
``"docs.jsonl:12"`` used in error messages. Nothing is read into memory at once: JSONL and CSV
line by line, Parquet by record batches, text folders file by file.

Text is UTF-8; a UTF-8 byte-order mark is skipped, a UTF-16/32 one is refused with the fix. A
row that cannot be decoded (invalid UTF-8, malformed JSON, a CSV row whose field count differs
from the header) is yielded as an :class:`InputError`, so ``--on-error skip`` skips just it.

A folder is read as *parts* (what Spark, Hive and most tools write): every file under it,
in natural relative-path order, except hidden and ``_``-prefixed ones (``_SUCCESS``, ``.crc``);
Hive-style ``name=value`` folders become columns of their records (:mod:`neardup.io.partitions`).
The format comes from ``--format`` or from the parts' extensions, which must agree; a folder holding
only ``.txt`` files (and no JSONL/CSV/Parquet parts) is a text folder, one document per file.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "a.jsonl")
>>> _ = open(p, "w").write('{"id": 1, "text": "hi"}\\n\\n{"id": 2, "text": "yo"}\\n')
>>> [(w.rsplit(os.sep, 1)[-1], r) for w, r in iter_records(p)]
[('a.jsonl:1', {'id': 1, 'text': 'hi'}), ('a.jsonl:3', {'id': 2, 'text': 'yo'})]
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from itertools import chain
from pathlib import Path, PurePosixPath
from typing import IO, Any

from neardup import _fs
from neardup.errors import BadInputError
from neardup.io import _json
from neardup.io._gunzip import gunzip
from neardup.io.partitions import add_to_line, add_to_records, part_sort_key, partition_values

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


class InputError(BadInputError):
    """Bad input data; the message names the file and line (or row) at fault."""


class FormatError(BadInputError):
    """The input's format cannot be determined or is not supported (a usage error)."""


Row = tuple[str, Record | InputError]


def _format_of_name(path: str) -> str | None:
    name = path[:-3] if path.endswith(".gz") else path
    return _EXTENSIONS.get(os.path.splitext(name)[1].lower())


def detect_format(path: str, fmt: str | None = None) -> str:
    """Return the format name for ``path``: ``fmt`` when given, else from the extension.

    ``-`` (stdin/stdout) defaults to JSONL; a directory has the format of its parts (see the
    module docstring).

    >>> detect_format("x.jsonl.gz"), detect_format("-"), detect_format("a.csv", "jsonl")
    ('jsonl', 'jsonl', 'jsonl')
    """
    if fmt is not None:
        if fmt not in FORMATS:
            raise FormatError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        if fmt != "txt" and _fs.isdir(path):
            list_parts(path, fmt)  # a folder without parts is a usage error
        return fmt
    if path == "-":
        return "jsonl"
    if _fs.isdir(path):
        return _folder_format(path)
    kind = _format_of_name(path)
    if kind is None:
        raise FormatError(
            f"cannot tell the format of {path!r} from its extension; pass --format "
            f"({', '.join(FORMATS)})"
        )
    return kind


def _visible_files(root: str) -> list[str]:
    """Files under ``root`` in natural relative-path order (:mod:`neardup.io.partitions`:
    ``month=2`` before ``month=10``), without hidden or ``_`` names."""
    if _fs.is_remote(root):
        rel = [(f, f[len(root.rstrip("/")) + 1 :]) for f in _fs.list_files(root)]
        found = [f for f, r in rel if not any(c.startswith((".", "_")) for c in r.split("/"))]
        return sorted(found, key=lambda f: part_sort_key(f[len(root.rstrip("/")) + 1 :]))
    root = _fs.local(root)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
        found += [os.path.join(dirpath, f) for f in filenames if not f.startswith((".", "_"))]
    return sorted(found, key=lambda f: part_sort_key(os.path.relpath(f, root)))


def _folder_format(path: str) -> str:
    kinds: dict[str, list[str]] = {}
    for f in _visible_files(path):
        kinds.setdefault(_format_of_name(f) or "?", []).append(f)
    data = sorted(k for k in kinds if k not in ("txt", "?"))
    if not data:
        if "txt" in kinds:
            return "txt"
        raise FormatError(
            f"folder {path!r} holds no .jsonl, .csv, .parquet or .txt files; pass --format "
            "to read its files as parts of one format"
        )
    if len(data) > 1 or "txt" in kinds:
        found = ", ".join(f"{len(kinds[k])} {k}" for k in sorted(kinds) if k != "?")
        raise FormatError(
            f"folder {path!r} mixes formats ({found}); pass --format to choose which is read"
        )
    if "?" in kinds:
        raise FormatError(
            f"folder {path!r}: cannot tell the format of part {kinds['?'][0]!r}; pass "
            f"--format {data[0]} to read every file as {data[0]}"
        )
    return data[0]


def list_parts(path: str, fmt: str | None = None) -> list[str]:
    """The files a folder input is read from, in order (``[path]`` for a file or a txt folder).

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for name in ("part-1.jsonl", "part-0.jsonl", "_SUCCESS"):
    ...     _ = open(os.path.join(d, name), "w").write("")
    >>> [os.path.basename(p) for p in list_parts(d)]
    ['part-0.jsonl', 'part-1.jsonl']
    """
    if path == "-" or not _fs.isdir(path):
        return [path]
    kind = fmt or _folder_format(path)
    if kind == "txt":
        return [path]
    parts = _visible_files(path)
    if fmt is None:
        parts = [p for p in parts if _format_of_name(p) == kind]
    if not parts:
        raise FormatError(f"folder {path!r} holds no files to read as {kind}")
    return parts


def open_binary(path: str) -> IO[bytes]:
    """Open ``path`` (a local path or a URL: :mod:`neardup._fs`, streamed) for reading bytes,
    gunzipping when it starts with the gzip magic."""
    if path == "-":
        return sys.stdin.buffer
    raw = _fs.open_read(path) if _fs.is_remote(path) else open(_fs.local(path), "rb")  # noqa: SIM115
    if raw.peek(2)[:2] == b"\x1f\x8b":
        return gunzip(raw)  # ISA-L when installed; corrupt data reads as OSError
    return raw


def open_text(path: str | os.PathLike[str]) -> IO[str]:
    """:func:`open_binary` decoded as UTF-8 (a local path, a URL or ``-``; gzip or not)."""
    return io.TextIOWrapper(open_binary(os.fspath(path)), encoding="utf-8")


def text_lines(path: str | os.PathLike[str]) -> Iterator[tuple[str, str]]:
    """The non-blank lines of the text file ``path`` (:func:`open_text`), each with where it
    stands (``path:line``, numbered from 1) for the error that names it."""
    with open_text(path) as f:
        for no, line in enumerate(f, 1):
            if line.strip():
                yield f"{path}:{no}", line


_OTHER_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}


def _head(f: IO[bytes], n: int) -> bytes:
    peek = getattr(f, "peek", None)  # open_binary always gives a buffered reader
    return b"" if peek is None else bytes(peek(n)[:n])


def skip_bom(f: IO[bytes]) -> None:
    """Skip a UTF-8 byte-order mark at the start of ``f`` (a buffered reader)."""
    if _head(f, 3) == b"\xef\xbb\xbf":
        f.read(3)


def _check_bom(f: IO[bytes], path: str) -> None:
    """Skip a UTF-8 byte-order mark; refuse UTF-16/32 (every line would be garbage)."""
    head = _head(f, 4)
    if head.startswith(b"\xef\xbb\xbf"):
        f.read(3)
        return
    for bom, name in _OTHER_BOMS.items():
        if head.startswith(bom):
            raise InputError(
                f"{path}: the file is {name} (byte-order mark); re-encode it as UTF-8, e.g. "
                f"iconv -f {name} -t UTF-8"
            )


def _decode(line: bytes, where: str) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{where}: invalid UTF-8 at byte {exc.start}: re-encode the file as UTF-8"
        ) from None


def jsonl_record(line: bytes, where: str) -> Record | InputError:
    """One JSONL line as a record, or the :class:`InputError` naming ``where`` (shared with the
    Spark engine's reader, so both engines word bad rows alike).

    >>> jsonl_record(b'{"text": "hi"}', "a.jsonl:1"), jsonl_record(b"[1]", "a.jsonl:2")
    ({'text': 'hi'}, InputError('a.jsonl:2: expected a JSON object per line, got list'))
    """
    try:
        rec = _json.loads(line)
    except UnicodeDecodeError as exc:
        return InputError(
            f"{where}: invalid UTF-8 at byte {exc.start}: re-encode the file as UTF-8"
        )
    except json.JSONDecodeError as exc:
        return InputError(f"{where}: malformed JSON ({exc.msg} at column {exc.colno})")
    if not isinstance(rec, dict):
        return InputError(f"{where}: expected a JSON object per line, got {type(rec).__name__}")
    return rec


def _iter_jsonl(path: str, keep: Callable[[bytes], object] | None = None) -> Iterator[Row]:
    f = open_binary(path)
    try:
        _check_bom(f, path)
        for lineno, line in enumerate(f, 1):
            if not line.isspace():  # == line.strip() on a non-empty line, without the copy
                if keep is not None:
                    keep(line.rstrip())
                where = f"{path}:{lineno}"
                yield where, jsonl_record(line, where)
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot read ({exc}); is the file truncated?") from None
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def _has_undecodable(values: list[str]) -> bool:
    # surrogateescape maps each invalid UTF-8 byte to U+DC80..U+DCFF
    return any(not v.isascii() and any("\udc80" <= c <= "\udcff" for c in v) for v in values)


def _iter_csv(path: str) -> Iterator[Row]:
    f = open_binary(path)
    try:
        _check_bom(f, path)
    except InputError:
        if f is not sys.stdin.buffer:
            f.close()
        raise
    # surrogateescape: an invalid byte spoils only its own row (skippable), not the file
    text = io.TextIOWrapper(f, encoding="utf-8", errors="surrogateescape", newline="")
    try:
        # strict: an unterminated quote is an error at the end of the file, not one huge field
        reader = csv.reader(text, strict=True)
        try:
            header = next(reader, None)
        except csv.Error as exc:  # a header opening a quote it never closes, e.g. a lone '"'
            raise InputError(
                f"{path}:1: malformed CSV header ({exc}); close the quote or remove it"
            ) from None
        if header is None:
            return
        if _has_undecodable(header):
            raise InputError(f"{path}:1: invalid UTF-8 in the header; re-encode as UTF-8")
        while True:
            start = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise InputError(
                    f"{path}:{start}: malformed CSV ({exc}); an unterminated quote runs from "
                    "here to the end of the file"
                    if "end of data" in str(exc)
                    else f"{path}:{start}: malformed CSV ({exc})"
                ) from None
            where = f"{path}:{start}"
            if not row:
                continue
            if len(row) != len(header):
                msg = f"{len(row)} fields, the header has {len(header)}"
                yield where, InputError(f"{where}: malformed CSV row ({msg}); quote the text")
            elif _has_undecodable(row):
                yield where, InputError(f"{where}: invalid UTF-8; re-encode the file as UTF-8")
            else:
                yield where, dict(zip(header, row, strict=True))
    finally:
        if f is not sys.stdin.buffer:
            text.close()


def _iter_parquet(path: str) -> Iterator[Row]:
    import pyarrow.parquet as pq

    source: Any = _fs.open_read(path) if _fs.is_remote(path) else _fs.local(path)
    try:
        pf = pq.ParquetFile(source)  # a store's file: read by ranges, as pyarrow seeks
    except Exception as exc:  # pyarrow raises several types for bad files
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    try:
        yield from _parquet_rows(path, pf)
    finally:
        pf.close()
        if not isinstance(source, str):
            source.close()


def _parquet_rows(path: str, pf: Any) -> Iterator[Row]:
    row = 0
    batches = pf.iter_batches(batch_size=8192)
    while True:
        try:
            batch = next(batches, None)
            recs = [] if batch is None else batch.to_pylist()
        except Exception as exc:  # a damaged page or a value Python cannot hold
            raise InputError(f"{path}: unreadable Parquet data after row {row} ({exc})") from None
        if batch is None:
            return
        for rec in recs:
            row += 1
            yield f"{path}:row {row}", rec


def _iter_txt_folder(path: str) -> Iterator[Row]:
    if _fs.is_remote(path):
        yield from _iter_txt_urls(path)
        return
    root = Path(_fs.local(path))
    if not root.is_dir():
        raise FormatError(
            f"{path!r} is not a directory; the txt format reads a folder of .txt files"
        )
    for file in sorted(root.rglob("*.txt")):
        rel = file.relative_to(root).as_posix()
        yield _txt_row(str(file), rel, file.read_bytes())


def _iter_txt_urls(url: str) -> Iterator[Row]:
    """A text folder on a store: its ``.txt`` objects in path order, one document each."""
    if not _fs.isdir(url):
        raise FormatError(f"{url!r} is not a folder; the txt format reads a folder of .txt files")
    base = url.rstrip("/") + "/"
    found = {f[len(base) :]: f for f in _fs.list_files(url) if f.endswith(".txt")}
    for rel in sorted(found, key=PurePosixPath):  # the local order (rglob's paths, sorted)
        yield _txt_row(found[rel], rel, _fs.read_bytes(found[rel]))


def _txt_row(where: str, rel: str, data: bytes) -> Row:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return where, {"id": rel, "text": _decode(data, where)}
    except InputError as exc:
        return where, exc


def iter_part_records(
    part: str,
    root: str | None,
    fmt: str | None = None,
    keep: Callable[[bytes], object] | None = None,
) -> Iterator[Row]:
    """The rows of one part listed from folder ``root`` (:func:`list_parts`), with its Hive
    partition columns added (:mod:`neardup.io.partitions`); ``root`` None: a file as given."""
    values = {} if root is None else partition_values(root, part)
    if not values:
        return iter_records(part, fmt, keep=keep)
    if keep is not None:
        outer = keep
        keep = lambda line: outer(add_to_line(line, values))  # noqa: E731
    return add_to_records(iter_records(part, fmt, keep=keep), values)


def iter_records(
    path: str, fmt: str | None = None, *, keep: Callable[[bytes], object] | None = None
) -> Iterator[Row]:
    """Yield ``(where, record)`` for each record of ``path`` in file order.

    A malformed row is yielded as ``(where, InputError)`` so the caller decides to skip or
    fail; errors that make the rest of the file unreadable are raised. ``keep`` (JSONL only)
    gets each non-blank raw line, right-stripped, before its row is yielded: the dedup
    writer appends its fields to those bytes instead of reading the input a second time.
    """
    kind = detect_format(path, fmt)
    if path != "-" and kind != "txt" and not _fs.exists(path):
        raise FileNotFoundError(f"input file {path!r} does not exist")
    if kind == "parquet" and path == "-":
        raise FormatError("Parquet cannot be read from stdin; pass a file path")
    parts = list_parts(path, fmt)
    if len(parts) > 1 or parts[0] != path:
        return chain.from_iterable(iter_part_records(p, path, kind, keep) for p in parts)
    if kind == "jsonl":
        return _iter_jsonl(path, keep)
    readers = {
        "csv": _iter_csv,
        "parquet": _iter_parquet,
        "txt": _iter_txt_folder,
    }
    return readers[kind](path)
