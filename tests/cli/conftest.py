from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def sample() -> Path:
    return SAMPLE
