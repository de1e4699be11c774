"""`neardup serve` over HTTP on loopback vs datasketch ``MinHashLSH`` in-process, same run.

Measures, for SQLite ``synchronous=FULL`` and ``NORMAL``: ingest throughput (batches of 100
news documents, one client, one server worker), single-document latency p50/p99 (one new
document per request, after the ingest), restart to healthy (kill -9, then start over the same
data directory) and the in-memory state per stored document. The anchor is datasketch
``MinHashLSH`` (128 permutations, threshold 0.5, word 4-shingles) doing query + insert per
document in-process, on the same texts.

    nice -n 10 python benchmarks/bench_service.py --docs 6000

Needs the ``server`` and ``bench`` extras (datasketch) and the corpora (reuters).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from neardup.eval.corpora import load_corpus
from neardup.eval.perturb import plant_copies


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(data: Path, port: int, sync: str) -> tuple[subprocess.Popen[bytes], float]:
    cmd = [sys.executable, "-m", "neardup", "serve", "--data", str(data), "--port", str(port)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*cmd, "--sync", sync], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc, time.perf_counter() - t0
        except httpx.TransportError:
            time.sleep(0.02)
        if proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode}")


def bench_service(texts: list[str], probes: list[str], sync: str) -> dict[str, Any]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "d"
        proc, _ = start(data, port, sync)
        try:
            r = ingest_and_probe(url, texts, probes)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        proc, restart = start(data, port, sync)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        db_bytes = sum(f.stat().st_size for f in data.iterdir())
    n = len(texts) + len(probes)
    return {
        **r,
        "restart_s": restart,
        "ram_bytes_per_doc": r["memory"] / n,
        "disk_bytes_per_doc": db_bytes / n,
    }


def ingest_and_probe(url: str, texts: list[str], probes: list[str]) -> dict[str, float]:
    """Batches of 100, then one request per probe document."""
    with httpx.Client(timeout=120) as client:
        t0 = time.perf_counter()
        for i in range(0, len(texts), 100):
            docs = [{"id": f"d{j}", "text": texts[j]} for j in range(i, min(i + 100, len(texts)))]
            r = client.post(url + "/v1/documents", json={"documents": docs})
            assert r.status_code == 200, r.text
        ingest = time.perf_counter() - t0
        lat = []
        for j, text in enumerate(probes):
            t1 = time.perf_counter()
            r = client.post(
                url + "/v1/documents", json={"documents": [{"id": f"p{j}", "text": text}]}
            )
            lat.append(time.perf_counter() - t1)
            assert r.status_code == 200, r.text
        metrics = client.get(url + "/metrics").text
    mem = float(re.search(r"^neardup_memory_bytes (\S+)$", metrics, re.M)[1])  # type: ignore[index]
    lat.sort()
    return {
        "docs_per_s": len(texts) / ingest,
        "p50_ms": 1000 * statistics.median(lat),
        "p99_ms": 1000 * lat[int(0.99 * (len(lat) - 1))],
        "memory": mem,
    }


def bench_datasketch(texts: list[str]) -> float:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    t0 = time.perf_counter()
    for i, text in enumerate(texts):
        words = text.lower().split()
        shingles = {" ".join(words[j : j + 4]) for j in range(max(1, len(words) - 3))}
        m = MinHash(num_perm=128)
        m.update_batch([s.encode() for s in shingles])
        lsh.query(m)
        lsh.insert(str(i), m)
    return len(texts) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=6000)
    ap.add_argument("--probes", type=int, default=400)
    args = ap.parse_args()
    _, texts = load_corpus("reuters", args.docs + args.probes)
    probes = texts[args.docs :]
    texts = plant_copies(texts[: args.docs], per_bucket=8, rates=(0.05,)).texts[: args.docs]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    print(f"commit {commit.stdout.strip()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(
        f"{len(texts)} reuters documents (planted copies), {len(probes)} probes, "
        f"cpus {os.cpu_count()}"
    )
    ds = bench_datasketch(texts)
    print(f"datasketch MinHashLSH in-process (query + insert): {ds:,.0f} docs/s")
    for sync in ("full", "normal"):
        r = bench_service(texts, probes, sync)
        print(
            f"serve --sync {sync}: ingest {r['docs_per_s']:,.0f} docs/s "
            f"({r['docs_per_s'] / ds:.2f}x datasketch), single p50 {r['p50_ms']:.1f} ms "
            f"p99 {r['p99_ms']:.1f} ms, restart {r['restart_s']:.2f} s, "
            f"RAM {r['ram_bytes_per_doc']:.0f} B/doc, disk {r['disk_bytes_per_doc']:.0f} B/doc"
        )


if __name__ == "__main__":
    main()
