"""One input, one configuration, the same decisions on every surface: the library, the CLI (one
run and day-by-day runs on a --state), the HTTP service (real uvicorn on 127.0.0.1, one
document per request) and the Spark engine (real local mode). Synthetic data, so it runs on a
clean clone without the corpora. Lives here for the session-wide Spark fixture."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from neardup import Deduplicator
from neardup.cli import cli
from neardup.verify import MinHashVerifier

from tests.synthetic import DAY, remix_corpus, synthetic_corpus

FIELDS = ("status", "duplicate_of", "distance", "similarity", "cluster_id")
CONFIGS = {  # name: (library kwargs, CLI/serve options)
    "window": ({"window": 2 * DAY}, ["--window", "2d"]),
    "radius": ({"k": 6, "verifier": None}, ["--k", "6", "--no-verify"]),
    "threshold": ({"threshold": 0.5}, ["--threshold", "0.5"]),
    "edited copies": (
        {"verifier": MinHashVerifier(ngram=2, band_ngram=3), "threshold": 0.64},
        ["--shingle-size", "2", "--threshold", "0.64"],
    ),
    # on documents that share paragraphs (the default 0.25 is in every other configuration)
    "tight clusters": ({"cluster_similarity": 0.5}, ["--cluster-similarity", "0.5"]),
    "star clusters": ({"cluster_similarity": None}, ["--cluster-similarity", "none"]),
}


def _docs(name: str) -> list[dict[str, Any]]:
    if name not in ("tight clusters", "star clusters"):
        return synthetic_corpus(160, seed=11)
    texts = remix_corpus(160, seed=9, pool=12)  # with joins every cluster refused (issue 38)
    return [{"id": f"m{i}", "text": t, "ts": 1.7e9 + i} for i, t in enumerate(texts)]


def _library(docs: list[dict[str, Any]], kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    dd = Deduplicator(**kwargs)
    d = dd.feed([x["text"] for x in docs], [x["ts"] for x in docs], ids=[x["id"] for x in docs])
    out = []
    for i in range(len(docs)):
        dup, sim = int(d.duplicate_of[i]), float(d.similarity[i])
        out.append(
            {
                "status": d.statuses[i],
                "duplicate_of": None if dup < 0 else docs[dup]["id"],
                "distance": None if dup < 0 else int(d.distance[i]),
                "similarity": None if sim != sim else round(sim, 4),  # as every surface writes
                "cluster_id": int(d.cluster_id[i]),
            }
        )
    return out


def _loose_pairs(rows: list[dict[str, Any]], q: float) -> list[tuple[int, int]]:
    """Pairs of members of one cluster whose bound through its kept document is below ``q``:
    only a document every cluster refused joins so (dedup/greedy.py)."""
    sims: dict[Any, list[tuple[int, float]]] = {}
    for i, r in enumerate(rows):
        if r["status"] == "duplicate":
            sims.setdefault(r["duplicate_of"], []).append((i, r["similarity"]))
    return [
        (a, b)
        for m in sims.values()
        for a, sa in m
        for b, sb in m
        if a < b and sa + sb - 1 < q - 1e-9
    ]


def _cli(args: list[str]) -> None:
    r = CliRunner().invoke(cli, ["dedup", *args])
    assert r.exit_code == 0, r.output


def _read(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [{f: r[f] for f in FIELDS} for r in rows]


def _write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps({k: d[k] for k in ("id", "text", "ts")}) + "\n" for d in docs)
    )
    return path


def _service(tmp: Path, docs: list[dict[str, Any]], options: list[str]) -> list[dict[str, Any]]:
    from tests.server.server_helpers import Server

    server = Server(tmp / "data", *options).start()
    out = []
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            for d in docs:  # one document per request, as a feed platform sends them
                body = {"documents": [{"id": d["id"], "text": d["text"], "timestamp": d["ts"]}]}
                r = client.post("/v1/documents", json=body)
                assert r.status_code == 200, r.text
                out.append({f: r.json()["results"][0][f] for f in FIELDS})
    finally:
        server.stop()
    return out


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_surface_decides_alike(spark: Any, tmp_path: Path, name: str) -> None:
    kwargs, options = CONFIGS[name]
    docs = _docs(name)
    want = _library(docs, kwargs)
    statuses = {w["status"] for w in want}
    if "clusters" in name:  # the cluster rule changes decisions on this input
        assert {"unique", "duplicate"} <= statuses
        other = 0.5 if kwargs["cluster_similarity"] is None else None
        assert want != _library(docs, {"cluster_similarity": other})
        if other is None:  # some documents joined their closest cluster though it refused them
            assert _loose_pairs(want, kwargs["cluster_similarity"])
    else:
        assert {"unique", "duplicate", "exact_duplicate", "empty"} <= statuses  # a real test
    if "verifier" in kwargs or "threshold" in kwargs:  # the options change the decisions
        assert want != _library(docs, {k: v for k, v in kwargs.items() if k == "window"})
    src = _write(tmp_path / "in.jsonl", docs)
    common = [str(src), "--time-field", "ts", *options]

    _cli([*common, "--out", str(tmp_path / "cli.jsonl")])
    assert _read(tmp_path / "cli.jsonl") == want, "CLI"

    half = math.ceil(len(docs) / 2)  # day by day on a saved state == one run
    parts = [_write(tmp_path / f"p{i}.jsonl", p) for i, p in enumerate((docs[:half], docs[half:]))]
    for i, part in enumerate(parts):
        state = ["--state", str(tmp_path / "state")]
        _cli(
            [
                str(part),
                "--time-field",
                "ts",
                *options,
                *state,
                "--out",
                str(tmp_path / f"s{i}.jsonl"),
            ]
        )
    assert _read(tmp_path / "s0.jsonl") + _read(tmp_path / "s1.jsonl") == want, "CLI --state"

    assert _service(tmp_path, docs, options) == want, "service"

    _cli([*common, "--engine", "spark", "--out", str(tmp_path / "spark.jsonl")])
    assert _read(tmp_path / "spark.jsonl") == want, "Spark"
