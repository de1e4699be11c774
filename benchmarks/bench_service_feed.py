"""Feed-platform traffic (issue 21): one document per request from 16 keep-alive clients.

``--stored`` documents (default 200,000 synthetic 60-word texts) are stored first, in-process
through the service (library decisions, a bulk transaction per 50k rows, a snapshot, as
``bench_service.py --build`` does). Then ``neardup serve`` is started on that store and a
separate client process (asyncio, raw HTTP/1.1 keep-alive over asyncio streams, uvloop when
installed) posts ``--feed`` fresh news documents (Reuters with planted near-copies), each alone
(``{"documents": [one]}``), over ``--clients`` connections. Reported: throughput, p50/p99
latency, the server's CPU per document, the client's CPU, requests per group commit, RSS, and
the anchor in the same run: datasketch ``MinHashLSH(threshold=0.5, num_perm=128)`` query +
insert per document in-process on the same feed texts (its index prefilled with ``--stored``
random signatures, so that it also holds that many documents).

``--window 1d`` runs the same traffic against a store built with a one-day window: stored and
fed documents carry timestamps (``--days`` days of stored documents, the feed continuing at the
same rate), so expiry happens during the run; the ratio to the run without a window is printed
when both run (``--modes none,1d``). ``--restart`` also measures restart to healthy after a
``kill -9`` (the snapshot + the rows after it) and the RSS per stored document.

    PYTHONPATH=src flock /tmp/neardup-bench.lock nice -n 5 python \\
        benchmarks/bench_service_feed.py --stored 200000 --feed 4000 --modes none,1d --restart

Needs the ``server`` and ``bench`` extras (datasketch) and the corpora (reuters).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson

from bench_service import (
    bench_datasketch,
    children_cpu_seconds,
    cpu_seconds,
    free_port,
    metric,
    pct,
    peak_rss,
    rss_bytes,
    start,
    start_over_empty,
    synthetic,
)
from neardup.eval.corpora import load_corpus
from neardup.eval.perturb import plant_copies

T0 = 1.7e9  # the stored documents end here (well before this machine's clock)
DAY = 86_400.0


# ---------------------------------------------------------------------- client process
async def _client(port: int, bodies: list[bytes], clients: int) -> dict[str, Any]:
    """Post every body over ``clients`` keep-alive connections; latency per request."""
    queue = iter(range(len(bodies)))
    lat = [0.0] * len(bodies)
    head = f"POST /v1/documents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    head += "Content-Type: application/json\r\nContent-Length: "

    async def work() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for i in queue:
            body = bodies[i]
            t = time.perf_counter()
            writer.write(f"{head}{len(body)}\r\n\r\n".encode() + body)
            status = await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            answer = await reader.readexactly(length)
            lat[i] = time.perf_counter() - t
            if b" 200 " not in status:
                raise RuntimeError(f"{status!r} {answer[:300]!r}")
        writer.close()

    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(work() for _ in range(clients)))
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "lat": lat}


def client_main(port: int, path: str, clients: int, out: str) -> None:
    bodies = Path(path).read_bytes().split(b"\n")
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    Path(out).write_bytes(orjson.dumps(asyncio.run(_client(port, bodies, clients))))


# ---------------------------------------------------------------------- data
def feed_texts(n: int) -> list[str]:
    """``n`` news texts: Reuters articles and planted near-copies (~10%), shuffled."""
    _, texts = load_corpus("reuters", n)
    base = n - n // 10
    planted = plant_copies(texts[:base], per_bucket=n // 60 + 1, rates=(0.02, 0.05)).texts
    out = list(texts[:base]) + list(planted[base:])[: n - base]
    order = np.random.default_rng(1).permutation(len(out))
    return [out[i] for i in order]


def stamps(n: int, days: float) -> list[float]:
    """``n`` increasing timestamps spread over ``days`` days, ending at ``T0``."""
    return list(np.linspace(T0 - days * DAY, T0, n))


def build(data: Path, n: int, window: str | None, days: float) -> None:
    """``n`` documents stored through the service in-process, then a snapshot of them all
    and no shutdown snapshot (what a SIGTERM leaves; ``--restart`` adds rows after it)."""
    from neardup.cli._common import build_fingerprinter
    from neardup.cli._decision import Decision, build_deduplicator
    from neardup.io import parse_window
    from neardup.server.service import Service, Settings
    from neardup.server.validate import Item

    texts = synthetic(n)
    ts = stamps(n, days) if window else [None] * n
    seconds = parse_window(window) if window else None
    dd = build_deduplicator(build_fingerprinter(None, None), Decision(), window=seconds)
    svc = Service(dd, Settings(str(data), snapshot_every=0, max_future=None))
    t0 = time.perf_counter()
    for i, stop in itertools.pairwise([*range(0, n, 50_000), n]):
        svc.ingest([Item(f"s{j}", texts[j], ts[j]) for j in range(i, stop)], False)
    with svc.group.exclusive(), svc.lock:
        svc._snapshot()
    svc.store.db.close()
    print(f"  built {n:,} stored documents (window {window}) in {time.perf_counter() - t0:.0f} s")


# ---------------------------------------------------------------------- runs
def bodies_file(tmp: Path, texts: list[str], ts: list[float] | None) -> Path:
    path = tmp / "bodies.jsonl"
    docs = [
        {"id": f"f{i}", "text": t} | ({} if ts is None else {"timestamp": ts[i]})
        for i, t in enumerate(texts)
    ]
    path.write_bytes(b"\n".join(orjson.dumps({"documents": [d]}) for d in docs))
    return path


def run_feed(
    data: Path, tmp: Path, texts: list[str], args: argparse.Namespace, window: str | None
) -> dict[str, Any]:
    """Start the server on ``data``, post the feed from a client process, measure."""
    ts = None
    if window:
        step = args.days * DAY / args.stored
        ts = [T0 + step * (i + 1) for i in range(len(texts))]
    path = bodies_file(tmp, texts, ts)
    port = free_port()
    options = ["--max-future", "none", "--snapshot-every", str(args.snapshot_every)]
    options += ["--window", window] if window else []
    proc, healthy = start(data, port, *options)
    out = tmp / "client.json"
    try:
        m0 = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        cpu0, rss0 = cpu_seconds(proc.pid), rss_bytes(proc.pid)
        child0 = children_cpu_seconds(proc.pid)
        load = os.getloadavg()[0]
        cmd = [sys.executable, __file__, "--client", str(port), str(path), str(args.clients)]
        subprocess.run([*cmd, str(out)], check=True)
        cpu = cpu_seconds(proc.pid) - cpu0
        rss, peak = rss_bytes(proc.pid), peak_rss(proc.pid)
        if args.snapshot_every < len(texts):  # let the background snapshot finish
            time.sleep(5)
        m = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        child = children_cpu_seconds(proc.pid) - child0  # forked snapshot writers, reaped
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    got = orjson.loads(out.read_bytes())
    n = len(texts)
    commits = _commits(m) - _commits(m0)
    return {
        "window": window,
        "healthy_s": healthy,
        "docs_per_s": n / got["wall"],
        "p50_ms": pct(got["lat"], 0.5),
        "p99_ms": pct(got["lat"], 0.99),
        "server_cpu_ms_per_doc": 1000 * cpu / n,
        "client_cpu_ms_per_doc": 1000 * got["cpu"] / n,
        "snapshot_cpu_s": child,
        "requests_per_commit": n / max(1.0, commits),
        "rss_mb": rss / 2**20,
        "rss_growth_mb": (rss - rss0) / 2**20,
        "peak_rss_mb": peak / 2**20,
        "snapshots": _snapshots(m) - _snapshots(m0),
        "snapshot_s": _snapshots(m, "sum") - _snapshots(m0, "sum"),
        "load": load,
    }


def _snapshots(metrics: str, what: str = "count") -> float:
    try:
        return metric(metrics, f"neardup_snapshot_seconds_{what}")
    except RuntimeError:
        return 0.0


def _commits(metrics: str) -> float:
    """Group commits so far (the histogram has no lines before the first)."""
    try:
        return metric(metrics, "neardup_commit_batches_count")
    except RuntimeError:
        return 0.0


def restart(data: Path, n: int, tail: int) -> None:
    """Healthy after kill -9 (snapshot + ``tail`` rows after it) and RSS per stored document."""
    from neardup.dedup import Deduplicator
    from neardup.server.service import Service, Settings
    from neardup.server.validate import Item

    svc = Service(Deduplicator(), Settings(str(data), snapshot_every=0))
    texts = synthetic(tail, seed=7)
    svc.ingest([Item(f"t{j}", t, None) for j, t in enumerate(texts)], False)
    svc.store.db.close()  # no shutdown snapshot: the state a kill -9 leaves
    port = free_port()
    proc, t_tail, t_empty, base = start_over_empty(data, port)
    m = httpx.get(f"http://127.0.0.1:{port}/metrics").text
    rss = rss_bytes(proc.pid) - base
    stored = n + tail
    print(
        f"restart after kill -9, {stored:,} stored (snapshot + {tail:,} rows after it): "
        f"{t_tail:.2f} s to healthy (empty data directory: {t_empty:.2f} s); RSS over an "
        f"empty server {rss / stored:.0f} B/stored doc, dedup state "
        f"{metric(m, 'neardup_memory_bytes') / stored:.0f} B/doc",
        flush=True,
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stored", type=int, default=200_000)
    ap.add_argument("--feed", type=int, default=4000)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--modes", default="none,1d", help="windows to run: none, 1d, 7d, ...")
    ap.add_argument("--days", type=float, default=5.0, help="days the stored documents span")
    ap.add_argument("--restart", action="store_true", help="also measure restart and RSS")
    ap.add_argument("--tail", type=int, default=20_000, help="--restart: rows after snapshot")
    ap.add_argument(
        "--snapshot-every", type=int, default=100_000, help="the server's --snapshot-every"
    )
    ap.add_argument("--keep", type=Path, help="build the stores here and reuse them")
    ap.add_argument("--client", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        port, path, clients, out = args.client
        client_main(int(port), path, int(clients), out)
        return
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    print(
        f"commit {commit.stdout.strip()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; {args.stored:,} stored, "
        f"{args.feed:,} single-document requests over {args.clients} connections",
        flush=True,
    )
    texts = feed_texts(args.feed)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        root = args.keep or tmp
        results: dict[str, dict[str, Any]] = {}
        for mode in args.modes.split(","):
            window = None if mode == "none" else mode
            data = root / f"store-{mode}-{args.stored}"
            if not (data / "neardup.db").exists():
                build(data, args.stored, window, args.days)
            work = tmp / f"run-{mode}"
            shutil.copytree(data, work)
            ds, ds_cpu = bench_datasketch(texts, args.stored)
            r = run_feed(work, tmp, texts, args, window)
            r["datasketch_docs_per_s"], r["datasketch_docs_per_cpu_s"] = ds, ds_cpu
            results[mode] = r
            print(
                f"window {mode}: {r['docs_per_s']:,.0f} docs/s = "
                f"{r['docs_per_s'] / ds:.2f}x datasketch in-process ({ds:,.0f} docs/s, "
                f"{ds_cpu:,.0f}/CPU s); p50 {r['p50_ms']:.1f} ms p99 {r['p99_ms']:.1f} ms; "
                f"server {r['server_cpu_ms_per_doc']:.2f} CPU ms/doc "
                f"({1000 / r['server_cpu_ms_per_doc'] / ds_cpu:.2f}x datasketch per CPU s); "
                f"client {r['client_cpu_ms_per_doc']:.2f} CPU ms/doc; "
                f"{r['requests_per_commit']:.1f} requests/commit; server RSS "
                f"{r['rss_mb']:.0f} MB (peak {r['peak_rss_mb']:.0f} MB); "
                f"{r['snapshots']:.0f} background snapshots ({r['snapshot_s']:.1f} s, writers "
                f"{r['snapshot_cpu_s']:.1f} CPU s); "
                f"load {r['load']:.1f}",
                flush=True,
            )
            if mode == "none" and args.restart:
                restart(work, args.stored, args.tail)
            shutil.rmtree(work, ignore_errors=True)
        if "none" in results and len(results) > 1:
            for mode, r in results.items():
                if mode != "none":
                    b = results["none"]
                    print(
                        f"window {mode} vs none: {r['docs_per_s'] / b['docs_per_s']:.2f}x "
                        f"throughput, "
                        f"{b['server_cpu_ms_per_doc'] / r['server_cpu_ms_per_doc']:.2f}x "
                        "per server CPU second"
                    )
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
