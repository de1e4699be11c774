"""Shared test fixtures: slices of the real corpora, read by ``neardup.eval.corpora`` (the one
loader and the one folder rule), skipped cleanly when absent."""

from __future__ import annotations

from typing import Any

import pytest

from neardup.eval.corpora import CorpusNotFoundError, load_records


def corpus_records(name: str, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` records of a named corpus, or skip the test when it is absent."""
    try:
        return load_records(name, limit)
    except CorpusNotFoundError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def reuters_records() -> list[dict[str, Any]]:
    return corpus_records("reuters", 3000)


@pytest.fixture(scope="session")
def reuters(reuters_records: list[dict[str, Any]]) -> list[str]:
    return [d["text"] for d in reuters_records if len(d["text"]) > 400][:400]


@pytest.fixture(scope="session")
def peoples_daily() -> list[str]:
    return [d["text"] for d in corpus_records("peoples_daily", 400) if len(d["text"]) > 300]
