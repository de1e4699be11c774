"""Atomic record writers: JSONL (optionally ``.gz``) and Parquet, or JSONL to stdout with ``-``.

The file appears only when the writer closes without error: rows go to a temporary file in the
same directory, renamed over the target with :func:`os.replace`. An exception inside the
``with`` block removes the temporary file, so an interrupted run leaves no half-written output.

>>> import tempfile, os, json
>>> p = os.path.join(tempfile.mkdtemp(), "out.jsonl")
>>> with open_writer(p) as w:
...     w.write({"id": 1, "status": "unique"})
>>> json.loads(open(p).read())
{'id': 1, 'status': 'unique'}
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile
from types import TracebackType
from typing import IO, Any

from neardup.io.readers import FormatError, Record

WRITE_FORMATS = ("jsonl", "parquet")


def _default(obj: Any) -> Any:
    # numpy scalars and dates from Parquet inputs
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    raise TypeError(f"cannot write {type(obj).__name__} value {obj!r} as JSON")


class OutputClosed(Exception):
    """Standard output was closed by its reader (``neardup dedup ... | head``)."""


class _StdoutSink:
    """``sys.stdout.buffer`` whose broken pipe becomes :class:`OutputClosed`.

    A broken pipe is an ``OSError``, which click would turn into exit status 1; a reader that
    stops early is normal Unix use, so the CLI ends quietly with status 0 instead.
    """

    def write(self, data: bytes) -> int:
        try:
            return sys.stdout.buffer.write(data)
        except BrokenPipeError:
            raise OutputClosed from None

    def flush(self) -> None:
        try:
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            raise OutputClosed from None


class RecordWriter:
    """Write records to ``path`` atomically; use :func:`open_writer` to build one."""

    def __init__(
        self,
        path: str,
        fmt: str,
        *,
        type_hints: dict[str, Any] | None = None,
        batch_rows: int = 8192,
    ) -> None:
        self.path = path
        self.fmt = fmt
        self.type_hints = dict(type_hints or {})
        self.batch_rows = batch_rows
        self.rows_written = 0
        self._tmp: str | None = None
        self._fh: IO[bytes] | None = None
        self._batch: list[Record] = []
        self._pq_writer: Any = None
        self._raw: IO[bytes] | None = None
        if path == "-":
            self._fh = _StdoutSink()  # type: ignore[assignment]
            return
        directory = os.path.dirname(os.path.abspath(path))
        fd, self._tmp = tempfile.mkstemp(
            dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp"
        )
        raw = os.fdopen(fd, "wb")
        if fmt == "jsonl" and path.endswith(".gz"):
            self._fh = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)  # type: ignore[assignment]
            self._raw = raw
        else:
            self._fh = raw

    def write(self, record: Record) -> None:
        """Append one record."""
        if self.fmt == "jsonl":
            assert self._fh is not None
            line = json.dumps(record, ensure_ascii=False, default=_default)
            self._fh.write(line.encode("utf-8") + b"\n")
        else:
            self._batch.append(record)
            if len(self._batch) >= self.batch_rows:
                self._flush_parquet()
        self.rows_written += 1

    def write_jsonl_line(self, line: bytes) -> None:
        """Append one already serialised JSON object (no newline check; JSONL writers only)."""
        if self.fmt != "jsonl":
            raise ValueError(f"write_jsonl_line needs a JSONL writer, this one writes {self.fmt}")
        assert self._fh is not None
        self._fh.write(line)
        self.rows_written += 1

    def _flush_parquet(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._batch:
            return
        if self._pq_writer is None:
            table = pa.Table.from_pylist(self._batch)
            fields = [
                pa.field(f.name, self.type_hints.get(f.name, pa.string()))
                if pa.types.is_null(f.type)
                else f
                for f in table.schema
            ]
            self._schema = pa.schema(fields)
            assert self._fh is not None
            self._pq_writer = pq.ParquetWriter(self._fh, self._schema)
        table = pa.Table.from_pylist(self._batch, schema=self._schema)
        self._pq_writer.write_table(table)
        self._batch = []

    def close(self) -> None:
        """Finish the file and move it into place."""
        if self.fmt == "parquet":
            self._flush_parquet()
            if self._pq_writer is not None:
                self._pq_writer.close()
            elif self._fh is not None:  # zero rows: still a valid, empty Parquet file
                import pyarrow as pa
                import pyarrow.parquet as pq

                pq.write_table(pa.table({}), self._fh)
        assert self._fh is not None
        if self._tmp is None:  # stdout
            self._fh.flush()
            return
        self._fh.close()
        if self._raw is not None:
            self._raw.close()
        os.replace(self._tmp, self.path)
        self._tmp = None

    def abort(self) -> None:
        """Drop the partial output (called on error)."""
        if self._tmp is None:
            return
        try:
            if self._fh is not None:
                self._fh.close()
            if self._raw is not None:
                self._raw.close()
        finally:
            if os.path.exists(self._tmp):
                os.unlink(self._tmp)
            self._tmp = None

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def detect_output_format(path: str) -> str:
    """``jsonl`` or ``parquet`` from the extension of ``path`` (``-`` is JSONL).

    >>> detect_output_format("out.jsonl.gz"), detect_output_format("-")
    ('jsonl', 'jsonl')
    """
    if path == "-":
        return "jsonl"
    name = path[:-3] if path.endswith(".gz") else path
    ext = os.path.splitext(name)[1].lower()
    if ext in (".parquet", ".pq"):
        return "parquet"
    if ext in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    raise FormatError(f"cannot write {path!r}: output must end in .jsonl, .jsonl.gz or .parquet")


def open_writer(
    path: str, fmt: str | None = None, *, type_hints: dict[str, Any] | None = None
) -> RecordWriter:
    """Open an atomic writer for ``path``; format from ``fmt`` or the extension (default JSONL).

    ``type_hints`` maps column names to pyarrow types for Parquet columns that are all null in
    the first batch (otherwise they would be typed ``null``).
    """
    fmt = detect_output_format(path) if fmt is None else fmt
    if fmt not in WRITE_FORMATS:
        raise FormatError(
            f"cannot write format {fmt!r}; output formats: {', '.join(WRITE_FORMATS)}"
        )
    if fmt == "parquet" and path == "-":
        raise FormatError("Parquet cannot be written to stdout; give a file path with --out")
    return RecordWriter(path, fmt, type_hints=type_hints)
