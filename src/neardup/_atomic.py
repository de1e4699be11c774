"""Atomic writes of files and of directories: the one owner of "replace without a torn state".

Files (:func:`atomic_write`): a temporary sibling, fsync, then ``rename`` over the target.

Directories (:func:`atomic_directory`) are *versioned*::

    DIR/CURRENT      one line, e.g. "v-7": the live version (replaced with rename)
    DIR/v-7/...      the live version's files
    DIR/.lock        writers hold an exclusive flock on it

A writer takes the lock (a second writer waits, or fails with :class:`DirectoryBusyError`),
removes versions left by dead writers, fills a new ``v-<n+1>/``, fsyncs its files and
directories, then replaces ``CURRENT`` (the commit point) and deletes the old version. A reader
(:func:`read_live`) reads ``CURRENT`` once and opens that version only; when a writer commits
and deletes that version while it is being read, the read fails, ``CURRENT`` names another
version, and the reader starts again on the new one. So a load sees the old or the new version,
never a half. (Retrying rather than keeping old versions around for readers: no extra disk, and
it holds for a reader slower than any number of commits, where keeping one previous version
would not.) A writer killed at any instant leaves the previous version live.

A URL (``s3://``, ``memory://``...) is handled by :mod:`neardup._atomic_remote` behind these
same functions: files uploaded whole at the end, versions uploaded first and ``CURRENT`` put
last; stores have no rename, and the lock is an object put only if absent (see that module).

Nothing here deletes data it cannot prove is a dead writer's leftover: when ``CURRENT`` is
missing but a version holding its bundle's manifest (:data:`MANIFEST`, written last) is there,
or ``CURRENT`` names a version that is gone, writers and readers raise
:class:`BrokenDirectoryError` naming the file and the fix, and touch nothing. Files and
directories get the usual mode under the umask (not ``mkstemp``'s 0600), and a symlinked target
stays a symlink: the file it points to is replaced.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp()) / "state"
>>> with atomic_directory(root) as version:
...     _ = (version / "data.txt").write_text("one")
>>> (current_version(root) / "data.txt").read_text()
'one'
>>> with atomic_directory(root) as version:
...     _ = (version / "data.txt").write_text("two")
>>> (current_version(root) / "data.txt").read_text(), sorted(p.name for p in root.iterdir())
('two', ['.lock', 'CURRENT', 'v-2'])
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TypeVar

from neardup import _fs

# the directory format's names live in _dirformat (shared with _atomic_remote); these
# re-exports are where the rest of neardup imports them from
from neardup._dirformat import CURRENT as CURRENT
from neardup._dirformat import LOCK as LOCK
from neardup._dirformat import MANIFEST as MANIFEST
from neardup._dirformat import SLEEP_BEFORE_COMMIT as SLEEP_BEFORE_COMMIT
from neardup._dirformat import SLEEP_PER_FILE as SLEEP_PER_FILE
from neardup._dirformat import VERSION as _VERSION
from neardup._dirformat import BrokenDirectoryError as BrokenDirectoryError
from neardup._dirformat import DirectoryBusyError as DirectoryBusyError

T = TypeVar("T")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", **kwargs: object) -> Iterator[IO]:  # type: ignore[type-arg]
    """Open a temporary file next to ``path``; on success it replaces ``path``, on error it goes.

    A symlink at ``path`` is kept: the file it points to is replaced.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_write(target) as f:
    ...     _ = f.write("done")
    >>> target.read_text(), target.stat().st_mode & 0o777 == 0o666 & ~_umask()
    ('done', True)
    """
    if _fs.is_remote(path):
        from neardup._atomic_remote import write_file

        with write_file(str(path), mode, **kwargs) as f:
            yield f
        return
    target = Path(os.path.realpath(_fs.local(path)))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, mode, **kwargs) as f:  # type: ignore[call-overload]
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _versions(root: Path) -> dict[int, Path]:
    out = {}
    for p in root.iterdir():
        m = _VERSION.match(p.name)
        if m and p.is_dir():
            out[int(m.group(1))] = p
    return out


def read_current(root: str | os.PathLike[str]) -> str | None:
    """The live version's name from ``root/CURRENT`` (None when there is none)."""
    if _fs.is_remote(root):
        from neardup._atomic_remote import read_current as remote_current

        return remote_current(str(root))
    root = Path(_fs.local(root))
    try:
        name = (root / CURRENT).read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise OSError(f"{root / CURRENT} is unreadable ({e}); restore it or rebuild") from None
    if not _VERSION.match(name):
        raise OSError(f"{root / CURRENT} names {name!r}, not a version; restore it or rebuild")
    return name


def current_version(path: str | os.PathLike[str], legacy_marker: str | None = None) -> Path:
    """The directory of the live version of ``path`` (read ``CURRENT`` once, then use it).

    A directory written before versioning (holding ``legacy_marker`` itself) is its own
    version. Raises ``FileNotFoundError`` when ``path`` holds no version, and
    :class:`BrokenDirectoryError` when ``CURRENT`` is missing or names a version that is gone
    while saved versions exist. Use :func:`read_live` to read it (a writer may replace it).
    A URL's live version is downloaded to a local folder, which is returned.
    """
    if _fs.is_remote(path):
        from neardup._atomic_remote import current_version as remote_version

        return remote_version(str(path))
    root = Path(_fs.local(path))
    name = read_current(root)
    for _ in range(8):
        if name is None or (root / name).is_dir():
            break
        again = read_current(root)  # a writer may have committed and deleted it meanwhile
        if again == name:
            raise BrokenDirectoryError(_gone_message(root, name))
        name = again
    if name is not None:
        return root / name
    if legacy_marker is not None and (root / legacy_marker).exists():
        return root
    check_versions(root, None, legacy_marker)
    raise FileNotFoundError(f"{root} holds no saved version ({root / CURRENT} is missing)")


def read_live(
    path: str | os.PathLike[str],
    read: Callable[[Path], T],
    *,
    legacy_marker: str | None = None,
    attempts: int = 8,
) -> T:
    """``read(version)`` of the live version of ``path``, whole: when ``read`` fails because a
    writer committed another version and deleted this one meanwhile, read the new one.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp()) / "state"
    >>> with atomic_directory(root) as version:
    ...     _ = (version / "data.txt").write_text("one")
    >>> read_live(root, lambda v: (v / "data.txt").read_text())
    'one'
    """
    if _fs.is_remote(path):
        from neardup._atomic_remote import read_live as remote_read

        return remote_read(str(path), read, attempts=attempts)
    root = Path(_fs.local(path))
    for _ in range(attempts):
        version = current_version(root, legacy_marker)
        try:
            return read(version)
        except Exception:
            if version == root or read_current(root) == version.name:
                if not version.is_dir():
                    raise BrokenDirectoryError(_gone_message(root, version.name)) from None
                raise  # not a concurrent replacement: the live version itself is damaged
    raise BrokenDirectoryError(f"{root} kept changing while being read; try again")


def _saved(root: Path) -> list[str]:
    """Names of the versions holding their manifest (newest first)."""
    found = sorted(_versions(root).items(), reverse=True)
    return [p.name for _, p in found if (p / MANIFEST).exists()]


def _gone_message(root: Path, name: str) -> str:
    saved = _saved(root)
    fix = f"point it at another one (echo {saved[0]} > {root / CURRENT}), " if saved else ""
    return (
        f"{root / CURRENT} names {name}, which is gone (saved versions: "
        f"{', '.join(saved) or 'none'}); nothing was changed: restore {root / name}, "
        f"{fix}or use a new directory"
    )


def check_versions(root: Path, live: str | None, legacy_marker: str | None) -> None:
    """Raise :class:`BrokenDirectoryError` when ``CURRENT`` (read as ``live``) is missing
    while saved versions exist, or names a version that is gone."""
    if live is not None:
        if not (root / live).is_dir():
            raise BrokenDirectoryError(_gone_message(root, live))
        return
    if legacy_marker is not None and (root / legacy_marker).exists():
        return
    saved = _saved(root) if root.is_dir() else []
    if saved:
        raise BrokenDirectoryError(
            f"{root / CURRENT} is missing, but {root} holds saved version(s) "
            f"{', '.join(saved)}; nothing was deleted: if {saved[0]} (the newest) is the "
            f"one to go on from, restore it with `echo {saved[0]} > {root / CURRENT}`; "
            "otherwise use a new directory"
        )


def _lock(root: Path, wait: bool, on_wait: Callable[[str], None] | None) -> int:
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError as e:
        if e.errno not in (errno.EAGAIN, errno.EACCES):
            os.close(fd)
            raise
    if not wait:
        os.close(fd)
        raise DirectoryBusyError(
            f"{root} is being written by another process; try again when it finishes "
            "(or let this one wait)"
        )
    (on_wait or _tell)(f"waiting for another process writing {root} ...")
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _tell(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def holds_other_data(root: Path, legacy_marker: str | None = None) -> bool:
    """Whether the directory ``root`` holds names that are not ours (from one listing, so a
    writer creating ``.lock`` or a version meanwhile cannot make it look foreign)."""
    names = {p.name for p in root.iterdir()}
    ours = {CURRENT, LOCK} | ({legacy_marker} if legacy_marker else set())
    return bool(names) and not names & ours and not any(_VERSION.match(n) for n in names)


def _check_ours(root: Path, legacy_marker: str | None) -> None:
    """Refuse to take over a directory that holds somebody else's data."""
    if holds_other_data(root, legacy_marker):
        raise FileExistsError(
            f"{root} exists and holds other data (no {CURRENT}); not writing into it: "
            "choose another directory"
        )


def fsync_tree(root: Path) -> None:
    """fsync every file and directory under ``root`` (data first, then the directories)."""
    for dirpath, _, filenames in os.walk(root, topdown=False):
        for name in filenames:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(dirpath))


@contextlib.contextmanager
def atomic_directory(
    path: str | os.PathLike[str],
    *,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
    legacy_marker: str | None = None,
) -> Iterator[Path]:
    """Yield an empty new version directory of ``path``; on success it becomes the live one.

    Writers are serialised by an flock on ``path/.lock`` (``wait=False``: raise
    :class:`DirectoryBusyError` instead of waiting). An exception inside the block removes the
    new version and leaves the live one as it was. ``legacy_marker``: a file whose presence
    marks an unversioned directory of ours, converted on this write. A URL's version is a local
    folder uploaded at the end (:mod:`neardup._atomic_remote`: its lock refuses, never waits).
    """
    if _fs.is_remote(path):
        from neardup._atomic_remote import directory

        with directory(str(path)) as version:
            yield version
        return
    root = Path(_fs.local(path))
    if root.exists() and not root.is_dir():
        raise FileExistsError(f"{root} exists and is not a directory; choose another path")
    root.mkdir(parents=True, exist_ok=True)
    _check_ours(root, legacy_marker)
    fd = _lock(root, wait, on_wait)
    try:
        live = read_current(root)
        check_versions(root, live, legacy_marker)  # before deleting anything
        versions = _versions(root)
        for name, p in versions.items():  # dead writers' leftovers (we hold the lock)
            if f"v-{name}" != live:
                shutil.rmtree(p, ignore_errors=True)
        new = root / f"v-{max(versions, default=0) + 1}"
        new.mkdir()
        try:
            yield new
            fsync_tree(new)
            if os.environ.get(SLEEP_BEFORE_COMMIT):
                time.sleep(float(os.environ[SLEEP_BEFORE_COMMIT]))
            with atomic_write(root / CURRENT) as f:
                f.write(new.name + "\n")
            _fsync_dir(root)
        except BaseException:
            shutil.rmtree(new, ignore_errors=True)
            raise
        _drop_old(root, new.name, live, legacy_marker)
    finally:
        os.close(fd)


def _drop_old(root: Path, new: str, live: str | None, legacy_marker: str | None) -> None:
    """After the commit: delete the previous version (and an unversioned layout's files)."""
    if live is not None:
        shutil.rmtree(root / live, ignore_errors=True)
    elif legacy_marker is not None and (root / legacy_marker).exists():
        for p in root.iterdir():
            if p.name in (CURRENT, LOCK, new):
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
