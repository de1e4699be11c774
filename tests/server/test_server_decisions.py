"""The service decides exactly like the library and the CLI, across restarts (real corpora;
synthetic texts on a clone without them)."""

from __future__ import annotations

import json
import random
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from click.testing import CliRunner

from neardup.cli import cli
from neardup.dedup import Deduplicator, from_state_columns
from neardup.eval.perturb import plant_copies

from tests.server.server_helpers import Server
from tests.synthetic import corpus_or_synthetic, remix_corpus

FIELDS = ("status", "duplicate_of", "distance", "similarity", "threshold", "cluster_id")


def corpus(name: str, n: int, seed: int) -> list[str]:
    """``n`` texts of a real corpus (synthetic ones without the corpora) plus planted edited
    and exact copies, shuffled."""
    texts = corpus_or_synthetic(name, n, seed)
    planted = plant_copies(
        texts, per_bucket=8, kinds=("substitute", "delete"), rates=(0.02, 0.1), seed=seed
    ).texts
    rng = random.Random(seed)
    out = planted + rng.sample(texts, 20)  # exact copies too
    rng.shuffle(out)
    return out


def library(texts: list[str], ids: list[str], ts: list[float] | None, **opts: Any) -> list[dict]:
    d = Deduplicator(**opts).feed(texts, ts)
    rows = []
    for i in range(len(texts)):
        dup = int(d.duplicate_of[i])
        rows.append(
            {
                "id": ids[i],
                "status": d.statuses[i],
                "duplicate_of": None if dup < 0 else ids[dup],
                "distance": None if dup < 0 else int(d.distance[i]),
                "similarity": None if dup < 0 else round(float(d.similarity[i]), 4),
                "threshold": None if np.isnan(d.threshold[i]) else float(d.threshold[i]),
                "cluster_id": int(d.cluster_id[i]),
            }
        )
    return rows


def command_line(tmp: Path, docs: list[dict], *options: str) -> list[dict]:
    src, out = tmp / "in.jsonl", tmp / "out.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    r = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(out), *options])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return [{"id": r["id"], **{f: r[f] for f in FIELDS}} for r in rows]


def ingest(server: Server, docs: list[dict], rng: random.Random, restarts: int) -> list[dict]:
    """Post in batches of random sizes; kill -9 and restart the server ``restarts`` times."""
    kill_at = set(rng.sample(range(1, len(docs) - 1), restarts))
    out: list[dict] = []
    i = 0
    while i < len(docs):
        n = rng.randint(1, 60)
        out += server.decide(docs[i : i + n])
        i += n
        if any(i - n < k <= i for k in kill_at):
            server.kill()  # after the acknowledgement: nothing may be lost
            server.start()
    return [{"id": r["id"], **{f: r[f] for f in FIELDS}} for r in out]


def test_reuters_equals_library_and_cli_across_kill_restarts(tmp_path: Path) -> None:
    texts = corpus("reuters", 300, seed=1)
    ids = [f"r{i}" for i in range(len(texts))]
    docs = [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]
    want = library(texts, ids, None)
    assert sum(r["status"] == "duplicate" for r in want) >= 30  # the planted copies are found
    assert want == command_line(tmp_path, docs)
    # snapshots every 40 documents: each restart loads one and replays the rows after it
    with Server(tmp_path / "d", "--snapshot-every", "40") as s:
        got = ingest(s, docs, random.Random(2), restarts=2)
        assert got == want
        # stored decisions equal the answers, after a restart too
        again = s.decide(docs[:100])
        assert [{"id": r["id"], **{f: r[f] for f in FIELDS}} for r in again] == want[:100]
        assert [
            httpx.get(f"{s.url}/v1/documents/{d['id']}").json()["status"] for d in docs[-50:]
        ] == [r["status"] for r in want[-50:]]


def test_chinese_reviews_with_window_and_retention(tmp_path: Path) -> None:
    texts = corpus("shopping", 700, seed=3)
    ids = [f"z{i}" for i in range(len(texts))]
    ts = [1_600_000_000.0 + 1800.0 * i for i in range(len(texts))]  # one every 30 minutes
    docs = [{"id": i, "text": t, "timestamp": x} for i, t, x in zip(ids, texts, ts, strict=True)]
    want = library(texts, ids, ts, window=86400.0)
    plain = library(texts, ids, None)
    assert want != plain  # the window changes decisions on this slice
    assert want == command_line(tmp_path, docs, "--time-field", "timestamp", "--window", "1d")
    options = ("--window", "1d", "--retention", "2d", "--snapshot-every", "64")
    with Server(tmp_path / "d", *options) as s:
        got = ingest(s, docs, random.Random(4), restarts=1)
        assert got == want
        metrics = httpx.get(s.url + "/metrics").text
        index_size = int(re.search(r"^neardup_index_size (\d+)$", metrics, re.M)[1])  # type: ignore[index]
        assert 0 < index_size <= 49  # only kept documents of the last day stay in memory
        assert s.post([{"id": "late", "text": "x"}]).status_code == 422  # a window needs time
    db = sqlite3.connect(tmp_path / "d" / "neardup.db")
    oldest = db.execute("SELECT min(timestamp), count(*) FROM documents").fetchone()
    assert oldest[0] >= ts[-1] - 2 * 86400 and oldest[1] <= 97  # retention deleted the rest


def test_tight_clusters_survive_kill_restarts(tmp_path: Path) -> None:
    """The cluster_similarity rule reads the lowest member similarity of each kept document:
    after kill -9 the service rebuilds it from a snapshot plus the stored rows (and from the
    rows alone when no snapshot was taken yet) and decides on as the library does."""
    texts = remix_corpus(240, seed=8, pool=20)  # the rule picks clusters on it (issue 38)
    ids = [f"m{i}" for i in range(len(texts))]
    docs = [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]
    want = library(texts, ids, None, cluster_similarity=0.5)
    assert want != library(texts, ids, None, cluster_similarity=None)  # the rule decides here
    for options in (("--snapshot-every", "50"), ("--snapshot-every", "100000")):
        data = tmp_path / options[1]
        with Server(data, "--cluster-similarity", "0.5", *options) as s:
            assert ingest(s, docs, random.Random(3), restarts=3) == want


def test_similarity_is_the_jaccard_estimate_on_every_surface(tmp_path: Path) -> None:
    """Issue 38: two short texts the same after the verifier's normalisation (punctuation and
    case only) are duplicates at similarity 1.0 (the estimate), not 0.8 (the estimate minus
    the short-text margin); the short-text rule shows as the threshold that applied."""
    texts = ["Storm hits the coast!", "storm hits the coast", "Markets rallied on Friday."]
    ids = ["a", "b", "c"]
    docs = [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]
    d = Deduplicator().feed(texts)
    assert d.statuses[1] == "duplicate"  # not the exact path: the exact key keeps punctuation
    assert (float(d.similarity[1]), float(d.threshold[1])) == (1.0, 0.8)
    assert np.isnan(d.threshold[[0, 2]]).all()
    assert Deduplicator().add(texts[0], id="a").threshold is None
    want = library(texts, ids, None)
    assert want[1]["similarity"] == 1.0
    assert command_line(tmp_path, docs) == want
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["threshold"] for r in rows] == [None, 0.8, None]  # the threshold that applied
    r = CliRunner().invoke(cli, ["explain", texts[0], texts[1], "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    assert (info["status"], info["similarity"], info["threshold"]) == ("duplicate", 1.0, 0.8)
    server = Server(tmp_path / "data").start()
    try:
        got = [{"id": r["id"], **{f: r[f] for f in FIELDS}} for r in server.decide(docs)]
    finally:
        server.stop()
    assert got == want


def short_texts() -> tuple[list[str], list[dict[str, Any]]]:
    """Short texts (under ``short_length``: threshold 0.8) and long ones (the default threshold),
    each with a near copy, so both thresholds apply."""
    long = "the harbour authority said on monday that ships would wait outside the port "
    texts = [
        "Storm hits the coast!",
        long + "until the storm passes and the wind drops below forty knots tonight",
        "storm hits the coast",
        long + "until the storm passes and the wind drops below fifty knots tonight",
        "Markets rallied on Friday.",
    ]
    return texts, [{"id": f"s{i}", "text": t} for i, t in enumerate(texts)]


def test_the_service_answers_and_stores_the_threshold_that_applied(tmp_path: Path) -> None:
    """Issue 38: answers, stored decisions (GET, re-posts, after a restart: snapshot plus
    rows, and rows alone) carry ``threshold`` equal to the library's Decisions."""
    texts, docs = short_texts()
    ids = [d["id"] for d in docs]
    want = library(texts, ids, None)
    default = Deduplicator().state.decide_config.threshold
    assert {r["threshold"] for r in want} == {None, 0.8, default}  # both thresholds applied
    assert want == command_line(tmp_path, docs)
    for every in ("2", "100000"):  # restart from a snapshot plus rows, from the rows alone
        with Server(tmp_path / every, "--snapshot-every", every) as s:
            assert [pick(r) for r in s.decide(docs[:3])] == want[:3]
            s.kill()
            s.start()
            assert [pick(r) for r in s.decide(docs)] == want  # re-posts and new ones
            got = [httpx.get(f"{s.url}/v1/documents/{i}").json() for i in ids]
            assert [pick(r) for r in got] == want


def test_a_data_directory_without_the_threshold_column_is_upgraded(tmp_path: Path) -> None:
    """A store written before the column: its rows answer ``threshold: null`` (unknown),
    later documents get theirs, and decisions go on as the library's."""
    texts, docs = short_texts()
    ids = [d["id"] for d in docs]
    want = library(texts, ids, None)
    with Server(tmp_path / "d", "--snapshot-every", "100000") as s:
        s.decide(docs[:3])
    db = sqlite3.connect(tmp_path / "d" / "neardup.db")
    db.execute("ALTER TABLE documents DROP COLUMN threshold")  # as an older neardup wrote it
    db.commit()
    db.close()
    with Server(tmp_path / "d") as s:
        old = [pick(r) for r in s.decide(docs[:3])]
        assert old == [{**r, "threshold": None} for r in want[:3]]
        assert [pick(r) for r in s.decide(docs[3:])] == want[3:]


def test_state_columns_carry_the_threshold() -> None:
    """``state_columns`` -> ``from_state_columns`` / ``extend_state_columns`` keep it (the
    service's load path); columns without it (older stores) read as unknown."""
    texts, _ = short_texts()
    dd = Deduplicator()
    d = dd.feed(texts, ids=[f"s{i}" for i in range(len(texts))])
    cols = dd.state.columns()
    np.testing.assert_array_equal(cols["threshold"], d.threshold)
    back = from_state_columns(Deduplicator(), cols, dd.state.meta())
    np.testing.assert_array_equal(back.state.columns()["threshold"], d.threshold)
    again = back.feed(texts[:3], ids=["s0", "s1", "s2"])  # known: their stored decisions
    np.testing.assert_array_equal(again.threshold, d.threshold[:3])
    extended = Deduplicator()
    extended.state.restore(cols, dd.state.meta())
    np.testing.assert_array_equal(extended.state.columns()["threshold"], d.threshold)
    del cols["threshold"]
    old = from_state_columns(Deduplicator(), cols, dd.state.meta())
    assert np.isnan(old.state.columns()["threshold"]).all()


def test_a_data_directory_of_the_older_cluster_rule_is_refused_saying_why(tmp_path: Path) -> None:
    """Issue 38: a store decided by the cluster rule's version 1 (its settings lack
    ``cluster_rule``) cannot be served on by any option: the refusal says what the library's
    does (decide its input again), not "start with the same options as before"."""
    _, docs = short_texts()
    with Server(tmp_path / "d") as s:
        s.decide(docs)
    db = sqlite3.connect(tmp_path / "d" / "neardup.db")
    settings = json.loads(db.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()[0])
    del settings["cluster_rule"]  # as the rule's version 1 wrote it (another config id)
    db.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    db.execute("UPDATE meta SET value = 'dd1-version1' WHERE key = 'config_id'")
    db.commit()
    db.close()
    cmd = [sys.executable, "-m", "neardup", "serve", "--data", str(tmp_path / "d"), "--port", "0"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    said = " ".join(r.stderr.split())
    assert "cluster_rule: none -> 2" in said and "cluster rule of an older neardup" in said
    assert "Decide its input again into a new --data directory" in said
    assert "same options" not in said and "Traceback" not in said


def pick(r: dict[str, Any]) -> dict[str, Any]:
    return {"id": r["id"], **{f: r[f] for f in FIELDS}}
