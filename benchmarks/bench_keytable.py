"""KeyTable lookups and memory at scale: one process per source tree, interleaved (issue 21).

Random band keys of ``--docs`` documents (32 bands) are added in chunks of ``--chunk`` (so the
table has its LSM runs), then timed: lookups of ``--batch``-document query batches (half
stored documents, half new), best of ``--repeat``; bytes per document of the table and the
RSS growth. ``--trees A B``: source trees to compare (each gets its own process, in turn).

    PYTHONPATH=src flock /tmp/neardup-bench.lock python benchmarks/bench_keytable.py \\
        --docs 1000000 --trees /work/main/src src
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
import numpy as np
from neardup.dedup.candidates import BandCandidates
from neardup.index.keytable import KeyTable

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon"):
            return int(line.split()[1]) * 1024

docs, chunk, batch, repeat = map(int, sys.argv[1:5])
rng = np.random.default_rng(1)
keys_of = BandCandidates().keys
base = rss()
bc = BandCandidates()
sk = rng.integers(0, 256, size=(docs, 129), dtype=np.uint8)
t0 = time.perf_counter()
for s in range(0, docs, chunk):
    bc._table.add(keys_of(None, sk[s : s + chunk]), np.arange(s, min(s + chunk, docs)))
build = time.perf_counter() - t0
table = bc._table
grown = rss() - base - sk.nbytes
q = np.concatenate([sk[rng.integers(0, docs, 5000)], rng.integers(0, 256, (5000, 129), np.uint8)])
qk = keys_of(None, q)
best = {}
for b in (batch, 10_000):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        hits = 0
        for s in range(0, qk.shape[0], b):
            hits += table.lookup(qk[s : s + b])[0].size
        times.append((time.perf_counter() - t0) / qk.shape[0] * 1e6)
    best[b] = min(times)
print(json.dumps({"bytes_per_doc": table.nbytes / docs, "rss_per_doc": grown / docs,
    "runs": table.runs, "build_s": build, "us_per_doc": best, "hits": int(hits)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--chunk", type=int, default=50_000)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2, help="each tree this many times, in turn")
    ap.add_argument("--trees", nargs="+", default=["src"])
    args = ap.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    for r in range(args.rounds):
        for tree in args.trees:
            env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
            argv = [str(v) for v in (args.docs, args.chunk, args.batch, args.repeat)]
            out = subprocess.run(
                [sys.executable, "-c", CHILD, *argv], env=env, capture_output=True, text=True
            )
            res = out.stdout.strip() or out.stderr.strip()[-2000:]
            print(f"round {r} {tree}: {res}", flush=True)
            if out.returncode == 0:
                json.loads(res)
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
