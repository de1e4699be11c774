"""Which kernels run: the C extension ``neardup._native``, or the numba fallback.

The extension is built by ``pip install`` with the system C compiler (see ``setup.py``); it
loads in about a millisecond and never compiles anything. When it is missing (no compiler at
install time, or running from a source tree that was never built), the numba kernels of
:mod:`neardup._numba` take over with identical results; they compile on first use. numba is
not a dependency of a plain install: the fallback needs ``pip install 'neardup[numba]'``, and
without it the first kernel call raises :class:`~neardup._extras.MissingExtraError` saying so.
``NEARDUP_KERNELS=numba`` forces the fallback (tests and benchmarks compare the two).

>>> backend() in ("native", "numba")
True
"""

from __future__ import annotations

import importlib
import os
from functools import lru_cache
from types import ModuleType

from neardup._extras import MissingExtraError

__all__ = ["backend", "fallback", "kernels", "native"]

NO_KERNELS = (
    "neardup's C extension (neardup._native) is not built and its numba fallback is not "
    "installed: install a C compiler and reinstall neardup, or pip install 'neardup[numba]'"
)


@lru_cache(maxsize=1)
def native() -> ModuleType | None:
    """The compiled extension, or None when it is missing or ``NEARDUP_KERNELS=numba``."""
    if os.environ.get("NEARDUP_KERNELS", "").strip().lower() == "numba":
        return None
    try:
        return importlib.import_module("neardup._native")
    except ImportError:
        return None


def backend() -> str:
    """``"native"`` (the C extension) or ``"numba"`` (the fallback)."""
    return "numba" if native() is None else "native"


def kernels(area: str) -> ModuleType:
    """The module holding ``area``'s kernels (``features``, ``verify``, ``index``).

    The C extension exposes every area's kernels under the numba modules' names and
    signatures, so callers use whichever this returns without branching.
    """
    mod = native()
    return mod if mod is not None else fallback(area)


def fallback(area: str) -> ModuleType:
    """The numba module of ``area``'s kernels, or :class:`MissingExtraError` naming the fix.

    >>> fallback("no_such_area")
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: No module named 'neardup._numba.no_such_area'
    """
    try:
        importlib.import_module("numba")
    except ImportError:
        raise MissingExtraError(NO_KERNELS) from None
    return importlib.import_module(f"neardup._numba.{area}")
