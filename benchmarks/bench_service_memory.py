"""Memory per stored document of the service's state, by part (issue 21), in-process.

Builds (or reuses, ``--keep``) a store of ``--stored`` synthetic documents with a snapshot
covering them (as ``bench_service_feed.py`` does), adds ``--tail`` rows after the snapshot,
then opens a :class:`~neardup.server.service.Service` on it in a fresh child process (what a
restart after ``kill -9`` loads) and reports, per stored document: the anonymous and
file-backed RSS growth over the same child with an empty service open, and the parts of the state
(``neardup_memory_bytes``: per-document columns, sketches, candidate index and its key table;
the exact-text map: its sorted arrays plus its dict of recent keys, measured with
``sys.getsizeof``).

    PYTHONPATH=src:benchmarks flock /tmp/neardup-bench.lock python \\
        benchmarks/bench_service_memory.py --stored 1000000 --tail 100000 --keep /tmp/st

``--data DIR/d``: a copy of the store ``bench_service.py --stored N --build DIR`` built (its
snapshot and the rows after it; ``--tail`` only labels them).

``--grown``: instead, a fresh service ingests ``--stored`` documents in-process (``--batch``
documents per ingest call, texts generated first), and the anonymous RSS growth per document
is reported after ``malloc_trim``: the state of a server that has grown to that size (every
array anonymous), not one that has just mapped its snapshot.
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

CHILD = r"""
import json, sys, tempfile, time

def status():
    out = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("RssAnon", "RssFile", "VmHWM"):
            out[key] = int(value.split()[0]) * 1024
    return out

from neardup.dedup import Deduplicator
from neardup.server.service import Service, Settings
import neardup.server.service as service_module

empty = Service(Deduplicator(), Settings(tempfile.mkdtemp(), snapshot_every=0))  # imports
before = status()
t0 = time.perf_counter()
svc = Service(Deduplicator(), Settings(sys.argv[1], snapshot_every=0))
seconds = time.perf_counter() - t0
after = status()
st = svc.dd._state
bc = st.candidates
exact = st.exact  # issue 39: sorted arrays (the base) and a dict of recent keys (the tail)
exact_bytes = sum(a.nbytes for a in exact.arrays().values())
exact_bytes += sys.getsizeof(exact) + sum(sys.getsizeof(k) for k in dict.keys(exact))
exact_bytes += sum(sys.getsizeof(v) for v in dict.values(exact))
info = svc.dd.describe()
print(json.dumps({
    "load_s": seconds,
    "anon": after["RssAnon"] - before["RssAnon"],
    "file": after["RssFile"] - before["RssFile"],
    "peak": after["VmHWM"],
    "memory_bytes": svc.memory_bytes(),
    "state_bytes": info["state_bytes"],
    "sketch_bytes": info["sketch_bytes"],
    "sketch_file_bytes": info["sketch_file_bytes"],
    "candidates_bytes": info["candidates"]["memory_bytes"],
    "key_table_bytes": bc._table.nbytes,
    "key_table_runs": bc._table.runs,
    "exact_map_bytes": exact_bytes,
    "documents": svc.dd.n_documents,
}))
"""


GROWN = r"""
import ctypes, json, sys, tempfile
from bench_service import synthetic
from neardup.dedup import Deduplicator
from neardup.server.service import Service, Settings
from neardup.server.validate import Item

def release_heap():  # as the server does after loading (main has no helper for it)
    ctypes.CDLL(None).malloc_trim(0)

def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon"):
            return int(line.split()[1]) * 1024

n, batch = int(sys.argv[1]), int(sys.argv[2])
texts = synthetic(n)
svc = Service(Deduplicator(), Settings(tempfile.mkdtemp(), snapshot_every=0))
release_heap()
before = anon()
for s in range(0, n, batch):
    svc.ingest([Item(f"s{j}", texts[j], None) for j in range(s, min(s + batch, n))], False)
release_heap()
grown = anon() - before
table = svc.dd.state.candidates._table
print(json.dumps({"anon_per_doc": grown / n, "memory_bytes_per_doc": svc.memory_bytes() / n,
                  "key_table_per_doc": table.nbytes / n, "runs": table.runs}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stored", type=int, default=200_000)
    ap.add_argument("--tail", type=int, default=20_000)
    ap.add_argument("--keep", type=Path, help="build the store here and reuse it")
    ap.add_argument("--grown", action="store_true", help="ingest in-process instead (doc)")
    ap.add_argument("--batch", type=int, default=50_000, help="--grown: documents per ingest")
    ap.add_argument(
        "--data", type=Path, help="measure a copy of a store built by bench_service.py --build"
    )
    args = ap.parse_args()
    if args.grown:
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
        child = [sys.executable, "-c", GROWN, str(args.stored), str(args.batch)]
        out = subprocess.run(child, capture_output=True, text=True, check=False)
        print(out.stdout.strip() or f"exit {out.returncode}: {out.stderr[-3000:]}")
        print(f"load {os.getloadavg()}")
        raise SystemExit(out.returncode)
    from bench_service_feed import build

    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp_name:
        root = args.keep or Path(tmp_name)
        data = args.data or root / f"store-none-{args.stored}"
        if not (data / "neardup.db").exists():
            build(data, args.stored, None, 5.0)
        work = Path(tmp_name) / "run"
        shutil.copytree(data, work)
        if args.tail and not args.data:  # (bench_service.py's store has its tail)
            tail(work, args.tail)
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(work)], capture_output=True, text=True, check=False
        )
        if out.returncode:
            raise SystemExit(out.stderr[-3000:])
        r = json.loads(out.stdout.strip().splitlines()[-1])
        n = r["documents"]
        per = {k: round(v / n, 1) for k, v in r.items() if isinstance(v, int) and k != "documents"}
        print(f"{n:,} stored (snapshot + {args.tail:,} rows), load {r['load_s']:.2f} s; per doc:")
        print(json.dumps(per))
        print(f"runs {r['key_table_runs']}; load {os.getloadavg()}")


def tail(data: Path, n: int) -> None:
    """``n`` rows after the snapshot (no shutdown snapshot: what a kill -9 leaves)."""
    from bench_service import synthetic
    from neardup.dedup import Deduplicator
    from neardup.server.service import Service, Settings
    from neardup.server.validate import Item

    svc = Service(Deduplicator(), Settings(str(data), snapshot_every=0))
    texts = synthetic(n, seed=7)
    svc.ingest([Item(f"t{j}", t, None) for j, t in enumerate(texts)], False)
    svc.store.db.close()


if __name__ == "__main__":
    main()
