from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from neardup.cli import cli

TEXTS = [
    "the quick brown fox jumps over the lazy dog near the river bank today",
    "The quick brown fox jumps over the lazy dog near the river bank today",
    "",
    "a completely different sentence about stock markets and bonds",
]


def _invoke(args: list[str], input: str | None = None):
    return CliRunner().invoke(cli, args, input=input)


def _jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return str(path)


def _rows(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_sample_to_stdout(sample: Path) -> None:
    res = _invoke(["dedup", str(sample), "--out", "-", "--time-field", "date", "--window", "7d"])
    assert res.exit_code == 0, res.stderr
    rows = _rows(res.stdout)
    src = _rows(sample.read_text("utf-8"))
    assert [r["id"] for r in rows] == [r["id"] for r in src]  # input order, all records
    by = {r["id"]: r for r in rows}
    assert by["n04"]["status"] == "exact_duplicate" and by["n04"]["duplicate_of"] == "n03"
    assert by["n09"]["status"] == by["n22"]["status"] == "empty"
    assert by["n09"]["cluster_id"] != by["n22"]["cluster_id"]
    assert by["n24"]["status"] == "unique"  # exact copy of n01, but 10 days later
    assert by["n01"]["source"] == "wire-a"  # original fields kept
    assert by["n01"]["distance"] is None and by["n01"]["duplicate_of"] is None
    # the README's promise, exactly: 30 documents, 5 near duplicates, 2 exact, 2 empty
    assert "documents: 30  unique: 21  duplicates: 5  exact duplicates: 2  empty: 2" in res.stderr
    planted = {"n06": "n05", "n11": "n10", "n13": "n12", "n17": "n16", "n27": "n26"}
    exact = {"n04": "n03", "n19": "n18"}
    not_unique = {
        r["id"]: (r["status"], r["duplicate_of"]) for r in rows if r["status"] != "unique"
    }
    assert not_unique == {
        **{d: ("duplicate", k) for d, k in planted.items()},
        **{d: ("exact_duplicate", k) for d, k in exact.items()},
        "n09": ("empty", None),
        "n22": ("empty", None),
    }


def test_formats_in_and_out(tmp_path: Path) -> None:
    rows = [{"id": f"d{i}", "text": t} for i, t in enumerate(TEXTS)]
    src = _jsonl(tmp_path / "in.jsonl", rows)
    gz = tmp_path / "in.jsonl.gz"
    gz.write_bytes(gzip.compress(Path(src).read_bytes()))
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet")
    (tmp_path / "in.csv").write_text(
        "id,text\n" + "".join(f'{r["id"]},"{r["text"]}"\n' for r in rows), "utf-8"
    )
    folder = tmp_path / "txt"
    folder.mkdir()
    for r in rows:
        (folder / f"{r['id']}.txt").write_text(r["text"], "utf-8")
    want = ["unique", "exact_duplicate", "empty", "unique"]
    for inp in [src, str(gz), str(tmp_path / "in.parquet"), str(tmp_path / "in.csv"), str(folder)]:
        res = _invoke(["dedup", inp, "--out", "-"])
        assert res.exit_code == 0, (inp, res.stderr)
        assert [r["status"] for r in _rows(res.stdout)] == want, inp
    out = tmp_path / "out.parquet"
    assert _invoke(["dedup", src, "--out", str(out)]).exit_code == 0
    table = pq.read_table(out).to_pylist()
    assert [r["duplicate_of"] for r in table] == [None, "d0", None, None]
    outgz = tmp_path / "out.jsonl.gz"
    assert _invoke(["dedup", src, "--out", str(outgz), "--drop-duplicates"]).exit_code == 0
    kept = _rows(gzip.decompress(outgz.read_bytes()).decode())
    assert [r["id"] for r in kept] == ["d0", "d2", "d3"]


def test_stdin_in(tmp_path: Path) -> None:
    data = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(TEXTS))
    res = _invoke(["dedup", "-", "--out", "-"], input=data)
    assert res.exit_code == 0, res.stderr
    assert [r["duplicate_of"] for r in _rows(res.stdout)] == [None, 0, None, None]


def test_keep_longest_points_forward(tmp_path: Path) -> None:
    src = _jsonl(
        tmp_path / "in.jsonl",
        [{"id": "a", "text": "Hello world news"}, {"id": "b", "text": "hello   WORLD news"}],
    )
    res = _invoke(["dedup", src, "--out", "-", "--keep", "longest"])
    assert [r["duplicate_of"] for r in _rows(res.stdout)] == ["b", None]


@pytest.mark.parametrize(
    "args, msg",
    [
        (["dedup", "missing.jsonl", "--out", "-"], "does not exist"),
        (["dedup", "{src}", "--out", "-", "--window", "7d"], "--window needs --time-field"),
        (["dedup", "{src}", "--out", "-", "--format", "xml"], "Invalid value"),
        (["dedup", "{xml}", "--out", "-"], "--format"),
        (["dedup", "{src}", "--out", "x.xml"], "output must end in"),
        (["dedup", "{src}", "--time-field", "t", "--window", "seven", "--out", "-"], "bad window"),
        (["dedup", "-", "--format", "txt", "--out", "-"], "folder of .txt"),
        (["dedup", "{dir}", "--out", "-"], "cannot tell the format of part"),
        (["dedup", "-", "--format", "parquet", "--out", "-"], "stdin"),
        (["dedup", "{src}", "--out", "{dir}/no/such/out.jsonl"], "does not exist"),
    ],
)
def test_usage_errors_one_line_exit_2(tmp_path: Path, args: list[str], msg: str) -> None:
    src = _jsonl(tmp_path / "in.jsonl", [{"text": "a"}])
    xml = tmp_path / "in.xml"
    xml.write_text("<a/>")
    res = _invoke([a.format(src=src, xml=xml, dir=tmp_path) for a in args])
    assert res.exit_code == 2, res.stderr
    assert msg in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.stderr


def test_data_error_exit_1_and_no_output(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": 7}\n', "utf-8")
    out = tmp_path / "out.jsonl"
    res = _invoke(["dedup", str(bad), "--out", str(out)])
    assert res.exit_code == 1
    assert f"{bad}:2" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not out.exists() and os.listdir(tmp_path) == ["bad.jsonl"]
    res = _invoke(["dedup", str(bad), "--out", str(out), "--on-error", "skip"])
    assert res.exit_code == 0 and "skipped: 1" in res.stderr
    assert len(_rows(out.read_text())) == 1


def test_report(tmp_path: Path, sample: Path) -> None:
    rep = tmp_path / "rep"
    res = _invoke(["dedup", str(sample), "--out", str(tmp_path / "o.jsonl"), "--report", str(rep)])
    assert res.exit_code == 0, res.stderr
    # the default verifier decides: its similarity is plotted, not the Hamming distance
    assert sorted(os.listdir(rep)) == ["cluster_sizes.png", "report.md", "similarity_histogram.png"]
    text = (rep / "report.md").read_text()
    assert "similarity_histogram.png" in text
    assert "## Largest clusters" in text and "n03" in text
    assert (rep / "cluster_sizes.png").read_bytes()[:4] == b"\x89PNG"


def test_report_plain_simhash_plots_distance(tmp_path: Path, sample: Path) -> None:
    rep = tmp_path / "rep"
    args = ["dedup", str(sample), "--out", str(tmp_path / "o.jsonl"), "--report", str(rep)]
    res = _invoke([*args, "--no-verify"])
    assert res.exit_code == 0, res.stderr
    assert "distance_histogram.png" in os.listdir(rep)


def test_report_plot_marks_threshold_with_whole_counts() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np

    from neardup.cli.report import deciding_figure
    from neardup.dedup.decisions import Decisions

    n = 5
    d = Decisions(
        position=np.arange(n),
        fingerprint=np.zeros(n, np.uint64),
        status=np.array([0, 1, 1, 2, 0], np.int8),
        duplicate_of=np.array([-1, 0, 0, 0, -1]),
        distance=np.array([-1, 5, 9, 0, -1], np.int16),
        cluster_id=np.array([0, 0, 0, 0, 1]),
        similarity=np.array([np.nan, 0.71, 0.93, 1.0, np.nan]),
        threshold=np.array([np.nan, 0.6, 0.6, np.nan, np.nan]),
    )
    fig, name = deciding_figure(d, threshold=0.6, radius=12)
    ax = fig.axes[0]
    assert name == "similarity_histogram.png"
    assert any(list(line.get_xdata()) == [0.6, 0.6] for line in ax.get_lines())
    assert sum(p.get_height() for p in ax.patches) == 2  # exact duplicate left out
    ticks = ax.get_yticks()
    assert np.all(ticks == np.round(ticks)), ticks
    fig, name = deciding_figure(d, threshold=None, radius=12)
    assert name == "distance_histogram.png"
    assert np.all(fig.axes[0].get_yticks() == np.round(fig.axes[0].get_yticks()))


def test_help_has_examples() -> None:
    for args in (["--help"], ["dedup", "--help"]):
        res = _invoke(args)
        assert res.exit_code == 0 and "Examples:" in res.stdout


def test_real_subprocess(sample: Path, tmp_path: Path, root: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    proc = subprocess.run(
        [sys.executable, "-m", "neardup", "dedup", str(sample), "--out", "-", "--drop-duplicates"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    ids = [r["id"] for r in _rows(proc.stdout)]
    assert "n03" in ids and "n04" not in ids
    proc = subprocess.run(
        [sys.executable, "-m", "neardup", "dedup", "nope.jsonl", "--out", "-"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("budget", [256 << 20, 100])  # lines kept from pass 1, or re-read
def test_fast_and_generic_writers_agree(
    tmp_path: Path, sample: Path, budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("neardup.cli.dedup.SPOOL_BUDGET", budget)
    lines = sample.read_text("utf-8").splitlines()
    # a record that already has a decision field forces the parse path for that line
    lines[3] = lines[3][:-1] + ', "status": "old"}'
    lines[5] = lines[5][:-1] + ', "st\\u0061tus": "old"}'  # the same key, escaped
    lines[6] = lines[6][:-1] + ', "kind": "status"}'  # our name as a value: no conflict
    src = tmp_path / "in.jsonl.gz"
    src.write_bytes(gzip.compress(("\n".join(lines) + "\n\n").encode()))
    for keep in ("first", "longest"):
        fast = _invoke(["dedup", str(src), "--out", "-", "--keep", keep])
        slow = _invoke(["dedup", str(src), "--out", "-", "--keep", keep, "--on-error", "skip"])
        assert fast.exit_code == slow.exit_code == 0
        assert _rows(fast.stdout) == _rows(slow.stdout)
        rows = _rows(fast.stdout)
        assert rows[3]["status"] != "old" and rows[5]["status"] != "old"
        for line in fast.stdout.splitlines():  # never a second copy of a key
            pairs = json.loads(line, object_pairs_hook=lambda kv: kv)
            assert len({k for k, _ in pairs}) == len(pairs)
        assert rows[6]["kind"] == "status"


def test_keep_newest_with_window_on_sample(sample: Path) -> None:
    res = _invoke(
        [
            "dedup",
            str(sample),
            "--out",
            "-",
            "--time-field",
            "date",
            "--window",
            "7d",
            "--keep",
            "newest",
        ]
    )
    assert res.exit_code == 0, res.stderr
    by = {r["id"]: r for r in _rows(res.stdout)}
    assert by["n03"]["duplicate_of"] == "n04"  # same text, n04 is five minutes newer
    assert by["n04"]["status"] == "unique"
    assert by["n30"]["status"] == "unique"  # same text 13 days later: outside the window
