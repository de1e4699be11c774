"""Fixtures of the overlap tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from neardup._backend import overlap_kernels


@pytest.fixture
def python_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run the Python references (the kernel switched off) inside a test."""
    monkeypatch.setenv("NEARDUP_KERNELS", "python")
    overlap_kernels.cache_clear()
    yield
    monkeypatch.delenv("NEARDUP_KERNELS")
    overlap_kernels.cache_clear()
