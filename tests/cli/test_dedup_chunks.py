"""``neardup dedup`` writes the same bytes whatever the chunk size and whether pass 1's lines
were kept (issue 24: the defaults shrank both to cut peak memory)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import cli
from neardup.cli.dedup import CHUNK_SIZE


def _corpus(path: Path, n: int = 600) -> str:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(400)]
    texts: list[str] = []
    for _ in range(n):
        if texts and rng.random() < 0.3:  # a near copy of an earlier text
            toks = rng.choice(texts).split()
            toks[rng.randrange(len(toks))] = rng.choice(words)
            texts.append(" ".join(toks))
        else:
            texts.append(" ".join(rng.choice(words) for _ in range(40)))
    rows = [{"id": i, "text": t, "n": i % 7} for i, t in enumerate(texts)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return str(path)


@pytest.mark.parametrize("budget", [8 << 20, 0])
def test_chunk_size_and_spool_do_not_change_the_output(
    tmp_path: Path, budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("neardup.cli.dedup.SPOOL_BUDGET", budget)
    src = _corpus(tmp_path / "in.jsonl")
    outs = []
    for size in (1, 97, CHUNK_SIZE, 16384):
        res = CliRunner().invoke(cli, ["dedup", src, "--out", "-", "--chunk-size", str(size)])
        assert res.exit_code == 0, res.stderr
        outs.append(res.stdout)
    assert len(set(outs)) == 1
    assert any('"status": "duplicate"' in line for line in outs[0].splitlines())


def test_spool_kept_only_when_the_whole_input_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip

    from neardup.cli.dedup import _spool_budget

    monkeypatch.setattr("neardup.cli.dedup.SPOOL_BUDGET", 1000)
    small, big = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    small.write_bytes(gzip.compress(b'{"text": "x"}\n' * 10))
    big.write_bytes(gzip.compress(b'{"text": "x"}\n' * 100))  # 1,400 bytes unpacked, 40 packed
    assert _spool_budget((str(small),)) == 1000
    assert _spool_budget((str(big),)) == 0
    assert _spool_budget((str(small), str(small))) == 1000
    assert _spool_budget((str(small),) * 8) == 0


@pytest.mark.parametrize("size", [1, 97, 16384])
def test_look_ahead_decides_as_the_library(tmp_path: Path, size: int) -> None:
    """The CLI prepares chunk i on a thread while it reads chunk i+1; the statuses are still
    those of the library feeding the texts in one go."""
    from neardup.dedup import Deduplicator

    src = _corpus(tmp_path / "in.jsonl")
    res = CliRunner().invoke(cli, ["dedup", src, "--out", "-", "--chunk-size", str(size)])
    assert res.exit_code == 0, res.stderr
    got = [json.loads(line)["status"] for line in res.stdout.splitlines()]
    texts = [json.loads(line)["text"] for line in Path(src).read_text("utf-8").splitlines()]
    assert got == Deduplicator().run(texts).statuses


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_look_ahead_raises_the_earlier_chunks_error_first(depth: int) -> None:
    """Chunk 0 fails in prepare and reading chunk 1 fails too: chunk 0's error comes out,
    as in the serial loop (reading chunk 1 happened while chunk 0 was prepared), whatever
    the number of chunks prepared ahead; every chunk is fed, in order."""
    from types import SimpleNamespace

    from neardup.cli._dedup_feed import feed_ahead
    from neardup.dedup import Deduplicator

    def chunks():  # type: ignore[no-untyped-def]
        yield [(SimpleNamespace(text=1, id=0), {})], None  # not a str: prepare raises
        raise OSError("read failed")

    with pytest.raises(TypeError, match=r"texts\[0\] is int"):
        feed_ahead(Deduplicator(), chunks(), False, lambda n: None, depth)
    fed: list[int] = []
    # copies under ids of their own (a repeated id and text is not fed again: dedup/rerun.py)
    ok = [
        [(SimpleNamespace(text=f"a b c d {i}", id=f"{i}.{j}"), {}) for j in range(i + 1)]
        for i in range(5)
    ]
    dd = Deduplicator()
    feed_ahead(dd, iter([(c, None) for c in ok]), True, fed.append, depth)
    assert fed == [1, 2, 3, 4, 5]
    texts = [d.text for c in ok for d, _ in c]
    assert dd.state.decisions().statuses == Deduplicator().run(texts).statuses


def test_writes_behind_keep_the_order_and_raise_a_write_error() -> None:
    """The fast writer's second thread (issue 24) writes batches in the order given, even
    when an earlier write is slower, and a failed write is raised in the caller."""
    import threading
    import time

    from neardup.cli._dedup_write import _Behind

    written: list[bytes] = []
    threads = set()

    def write(lines: list[bytes]) -> None:
        threads.add(threading.get_ident())
        time.sleep(0.002 * (len(written) % 3 == 0))
        written.extend(lines)

    with _Behind(write) as behind:
        for k in range(50):
            behind.put([b"%d" % k, b"%d." % k])
        behind.put([])
    assert written == [x for k in range(50) for x in (b"%d" % k, b"%d." % k)]
    assert threading.get_ident() not in threads

    def fail(lines: list[bytes]) -> None:
        raise BrokenPipeError("gone")

    with pytest.raises(BrokenPipeError), _Behind(fail) as behind:
        behind.put([b"a"])
        behind.drain()


def test_fast_writer_output_spans_many_batches(tmp_path: Path) -> None:
    """More lines than one write batch, to a file: the same bytes as the generic writer's
    records (every line is the input record plus the decision fields)."""
    src = _corpus(tmp_path / "in.jsonl", n=2600)
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(cli, ["dedup", src, "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [r["id"] for r in rows] == list(range(2600))
    assert {r["status"] for r in rows} >= {"unique", "duplicate"}


@pytest.mark.parametrize(("preset", "want"), [(None, "1"), ("3", "3")])
def test_cli_loads_numpy_with_one_blas_thread(preset: str | None, want: str) -> None:
    """``neardup.cli`` sets OPENBLAS_NUM_THREADS=1 before numpy loads (OpenBLAS's thread
    pool cost ~40 ms of each run's start, issue 24), keeping a value the user set."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    code = (
        "import os, sys, neardup; before = 'numpy' in sys.modules; import neardup.cli; "
        "print(before, 'numpy' in sys.modules, os.environ['OPENBLAS_NUM_THREADS'])"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["False", "True", want], out.stderr


def test_look_ahead_decides_off_the_reading_thread_and_stops_at_an_error() -> None:
    """Issue 39: the decide step runs on a thread of its own (the reading thread was the
    critical path), in input order; after chunk 1 fails in prepare no later chunk is fed."""
    import threading
    from typing import Any

    from neardup.cli._dedup_feed import feed_ahead
    from neardup.dedup import Deduplicator
    from neardup.io import Document, Record

    threads: set[int] = set()

    dd = Deduplicator()
    decide = dd.state.decide

    def recording(chunk: Any, ids: Any = None, commit: bool = True) -> Any:
        threads.add(threading.get_ident())
        return decide(chunk, ids=ids, commit=commit)

    dd.state.decide = recording  # type: ignore[method-assign]

    def doc(text: Any, i: int) -> tuple[Document, Record]:
        return Document(i, i, text, None), {}

    good = [doc(f"storm number {i} hits the coast", i) for i in range(3)]
    bad = [doc(1, 3)]  # not a str: prepare raises
    later = [doc(f"later text {i} of the run", 4 + i) for i in range(2)]
    with pytest.raises(TypeError, match=r"texts\[0\] is int"):
        feed_ahead(dd, iter([(good, None), (bad, None), (later, None)]), False, lambda n: None)
    assert dd.n_documents == len(good)  # chunk 2 was never fed
    assert threads and threading.get_ident() not in threads
