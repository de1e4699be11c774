"""`neardup serve` over HTTP on loopback vs datasketch ``MinHashLSH`` in-process, same run.

Ingest (default): batches of 100 news documents (Reuters with planted copies), one server
worker, a client with 1 and with a few requests in flight (``--inflight``), ``synchronous``
FULL (default) and NORMAL; single-document latency after the ingest. The anchor is datasketch
``MinHashLSH`` (128 permutations, threshold 0.5, word 4-shingles) doing query + insert per
document in-process on the same texts. Every repetition runs the anchor and each service
setting back to back, so each ratio has its anchor from the same minute (shared machine).

    flock /tmp/neardup-bench.lock nice -n 5 python benchmarks/bench_service.py --reps 3

At 10^6 stored documents (``--stored``): the store is built in-process through the service
(library decisions + one bulk transaction per 50k documents, no HTTP), then the server is
started on it and measured: restart to healthy (snapshot + the rows after it, as after a
kill -9; snapshot alone, as after SIGTERM; every row, no snapshot), resident memory per stored
document, and single-document latency (dry-run checks and stored ingests) of news documents.

    python benchmarks/bench_service.py --stored 1000000 --build /tmp/svc1m     # build once
    flock /tmp/neardup-bench.lock nice -n 5 python benchmarks/bench_service.py \\
        --stored 1000000 --measure /tmp/svc1m

Needs the ``server`` and ``bench`` extras (datasketch) and the corpora (reuters).
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson

from neardup.eval.corpora import load_corpus
from neardup.eval.perturb import plant_copies


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(data: Path, port: int, *options: str) -> tuple[subprocess.Popen[bytes], float]:
    """A server on ``data``; returns it and the seconds from exec to a 200 on /healthz."""
    cmd = [sys.executable, "-m", "neardup", "serve", "--data", str(data), "--port", str(port)]
    t0 = time.perf_counter()
    proc = subprocess.Popen([*cmd, *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc, time.perf_counter() - t0
        except httpx.TransportError:
            time.sleep(0.02)
        if proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode}")


def _stat_seconds(pid: int, first: int) -> float:
    """Two adjacent CPU-tick fields of /proc/PID/stat (after the command name), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[first]) + int(fields[first + 1])) / os.sysconf("SC_CLK_TCK")


def _status_bytes(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {key}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads)."""
    return _stat_seconds(pid, 11)


def children_cpu_seconds(pid: int) -> float:
    """CPU seconds of the process's reaped children (e.g. forked snapshot writers)."""
    return _stat_seconds(pid, 13)


def rss_bytes(pid: int) -> int:
    return _status_bytes(pid, "VmRSS")


MEMORY = ("VmRSS", "RssAnon", "RssFile", "VmHWM")  # VmHWM: the peak, i.e. the load's transient


def memory(pid: int) -> dict[str, int]:
    """Resident memory of a process: total, anonymous, file-backed (mapped files) and peak."""
    return {key: _status_bytes(pid, key) for key in MEMORY}


def per_document(now: dict[str, int], empty: dict[str, int], n: int) -> str:
    """``now`` over an empty server's resident memory, per stored document (the peak over the
    empty server's RSS)."""
    over = {key: now[key] - empty[key] for key in MEMORY}
    over["VmHWM"] = now["VmHWM"] - empty["VmRSS"]
    return "RSS {VmRSS} B/doc (anonymous {RssAnon}, file-backed {RssFile}), peak {VmHWM}".format(
        **{key: f"{value / n:.0f}" for key, value in over.items()}
    )


def peak_rss(pid: int) -> int:
    return _status_bytes(pid, "VmHWM")


def metric(text: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    if m is None:
        raise RuntimeError(f"no metric {name}")
    return float(m[1])


# ---------------------------------------------------------------------- ingest
def post_all(url: str, bodies: list[bytes], inflight: int) -> float:
    """Post pre-encoded bodies with ``inflight`` client threads; returns the wall seconds."""
    it = iter(bodies)
    lock = threading.Lock()
    errors: list[str] = []

    def work() -> None:
        with httpx.Client(timeout=120) as client:
            while True:
                with lock:
                    body = next(it, None)
                if body is None:
                    return
                r = client.post(url, content=body, headers={"content-type": "application/json"})
                if r.status_code != 200:
                    errors.append(r.text)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=work) for _ in range(inflight)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(errors[0])
    return time.perf_counter() - t0


def latencies(
    url: str, texts: list[str], prefix: str, dry_run: bool, failed: list[str] | None = None
) -> list[float]:
    """One request per document, one at a time; seconds each. An answer other than 200 is
    appended to ``failed`` (None: raises)."""
    out = []
    with httpx.Client(timeout=120) as client:
        for j, text in enumerate(texts):
            body = {"documents": [{"id": f"{prefix}{j}", "text": text}], "dry_run": dry_run}
            t0 = time.perf_counter()
            r = client.post(url, content=orjson.dumps(body))
            out.append(time.perf_counter() - t0)
            if r.status_code != 200:
                if failed is None:
                    raise RuntimeError(r.text)
                failed.append(f"{r.status_code} {r.text}")
    return out


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return 1000 * v[min(len(v) - 1, int(q * len(v)))]


def bench_ingest(
    tmp: Path, bodies: list[bytes], n: int, sync: str, inflight: int, probes: list[str]
) -> dict[str, Any]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    data = tmp / f"ingest-{sync}-{inflight}"
    proc, _ = start(data, port, "--sync", sync)
    try:
        cpu0, own0 = cpu_seconds(proc.pid), time.process_time()
        wall = post_all(url + "/v1/documents", bodies, inflight)
        cpu = cpu_seconds(proc.pid) - cpu0  # the server's: the client is the user's pipeline
        client_cpu = time.process_time() - own0
        lat = latencies(url + "/v1/documents", probes, "p", False) if probes else []
        m = httpx.get(url + "/metrics").text
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        shutil.rmtree(data, ignore_errors=True)
    commits = metric(m, "neardup_commit_seconds_count")
    return {
        "docs_per_s": n / wall,
        "docs_per_cpu_s": n / cpu,
        "client_cpu_ms_per_batch": 1000 * client_cpu / len(bodies),
        "batches_per_commit": len(bodies) / max(1.0, commits - len(probes)),
        "p50_ms": pct(lat, 0.5) if lat else None,
        "p99_ms": pct(lat, 0.99) if lat else None,
    }


def bench_datasketch(texts: list[str], prefill: int = 0) -> tuple[float, float]:
    """datasketch query + insert per document (word 4-shingles, 128 permutations): documents
    per wall second and per CPU second; ``prefill`` random signatures are indexed first (as
    many as the service has stored)."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    rng = np.random.default_rng(2)
    with lsh.insertion_session() as session:
        for j in range(prefill):
            m = MinHash(num_perm=128)
            m.hashvalues = rng.integers(0, (1 << 32) - 1, 128, dtype=np.uint64).astype(np.uint32)
            session.insert(f"s{j}", m)
    t0, c0 = time.perf_counter(), time.process_time()
    for i, text in enumerate(texts):
        words = text.lower().split()
        shingles = {" ".join(words[j : j + 4]) for j in range(max(1, len(words) - 3))}
        m = MinHash(num_perm=128)
        m.update_batch([s.encode() for s in shingles])
        lsh.query(m)
        lsh.insert(f"f{i}", m)
    return len(texts) / (time.perf_counter() - t0), len(texts) / (time.process_time() - c0)


def run_ingest(args: argparse.Namespace, tmp: Path) -> None:
    _, texts = load_corpus("reuters", args.docs + args.probes)
    probes = texts[args.docs :]
    texts = plant_copies(texts[: args.docs], per_bucket=8, rates=(0.05,)).texts[: args.docs]
    bodies = [
        orjson.dumps({"documents": [{"id": f"d{j}", "text": texts[j]} for j in range(i, i + 100)]})
        for i in range(0, len(texts) - 99, 100)
    ]
    n = 100 * len(bodies)
    print(
        f"{n} reuters documents (planted copies) in batches of 100 "
        f"({statistics.mean(map(len, bodies)) / 100:.0f} JSON bytes per document), "
        f"{len(probes)} single-document probes after the first run"
    )
    settings = [("full", k) for k in args.inflight] + [("normal", 1)]
    ratios: dict[tuple[str, int], list[float]] = {s: [] for s in settings}
    cpu_ratios: dict[tuple[str, int], list[float]] = {s: [] for s in settings}
    for rep in range(args.reps):
        ds, ds_cpu = bench_datasketch(texts[:n])
        line = [f"rep {rep}: datasketch {ds:,.0f} docs/s ({ds_cpu:,.0f}/CPU s)"]
        for sync, k in settings:
            r = bench_ingest(tmp, bodies, n, sync, k, probes if rep == 0 and k == 1 else [])
            ratios[(sync, k)].append(r["docs_per_s"] / ds)
            cpu_ratios[(sync, k)].append(r["docs_per_cpu_s"] / ds_cpu)
            line.append(
                f"{sync}/{k} in flight {r['docs_per_s']:,.0f} docs/s "
                f"({r['docs_per_s'] / ds:.2f}x; {r['docs_per_cpu_s']:,.0f}/server CPU s, "
                f"{r['docs_per_cpu_s'] / ds_cpu:.2f}x; client "
                f"{r['client_cpu_ms_per_batch']:.1f} CPU ms/batch; "
                f"{r['batches_per_commit']:.2f} batches/commit)"
            )
            if r["p50_ms"] is not None:
                line.append(f"[{sync} single p50 {r['p50_ms']:.1f} ms p99 {r['p99_ms']:.1f} ms]")
        print("; ".join(line), flush=True)
    for (sync, k), values in ratios.items():
        c = cpu_ratios[(sync, k)]
        print(
            f"--sync {sync}, {k} in flight: wall median {statistics.median(values):.2f}x "
            f"datasketch (min {min(values):.2f}x, max {max(values):.2f}x over {len(values)} "
            f"reps); per server CPU second median {statistics.median(c):.2f}x "
            f"(min {min(c):.2f}x, max {max(c):.2f}x)"
        )


# ---------------------------------------------------------------------- 10^6 stored
def synthetic(n: int, seed: int = 0) -> list[str]:
    """``n`` texts of 60 Zipf-distributed words; every 10th a 2-word edit of an earlier one."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = np.array(["".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(30000)])
    words = rng.zipf(1.3, size=(n, 60)) % len(vocab)
    for i in range(1, n, 10):
        j = int(rng.integers(0, i))
        words[i] = words[j]
        words[i, rng.integers(0, 60, 2)] = rng.integers(0, len(vocab), 2)
    return [" ".join(vocab[w]) for w in words]


def build(data: Path, n: int, tail: int) -> None:
    """``n`` documents stored through the service in-process: a snapshot covers the first
    ``n - tail``, the last ``tail`` rows come after it (the state a kill -9 leaves)."""
    from neardup.dedup import Deduplicator
    from neardup.server.service import Service, Settings
    from neardup.server.validate import Item

    t0 = time.perf_counter()
    texts = synthetic(n)
    print(f"generated {n:,} synthetic documents in {time.perf_counter() - t0:.0f} s", flush=True)
    svc = Service(Deduplicator(), Settings(str(data), snapshot_every=0))
    t0 = time.perf_counter()
    cuts = sorted({*range(0, n, 50_000), n - tail, n})
    for i, stop in itertools.pairwise(cuts):
        svc.ingest([Item(f"s{j}", texts[j], None) for j in range(i, stop)], False)
        if stop == n - tail:
            with svc.group.exclusive(), svc.lock:
                svc._snapshot()
        print(f"  {stop:,} stored, {time.perf_counter() - t0:.0f} s", flush=True)
    print(f"stored {n:,} in {time.perf_counter() - t0:.0f} s: {svc.counts()}")
    svc.store.db.close()  # no shutdown snapshot: the last `tail` rows stay after the snapshot


def start_over_empty(
    data: Path, port: int
) -> tuple[subprocess.Popen[bytes], float, float, dict[str, int]]:
    """A server on ``data``, started after an empty one whose memory is the baseline:
    (process, seconds to healthy, the empty server's seconds, the empty server's memory)."""
    empty = data.parent / "empty"
    proc, t_empty = start(empty, port)
    base = memory(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    shutil.rmtree(empty, ignore_errors=True)
    proc, t_data = start(data, port)
    return proc, t_data, t_empty, base


def measure(data: Path, n: int, probes: list[str]) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc, t_tail, t_empty, empty = start_over_empty(data, port)
    m = httpx.get(url + "/metrics").text
    kept = metric(m, "neardup_index_size")
    state = metric(m, "neardup_memory_bytes")
    print(
        f"restart, snapshot + rows after it (as after kill -9): {t_tail:.2f} s to healthy; "
        f"{kept:,.0f} kept in the index; {per_document(memory(proc.pid), empty, n)} over an "
        f"empty server; dedup state {state / n:.0f} B/doc"
    )
    half, failed = len(probes) // 2, []
    check = latencies(url + "/v1/documents", probes[:half], "q", True, failed)
    store = latencies(url + "/v1/documents", probes[half:], "p", False, failed)
    print(
        f"single-document check (dry run) p50 {pct(check, 0.5):.1f} ms p99 "
        f"{pct(check, 0.99):.1f} ms; single-document ingest (stored, fsync) p50 "
        f"{pct(store, 0.5):.1f} ms p99 {pct(store, 0.99):.1f} ms ({half} each, news texts); "
        f"{len(failed)} failed{f' ({failed[0][:80]})' if failed else ''}; after them "
        f"{per_document(memory(proc.pid), empty, n)}"
    )
    t0 = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(120) == 0
    print(f"SIGTERM to exit (writes the shutdown snapshot): {time.perf_counter() - t0:.2f} s")
    t_snap, snap = restart(data, port)
    aside = data.parent / "snapshot-aside"
    (data / "snapshot").rename(aside)
    t_rows, rows = restart(data, port)
    aside.rename(data / "snapshot")
    print(
        f"restart from the snapshot alone (after SIGTERM): {t_snap:.2f} s, "
        f"{per_document(snap, empty, n)}; from every SQLite row (no snapshot): {t_rows:.2f} s, "
        f"{per_document(rows, empty, n)}; an empty data directory: {t_empty:.2f} s"
    )


def restart(data: Path, port: int) -> tuple[float, dict[str, int]]:
    """Start a server on ``data`` and kill it once healthy: seconds to healthy, its memory."""
    proc, seconds = start(data, port)
    got = memory(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return seconds, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=6000)
    ap.add_argument("--probes", type=int, default=400)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--inflight", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4])
    ap.add_argument("--stored", type=int, default=0, help="documents stored (10^6 mode)")
    ap.add_argument("--tail", type=int, default=100_000, help="rows after the snapshot")
    ap.add_argument("--build", type=Path, help="10^6 mode: build the store in this directory")
    ap.add_argument("--measure", type=Path, help="10^6 mode: measure the store built here")
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    print(
        f"commit {commit.stdout.strip()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f}"
    )
    if args.build:
        build(args.build / "d", args.stored, args.tail)
    elif args.measure:
        _, probes = load_corpus("reuters", args.probes)
        measure(args.measure / "d", args.stored, probes)
    else:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            run_ingest(args, Path(tmp))


if __name__ == "__main__":
    main()
