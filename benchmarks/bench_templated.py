"""Templated data (issue 22): thousands of near-identical documents on one set of candidate keys.

    PYTHONPATH=src python benchmarks/bench_templated.py --docs 20000 100000

Order confirmations from one template with random numbers and cities (one big family of near
duplicates). Each size runs ``neardup dedup`` (the CLI, process start included) and, in the same
run, a datasketch MinHashLSH(threshold=0.5, 128 permutations, word 5-shingles) pipeline
(query, then insert) in its own process; prints wall seconds and the process's peak RSS. Before
the hot-key budget (neardup.dedup.budget) neardup needed 21 GB at 20,000 documents and died.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from anchors import machine_note

TEMPLATE = (
    "Dear customer, your order number {n} has shipped from our warehouse in {c} and will "
    "arrive within {d} business days. Track it on our website with the code {t}. Thank you "
    "for shopping with us, we hope to see you again soon."
)

DATASKETCH = """
import json, sys
from datasketch import MinHash, MinHashLSH
lsh, dups = MinHashLSH(threshold=0.5, num_perm=128), 0
for i, line in enumerate(open(sys.argv[1])):
    words = json.loads(line)["text"].split()
    m = MinHash(num_perm=128)
    m.update_batch([" ".join(words[j:j + 5]).encode() for j in range(max(1, len(words) - 4))])
    dups += bool(lsh.query(m))
    lsh.insert(str(i), m)
print(dups)
"""


def write(path: str, n: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    cities = ["Berlin", "Paris", "Rome", "Madrid"]
    with open(path, "w") as f:
        for i in range(n):
            text = TEMPLATE.format(
                n=rng.randrange(10**6), c=rng.choice(cities), d=rng.randrange(2, 9),
                t=rng.randrange(10**8),
            )  # fmt: skip
            f.write(json.dumps({"id": i, "text": text}) + "\n")


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) of this child alone (os.wait4) and its stdout."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        if proc.returncode:
            raise SystemExit(f"{cmd[:4]} failed with exit code {proc.returncode}")
        out.seek(0)
        return wall, usage.ru_maxrss / 1024, out.read()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, nargs="+", default=[20_000])
    ap.add_argument("--no-anchor", action="store_true", help="skip datasketch")
    args = ap.parse_args()
    print(machine_note())
    print("| documents | tool | seconds | peak RSS MB | duplicates |")
    print("|---:|---|---:|---:|---:|")
    neardup = [sys.executable, "-m", "neardup", "dedup"]
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.docs:
            src, out = os.path.join(tmp, f"t{n}.jsonl"), os.path.join(tmp, "out.jsonl")
            write(src, n)
            wall, peak, _ = timed([*neardup, src, "--out", out, "--summary", out + ".json"])
            with open(out + ".json") as f:
                dups = json.load(f)["duplicate"]
            print(f"| {n:,} | neardup dedup | {wall:.1f} | {peak:.0f} | {dups:,} |", flush=True)
            if not args.no_anchor:
                wall, peak, got = timed([sys.executable, "-c", DATASKETCH, src])
                print(f"| {n:,} | datasketch 0.5 | {wall:.1f} | {peak:.0f} | {int(got):,} |")


if __name__ == "__main__":
    main()
