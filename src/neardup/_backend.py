"""Which kernels run: the C extension ``neardup._native``, or the numba fallback.

The extension is built by ``pip install`` with the system C compiler (see ``setup.py``); it
loads in about a millisecond and never compiles anything. When it is missing (no compiler at
install time, or running from a source tree that was never built), the numba kernels of
:mod:`neardup._numba` take over with identical results; they compile on first use. numba is
not a dependency of a plain install: the fallback needs ``pip install 'neardup[numba]'``, and
without it the first kernel call raises :class:`~neardup._extras.MissingExtraError` saying so.
``NEARDUP_KERNELS=numba`` forces the fallback (tests and benchmarks compare the two).

The kernels are one namespace, ``C`` (``from neardup._backend import C``, loaded on first use):
the extension, or the numba modules laid out like it. mypy checks every call against the
extension's stub, ``_native.pyi``, which the numba fallback mirrors (``tests/test_stubs.py``).

The kernels of :mod:`neardup.overlap` follow the same policy from their own extension,
``neardup._overlap``: :func:`overlap_kernels` says whether it runs (built, and not switched off
by ``NEARDUP_KERNELS=python`` or ``numba``), and ``OV`` (read as ``_backend.OV`` where
:func:`overlap_kernels` is not None) is the extension, checked by mypy against its stub
``_overlap.pyi``. Its fallback and test oracle are the numpy references of
:mod:`neardup.overlap` (``tests/overlap/test_kernels.py`` compares them).

>>> backend() in ("native", "numba")
True
>>> from neardup._backend import C
>>> int(C.mix64(1)) == int(C.mix64(1)) != 1
True
"""

from __future__ import annotations

import importlib
import os
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from neardup._extras import MissingExtraError

if TYPE_CHECKING:
    import neardup._native as C  # the kernels' typed contract (module docs)
    import neardup._overlap as OV  # the overlap kernels' (module docs)

__all__ = ["OV", "C", "backend", "fallback", "native", "overlap_kernels"]

AREAS = ("features", "hashing", "index", "keys", "verify")  # the numba fallback's modules

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


@lru_cache(maxsize=1)
def overlap_kernels() -> ModuleType | None:
    """``neardup._overlap``, or None when it is missing or ``NEARDUP_KERNELS`` is ``python``
    or ``numba`` (the Python references of :mod:`neardup.overlap` run, with the same results).

    >>> overlap_kernels() is None or hasattr(overlap_kernels(), "pairs")
    True
    """
    if os.environ.get("NEARDUP_KERNELS", "").strip().lower() in ("numba", "python"):
        return None
    try:
        return importlib.import_module("neardup._overlap")
    except ImportError:
        return None


def backend() -> str:
    """``"native"`` (the C extension) or ``"numba"`` (the fallback)."""
    return "numba" if native() is None else "native"


class _Fallback:
    """The numba modules of every area as one namespace, laid out like the extension (each
    area's module is imported when one of its kernels is first asked for)."""

    def __getattr__(self, name: str) -> Any:
        for area in AREAS:
            mod = fallback(area)
            if not name.startswith("_") and hasattr(mod, name):
                value = getattr(mod, name)
                setattr(self, name, value)
                return value
        raise AttributeError(f"the numba fallback has no kernel {name!r} (C only)")


def __getattr__(name: str) -> Any:
    """``C``: the C extension, else the numba fallback, chosen and loaded on first use.
    ``OV``: the overlap extension, looked up at each use (``overlap_kernels.cache_clear()``
    switches it), where :func:`overlap_kernels` is not None."""
    if name == "OV":
        kernels = overlap_kernels()
        if kernels is None:
            raise AttributeError(
                "neardup._overlap is not built or NEARDUP_KERNELS switches it off: call the "
                "Python references when overlap_kernels() is None"
            )
        return kernels
    if name != "C":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    mod = native()
    value = mod if mod is not None else _Fallback()
    globals()["C"] = value
    return value


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
