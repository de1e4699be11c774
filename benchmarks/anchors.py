"""Helpers shared by the benchmarks: corpora, timing, and the anchor libraries.

``simhash`` (PyPI, leonsim) and ``simhash-pybind`` both install a top-level package named
``simhash``, so they cannot share an environment: the ``bench`` extra installs the PyPI one and
:func:`simhash_pybind` installs simhash-pybind into ``benchmarks/.vendor`` (pip ``--target``) and
loads it under the module name ``simhash_pybind``.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from neardup.eval.corpora import CorpusNotFoundError, load_corpus

HERE = Path(__file__).resolve().parent
VENDOR = HERE / ".vendor"


def corpus_texts(name: str, limit: int | None = None) -> list[str]:
    """Non-empty texts of a named shared corpus (``neardup.eval.corpora``); exits when absent."""
    try:
        return load_corpus(name, limit)[1]
    except CorpusNotFoundError as exc:
        sys.exit(str(exc))


def megabytes(texts: list[str]) -> float:
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6


def best_of(fn: Callable[[], Any], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` runs (the least disturbed by a noisy machine)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def machine_note() -> str:
    cpu = platform.processor() or platform.machine()
    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()}"
    )


def simhash_pybind() -> ModuleType:
    """simhash-pybind's ``simhash`` package, loaded as ``simhash_pybind`` (installed on demand)."""
    target = VENDOR / "simhash_pybind"
    init = target / "simhash" / "__init__.py"
    if not init.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--target",
                str(target),
                "simhash-pybind>=0.0.3",
            ],
            check=True,
        )
    spec = importlib.util.spec_from_file_location(
        "simhash_pybind", init, submodule_search_locations=[str(init.parent)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["simhash_pybind"] = module
    spec.loader.exec_module(module)
    return module
