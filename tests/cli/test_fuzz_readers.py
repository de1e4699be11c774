"""Fuzz the CLI readers (issue 12): random bytes, encodings, JSON and CSV shapes.

For every input ``neardup dedup`` and ``neardup fingerprint`` must end with a documented exit
code (0 done, 1 bad data, 2 usage error), never a traceback, and on failure leave the existing
``--out`` exactly as it was (and no temporary file beside it). In-process with click's
CliRunner for speed, plus a few real subprocesses.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SENTINEL = b'{"previous": "output"}\n'

_text = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\ud800", "\udfff", "\ufeff", "\x00", "\n", '"', ",", "中", "é"]),
    ),
    max_size=40,
)
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    _text,
)
_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_record = st.fixed_dictionaries(
    {"text": st.one_of(_text, _text, _text, _value)},
    optional={
        "id": _value,
        "t": st.one_of(_value, st.sampled_from(["2026-11-21", "nan", "1e30", 1.7e12, 1.7e9])),
        "extra": _value,
    },
)


def _jsonl(records: list[Any], ascii: bool) -> str:
    # ascii: lone surrogates become valid \ud800 escapes; otherwise they are invalid UTF-8
    return "".join(json.dumps(r, ensure_ascii=ascii) + "\n" for r in records)


def _csv(records: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["id", "text", "t"])
    for r in records:
        writer.writerow([r.get("id"), r.get("text"), r.get("t")])
    return buf.getvalue()


def _encode(text: str, encoding: str) -> bytes:
    if encoding == "utf-8-sig":
        return b"\xef\xbb\xbf" + text.encode("utf-8", "surrogatepass")
    if encoding == "invalid-utf-8":
        raw = text.encode("utf-8", "surrogatepass")
        mid = len(raw) // 2
        return raw[:mid] + b"\xff\xc3(" + raw[mid:]
    return text.encode(encoding, "surrogatepass" if encoding.startswith("utf") else "replace")


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(["jsonl", "csv", "bytes"]))
    if kind == "bytes":
        return draw(st.sampled_from(["jsonl", "csv"])), draw(st.binary(max_size=300))
    records = draw(st.lists(st.one_of(_record, _record, _record, _value), max_size=6))
    dicts = [r for r in records if isinstance(r, dict)]
    text = _jsonl(records, draw(st.booleans())) if kind == "jsonl" else _csv(dicts)
    enc = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1", "invalid-utf-8"]))
    return kind, _encode(text, enc)


_options = st.fixed_dictionaries(
    {
        "command": st.sampled_from(["dedup", "fingerprint"]),
        "on_error": st.sampled_from(["fail", "skip"]),
        "out": st.sampled_from(["out.jsonl", "out.parquet", "out.jsonl.gz"]),
        "time": st.booleans(),
    }
)


def _args(opts: dict[str, Any], src: str, out: str) -> list[str]:
    args = [opts["command"], src, "--out", out, "--on-error", opts["on_error"]]
    if opts["time"] and opts["command"] == "dedup":
        args += ["--time-field", "t", "--window", "1d"]
    return args


def _check(code: int, stderr: str, folder: Path, out: Path) -> None:
    assert code in (0, 1, 2), (code, stderr)
    assert "Traceback" not in stderr, stderr
    if code != 0:
        assert len(stderr.strip().splitlines()) == 1, stderr
        assert out.read_bytes() == SENTINEL  # not replaced on failure
    hidden = [n for n in os.listdir(folder) if n.startswith(".")]
    assert hidden == [], hidden


@settings(
    max_examples=int(os.environ.get("NEARDUP_FUZZ_EXAMPLES", "200")),  # CI: ~5 s
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(_inputs(), _options)
def test_cli_readers_never_crash(case: tuple[str, bytes], opts: dict[str, Any]) -> None:
    fmt, data = case
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        src = folder / f"in.{fmt}"
        src.write_bytes(data)
        out = folder / opts["out"]
        out.write_bytes(SENTINEL)
        res = CliRunner().invoke(cli, _args(opts, str(src), str(out)))
        assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
        _check(res.exit_code, res.stderr, folder, out)


HOSTILE = {
    "bom.jsonl": b'\xef\xbb\xbf{"id": 1, "text": "a b c d e f"}\n',
    "u16.jsonl": '{"id": 1, "text": "a b c"}\n'.encode("utf-16"),
    "quote.csv": b'id,text\n1,"never closed\n2,x\n',
    "surrogate.jsonl": b'{"id": "\\ud800", "text": "lone \\udc00 surrogate"}\n',
    "garbage.jsonl": bytes(range(256)) * 3,
}


def test_real_processes_on_hostile_files(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for name, data in HOSTILE.items():
        src = tmp_path / name
        src.write_bytes(data)
    out = tmp_path / "out.jsonl"
    for name in HOSTILE:
        for on_error in ("fail", "skip") if name == "quote.csv" else ("skip",):
            out.write_bytes(SENTINEL)
            args = ["dedup", name, "--out", "out.jsonl", "--on-error", on_error]
            if name == "surrogate.jsonl":
                args[0] = "fingerprint"
            proc = subprocess.run(
                [sys.executable, "-m", "neardup", *args],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp_path,
                check=False,
                timeout=300,
            )
            _check(proc.returncode, proc.stderr, tmp_path, out)
