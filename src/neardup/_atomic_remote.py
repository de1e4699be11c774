"""The object-store side of :mod:`neardup._atomic`: its files and versioned directories at a URL
(``s3://``, ``memory://``...; :mod:`neardup._fs`). Call it through :mod:`neardup._atomic`.

Stores have no rename, so nothing is replaced in place:

* a file is written locally and uploaded when complete (an object appears whole: one PUT, or a
  multipart upload completed last);
* a directory version is filled locally, then uploaded as ``URL/v-<n+1>/...`` with its
  manifest last, then ``URL/CURRENT`` is put (the commit point), then the old version is
  deleted. A writer killed at any instant leaves ``CURRENT`` naming the previous version,
  whole; the next writer deletes the orphaned ``v-<n+1>``.
* a reader reads ``CURRENT``, downloads that version into a local temporary folder (kept until
  the process exits: arrays are memory-mapped from it) and reads it there; when a writer
  deleted it meanwhile, it starts again on the new one.

**The writer lock** is an object, ``URL/.lock``, put only if absent (a conditional put:
``If-None-Match: *`` on S3; fsspec's ``mode="create"``) and deleted when the writer ends. A
second writer is refused at once (:class:`DirectoryBusyError`, naming the holder's host and
pid), never kept waiting. A lock left by ``kill -9`` is taken over by the next writer on the same
host once that process is gone; one of another host stays until deleted by hand (the message
says so). A store whose library cannot put conditionally (or, as some S3-compatible servers,
ignores the condition) has no lock: one writer at a time is then the caller's duty. In every
case a writer checks, just before its commit, that ``CURRENT`` is what it was when it started,
and refuses to commit otherwise.

>>> root = "memory://doc/atomic/state"
>>> with directory(root) as version:
...     _ = (version / "manifest.json").write_text("{}")
>>> read_live(root, lambda v: sorted(p.name for p in v.iterdir()))
['manifest.json']
>>> with directory(root) as version:
...     _ = (version / "manifest.json").write_text('{"n": 2}')
>>> read_current(root), sorted(_children(root))
('v-2', ['CURRENT', 'v-2'])
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

from neardup import _fs
from neardup._dirformat import (
    CURRENT,
    LOCK,
    MANIFEST,
    SLEEP_BEFORE_COMMIT,
    SLEEP_PER_FILE,
    BrokenDirectoryError,
    DirectoryBusyError,
)
from neardup._dirformat import VERSION as _VERSION

T = TypeVar("T")
_downloads: dict[str, tuple[tuple[str, bytes], Path]] = {}  # url -> ((version, manifest), copy)
_cache_root: list[Path] = []


@contextlib.contextmanager
def write_file(url: str, mode: str = "w", **kwargs: object) -> Iterator[IO]:  # type: ignore[type-arg]
    """Like :func:`neardup._atomic.atomic_write` for ``url``: a local temporary file,
    uploaded when the block ends without error."""
    _fs.check_writable(url, "output")
    _fs.filesystem(url)  # a missing store library fails before any work
    fd, tmp = tempfile.mkstemp(prefix="neardup-upload-", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **kwargs) as f:  # type: ignore[call-overload]
            yield f
        _fs.upload(tmp, url)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _children(url: str) -> list[str]:
    """Names directly under ``url`` (none when it does not exist)."""
    fs = _fs.fresh(url)
    try:
        found = fs.ls(url, detail=False)
    except FileNotFoundError:
        return []
    return sorted({str(p).rstrip("/").rsplit("/", 1)[-1] for p in found})


def _versions(url: str) -> dict[int, str]:
    return {int(m.group(1)): n for n in _children(url) if (m := _VERSION.match(n))}


def read_current(url: str) -> str | None:
    """The live version's name from ``URL/CURRENT`` (None when there is none)."""
    where = _fs.join(url, CURRENT)
    try:
        name = _fs.read_bytes(where).decode("ascii").strip()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as e:
        raise OSError(f"{where} is unreadable ({e}); restore it or rebuild") from None
    if not _VERSION.match(name):
        raise OSError(f"{where} names {name!r}, not a version; restore it or rebuild")
    return name


def _saved(url: str) -> list[str]:
    """Versions holding their manifest (uploaded last), newest first."""
    found = sorted(_versions(url).items(), reverse=True)
    return [n for _, n in found if _fs.exists(_fs.join(url, n, MANIFEST))]


def _check(url: str, live: str | None) -> None:
    """:func:`neardup._atomic.check_versions` for a store."""
    if live is not None:
        if not _fs.exists(_fs.join(url, live, MANIFEST)):
            raise BrokenDirectoryError(
                f"{_fs.join(url, CURRENT)} names {live}, which is gone or incomplete; nothing "
                f"was changed: restore {_fs.join(url, live)} or use a new location"
            )
        return
    saved = _saved(url)
    if saved:
        raise BrokenDirectoryError(
            f"{_fs.join(url, CURRENT)} is missing, but {url} holds saved version(s) "
            f"{', '.join(saved)}; nothing was deleted: if {saved[0]} (the newest) is the one to "
            f"go on from, put its name in {_fs.join(url, CURRENT)}; otherwise use a new location"
        )


def _check_ours(url: str) -> None:
    names = _children(url)
    ours = CURRENT in names or LOCK in names
    if names and not ours and not any(_VERSION.match(n) for n in names):
        raise FileExistsError(
            f"{url} exists and holds other data (no {CURRENT}); not writing into it: choose "
            "another location"
        )


def _upload_tree(local: Path, url: str) -> None:
    """Upload the files of ``local`` under ``url``, the manifest last (a version without its
    manifest is never taken for a saved one)."""
    files = sorted(p for p in local.rglob("*") if p.is_file())
    files.sort(key=lambda p: p.name == MANIFEST)
    for p in files:
        _fs.upload(str(p), _fs.join(url, p.relative_to(local).as_posix()))
        if os.environ.get(SLEEP_PER_FILE):
            time.sleep(float(os.environ[SLEEP_PER_FILE]))


@contextlib.contextmanager
def directory(url: str) -> Iterator[Path]:
    """:func:`neardup._atomic.atomic_directory` for a store (module docs: the lock object)."""
    _fs.check_writable(url, "directory")
    _check_ours(url)
    with _writer_lock(url), _new_version(url) as version:
        yield version


@contextlib.contextmanager
def _new_version(url: str) -> Iterator[Path]:
    """A local folder uploaded as the next version of ``url``, then committed (module docs)."""
    live = read_current(url)
    _check(url, live)
    versions = _versions(url)
    for name in versions.values():  # dead writers' leftovers (we hold the lock)
        if name != live:
            _fs.remove(_fs.join(url, name), recursive=True)
    new = f"v-{max(versions, default=0) + 1}"
    with _local_dir("neardup-version") as tmp:
        try:
            yield tmp
            _upload_tree(tmp, _fs.join(url, new))
            if os.environ.get(SLEEP_BEFORE_COMMIT):
                time.sleep(float(os.environ[SLEEP_BEFORE_COMMIT]))
            if read_current(url) != live:
                raise DirectoryBusyError(
                    f"{url} was committed by another writer during this run (CURRENT is no "
                    f"longer {live}); this run's version was not committed: run one writer at "
                    "a time on a store location, then run this one again"
                )
            _fs.write_bytes(_fs.join(url, CURRENT), f"{new}\n".encode("ascii"))
        except BaseException:
            with contextlib.suppress(Exception):
                if read_current(url) != new:  # never another writer's committed namesake
                    _fs.remove(_fs.join(url, new), recursive=True)
            raise
    if live is not None:  # committed: a failure to delete the old version is no failure
        with contextlib.suppress(Exception):
            _fs.remove(_fs.join(url, live), recursive=True)


@contextlib.contextmanager
def _writer_lock(url: str) -> Iterator[None]:
    """Hold ``URL/.lock``, created only if absent (a conditional put): a second writer is
    refused, naming the holder. A lock left by a dead process of this host is taken over;
    one of another host must be deleted by hand. Stores whose fsspec library cannot create
    conditionally go without (the commit-time check remains)."""
    from neardup.io.writers import _host, _pid_alive

    where = _fs.join(url, LOCK)
    mine = json.dumps({"host": _host(), "pid": os.getpid(), "token": uuid.uuid4().hex})
    for _ in range(2):
        try:
            _fs.filesystem(url).pipe_file(where, mine.encode(), mode="create")
            break
        except TypeError:  # no conditional create in this store's library
            yield
            return
        except FileExistsError:
            holder = _holder(where)
            if not holder:  # released meanwhile (or unreadable): try again
                continue
            dead = holder.get("host") == _host() and not _pid_alive(int(holder.get("pid", 0)))
            if not dead:
                raise DirectoryBusyError(
                    f"{url} is being written by another process (host {holder.get('host')}, "
                    f"pid {holder.get('pid')}; lock {where}); run again when it finishes, or "
                    "delete the lock if that process is gone"
                ) from None
            _fs.remove(where)  # a dead writer's (this host, process gone)
    else:
        raise DirectoryBusyError(f"{url}: another process took the lock {where}; try again")
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            if _holder(where).get("token") == json.loads(mine)["token"]:
                _fs.remove(where)


def _holder(where: str) -> dict[str, Any]:
    """The lock's owner as it wrote itself (empty when unreadable or gone)."""
    try:
        found = json.loads(_fs.read_bytes(where))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


@contextlib.contextmanager
def _local_dir(prefix: str) -> Iterator[Path]:
    """A local temporary folder named for its process: one left by ``kill -9`` is removed by
    the next process that makes one (:func:`neardup.io.writers.remove_stale_temps`)."""
    from neardup.io.writers import make_temp_dir, remove_stale_temps

    remove_stale_temps(tempfile.gettempdir(), prefix)
    path = Path(make_temp_dir(tempfile.gettempdir(), prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _cache() -> Path:
    """The process's folder of downloaded versions (arrays are memory-mapped from it)."""
    if not _cache_root:
        held = _local_dir("neardup-store")
        _cache_root.append(held.__enter__())
        atexit.register(held.__exit__, None, None, None)
    return _cache_root[0]


def _download(url: str, name: str) -> Path:
    """The files of version ``name`` in a local folder: downloaded again only when its manifest
    (which checksums every file) changed, e.g. a state deleted and begun again at ``url``."""
    remote = _fs.join(url, name)
    manifest = _fs.read_bytes(_fs.join(remote, MANIFEST))  # FileNotFoundError: gone
    held = _downloads.get(url)
    if held is not None and held[0] == (name, manifest):
        return held[1]
    local = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_cache()))
    fs = _fs.filesystem(url)
    for f in _fs.list_files(remote):
        target = local / f[len(remote) + 1 :]
        target.parent.mkdir(parents=True, exist_ok=True)
        fs.get_file(f, str(target))
    if (local / MANIFEST).read_bytes() != manifest:  # replaced while downloading: read again
        shutil.rmtree(local, ignore_errors=True)
        raise FileNotFoundError(f"{remote} changed while being read")
    if held is not None:  # the previous version's copy (arrays mapped from it stay readable)
        shutil.rmtree(held[1], ignore_errors=True)
    _downloads[url] = ((name, manifest), local)
    return local


def _rename(e: BaseException, local: str, remote: str) -> None:
    """Put ``remote`` for ``local`` in the message of ``e`` (a one-message exception)."""
    if len(e.args) == 1 and isinstance(e.args[0], str) and local in e.args[0]:
        e.args = (e.args[0].replace(local, remote),)


def current_version(url: str) -> Path:
    """A local copy of the live version of ``url`` (``FileNotFoundError`` when none)."""
    return read_live(url, lambda version: version)


def read_live(url: str, read: Callable[[Path], T], *, attempts: int = 8) -> T:
    """``read(local copy)`` of the live version of ``url``, retried on a concurrent commit."""
    for _ in range(attempts):
        name = read_current(url)
        if name is None:
            _check(url, None)
            raise FileNotFoundError(f"{url} holds no saved version ({CURRENT} is missing)")
        try:
            version = _download(url, name)
        except FileNotFoundError:
            if read_current(url) == name:  # not a concurrent commit: the live version is gone
                _check(url, name)
                raise
            continue
        try:
            return read(version)
        except Exception as e:  # name the store's object, not the local copy
            _rename(e, str(version), _fs.join(url, name))
            raise
    raise BrokenDirectoryError(f"{url} kept changing while being read; try again")
