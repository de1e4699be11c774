"""Shared test fixtures: the real corpora in ../shared/corpora (skipped cleanly when absent)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from neardup.eval.corpora import corpora_dir

ROOT = Path(__file__).resolve().parents[1]
CORPORA = corpora_dir()  # the one rule: $NEARDUP_CORPORA or ../shared/corpora


def load_corpus(relpath: str, limit: int | None = None) -> list[dict]:
    """First ``limit`` records of a shared corpus file, or skip the test when it is absent."""
    path = CORPORA / relpath
    if not path.exists():
        pytest.skip(f"corpus {path} not available")
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line))
            if limit is not None and len(out) >= limit:
                break
    return out


@pytest.fixture(scope="session")
def reuters() -> list[str]:
    return [
        d["text"] for d in load_corpus("reuters21578/docs.jsonl.gz", 3000) if len(d["text"]) > 400
    ][:400]


@pytest.fixture(scope="session")
def peoples_daily() -> list[str]:
    return [
        d["text"]
        for d in load_corpus("peoples_daily_199801/articles.jsonl.gz", 400)
        if len(d["text"]) > 300
    ]
