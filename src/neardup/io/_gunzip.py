"""Gzip decompression for the readers: ISA-L's inflate when installed (``isal``), else zlib.

ISA-L (python-isal, a core dependency on the platforms it ships wheels for) inflates 2-3x
faster than zlib and yields the same bytes; without it the stdlib's ``gzip`` does the work.
Either way, a file of ``READ_AHEAD_FROM`` bytes or more is inflated on a thread of its own,
a block or two ahead of the reader (both decompressors release the GIL), so the thread that
splits and parses the lines does not wait for it (issue 39: inflating was ~3/4 of that
thread's CPU for Reuters' lines alone, 0.036 -> 0.008 s; the writer's second read of the
input gains the same).
Either decompressor's error for a corrupt deflate stream (``zlib.error``, isal's
``IsalError``; neither is an ``OSError``) becomes an ``OSError`` naming it, so the readers'
one "cannot read" message covers a corrupt file as it covers a truncated one.

>>> import gzip, io
>>> gunzip(io.BufferedReader(io.BytesIO(gzip.compress(b"a\\nb\\n")))).read()
b'a\\nb\\n'
>>> bad = bytearray(gzip.compress(b'{"text": "hello world"}\\n' * 1000))
>>> bad[40] ^= 0xFF
>>> bad[41] ^= 0xFF  # now an invalid back-reference inside the deflate stream
>>> try:
...     gunzip(io.BufferedReader(io.BytesIO(bytes(bad)))).read()
... except OSError as exc:
...     print(isinstance(exc, OSError))
True
"""

from __future__ import annotations

import gzip
import io
import os
import queue
import threading
import zlib
from types import ModuleType
from typing import IO, Any

_gz: ModuleType
_ERRORS: tuple[Any, ...]
try:
    from isal import igzip as _gz
    from isal.isal_zlib import error as _isal_error

    _ERRORS = (zlib.error, _isal_error)
except ImportError:  # pragma: no cover - platforms without isal wheels
    _gz = gzip
    _ERRORS = (zlib.error,)

__all__ = ["AHEAD", "BLOCK", "READ_AHEAD_FROM", "gunzip"]


class _Gunzip(io.RawIOBase):
    """Raw reader over a gzip stream that reports corrupt data as ``OSError``."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._f: Any = _gz.GzipFile(fileobj=raw, mode="rb")

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        try:
            return int(self._f.readinto(b))
        except _ERRORS as exc:
            raise OSError(f"corrupt gzip data ({exc})") from None

    def block(self, n: int) -> bytes:
        """Up to ``n`` decompressed bytes (fewer only at the end), in one ``bytes``."""
        try:
            return bytes(self._f.read(n))
        except _ERRORS as exc:
            raise OSError(f"corrupt gzip data ({exc})") from None

    def close(self) -> None:
        try:
            self._f.close()
            self._raw.close()
        finally:
            super().close()


# bytes inflated per block on the read-ahead thread, and blocks it may hold ready
BLOCK = 1 << 20
AHEAD = 2
# compressed files smaller than this are inflated by the reading thread itself: starting and
# stopping the read-ahead thread cost ~0.15 ms of CPU per file (25 us without it, 20-line
# files), paid per part by a folder of many small parts; inflating 1 MiB saves ~2.5 ms
READ_AHEAD_FROM = 1 << 20


class _ReadAhead(io.RawIOBase):
    """Raw reader of ``source`` (a :class:`_Gunzip`) whose blocks are read on a daemon thread,
    up to ``AHEAD`` blocks ahead; that thread's error is raised by the read that reaches it.
    Closing (or dropping) the reader stops the thread and closes ``source``."""

    def __init__(self, source: _Gunzip) -> None:
        self._source = source
        self._blocks: queue.Queue[bytes | BaseException] = queue.Queue(AHEAD)
        self._stop = threading.Event()
        self._view = memoryview(b"")
        self._done = False
        # the thread holds the queue and the source, not this reader: dropping the reader
        # without closing it still stops the thread (io's finaliser calls close)
        args = (source, self._blocks, self._stop)
        self._thread = threading.Thread(target=_inflate, args=args, daemon=True)
        self._thread.start()

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._view:
            if self._done:
                return 0
            block = self._blocks.get()
            if isinstance(block, BaseException):
                self._done = True
                raise block
            if not block:
                self._done = True
                return 0
            self._view = memoryview(block)
        n = min(len(b), len(self._view))
        b[:n] = self._view[:n]
        self._view = self._view[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            self._stop.set()
            while self._thread.is_alive():  # a put waiting on a full queue sees the stop
                try:
                    self._blocks.get_nowait()
                except queue.Empty:
                    self._thread.join(0.01)
            self._source.close()
        super().close()


def _inflate(
    source: _Gunzip, blocks: queue.Queue[bytes | BaseException], stop: threading.Event
) -> None:
    """The read-ahead thread: ``source``'s blocks into ``blocks`` until the end (an empty
    block), an error (put as such) or ``stop``."""
    while not stop.is_set():
        try:
            block: bytes | BaseException = source.block(BLOCK)
        except BaseException as exc:  # raised again on the reading thread
            block = exc
        while not stop.is_set():
            try:
                blocks.put(block, timeout=0.05)
                break
            except queue.Full:
                continue
        if not isinstance(block, bytes) or not block:
            return


def gunzip(raw: IO[bytes]) -> IO[bytes]:
    """A buffered reader of the decompressed bytes of ``raw`` (closing it closes ``raw``),
    inflated on a thread of its own, ahead of the reads, unless ``raw`` is a file known to
    be smaller than ``READ_AHEAD_FROM``.

    The 1 MiB buffer matters: line iteration straight over ``GzipFile`` is ~2x slower.
    """
    size = _size(raw)
    source = _Gunzip(raw)
    ahead = size is None or size >= READ_AHEAD_FROM
    return io.BufferedReader(_ReadAhead(source) if ahead else source, 1 << 20)


def _size(raw: IO[bytes]) -> int | None:
    """The size in bytes of the file under ``raw`` (a local file, or a store's file object
    with a ``size``), None when unknown."""
    try:
        return os.fstat(raw.fileno()).st_size
    except (AttributeError, OSError, ValueError):  # (io.UnsupportedOperation: both of the last)
        size = getattr(raw, "size", None)
        return size if isinstance(size, int) else None
