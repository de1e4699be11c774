"""Paths that are URLs: ``s3://``, ``gs://``, ``az://``, ``hf://``, ``http(s)://``, ``memory://``
(any fsspec protocol); ``file://`` and plain paths are local files and keep the local code paths
(mmap, rename, flock).

The store libraries are extras, imported on use: a URL whose library is missing raises
:class:`neardup._extras.MissingExtraError` naming the extra to install. Credentials and endpoints
come from each store's usual settings (for S3: ``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``...)
or from fsspec's ``FSSPEC_<PROTOCOL>_<OPTION>`` variables, e.g.
``FSSPEC_S3_ENDPOINT_URL=http://127.0.0.1:9000``.

>>> is_remote("s3://bucket/x.jsonl"), is_remote("file:///tmp/x.jsonl"), is_remote("x.jsonl")
(True, False, False)
>>> local("file:///tmp/x.jsonl"), join("s3://bucket/state/", "v-2", "a.npy")
('/tmp/x.jsonl', 's3://bucket/state/v-2/a.npy')
>>> write_bytes("memory://doc/fs/a.txt", b"hi"); read_bytes("memory://doc/fs/a.txt")
b'hi'
>>> list_files("memory://doc/fs"), isdir("memory://doc/fs"), exists("memory://doc/fs/b.txt")
(['memory://doc/fs/a.txt'], True, False)
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from typing import Any

from neardup._extras import MissingExtraError

__all__ = [
    "BLOCK",
    "READ_ONLY",
    "check_writable",
    "exists",
    "expand_glob",
    "filesystem",
    "fresh",
    "is_remote",
    "isdir",
    "join",
    "list_files",
    "local",
    "open_read",
    "protocol",
    "read_bytes",
    "remove",
    "upload",
    "write_bytes",
]

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# protocol -> (library, extra): what `pip install 'neardup[EXTRA]'` brings
_EXTRAS = {
    "s3": ("s3fs", "s3"),
    "s3a": ("s3fs", "s3"),
    "gs": ("gcsfs", "gcs"),
    "gcs": ("gcsfs", "gcs"),
    "az": ("adlfs", "azure"),
    "abfs": ("adlfs", "azure"),
    "abfss": ("adlfs", "azure"),
    "hf": ("huggingface_hub", "hf"),
    "http": ("aiohttp", "http"),
    "https": ("aiohttp", "http"),
}
READ_ONLY = ("http", "https")


def protocol(path: str | os.PathLike[str]) -> str | None:
    """The URL's protocol (``None`` for a plain path)."""
    m = _URL.match(os.fspath(path)) if isinstance(path, str) else None
    return m.group(1).lower() if m else None


def is_remote(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a URL of a store other than the local file system."""
    return protocol(path) not in (None, "file", "local")


def local(path: str | os.PathLike[str]) -> str:
    """``path`` as a local path: ``file://`` stripped (a remote URL is returned as given)."""
    text = os.fspath(path)
    if protocol(text) in ("file", "local"):
        return text.split("://", 1)[1]
    return text


def join(url: str, *names: str) -> str:
    """``url`` with ``names`` appended, ``/``-separated."""
    return "/".join([url.rstrip("/"), *names])


def filesystem(url: str) -> Any:
    """The fsspec file system of ``url`` (or :class:`MissingExtraError` naming the extra)."""
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec is a core dependency
        raise MissingExtraError(f"{url} needs fsspec: pip install fsspec") from None
    proto = protocol(url) or "file"
    try:
        return fsspec.filesystem(proto)
    except ImportError:
        library, extra = _EXTRAS.get(proto, (f"the fsspec library for {proto}://", proto))
        raise MissingExtraError(f"{url} needs {library}: pip install 'neardup[{extra}]'") from None
    except ValueError:  # fsspec: "Protocol not known"
        raise MissingExtraError(
            f"{url}: no fsspec file system knows the protocol {proto}://; use s3://, gs://, "
            "az://, hf://, http(s)://, memory:// or a local path"
        ) from None


def check_writable(url: str, option: str) -> None:
    """Refuse a read-only protocol (``http(s)``) as an output."""
    if protocol(url) in READ_ONLY:
        raise ValueError(
            f"{option} {url!r}: {protocol(url)}:// URLs are read only; write elsewhere"
        )


def fresh(url: str) -> Any:
    """:func:`filesystem` without cached listings: another process may have written since."""
    fs = filesystem(url)
    fs.invalidate_cache()
    return fs


def exists(path: str) -> bool:
    """Whether a file or folder is at ``path`` (local or URL)."""
    if not is_remote(path):
        return os.path.exists(local(path))
    return bool(fresh(path).exists(path))


def isdir(path: str) -> bool:
    """Whether ``path`` is a folder (for a store: a prefix holding objects)."""
    if not is_remote(path):
        return os.path.isdir(local(path))
    if protocol(path) in READ_ONLY:  # a web server's "folder" is a page of links: only "x/"
        return path.endswith("/")  # (asking would download a file to look for links in it)
    return bool(fresh(path).isdir(path))


def list_files(url: str) -> list[str]:
    """Every file under folder ``url``, as URLs (file system order; callers sort)."""
    fs = fresh(url)
    root = str(fs._strip_protocol(url)).rstrip("/")
    # named below ``url`` as the user spelled it (relative paths stay meaningful: partitions)
    return [join(url, p[len(root) :].lstrip("/")) for p in fs.find(url, withdirs=False)]


def expand_glob(url: str) -> list[str]:
    """The URLs matching a pattern with ``*``, ``?`` or ``[...]``, sorted."""
    fs = fresh(url)
    return sorted(_as_url(fs, url, p) for p in fs.glob(url))


def _as_url(fs: Any, like: str, path: str) -> str:
    url = str(fs.unstrip_protocol(path))
    proto = protocol(like)
    # fsspec names some stores by another alias (gcs:// for gs://): keep the user's spelling
    return url if proto is None or url.startswith(f"{proto}://") else f"{proto}://{path}"


BLOCK = 8 << 20  # bytes a store's reader fetches at a time (s3fs's own default is 50 MiB)


def open_read(url: str) -> io.BufferedReader:
    """A buffered (``peek``-able) stream of the object's bytes, fetched in :data:`BLOCK` ranges
    as they are consumed: nothing is downloaded whole before parsing."""
    raw = filesystem(url).open(url, "rb", block_size=BLOCK)
    return io.BufferedReader(raw, 1 << 20)


def read_bytes(url: str) -> bytes:
    """The whole object at ``url``."""
    return bytes(filesystem(url).cat_file(url))


def write_bytes(url: str, data: bytes) -> None:
    """Put ``data`` as the object ``url`` (one PUT: the object appears whole or not at all)."""
    filesystem(url).pipe_file(url, data)


def upload(source: str, url: str) -> None:
    """Copy local file ``source`` to ``url``. On object stores the object appears only when
    the upload completes (one PUT, or a multipart upload completed at its end), so a failed
    or killed upload leaves the previous object whole."""
    filesystem(url).put_file(source, url)


def remove(url: str, recursive: bool = False) -> None:
    """Delete ``url`` (a folder with ``recursive``); a missing one is not an error."""
    fs = filesystem(url)
    with contextlib.suppress(FileNotFoundError):
        fs.rm(url, recursive=recursive)
