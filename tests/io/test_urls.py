"""The library on ``memory://`` and ``file://`` URLs (fsspec's in-memory store: no server):
readers, writers, a folder of parts, the dedup state and a saved overlap reference."""

from __future__ import annotations

import gzip
import importlib.util
import json
import uuid
from pathlib import Path
from typing import Any

import fsspec
import pytest

from neardup import Deduplicator
from neardup._extras import MissingExtraError
from neardup.io import iter_documents, iter_records, open_writer
from neardup.io.readers import list_parts
from neardup.overlap.finder import OverlapFinder

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"


@pytest.fixture
def mem() -> str:
    """A fresh folder on the in-memory store."""
    return f"memory://neardup-test-{uuid.uuid4().hex}"


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SAMPLE.read_text("utf-8").splitlines()]


def _texts(path: str) -> list[str]:
    return [d.text for d in iter_documents(iter_records(path), on_error="fail")]


def test_readers_on_memory_equal_local(mem: str) -> None:
    fs = fsspec.filesystem("memory")
    fs.pipe_file(f"{mem}/news.jsonl.gz", gzip.compress(SAMPLE.read_bytes()))
    fs.pipe_file(f"{mem}/parts/m=10/part-0.jsonl", SAMPLE.read_bytes()[:2000].rsplit(b"\n", 1)[0])
    fs.pipe_file(f"{mem}/parts/m=2/part-0.jsonl", b'{"id": "x", "text": "first"}\n')
    fs.pipe_file(f"{mem}/parts/_SUCCESS", b"")
    assert _texts(f"{mem}/news.jsonl.gz") == [r["text"] for r in _rows()]
    parts = list_parts(f"{mem}/parts")
    assert parts == [f"{mem}/parts/m=2/part-0.jsonl", f"{mem}/parts/m=10/part-0.jsonl"]
    recs = [r for _, r in iter_records(f"{mem}/parts")]
    assert recs[0] == {"id": "x", "text": "first", "m": 2} and recs[1]["m"] == 10


def test_text_folder_on_memory_equals_local(mem: str, tmp_path: Path) -> None:
    fs = fsspec.filesystem("memory")
    for name, text in {"a-b.txt": "one", "a/x.txt": "two", "b.txt": "three"}.items():
        fs.pipe_file(f"{mem}/txt/{name}", text.encode())
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    local = [r for _, r in iter_records(str(tmp_path), "txt")]
    assert [r for _, r in iter_records(f"{mem}/txt", "txt")] == local
    assert [r["id"] for r in local] == ["a/x.txt", "a-b.txt", "b.txt"]


def test_writer_and_state_on_memory(mem: str) -> None:
    texts = [r["text"] for r in _rows()]
    with open_writer(f"{mem}/out.jsonl.gz") as w:
        for i, t in enumerate(texts):
            w.write({"id": i, "text": t})
    assert _texts(f"{mem}/out.jsonl.gz") == texts
    one = Deduplicator()
    whole = [one.add(t, id=i) for i, t in enumerate(texts)]
    dd = Deduplicator()
    got = [dd.add(t, id=i) for i, t in enumerate(texts[:15])]
    dd.save(f"{mem}/state")
    again = Deduplicator.load(f"{mem}/state")
    got += [again.add(t, id=i) for i, t in enumerate(texts[15:], 15)]
    assert got == whole and any(d.status != "unique" for d in got)
    again.save(f"{mem}/state")
    names = sorted(
        p.rsplit("/", 1)[-1] for p in fsspec.filesystem("memory").ls(f"{mem}/state", detail=False)
    )
    assert names == ["CURRENT", "v-2"]
    assert Deduplicator.load(f"{mem}/state").n_documents == len(texts)


def test_overlap_reference_on_memory(mem: str) -> None:
    texts = [r["text"] for r in _rows()]
    finder = OverlapFinder()
    for i, t in enumerate(texts[:15]):
        finder.add(t, i)
    finder.save(f"{mem}/ref")
    assert fsspec.filesystem("memory").exists(f"{mem}/ref/CURRENT")  # not a local "memory:/"
    loaded = OverlapFinder.load(f"{mem}/ref")
    assert len(loaded) == len(finder) == 15
    for t in texts[15:]:
        assert loaded.query(t) == finder.query(t)


def test_file_urls_are_local_paths(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(SAMPLE.read_bytes())
    assert _texts(f"file://{tmp_path}/in.jsonl") == [r["text"] for r in _rows()]
    with open_writer(f"file://{tmp_path}/out.jsonl") as w:
        w.write({"id": 1})
    assert (tmp_path / "out.jsonl").read_text() == '{"id": 1}\n'
    Deduplicator().save(f"file://{tmp_path}/state")
    assert (tmp_path / "state" / "CURRENT").read_text() == "v-1\n"


@pytest.mark.skipif(importlib.util.find_spec("adlfs") is not None, reason="adlfs is installed")
def test_missing_store_library_names_the_extra() -> None:
    with pytest.raises(
        MissingExtraError, match=r"az://c/x.jsonl needs adlfs: pip install 'neardup\[azure\]'"
    ):
        list(iter_records("az://c/x.jsonl"))


def test_damaged_state_on_memory_names_the_object(mem: str) -> None:
    from neardup.dedup.persist import StateFormatError

    dd = Deduplicator()
    dd.add("storm hits the coast", id=1)
    dd.save(f"{mem}/st")
    fsspec.filesystem("memory").pipe_file(f"{mem}/st/v-1/manifest.json", b"{bad")
    with pytest.raises(StateFormatError, match=rf"^{mem}/st/v-1/manifest.json is not valid JSON"):
        Deduplicator.load(f"{mem}/st")


def test_state_begun_again_at_the_same_url_is_read_anew(mem: str) -> None:
    first = Deduplicator()
    first.add("storm hits the coast", id=1)
    first.save(f"{mem}/st")
    assert Deduplicator.load(f"{mem}/st").n_documents == 1
    fsspec.filesystem("memory").rm(f"{mem}/st", recursive=True)
    second = Deduplicator()
    for i, text in enumerate(["one text here", "another text there", "a third one"]):
        second.add(text, id=i)
    second.save(f"{mem}/st")  # v-1 again, other contents
    assert Deduplicator.load(f"{mem}/st").n_documents == 3
