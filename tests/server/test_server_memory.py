"""Memory of the service (issue 21): the heap's free pages go back after loading."""

from __future__ import annotations

import platform

from neardup.server.snapshot import release_heap


def test_release_heap_trims_where_glibc_is() -> None:
    assert release_heap() is (platform.libc_ver()[0] == "glibc")
