"""Cost of the overlap surfaces on synthetic texts (``tests/overlap_texts.synthetic``).

``service``: a real ``neardup serve`` on 127.0.0.1: store N texts (50 per request), then 200
single-text queries (p50/p95 latency), then a clean restart (the saved reference) and the
overlap store opened from its rows alone (as after ``kill -9``).
``spark``: ``neardup overlap`` on N texts, local engine vs ``--engine spark`` (``local[2]``),
outputs compared byte for byte.

    flock /tmp/neardup-bench.lock python benchmarks/bench_overlap_surfaces.py service --docs 2000
    flock /tmp/neardup-bench.lock python benchmarks/bench_overlap_surfaces.py spark --docs 20000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]
# the server and CLI subprocesses import this checkout's neardup
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])

from tests.overlap_texts import synthetic  # noqa: E402


def service(n: int) -> None:
    import httpx

    from neardup.overlap import OverlapFinder
    from neardup.server.overlap_store import OverlapStore

    from tests.server.server_helpers import Server

    docs = synthetic(seed=4, n=n + 200)
    data = Path(tempfile.mkdtemp()) / "data"
    with Server(data, "--no-verify") as s, httpx.Client(timeout=300) as c:
        url = s.url + "/v1/overlaps"
        t = time.perf_counter()
        for k in range(0, n, 50):
            batch = [{"id": i, "text": x} for i, x in docs[k : min(k + 50, n)]]
            assert c.post(url, json={"documents": batch, "store": True}).status_code == 200
        stored = time.perf_counter() - t
        lat = []
        for _, x in docs[n:]:
            t = time.perf_counter()
            assert c.post(url, json={"text": x}).status_code == 200
            lat.append(time.perf_counter() - t)
        lat.sort()
        s.stop()
        t = time.perf_counter()
        s.start()
        restart = time.perf_counter() - t
    shutil.rmtree(data / "overlap-reference")
    t = time.perf_counter()
    OverlapStore(str(data), OverlapFinder())
    rows = time.perf_counter() - t
    print(
        f"service: {n:,} texts stored in {stored:.2f} s (50 per request); query p50 "
        f"{lat[len(lat) // 2] * 1e3:.1f} ms, p95 {lat[int(len(lat) * 0.95)] * 1e3:.1f} ms; "
        f"restart to healthy {restart:.2f} s (saved reference); store opened from the rows "
        f"alone {rows:.2f} s"
    )
    shutil.rmtree(data.parent)


def spark(n: int) -> None:
    tmp = Path(tempfile.mkdtemp())
    src = tmp / "in.jsonl"
    with open(src, "w", encoding="utf-8") as f:
        for i, x in synthetic(seed=2, n=n):
            f.write(json.dumps({"id": i, "text": x}, ensure_ascii=False) + "\n")
    seconds = []
    for extra in ([], ["--engine", "spark", "--spark-master", "local[2]"]):
        t = time.perf_counter()
        cmd = [sys.executable, "-m", "neardup", "overlap", str(src), "--out"]
        out = tmp / f"{len(extra)}.jsonl"
        subprocess.run([*cmd, str(out), *extra], check=True, capture_output=True)
        seconds.append(time.perf_counter() - t)
    same = (tmp / "0.jsonl").read_bytes() == (tmp / "4.jsonl").read_bytes()
    pairs = (tmp / "0.jsonl").read_bytes().count(b"\n")
    print(
        f"spark: {n:,} texts, {pairs:,} passage pairs: local {seconds[0]:.1f} s, Spark "
        f"local[2] {seconds[1]:.1f} s, identical output: {same}"
    )
    shutil.rmtree(tmp)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["service", "spark"])
    ap.add_argument("--docs", type=int, default=2000)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    (service if args.what == "service" else spark)(args.docs)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
