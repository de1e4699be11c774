"""Index search throughput, C kernel against the numba kernel on the same index, same run.

One ``HammingIndex(k)`` over N random fingerprints; one batch of ``--queries`` queries (each a
stored fingerprint with 0..k+1 bits flipped, so matches exist); ``index.search`` timed with
the C ``search_tables`` and with the numba one (swapped in ``neardup.index.kernels``),
interleaved, best of ``--repeat``, after one warm-up call each (numba's compile excluded).

    python benchmarks/bench_search.py --n 10000000            # ~2 GiB, ~2 minutes
    python benchmarks/bench_search.py --n 100000000           # ~9 GiB peak: a free machine only
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from typing import Any

import numpy as np

import neardup.index.kernels as kernels
from neardup.index import HammingIndex


def _flip(fps: np.ndarray, rng: np.random.Generator, max_bits: int) -> np.ndarray:
    out = fps.copy()
    for _ in range(max_bits):
        hit = rng.random(out.size) < 0.5
        bits = rng.integers(0, 64, out.size).astype(np.uint64)
        out[hit] ^= np.uint64(1) << bits[hit]
    return out


def measure(n: int, k: int, nq: int, repeat: int) -> dict[str, Any]:
    rng = np.random.default_rng(20261122)
    fps = rng.integers(0, 2**64, n, dtype=np.uint64)
    queries = _flip(fps[rng.integers(0, n, nq)], rng, k + 1)
    index = HammingIndex(k=k, expected_n=n)
    t = time.perf_counter()
    index.add(np.arange(n, dtype=np.int64), fps)
    build = time.perf_counter() - t
    del fps
    import neardup._numba.index as nb

    impls = {"native": kernels.search_tables, "numba": nb.search_tables}
    best = {name: float("inf") for name in impls}
    matches = {}
    for fn in impls.values():  # warm-up (numba compiles here)
        kernels.search_tables = fn
        index.search(queries[:100])
    for _ in range(repeat):
        for name, fn in impls.items():
            kernels.search_tables = fn
            t = time.perf_counter()
            m = index.search(queries)
            best[name] = min(best[name], time.perf_counter() - t)
            matches[name] = len(m)
    kernels.search_tables = impls["native"]
    if matches["native"] != matches["numba"]:
        raise RuntimeError(f"kernels disagree: {matches}")
    return {
        "n": n,
        "k": k,
        "queries": nq,
        "build_s": round(build, 1),
        "design": str(index.describe()["design"]),
        "native_qps": round(nq / best["native"]),
        "numba_qps": round(nq / best["numba"]),
        "speedup": round(best["numba"] / best["native"], 2),
        "matches": matches["native"],
        "peak_rss_GiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10**7)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--queries", type=int, default=10**5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(json.dumps(measure(args.n, args.k, args.queries, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
