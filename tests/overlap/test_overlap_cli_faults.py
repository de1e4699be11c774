"""``neardup overlap`` under faults (issue 40), as real processes: a disk that fills while the
reference is saved (RLIMIT_FSIZE stands in for it) leaves ``--out`` as it was, and a saved
reference whose ``CURRENT`` is missing or names a gone version is refused as ``--state`` is,
not read as a folder of input parts."""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _overlap(*args: Any, **kw: Any) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "neardup", "overlap", *map(str, args)]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=120, **kw)


def _limit(size: int) -> Any:
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def _corpus(path: Path) -> Path:
    """200 texts, each half a copy of one of 100 others: ~10 kB of rows, a ~300 kB reference."""
    rng = random.Random(1)
    # letters only: words holding digits are figures, and rows of figures are templates
    words = [
        "".join("abcdefghijklmnopqrstuvwxyz"[i // 26**k % 26] for k in range(3))
        for i in range(3000)
    ]
    base = [" ".join(rng.choices(words, k=300)) for _ in range(100)]
    rows = [
        {"id": i, "text": base[i % 100] + " " + " ".join(rng.choices(words, k=50))}
        for i in range(200)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def _snapshot(root: Path) -> dict[str, bytes]:
    """The files of ``root`` but its writer lock (made by the first writer, kept)."""
    files = root.rglob("*") if root.exists() else ()
    return {
        str(p.relative_to(root)): p.read_bytes() for p in files if p.is_file() and p.name != ".lock"
    }


@pytest.mark.parametrize("saved_before", [False, True])
def test_a_reference_that_does_not_fit_leaves_out_as_it_was(
    tmp_path: Path, saved_before: bool
) -> None:
    """Room for ``--out`` (10 kB) but not for the reference's arrays (files over 150 kB fail):
    exit 1 naming the reference and the cause, ``--out`` and a reference saved before as they
    were (it was 2 with a bare "27700 requested and 18734 written", ``--out`` replaced)."""
    data, out, ref = _corpus(tmp_path / "in.jsonl"), tmp_path / "o.jsonl", tmp_path / "ref"
    if saved_before:
        assert (
            _overlap(data, "--out", tmp_path / "x.jsonl", "--save-reference", ref).returncode == 0
        )
    before = _snapshot(ref)
    out.write_bytes(b"previous output\n")
    r = _overlap(data, "--out", out, "--save-reference", ref, preexec_fn=_limit(150_000))
    assert r.returncode == 1, r.stderr
    [line] = r.stderr.strip().splitlines()
    assert line.startswith(f"neardup: error: cannot save the reference {ref}: ") and "write" in line
    assert f"{out} was left as it was" in line
    assert out.read_bytes() == b"previous output\n"
    assert _snapshot(ref) == before
    r = _overlap(data, "--out", out, "--save-reference", ref)  # with room: it goes through
    assert r.returncode == 0 and "100 with copied passages" in r.stderr, r.stderr
    assert out.read_bytes().count(b"\n") == 100


def test_an_out_that_does_not_fit_exits_1_naming_it(tmp_path: Path) -> None:
    data, out = _corpus(tmp_path / "in.jsonl"), tmp_path / "o.jsonl"
    out.write_bytes(b"previous output\n")
    r = _overlap(data, "--out", out, preexec_fn=_limit(5_000))
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == (
        f"neardup: error: cannot write {out}: File too large; {out} was left as it was"
    )
    assert out.read_bytes() == b"previous output\n"


@pytest.mark.parametrize("damage", ["missing", "gone"])
def test_a_damaged_reference_is_refused_with_the_fix(tmp_path: Path, damage: str) -> None:
    """``CURRENT`` missing, or naming a version that is gone: the file named and the ``echo``
    that mends it (as ``--state``), exit 1, nothing changed; it was read as a folder of input
    parts ("pass --format jsonl", which would read the .npy files as JSON)."""
    data, out, ref = _corpus(tmp_path / "in.jsonl"), tmp_path / "o.jsonl", tmp_path / "ref"
    assert _overlap(data, "--out", out, "--save-reference", ref).returncode == 0
    if damage == "missing":
        (ref / "CURRENT").unlink()
    else:
        (ref / "CURRENT").write_text("v-9\n")
    before = _snapshot(ref)
    out.write_bytes(b"previous output\n")
    r = _overlap(data, "--against", ref, "--out", out)
    assert r.returncode == 1, r.stderr
    [line] = r.stderr.strip().splitlines()
    assert f"--against {ref}: {ref / 'CURRENT'}" in line and "--format" not in line
    assert f"echo v-1 > {ref / 'CURRENT'}" in line
    assert out.read_bytes() == b"previous output\n" and _snapshot(ref) == before
    (ref / "CURRENT").write_text("v-1\n")  # the fix the message gives
    r = _overlap(data, "--against", ref, "--out", out)
    assert r.returncode == 0 and "against 200 reference documents" in r.stderr, r.stderr


def test_a_text_over_its_seed_budget_is_one_line_naming_the_option(tmp_path: Path) -> None:
    """Two words repeated at random, copied: each gram's many postings are met once per
    occurrence. Past --max-seeds-per-gram the run goes on, the text compared without those
    grams (a sentence it copies is still found), counted and named in the summary; with
    --budget refuse it stops with one line naming the text, the numbers and the option,
    --out as it was; the default budget finds the copy whole."""
    rng = random.Random(3)
    text = " ".join(rng.choices(["ab", "cde"], k=5_000))
    sentence = " ".join(f"w{k}" for k in range(40))
    src = tmp_path / "in.jsonl"
    rows = [{"id": "a", "text": text}, {"id": "s", "text": sentence}]
    rows.append({"id": "b", "text": "Intro. " + text + " " + sentence})
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    done = _overlap(src, "--out", out, "--max-seeds-per-gram", "1")
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(x) for x in out.read_text().splitlines()]
    assert (row["id"], row["source_id"]) == ("b", "s")
    [note] = [x for x in done.stderr.splitlines() if "seed budget" in x]
    assert note.startswith("overlap: 1 texts over their seed budget compared without their ")
    assert "more than 1 postings (e.g. 'b';" in note
    out.write_text("old\n")
    done = _overlap(src, "--out", out, "--max-seeds-per-gram", "1", "--budget", "refuse")
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("neardup: error: text 'b': its ") and "Traceback" not in line
    assert "more than max_seeds_per_gram=1 a gram allows (65536;" in line
    assert line.endswith("(--max-seeds-per-gram N)")
    assert out.read_text() == "old\n"
    done = _overlap(src, "--out", out)
    assert done.returncode == 0, done.stderr
    row, copied = [json.loads(x) for x in out.read_text().splitlines()]
    assert (row["id"], row["source_id"], copied["source_id"]) == ("b", "a", "s")
    assert row["span"] == [7, 7 + len(text)] and row["source_span"] == [0, len(text)]
    assert "seed budget" not in done.stderr
