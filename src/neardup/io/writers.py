"""Atomic record writers: JSONL and CSV (optionally ``.gz``) and Parquet, or JSONL to stdout
with ``-``.

The file appears only when the writer closes without error: rows go to a temporary file in the
same directory, renamed over the target with :func:`os.replace`. An exception inside the
``with`` block, or in the final flush, removes the temporary file, so an interrupted run leaves
no half-written output. Temporary files are named ``.NAME.neardup-HOST-PID-RANDOM.tmp``; one
left by a killed run (``kill -9``: no code runs) is removed by the next writer of the same
output once its process is gone (same host, PID not alive).

A URL (``s3://``, ``memory://``...; :mod:`neardup._fs`) is written the same way into a local
temporary file, uploaded when the writer closes: on an object store the object appears whole
at the end of the upload (one PUT, or a multipart upload completed last), so a failed run
leaves the previous object as it was. It needs local temporary space for the output.

A symlinked output is written through: the link's target is replaced and the link stays. A new
file gets ``0666 & ~umask``; a replaced one keeps its permission bits.

>>> import tempfile, os, json
>>> p = os.path.join(tempfile.mkdtemp(), "out.jsonl")
>>> with open_writer(p) as w:
...     w.write({"id": 1, "status": "unique"})
>>> json.loads(open(p).read())
{'id': 1, 'status': 'unique'}
"""

from __future__ import annotations

import contextlib
import decimal
import gzip
import json
import os
import re
import shutil
import socket
import sys
import tempfile
from types import TracebackType
from typing import IO, Any

from neardup import _fs
from neardup.errors import NeardupError
from neardup.io.readers import FormatError, Record

WRITE_FORMATS = ("jsonl", "csv", "parquet")


def _default(obj: Any) -> Any:
    # numpy scalars, dates, decimals and bytes from Parquet inputs
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if isinstance(obj, decimal.Decimal):  # exact: the decimal's text, not a rounded float
        return str(obj)
    if isinstance(obj, bytes | bytearray):
        return obj.decode("utf-8", "replace")
    raise TypeError(f"cannot write {type(obj).__name__} value {obj!r} as JSON")


def dumps_utf8(value: Any) -> bytes:
    """JSON of ``value`` as UTF-8; strings with lone surrogates are written as ``\\ud800``
    escapes (lossless: what the input had), since they have no UTF-8 encoding.

    >>> dumps_utf8({"t": "é\\ud800"})
    b'{"t": "\\\\u00e9\\\\ud800"}'
    """
    text = _ENCODER.encode(value)  # json.dumps's bytes; one encoder, not one per call
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, default=_default).encode("ascii")


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_default)


_TMP_RE = re.compile(r"\.neardup-(?P<host>\w+)-(?P<pid>\d+)-\w+(\.\w+)*$")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname())[:40] or "host"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def remove_stale_temps(directory: str, prefix: str) -> int:
    """Remove ``prefix.neardup-HOST-PID-*`` files and folders (see :func:`make_temp`,
    :func:`make_temp_dir`) of dead processes.

    Returns how many were removed. Files of other hosts (a shared folder) are left alone.
    """
    removed = 0
    host = _host()
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        m = _TMP_RE.search(name) if name.startswith(prefix) else None
        if m is None or m.group("host") != host or _pid_alive(int(m.group("pid"))):
            continue
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed += 1
    return removed


def make_temp(directory: str, prefix: str, suffix: str = ".tmp") -> tuple[int, str]:
    """``mkstemp`` with a name that says which process owns it (see :func:`remove_stale_temps`)."""
    return tempfile.mkstemp(
        dir=directory, prefix=f"{prefix}.neardup-{_host()}-{os.getpid()}-", suffix=suffix
    )


def make_temp_dir(directory: str, prefix: str) -> str:
    """``mkdtemp`` named like :func:`make_temp` (removed by :func:`remove_stale_temps` once its
    process is gone)."""
    return tempfile.mkdtemp(dir=directory, prefix=f"{prefix}.neardup-{_host()}-{os.getpid()}-")


def _mode_for(target: str) -> int:
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


class OutputClosed(NeardupError):
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
        notes: list[str] | None = None,
        id_columns: tuple[str, ...] = (),
        deferred: bool = False,
    ) -> None:
        self.path = path
        self.deferred = deferred
        self.fmt = fmt
        self.type_hints = dict(type_hints or {})
        self.batch_rows = batch_rows
        self.rows_written = 0
        self._tmp: str | None = None
        self._fh: IO[bytes] | None = None
        self._raw: IO[bytes] | None = None
        self._parquet: Any = None
        self._csv: Any = None
        self._gz_raw: IO[bytes] | None = None  # under a gzip ``_raw`` (CSV .gz)
        self._spool: str | None = None
        self.notes: list[str] = [] if notes is None else notes
        if path == "-":
            self._fh = _StdoutSink()  # type: ignore[assignment]
            return
        directory, name, raw = self._open_temp(path)
        if fmt == "parquet":
            from neardup.io.parquet_out import SpooledParquet

            self._raw = raw  # the Parquet file, written at close from the spool
            self._fh = self._open_spool(directory, name)
            self._parquet = SpooledParquet(
                self._fh, type_hints=self.type_hints, batch_rows=batch_rows, id_columns=id_columns
            )
        elif fmt == "csv":  # rows spooled: the header is known only after the last row
            from neardup.io.csv_out import SpooledCsv

            gz = path.endswith(".gz")
            packed: Any = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if gz else raw
            self._raw, self._gz_raw = packed, raw if gz else None
            self._fh = self._open_spool(directory, name)
            self._csv = SpooledCsv(self._fh)
        elif path.endswith(".gz"):
            self._fh = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)  # type: ignore[assignment]
            self._raw = raw
        else:
            self._fh = raw

    def _open_temp(self, path: str) -> tuple[str, str, IO[bytes]]:
        """The temporary file the output is written to (renamed over the target at close):
        its directory, the target's name and the open file."""
        # a URL: spooled locally, uploaded at close (module docs)
        self.url = path if _fs.is_remote(path) else None
        # through a symlink to its target, so the link stays a link (like `>` in a shell)
        self.target = os.path.realpath(_fs.local(path)) if self.url is None else path
        directory, name = os.path.split(self.target)
        if self.url is not None:
            _fs.check_writable(path, "output")
            directory = tempfile.gettempdir()
        remove_stale_temps(directory, f".{name}.")
        fd, self._tmp = make_temp(directory, f".{name}")
        os.fchmod(fd, _mode_for(self.target))
        return directory, name, os.fdopen(fd, "wb")

    def _open_spool(self, directory: str, name: str) -> IO[bytes]:
        """The spool of rows (CSV, Parquet) beside the temporary file, open for writing."""
        sfd, self._spool = make_temp(directory, f".{name}", ".spool.tmp")
        return os.fdopen(sfd, "w+b")

    def write(self, record: Record) -> None:
        """Append one record."""
        if self.fmt == "jsonl":
            assert self._fh is not None
            self._fh.write(dumps_utf8(record) + b"\n")
        elif self.fmt == "csv":
            self._csv.write(record)
        else:
            self._parquet.write(record)
        self.rows_written += 1

    def write_jsonl_line(self, line: bytes) -> None:
        """Append one already serialised JSON object (no newline check; JSONL writers only)."""
        if self.fmt != "jsonl":
            raise ValueError(f"write_jsonl_line needs a JSONL writer, this one writes {self.fmt}")
        assert self._fh is not None
        self._fh.write(line)
        self.rows_written += 1

    def write_jsonl_lines(self, lines: list[bytes]) -> None:
        """Append many already serialised JSON objects, each ending in a newline (one write)."""
        if self.fmt != "jsonl":
            raise ValueError(f"write_jsonl_lines needs a JSONL writer, this one writes {self.fmt}")
        assert self._fh is not None
        self._fh.write(b"".join(lines))
        self.rows_written += len(lines)

    def close(self) -> None:
        """Finish the file and move it into place (on any error: remove it and re-raise)."""
        self.finish()
        self.commit()

    def finish(self) -> None:
        """Write the rest of the temporary file (on any error: remove it and re-raise); it
        replaces the target at :meth:`commit`. A writer opened with ``deferred=True`` stops
        here at the end of its ``with`` block, so that a program can write its other outputs
        before replacing this one (and :meth:`abort` it if they fail)."""
        assert self._fh is not None
        if self._tmp is None:  # stdout
            self._fh.flush()
            return
        if self._fh.closed:  # finished already
            return
        try:
            for spooled in (self._parquet, self._csv):
                if spooled is not None:
                    assert self._raw is not None
                    spooled.finish(self._raw)
                    self.notes += spooled.notes
            self._fh.close()
            for fh in (self._raw, self._gz_raw):
                if fh is not None:
                    fh.close()
        except BaseException:
            self.abort()
            raise
        self._drop_spool()

    def commit(self) -> None:
        """Move the finished file into place (an upload for a URL; on error: remove it)."""
        if self._tmp is None:  # stdout, or committed already
            return
        try:
            if self.url is not None:
                _fs.upload(self._tmp, self.url)
                os.unlink(self._tmp)
            else:
                os.replace(self._tmp, self.target)
        except BaseException:
            self.abort()
            raise
        self._tmp = None
        self._drop_spool()

    def _drop_spool(self) -> None:
        spool = self._spool
        if spool is not None:
            with contextlib.suppress(OSError):
                os.unlink(spool)
            self._spool = None

    def abort(self) -> None:
        """Drop the partial output (called on error)."""
        if self._tmp is None:
            return
        try:
            for fh in (self._fh, self._raw, self._gz_raw):
                if fh is not None:
                    with contextlib.suppress(Exception):
                        fh.close()
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._tmp)
            self._tmp = None
            self._drop_spool()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.finish() if self.deferred else self.close()
        else:
            self.abort()


def detect_output_format(path: str) -> str:
    """``jsonl``, ``csv`` or ``parquet`` from the extension of ``path`` (``-`` is JSONL).

    >>> [detect_output_format(p) for p in ("out.jsonl.gz", "-", "x.csv", "x.parquet")]
    ['jsonl', 'jsonl', 'csv', 'parquet']
    """
    if path == "-":
        return "jsonl"
    name = path[:-3] if path.endswith(".gz") else path
    ext = os.path.splitext(name)[1].lower()
    if ext in (".parquet", ".pq"):
        return "parquet"
    if ext in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if ext == ".csv":
        return "csv"
    raise FormatError(
        f"cannot write {path!r}: output must end in .jsonl, .csv (either with .gz) or .parquet"
    )


def needs_utf8(path: str) -> bool:
    """Whether the output ``path`` can hold only UTF-8 strings (CSV, Parquet): a lone surrogate
    (legal as a JSON escape) has no form there; JSONL keeps it as ``\\ud800``.

    >>> [needs_utf8(p) for p in ("o.jsonl", "o.csv.gz", "o.parquet", "-", "o.txt")]
    [False, True, True, False, False]
    """
    try:
        return detect_output_format(path) != "jsonl"
    except FormatError:  # refused where the output is opened
        return False


def open_writer(
    path: str,
    fmt: str | None = None,
    *,
    type_hints: dict[str, Any] | None = None,
    notes: list[str] | None = None,
    id_columns: tuple[str, ...] = (),
    deferred: bool = False,
) -> RecordWriter:
    """Open an atomic writer for ``path``; format from ``fmt`` or the extension (default JSONL).

    ``type_hints`` maps column names to pyarrow types for Parquet columns that are null in
    every row (otherwise they would be typed ``null``). ``notes`` collects what the writer had
    to adapt (Parquet columns of mixed types written as strings). ``id_columns``: columns of
    ids, whose ints and floats Parquet writes as strings, noted (not one double column).
    ``deferred``: the ``with`` block only finishes the file; :meth:`RecordWriter.commit`
    replaces the target (or :meth:`RecordWriter.abort` drops it).
    """
    fmt = detect_output_format(path) if fmt is None else fmt
    if fmt not in WRITE_FORMATS:
        raise FormatError(
            f"cannot write format {fmt!r}; output formats: {', '.join(WRITE_FORMATS)}"
        )
    if fmt == "parquet" and path == "-":
        raise FormatError("Parquet cannot be written to stdout; give a file path with --out")
    return RecordWriter(
        path, fmt, type_hints=type_hints, notes=notes, id_columns=id_columns, deferred=deferred
    )
