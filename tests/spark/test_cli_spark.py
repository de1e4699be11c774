"""``neardup dedup --engine spark`` writes what the local engine writes; bad rows read alike."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from neardup.cli import cli


def run(args: list[str]) -> Any:
    return CliRunner().invoke(cli, ["dedup", *args])


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cli_engines_agree_on_corpus_slice(
    spark: Any, tmp_path: Path, reuters_records: list[dict[str, Any]]
) -> None:
    recs = [r for r in reuters_records if r.get("date")][:200]
    recs += [{**r, "id": f"copy-{r['id']}"} for r in recs[:30]]  # exact copies
    recs += [{**r, "id": f"edit-{r['id']}", "text": r["text"][:-40]} for r in recs[30:60]]
    src = tmp_path / "in.jsonl.gz"
    with gzip.open(src, "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in recs)
    opts = ["--time-field", "date", "--window", "3000d", "--keep", "first"]
    local, remote = tmp_path / "local.jsonl", tmp_path / "spark.jsonl"
    a = run([str(src), "--out", str(local), *opts])
    b = run([str(src), "--out", str(remote), *opts, "--engine", "spark"])
    assert a.exit_code == 0, a.output
    assert b.exit_code == 0, b.output
    got, want = records(remote), records(local)
    assert got == want
    assert sum(r["status"] == "duplicate" for r in got) >= 20
    assert remote.read_bytes() == local.read_bytes()


def test_cli_bad_rows_same_errors(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text('{"id": 1, "text": "a b c d"}\n\n{"id": 2, "text": 5}\n{"id": 3,\n')
    out = tmp_path / "o.jsonl"
    for extra, code in (([], 1), (["--on-error", "skip"], 0)):
        a = run([str(src), "--out", str(out), *extra])
        b = run([str(src), "--out", str(out), *extra, "--engine", "spark"])
        assert (a.exit_code, b.exit_code) == (code, code)
        assert a.output.splitlines()[0] == b.output.splitlines()[0]
        if code:  # fail: the first bad row, named with file and line, and nothing written
            assert "bad.jsonl:3: field 'text' must be a string" in b.output
            assert not out.exists()


def test_cli_parquet_input_and_output(spark: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = Path(__file__).resolve().parents[2].joinpath("examples", "sample_news.jsonl")
    recs = [json.loads(line) for line in lines.read_text().splitlines()]
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(recs[:13]), folder / "part-0.parquet")
    pq.write_table(pa.Table.from_pylist(recs[13:] + recs[:3]), folder / "part-1.parquet")
    local, remote = tmp_path / "local.jsonl", tmp_path / "spark.jsonl"
    assert run([str(folder), "--out", str(local)]).exit_code == 0
    b = run([str(folder), "--out", str(remote), "--engine", "spark"])
    assert b.exit_code == 0, b.output
    assert records(remote) == records(local)
    out_dir = tmp_path / "marked.parquet"
    c = run([str(folder), "--out", str(out_dir), "--engine", "spark"])
    assert c.exit_code == 0, c.output
    table = pq.read_table(out_dir).to_pylist()
    fields = ("id", "status", "duplicate_of", "distance", "cluster_id")
    got = sorted(tuple(str(r[f]) for f in fields) for r in table)
    assert got == sorted(tuple(str(r[f]) for f in fields) for r in records(local))


def test_spark_conf_malformed_is_a_usage_error(tmp_path: Path) -> None:
    src = tmp_path / "a.jsonl"
    src.write_text('{"id": 1, "text": "a b c d"}\n')
    r = run([str(src), "--out", "-", "--engine", "spark", "--spark-conf", "executor.memory"])
    assert r.exit_code == 2 and "--spark-conf 'executor.memory': expected KEY=VALUE" in r.output


def test_spark_package_never_imports_the_cli() -> None:
    """No import cycle cli/dedup.py -> spark/cli.py -> cli/...: no module of neardup.spark
    imports neardup.cli, at the top or lazily (the spark-submit entry is
    neardup.cli.spark_submit)."""
    import ast

    root = Path(__file__).resolve().parents[2] / "src" / "neardup" / "spark"
    bad = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            bad += [f"{path.name}: {n}" for n in names if n.startswith("neardup.cli")]
    assert bad == []


def test_cli_spark_summary_and_clusters_equal_local(spark: Any, tmp_path: Path) -> None:
    from tests.synthetic import synthetic_corpus

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in synthetic_corpus(300, seed=5)))
    files = {}
    for engine in ("local", "spark"):
        summary, clusters = tmp_path / f"{engine}.summary.json", tmp_path / f"{engine}.c.jsonl"
        res = run(
            [str(src), "--out", str(tmp_path / f"{engine}.jsonl"), "--engine", engine,
             "--summary", str(summary), "--clusters", str(clusters)]
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        files[engine] = (json.loads(summary.read_text()), records(clusters))
    (ls, lc), (ss, sc) = files["local"], files["spark"]
    timing = ("seconds", "docs_per_second", "outputs")  # outputs: where each went
    assert {k: v for k, v in ss.items() if k not in timing} == {
        k: v for k, v in ls.items() if k not in timing
    }
    assert ls["clusters_with_duplicates"] > 5 and len(lc) == ls["clusters_with_duplicates"]
    assert sc == lc


def test_cli_spark_refuses_far_future_like_local(spark: Any, tmp_path: Path) -> None:
    from tests.synthetic import synthetic_corpus

    rows = synthetic_corpus(120, seed=11)
    rows.insert(40, {**rows[39], "id": "typo", "ts": "9999-12-31"})
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    opts = ["--time-field", "ts", "--window", "2d"]
    outs = {}
    for engine in ("local", "spark"):
        out = tmp_path / f"{engine}.jsonl"
        bad = run([str(src), "--out", str(out), *opts, "--engine", engine])
        assert bad.exit_code == 1 and "in.jsonl:41" in bad.output and "--max-future" in bad.output
        ok = run([str(src), "--out", str(out), *opts, "--engine", engine, "--on-error", "skip"])
        assert ok.exit_code == 0, ok.output
        outs[engine] = out.read_bytes()
    assert outs["spark"] == outs["local"]


def test_cli_pairs_file_equal_across_engines(spark: Any, tmp_path: Path) -> None:
    """``--pairs`` (issue 38): the same file from both engines, the distributed plan too."""
    from tests.synthetic import synthetic_corpus

    src = tmp_path / "in.jsonl"
    docs = synthetic_corpus(120, seed=4)
    src.write_text("".join(json.dumps({"id": d["id"], "text": d["text"]}) + "\n" for d in docs))
    files = []
    for engine in (["--engine", "local"], ["--engine", "spark"]):
        pairs = tmp_path / f"pairs-{engine[1]}.jsonl"
        r = run([str(src), "--out", str(tmp_path / "o.jsonl"), "--pairs", str(pairs), *engine])
        assert r.exit_code == 0, r.output
        assert "verified candidate pairs ->" in r.output
        files.append(pairs.read_bytes())
    assert files[0] == files[1] and files[0].count(b"\n") >= 5
    conf = spark.conf.get("spark.neardup.smallJobDocs", None)
    spark.conf.set("spark.neardup.smallJobDocs", "0")  # the executors' plan
    try:
        pairs = tmp_path / "pairs-executors.jsonl"
        r = run([str(src), "--out", "-", "--pairs", str(pairs), "--engine", "spark"])
        assert r.exit_code == 0, r.output
    finally:
        spark.conf.unset("spark.neardup.smallJobDocs") if conf is None else spark.conf.set(
            "spark.neardup.smallJobDocs", conf
        )
    assert pairs.read_bytes() == files[0]


def test_window_on_the_executors_plan_equals_local(spark: Any, tmp_path: Path) -> None:
    """``--window`` takes the ``--max-disorder`` branch (positions renumbered to time order and
    back). On the executors' plan its decisions were read after the ranked kept documents
    they were numbered from had been let go: recomputed, their range partitions came out other
    than the offsets already taken, so cluster ids were renumbered, or two kept documents
    shared one (found on a held-out set; three runs make a recomputation near certain)."""
    from tests.synthetic import synthetic_corpus

    src = tmp_path / "in.jsonl"
    rows = synthetic_corpus(600, seed=13, days=10)
    src.write_text(
        "".join(json.dumps({k: r[k] for k in ("id", "text", "ts")}) + "\n" for r in rows)
    )
    opts = ["--time-field", "ts", "--window", "36h"]
    assert run([str(src), "--out", str(tmp_path / "local.jsonl"), *opts]).exit_code == 0
    want = records(tmp_path / "local.jsonl")
    assert sum(r["status"] != "unique" for r in want) > 50
    conf = spark.conf.get("spark.neardup.smallJobDocs", None)
    spark.conf.set("spark.neardup.smallJobDocs", "0")  # the executors' plan
    try:
        for attempt in range(3):
            out = tmp_path / f"spark{attempt}.jsonl"
            r = run([str(src), "--out", str(out), *opts, "--engine", "spark"])
            assert r.exit_code == 0, r.output
            assert records(out) == want, attempt
    finally:
        spark.conf.unset("spark.neardup.smallJobDocs") if conf is None else spark.conf.set(
            "spark.neardup.smallJobDocs", conf
        )
