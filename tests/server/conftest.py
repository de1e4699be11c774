from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.server_helpers import Server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with Server(tmp_path / "data", "--no-verify") as s:
        yield s
