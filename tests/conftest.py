"""Shared test fixtures: slices of the real corpora, read by ``neardup.eval.corpora`` (the one
loader and the one folder rule).

Corpus tests are extras: every surface is tested on synthetic data, and the tests that read a
real corpus (the fixtures below, or the ``corpus`` marker) are *deselected* when the corpora
folder is absent, with one header line saying so, so a clean clone runs whole without them.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from neardup.eval.corpora import CorpusNotFoundError, corpora_dir, load_records

# Whichever test starts this process's Spark JVM first (a CLI test running --engine spark in
# process, or the Spark tests' session) fixes its heap for the rest of the suite: a session
# made later reuses the JVM and cannot raise it. The default 1 GiB ran out in the full suite
# (OutOfMemoryError in tests/spark/test_engine.py, which passes alone), so every JVM the suite
# starts gets 2 GiB
os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-memory 2g pyspark-shell")

# fixtures that read a real corpus: a test that asks for one is a corpus test
CORPUS_FIXTURES = frozenset({"reuters_records", "reuters", "peoples_daily"})


def _corpora_present() -> bool:
    return (corpora_dir() / "reuters21578" / "docs.jsonl.gz").is_file()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "corpus: reads the shared corpora (deselected without)")


def pytest_report_header(config: pytest.Config) -> str:
    where = corpora_dir()
    state = "found" if _corpora_present() else "absent: corpus tests deselected"
    return f"neardup corpora: {where} ({state})"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _corpora_present():
        return
    keep, drop = [], []
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        uses = item.get_closest_marker("corpus") is not None or bool(CORPUS_FIXTURES & names)
        (drop if uses else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        config.stash[_DROPPED] = len(drop)


_DROPPED = pytest.StashKey[int]()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    dropped = config.stash.get(_DROPPED, 0)
    if dropped:
        terminalreporter.write_line(
            f"{dropped} corpus tests deselected: no corpora at {corpora_dir()} "
            "(set NEARDUP_CORPORA to run them)"
        )


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
