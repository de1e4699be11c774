"""Helpers shared by the benchmarks: corpora, timing, and the anchor libraries.

``simhash`` (PyPI, leonsim) and ``simhash-pybind`` both install a top-level package named
``simhash``, so they cannot share an environment: the ``bench`` extra installs the PyPI one and
:func:`simhash_pybind` installs simhash-pybind into ``benchmarks/.vendor`` (pip ``--target``) and
loads it under the module name ``simhash_pybind``.
"""

from __future__ import annotations

import gc
import gzip
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
CORPORA = Path(os.environ.get("NEARDUP_CORPORA", HERE.parent.parent / "shared" / "corpora"))
VENDOR = HERE / ".vendor"


def corpus_texts(relpath: str, limit: int | None = None) -> list[str]:
    """Non-empty ``text`` fields of a shared corpus; exits with a message when it is absent."""
    path = CORPORA / relpath
    if not path.exists():
        sys.exit(f"corpus {path} not found: set NEARDUP_CORPORA to the shared corpora folder")
    texts = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            if text.strip():
                texts.append(text)
            if limit and len(texts) >= limit:
                break
    return texts


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
