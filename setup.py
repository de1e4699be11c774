"""Build of neardup's C extension; all metadata lives in pyproject.toml.

``neardup._native`` holds the hot kernels (feature hashing + SimHash, the verifier's MinHash,
the index scans and joins) in plain C, compiled by the system C compiler at install time, so
no command pays a JIT compile. Without a working compiler the install still succeeds and
neardup falls back to its numba kernels (``pip install 'neardup[numba]'``; slow first run);
``NEARDUP_REQUIRE_NATIVE=1`` turns that fallback into a build error.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCES = ["module.c", "features.c", "verify.c", "index.c", "keys.c"]
HEADERS = [
    "kernels.h",
    "xxh3.h",
    "module_sketch.h",
    "module_index.h",
    "keys.h",
    "module_keys.h",
    "module_prepare.h",
    "keyed.h",
]
CSRC = "src/neardup/_csrc"


class OptionalBuildExt(build_ext):
    """Build the extension; on failure warn (numba fallback) unless it is required."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # compiler missing or broken
            self._fallback(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._fallback(exc)

    def _fallback(self, exc: Exception) -> None:
        if os.environ.get("NEARDUP_REQUIRE_NATIVE") == "1":
            raise exc
        print(
            f"WARNING: neardup's C extension was not built ({exc}); neardup will need its numba "
            "kernels (pip install 'neardup[numba]'), which compile on first use (install a C "
            "compiler and reinstall to fix)",
            file=sys.stderr,
        )


native = Extension(
    "neardup._native",
    sources=[f"{CSRC}/{name}" for name in SOURCES],
    depends=[f"{CSRC}/{name}" for name in HEADERS],
    extra_compile_args=["-O3", "-std=gnu11", "-ffp-contract=off", "-fvisibility=hidden"],
)

# the kernels of neardup.overlap (partial copies); without it the Python references run
OVERLAP_SOURCES = ["overlap_module.c", "overlap_tokens.c", "overlap_pairs.c", "overlap_index.c"]
OVERLAP_HEADERS = ["overlap_kernels.h", "keyed.h"]
overlap = Extension(
    "neardup._overlap",
    sources=[f"{CSRC}/{name}" for name in OVERLAP_SOURCES],
    depends=[f"{CSRC}/{name}" for name in OVERLAP_HEADERS],
    extra_compile_args=["-O3", "-std=gnu11", "-fvisibility=hidden"],
)

setup(ext_modules=[native, overlap], cmdclass={"build_ext": OptionalBuildExt})
