"""Index search throughput, C kernel against the numba kernel on the same index, same run.

One ``HammingIndex(k)`` over N random fingerprints; one batch of ``--queries`` queries (each a
stored fingerprint with 0..k+1 bits flipped, so matches exist); ``index.search`` timed with
the C kernels on one thread (the default: table by table over queries sorted per table) and
on ``NEARDUP_THREADS`` threads (at least 2), the C kernel in one pass over all tables (the
previous default), and the numba one (swapped in ``neardup.index.kernels``) on one thread;
interleaved, best of ``--repeat``, after one warm-up call each (numba's compile excluded).

    python benchmarks/bench_search.py --n 10000000            # ~2 GiB, ~2 minutes
    python benchmarks/bench_search.py --n 100000000           # ~9 GiB peak: a free machine only
    python benchmarks/bench_search.py --n 10000000 --faiss    # + faiss (bench extra), same run

``--faiss`` adds faiss ``IndexBinaryMultiHash(64, 4, 16)`` (one thread, ``range_search`` at
radius k + 1, i.e. distance <= k) on the same fingerprints and queries: the anchor of
``bench_index.py``. Its hash tables need ~10 GiB more at N=10^8, so use it up to ~10^7 here.
"""

from __future__ import annotations

import argparse
import json
import os
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


def faiss_qps(fps: np.ndarray, queries: np.ndarray, k: int, repeat: int) -> tuple[float, int]:
    """faiss IndexBinaryMultiHash(64, 4, 16), one thread: (queries/s, matches)."""
    import faiss

    faiss.omp_set_num_threads(1)
    mh = faiss.IndexBinaryMultiHash(64, 4, 16)
    mh.add(fps.view(np.uint8).reshape(-1, 8))
    q = queries.view(np.uint8).reshape(-1, 8)
    best, found = float("inf"), 0
    for _ in range(repeat):
        t = time.perf_counter()
        _, _, ids = mh.range_search(q, k + 1)
        best = min(best, time.perf_counter() - t)
        found = len(ids)
    return q.shape[0] / best, found


def measure(n: int, k: int, nq: int, repeat: int, with_faiss: bool = False) -> dict[str, Any]:
    rng = np.random.default_rng(20261122)
    fps = rng.integers(0, 2**64, n, dtype=np.uint64)
    queries = _flip(fps[rng.integers(0, n, nq)], rng, k + 1)
    index = HammingIndex(k=k, expected_n=n)
    t = time.perf_counter()
    index.add(np.arange(n, dtype=np.int64), fps)
    build = time.perf_counter() - t
    anchor = faiss_qps(fps, queries, k, repeat) if with_faiss else None
    del fps
    import neardup._numba.index as nb

    threads = max(2, kernels.search_threads())
    ranged = kernels.search_tables_range
    impls = {  # name: (kernel, table-by-table kernel or None: one pass, NEARDUP_THREADS)
        "native_threads": (kernels.search_tables, ranged, str(threads)),
        "native_1thread": (kernels.search_tables, ranged, "1"),
        "native_1thread_one_pass": (kernels.search_tables, None, "1"),
        "numba_1thread": (nb.search_tables, None, "1"),
    }
    best = {name: float("inf") for name in impls}
    matches = {}
    for fn, rfn, _ in impls.values():  # warm-up (numba compiles here)
        kernels.search_tables, kernels.search_tables_range = fn, rfn
        index.search(queries[:100])
    for _ in range(repeat):
        for name, (fn, rfn, nt) in impls.items():
            kernels.search_tables, kernels.search_tables_range = fn, rfn
            os.environ["NEARDUP_THREADS"] = nt
            t = time.perf_counter()
            m = index.search(queries)
            best[name] = min(best[name], time.perf_counter() - t)
            matches[name] = len(m)
    kernels.search_tables, kernels.search_tables_range = impls["native_1thread"][:2]
    if len(set(matches.values())) != 1:
        raise RuntimeError(f"kernels disagree: {matches}")
    extra: dict[str, Any] = {}
    if anchor is not None:
        if anchor[1] != matches["native_1thread"]:
            raise RuntimeError(f"faiss found {anchor[1]} matches, neardup {matches}")
        extra = {
            "faiss_multihash_1thread_qps": round(anchor[0]),
            "neardup_1thread_vs_faiss": round(nq / best["native_1thread"] / anchor[0], 2),
        }
    return {
        **extra,
        "threads": threads,
        "n": n,
        "k": k,
        "queries": nq,
        "build_s": round(build, 1),
        "design": str(index.describe()["design"]),
        "native_threads_qps": round(nq / best["native_threads"]),
        "native_1thread_qps": round(nq / best["native_1thread"]),
        "native_1thread_one_pass_qps": round(nq / best["native_1thread_one_pass"]),
        "table_by_table_vs_one_pass": round(
            best["native_1thread_one_pass"] / best["native_1thread"], 2
        ),
        "numba_1thread_qps": round(nq / best["numba_1thread"]),
        "speedup_1thread_vs_numba": round(best["numba_1thread"] / best["native_1thread"], 2),
        "matches": matches["native_1thread"],
        "peak_rss_GiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10**7)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--queries", type=int, default=10**5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--faiss", action="store_true", help="faiss anchor, same data (bench extra)")
    args = ap.parse_args()
    row = measure(args.n, args.k, args.queries, args.repeat, args.faiss)
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
