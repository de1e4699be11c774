"""Which kernels run: the C extension ``neardup._native``, or the numba fallback.

The extension is built by ``pip install`` with the system C compiler (see ``setup.py``); it
loads in about a millisecond and never compiles anything. When it is missing (no compiler at
install time, or running from a source tree that was never built), the numba kernels of
:mod:`neardup._numba` take over with identical results; they compile on first use.
``NEARDUP_KERNELS=numba`` forces the fallback (tests and benchmarks compare the two).

>>> backend() in ("native", "numba")
True
"""

from __future__ import annotations

import importlib
import os
from functools import lru_cache
from types import ModuleType

__all__ = ["backend", "kernels", "native"]


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
    return mod if mod is not None else importlib.import_module(f"neardup._numba.{area}")
