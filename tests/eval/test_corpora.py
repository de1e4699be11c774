from __future__ import annotations

from pathlib import Path

import pytest

from neardup.eval.corpora import CorpusNotFoundError, corpora_dir, load_corpus


def test_missing_folder_raises_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEARDUP_CORPORA", str(tmp_path))
    assert corpora_dir() == tmp_path
    with pytest.raises(CorpusNotFoundError, match="NEARDUP_CORPORA"):
        load_corpus("reuters")


def test_unknown_name() -> None:
    with pytest.raises(ValueError, match="unknown corpus"):
        load_corpus("nope")


@pytest.mark.corpus
def test_load_with_limit() -> None:
    try:
        ids, texts = load_corpus("clough", limit=7)
    except CorpusNotFoundError:
        pytest.skip("shared corpora not available")
    assert len(ids) == len(texts) == 7 and all(t.strip() for t in texts)
