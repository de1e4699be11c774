"""URLs wherever a path is taken, against a real S3-compatible server over HTTP on loopback
(moto's standalone server): every output equals the local CLI's on the same rows, byte for byte;
``--state`` on S3 survives a ``kill -9`` in the middle of its commit."""

from __future__ import annotations

import gzip
import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup._atomic import SLEEP_BEFORE_COMMIT, SLEEP_PER_FILE
from neardup.cli import cli
from neardup.dedup import Deduplicator
from neardup.io.writers import _host

s3fs = pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """A moto S3 server on loopback; the standard AWS variables point every client at it."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    env = {
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": url,
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    s3fs.S3FileSystem.clear_instance_cache()
    try:
        yield url
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        s3fs.S3FileSystem.clear_instance_cache()
        server.stop()


@pytest.fixture
def s3(endpoint: str, request: pytest.FixtureRequest) -> tuple[Any, str]:
    """The file system and a fresh bucket ``s3://NAME`` for one test."""
    fs = s3fs.S3FileSystem()
    name = "t-" + "".join(c if c.isalnum() else "-" for c in request.node.name.lower())[:50]
    fs.mkdir(name.rstrip("-"))
    return fs, f"s3://{name.rstrip('-')}"


def _invoke(args: list[str]) -> Any:
    return CliRunner().invoke(cli, args)


def _ok(args: list[str]) -> Any:
    r = _invoke(args)
    assert r.exit_code == 0, r.output
    return r


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SAMPLE.read_text("utf-8").splitlines()]


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def _no_timing(summary: bytes) -> dict[str, Any]:
    """The summary less its timings and ``outputs`` (where each output went: paths differ)."""
    record = json.loads(summary)
    return {k: v for k, v in record.items() if k not in ("seconds", "docs_per_second", "outputs")}


def test_dedup_in_and_out_on_s3_equals_local(s3: tuple[Any, str], tmp_path: Path) -> None:
    fs, bucket = s3
    data = gzip.compress(SAMPLE.read_bytes())
    fs.pipe_file(f"{bucket}/in/news.jsonl.gz", data)
    (tmp_path / "news.jsonl.gz").write_bytes(data)
    outs = ("--out", "out.jsonl", "--summary", "sum.json", "--clusters", "cl.csv")
    local = [a if a.startswith("-") else str(tmp_path / a) for a in outs]
    remote = [a if a.startswith("-") else f"{bucket}/o/{a}" for a in outs]
    _ok(["dedup", str(tmp_path / "news.jsonl.gz"), *local])
    _ok(["dedup", f"{bucket}/in/news.jsonl.gz", *remote])
    assert fs.cat_file(f"{bucket}/o/out.jsonl") == (tmp_path / "out.jsonl").read_bytes()
    assert fs.cat_file(f"{bucket}/o/cl.csv") == (tmp_path / "cl.csv").read_bytes()
    assert json.loads(fs.cat_file(f"{bucket}/o/sum.json"))["outputs"]["--out"] == (
        f"{bucket}/o/out.jsonl"  # (bucket is a URL: s3://...)
    )
    summary = _no_timing(fs.cat_file(f"{bucket}/o/sum.json"))
    assert summary == _no_timing((tmp_path / "sum.json").read_bytes())
    assert summary["duplicate"] + summary["exact_duplicate"] > 0


def test_report_on_s3(s3: tuple[Any, str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    fs, bucket = s3
    _ok(["dedup", str(SAMPLE), "--out", str(tmp_path / "o.jsonl"), "--report", str(tmp_path / "r")])
    _ok(["dedup", str(SAMPLE), "--out", f"{bucket}/o.jsonl", "--report", f"{bucket}/r"])
    names = sorted(p.name for p in (tmp_path / "r").iterdir())
    assert "report.md" in names and any(n.endswith(".png") for n in names)
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.ls(f"{bucket}/r")) == names


def test_folder_of_parts_and_glob_on_s3_equal_local(s3: tuple[Any, str], tmp_path: Path) -> None:
    fs, bucket = s3
    rows = _rows()
    parts = {"day=2/part-0.jsonl": rows[:10], "day=10/part-0.jsonl": rows[10:],
             "_SUCCESS": []}  # fmt: skip
    for name, chunk in parts.items():
        fs.pipe_file(f"{bucket}/parts/{name}", _jsonl(chunk))
        (tmp_path / "parts" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "parts" / name).write_bytes(_jsonl(chunk))
    _ok(["dedup", str(tmp_path / "parts"), "--out", str(tmp_path / "out.parquet")])
    _ok(["dedup", f"{bucket}/parts/", "--out", f"{bucket}/out.parquet"])
    assert fs.cat_file(f"{bucket}/out.parquet") == (tmp_path / "out.parquet").read_bytes()
    # a pattern: the objects it matches, in order (no partition columns: no folder was given)
    local = [str(tmp_path / "parts" / n) for n in ("day=2/part-0.jsonl", "day=10/part-0.jsonl")]
    _ok(["dedup", *local, "--out", str(tmp_path / "glob.csv")])
    _ok(["dedup", f"{bucket}/parts/day=*/part-*.jsonl", "--out", f"{bucket}/glob.csv"])
    got = fs.cat_file(f"{bucket}/glob.csv")
    assert got == (tmp_path / "glob.csv").read_bytes()
    assert b"day" not in got.splitlines()[0]


def test_parquet_input_on_s3(s3: tuple[Any, str], tmp_path: Path) -> None:
    fs, bucket = s3
    _ok(["dedup", str(SAMPLE), "--out", str(tmp_path / "in.parquet")])
    fs.put_file(str(tmp_path / "in.parquet"), f"{bucket}/in.parquet")
    _ok(["dedup", str(tmp_path / "in.parquet"), "--out", str(tmp_path / "out.jsonl")])
    _ok(["dedup", f"{bucket}/in.parquet", "--out", f"{bucket}/out.jsonl"])
    assert fs.cat_file(f"{bucket}/out.jsonl") == (tmp_path / "out.jsonl").read_bytes()


def test_state_on_s3_two_runs_equal_one_run(s3: tuple[Any, str], tmp_path: Path) -> None:
    fs, bucket = s3
    rows = _rows()
    for day, chunk in enumerate((rows[:15], rows[15:])):
        (tmp_path / f"d{day}.jsonl").write_bytes(_jsonl(chunk))
        fs.pipe_file(f"{bucket}/d{day}.jsonl", _jsonl(chunk))
    for day in range(2):
        local = ["--out", str(tmp_path / f"o{day}.jsonl"), "--state", str(tmp_path / "st")]
        _ok(["dedup", str(tmp_path / f"d{day}.jsonl"), *local])
        r = _ok(["dedup", f"{bucket}/d{day}.jsonl", "--out", f"{bucket}/o{day}.jsonl",
                 "--state", f"{bucket}/st"])  # fmt: skip
        assert f"{15 * day:,} documents before this run" in r.output
        assert fs.cat_file(f"{bucket}/o{day}.jsonl") == (tmp_path / f"o{day}.jsonl").read_bytes()
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.ls(f"{bucket}/st")) == ["CURRENT", "v-2"]
    whole = tmp_path / "all.jsonl"
    whole.write_bytes(_jsonl(rows))
    _ok(["dedup", str(whole), "--out", str(tmp_path / "one.jsonl")])
    one = (tmp_path / "one.jsonl").read_bytes()
    assert fs.cat_file(f"{bucket}/o0.jsonl") + fs.cat_file(f"{bucket}/o1.jsonl") == one
    # the library reads the same state from the store
    assert Deduplicator.load(f"{bucket}/st").n_documents == len(rows)


def _uploaded(fs: Any, prefix: str) -> list[str]:
    fs.invalidate_cache()
    try:
        return [p.rsplit("/", 1)[-1] for p in fs.find(prefix)]
    except FileNotFoundError:
        return []


@pytest.mark.parametrize("kill_at", ["after 1 file", "before commit"])
def test_kill_9_during_state_commit_on_s3(
    s3: tuple[Any, str], tmp_path: Path, kill_at: str
) -> None:
    fs, bucket = s3
    rows = _rows()
    st = f"{bucket}/st"
    for day, chunk in enumerate((rows[:15], rows[15:])):
        fs.pipe_file(f"{bucket}/d{day}.jsonl", _jsonl(chunk))
    _ok(["dedup", f"{bucket}/d0.jsonl", "--out", f"{bucket}/o0.jsonl", "--state", st])
    before = Deduplicator.load(st).state.columns()
    tmp = tmp_path / "tmp"  # the runs' local temporary files
    tmp.mkdir()
    plain = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(tmp)}
    env = {**plain, SLEEP_PER_FILE: "0.3", SLEEP_BEFORE_COMMIT: "30"}
    args = ["dedup", f"{bucket}/d1.jsonl", "--out", f"{bucket}/o1.jsonl", "--state", st]
    proc = subprocess.Popen([sys.executable, "-m", "neardup", *args], env=env,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    ready = {  # objects of the new version on the server: the upload is under way / done
        "after 1 file": lambda: len(_uploaded(fs, f"{st}/v-2")) >= 1,
        "before commit": lambda: "manifest.json" in _uploaded(fs, f"{st}/v-2"),
    }[kill_at]
    deadline = time.monotonic() + 120
    while not ready():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    fs.invalidate_cache()
    assert fs.cat_file(f"{st}/CURRENT") == b"v-1\n"
    assert json.loads(fs.cat_file(f"{st}/.lock"))["pid"] == proc.pid  # the dead writer's lock
    after = Deduplicator.load(st)
    assert after.n_documents == 15
    for name, col in after.state.columns().items():
        assert (col == before[name]).all() or name in ("timestamp", "similarity", "threshold")
    assert any(p.name.startswith("neardup-version.") for p in tmp.iterdir())
    # the rerun removes the dead writer's v-2 (and its local folder) and commits v-3
    subprocess.run([sys.executable, "-m", "neardup", *args], env=plain, check=True,
                   stderr=subprocess.DEVNULL)  # fmt: skip
    assert list(tmp.iterdir()) == []
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.ls(st)) == ["CURRENT", "v-3"]
    assert Deduplicator.load(st).n_documents == len(rows)
    (tmp_path / "all.jsonl").write_bytes(_jsonl(rows))
    _ok(["dedup", str(tmp_path / "all.jsonl"), "--out", str(tmp_path / "one.jsonl")])
    got = fs.cat_file(f"{bucket}/o0.jsonl") + fs.cat_file(f"{bucket}/o1.jsonl")
    assert got == (tmp_path / "one.jsonl").read_bytes()


def test_second_writer_on_s3_state_is_refused(s3: tuple[Any, str]) -> None:
    """The lock object refuses a second writer; without it (a store that ignores conditional
    puts: simulated by deleting it) the commit-time check still refuses the slower one."""
    fs, bucket = s3
    rows = _rows()
    st = f"{bucket}/st"
    fs.pipe_file(f"{bucket}/d0.jsonl", _jsonl(rows[:15]))
    fs.pipe_file(f"{bucket}/d1.jsonl", _jsonl(rows[15:]))
    _ok(["dedup", f"{bucket}/d0.jsonl", "--out", f"{bucket}/o0.jsonl", "--state", st])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), SLEEP_BEFORE_COMMIT: "3"}
    args = ["dedup", f"{bucket}/d1.jsonl", "--out", f"{bucket}/slow.jsonl", "--state", st]
    slow = subprocess.Popen([sys.executable, "-m", "neardup", *args], env=env,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while "manifest.json" not in _uploaded(fs, f"{st}/v-2"):  # uploaded, waiting to commit
        assert slow.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    fast = ["dedup", f"{bucket}/d1.jsonl", "--out", f"{bucket}/fast.jsonl", "--state", st]
    r = _invoke(fast)
    assert r.exit_code == 1
    assert f"is being written by another process (host {_host()}" in r.output
    assert f"pid {slow.pid};" in r.output
    fs.rm(f"{st}/.lock")  # as a store that ignores the condition would let it through
    _ok(fast)  # takes v-2 for a dead writer's leftover and commits v-3
    _, err = slow.communicate(timeout=120)
    assert slow.returncode == 1, err
    assert "was committed by another writer during this run" in err
    fs.invalidate_cache()
    assert fs.cat_file(f"{st}/CURRENT") == b"v-3\n"
    assert Deduplicator.load(st).n_documents == len(rows)  # the other writer's state, whole


def test_overlap_saved_reference_on_s3_equals_local(s3: tuple[Any, str], tmp_path: Path) -> None:
    fs, bucket = s3
    rows = _rows()
    (tmp_path / "ref.jsonl").write_bytes(_jsonl(rows[:15]))
    (tmp_path / "q.jsonl").write_bytes(_jsonl(rows[15:]))
    fs.pipe_file(f"{bucket}/ref.jsonl", _jsonl(rows[:15]))
    fs.pipe_file(f"{bucket}/q.jsonl", _jsonl(rows[15:]))
    _ok(["overlap", str(tmp_path / "ref.jsonl"), "--out", str(tmp_path / "r.jsonl"),
         "--save-reference", str(tmp_path / "ref")])  # fmt: skip
    _ok(["overlap", f"{bucket}/ref.jsonl", "--out", f"{bucket}/r.jsonl",
         "--save-reference", f"{bucket}/ref/"])  # fmt: skip
    _ok(["overlap", str(tmp_path / "q.jsonl"), "--out", str(tmp_path / "q.out.jsonl"),
         "--against", str(tmp_path / "ref")])  # fmt: skip
    _ok(["overlap", f"{bucket}/q.jsonl", "--out", f"{bucket}/q.out.jsonl",
         "--against", f"{bucket}/ref/"])  # fmt: skip
    got = fs.cat_file(f"{bucket}/q.out.jsonl")
    assert got == (tmp_path / "q.out.jsonl").read_bytes() and got.strip()
    # reference files (not a saved reference) on the store: the same passages
    _ok(["overlap", f"{bucket}/q.jsonl", "--out", f"{bucket}/q2.jsonl",
         "--against", f"{bucket}/ref.jsonl"])  # fmt: skip
    assert fs.cat_file(f"{bucket}/q2.jsonl") == got
    assert fs.cat_file(f"{bucket}/r.jsonl") == (tmp_path / "r.jsonl").read_bytes()
    # eval's files too: the detections scored against themselves, from the store and locally
    local = _ok(["eval", "--json", "--overlap", *[str(tmp_path / "q.out.jsonl")] * 2])
    remote = _ok(["eval", "--json", "--overlap", *[f"{bucket}/q.out.jsonl"] * 2])
    assert json.loads(remote.output) == json.loads(local.output)
    assert json.loads(remote.output)["plagdet"] == 1.0
    r = _invoke(["eval", "--overlap", f"{bucket}/nope.jsonl", f"{bucket}/q.out.jsonl"])
    assert r.exit_code == 2 and f"'{bucket}/nope.jsonl' does not exist" in r.output


def test_failed_run_leaves_previous_object_whole(s3: tuple[Any, str]) -> None:
    fs, bucket = s3
    fs.pipe_file(f"{bucket}/good.jsonl", SAMPLE.read_bytes())
    fs.pipe_file(f"{bucket}/bad.jsonl", SAMPLE.read_bytes() + b"{not json\n")
    _ok(["dedup", f"{bucket}/good.jsonl", "--out", f"{bucket}/o/out.jsonl"])
    previous = fs.cat_file(f"{bucket}/o/out.jsonl")
    r = _invoke(["dedup", f"{bucket}/bad.jsonl", "--out", f"{bucket}/o/out.jsonl"])
    assert r.exit_code == 1 and "bad.jsonl:31: malformed JSON" in r.output
    fs.invalidate_cache()
    assert fs.cat_file(f"{bucket}/o/out.jsonl") == previous
    assert fs.ls(f"{bucket}/o", detail=False) == [f"{bucket[5:]}/o/out.jsonl"]


def test_missing_input_read_only_output_and_missing_extra(s3: tuple[Any, str]) -> None:
    _, bucket = s3
    r = _invoke(["dedup", f"{bucket}/nope.jsonl", "--out", "-"])
    assert r.exit_code == 2 and f"input '{bucket}/nope.jsonl' does not exist" in r.output
    r = _invoke(["dedup", str(SAMPLE), "--out", "https://example.org/out.jsonl"])
    assert r.exit_code == 2 and "https:// URLs are read only" in r.output
    r = _invoke(["dedup", f"{bucket}/x/*.jsonl", "--out", "-"])
    assert r.exit_code == 2 and "matches no file" in r.output
    r = _invoke(["dedup", str(SAMPLE), "--out", f"{bucket}/o.jsonl", "--engine", "spark"])
    assert r.exit_code == 2 and "--engine spark does not read or write URLs" in r.output
    if importlib.util.find_spec("gcsfs") is not None:
        return  # the message for a missing store library needs one that is missing
    r = _invoke(["dedup", "gs://bucket/x.jsonl", "--out", "-"])
    assert r.exit_code == 2, r.output
    assert "gs://bucket/x.jsonl needs gcsfs: pip install 'neardup[gcs]'" in r.output
    r = _invoke(["dedup", str(SAMPLE), "--out", "gs://bucket/x.jsonl"])
    assert r.exit_code == 2 and "needs gcsfs: pip install 'neardup[gcs]'" in r.output
