"""The C kernels of :mod:`neardup.overlap` (``neardup._overlap``), or None.

Built by ``pip install`` from ``_csrc/overlap.c``; without it (or with
``NEARDUP_KERNELS=python`` / ``numba``) the Python references in ``tokens.py``, ``align.py``
and ``pairs.py`` run, with the same results (``tests/overlap/test_kernels.py``).

>>> kernel() is None or hasattr(kernel(), "pairs")
True
"""

from __future__ import annotations

import importlib
import os
from functools import lru_cache
from types import ModuleType

__all__ = ["kernel"]


@lru_cache(maxsize=1)
def kernel() -> ModuleType | None:
    """``neardup._overlap``, or None when it is missing or switched off."""
    if os.environ.get("NEARDUP_KERNELS", "").strip().lower() in ("numba", "python"):
        return None
    try:
        return importlib.import_module("neardup._overlap")
    except ImportError:
        return None
