"""The names of a versioned directory, shared by the local writer (:mod:`neardup._atomic`) and
the remote one (:mod:`neardup._atomic_remote`): each imports them from here, so neither imports
the other's module at load (``_atomic`` hands URLs to ``_atomic_remote``).

>>> bool(VERSION.match("v-7")), CURRENT
(True, 'CURRENT')
"""

from __future__ import annotations

import re

from neardup.errors import DamagedFileError, NeardupError

__all__ = [
    "CURRENT",
    "LOCK",
    "MANIFEST",
    "SLEEP_BEFORE_COMMIT",
    "SLEEP_PER_FILE",
    "VERSION",
    "BrokenDirectoryError",
    "DirectoryBusyError",
]

CURRENT = "CURRENT"
LOCK = ".lock"
MANIFEST = "manifest.json"  # what every bundle writes last (neardup._persist): a whole version
VERSION = re.compile(r"^v-(\d+)$")
# Test hook (crash tests): seconds to sleep between writing a version and committing it.
SLEEP_BEFORE_COMMIT = "NEARDUP_TEST_SLEEP_BEFORE_COMMIT"
# Test hook (crash tests): seconds to sleep after each file a bundle writes (_persist).
SLEEP_PER_FILE = "NEARDUP_TEST_SLEEP_PER_FILE"


class DirectoryBusyError(NeardupError, RuntimeError):
    """Another process is writing the directory and the caller asked not to wait."""


class BrokenDirectoryError(DamagedFileError, OSError):
    """``CURRENT`` is missing while saved versions exist, or names a version that is gone.

    Raised before anything is written or deleted; the message names the file and the fix.
    """
