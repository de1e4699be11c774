"""Loaders for the shared evaluation corpora (gzipped JSONL with ``id`` and ``text``).

The folder is ``$NEARDUP_CORPORA`` when set, else ``../shared/corpora`` relative to the project
root (found from this file, then from the working directory). Missing corpora raise
:class:`CorpusNotFoundError` (a ``FileNotFoundError``) so tests can skip cleanly.

>>> sorted(CORPORA)[:3]
['20news', 'clough', 'peoples_daily']
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from neardup.errors import NeardupError

__all__ = ["CORPORA", "CorpusNotFoundError", "corpora_dir", "load_corpus", "load_records"]

#: name -> (relative file, default document limit)
CORPORA: dict[str, tuple[str, int | None]] = {
    "reuters": ("reuters21578/docs.jsonl.gz", None),
    "shopping": ("zh_online_shopping_10cats/docs.jsonl.gz", 30_000),
    "20news": ("20news_bydate/docs.jsonl.gz", None),
    "peoples_daily": ("peoples_daily_199801/articles.jsonl.gz", None),
    "peoples_daily_paragraphs": ("peoples_daily_199801/paragraphs.jsonl.gz", None),
    "clough": ("clough_stevenson/docs.jsonl.gz", None),
}


class CorpusNotFoundError(NeardupError, FileNotFoundError):
    """The corpora folder or a corpus file is absent."""


def corpora_dir() -> Path:
    """The corpora folder: ``$NEARDUP_CORPORA`` or ``<project root>/../shared/corpora``."""
    env = os.environ.get("NEARDUP_CORPORA")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for base in [*here.parents, Path.cwd()]:
        cand = base.parent / "shared" / "corpora"
        if (base / "pyproject.toml").exists() and cand.is_dir():
            return cand
    return Path.cwd().parent / "shared" / "corpora"


def load_records(name: str, limit: int | None = -1) -> list[dict[str, Any]]:
    """Records (every field: ``id``, ``text``, ``date`` ...) of a named corpus, skipping blank
    texts, in file order.

    ``limit=-1`` uses the corpus default (the first 30,000 non-empty shopping reviews); ``None``
    loads everything.
    """
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}; choose one of {sorted(CORPORA)}")
    rel, default = CORPORA[name]
    cap = default if limit == -1 else limit
    path = corpora_dir() / rel
    if not path.exists():
        raise CorpusNotFoundError(
            f"corpus file {path} not found; set NEARDUP_CORPORA to the corpora folder"
        )
    records: list[dict[str, Any]] = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if not str(rec.get("text", "")).strip():
                continue
            records.append(rec)
            if cap is not None and len(records) >= cap:
                break
    return records


def load_corpus(name: str, limit: int | None = -1) -> tuple[list[str], list[str]]:
    """``(ids, texts)`` of a named corpus (see :func:`load_records`)."""
    records = load_records(name, limit)
    return [str(r["id"]) for r in records], [str(r["text"]) for r in records]
