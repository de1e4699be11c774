"""Persistence speed: reopening a saved HammingIndex with its integrity checked, and saving /
loading a Deduplicator state.

    PYTHONPATH=src nice -n 10 python benchmarks/bench_state.py --index-n 10000000 --docs 1000000

Index: ``--index-n`` random 64-bit fingerprints, k=3, built, saved (versioned directory,
XXH3-128 per file), then reopened with ``verify=True`` (every byte hashed; the default) and
``verify=False`` (manifest checksum, sizes, shapes and invariants only); the first 1000 queries
after the reopen are timed too. The checksum throughput is reported in GB/s so that other sizes
can be extrapolated. Page cache warm (the file was just written): a cold disk reads slower.

State: ``--docs`` synthetic documents (60-word texts, a third of them edited copies, some exact
copies), fed to ``Deduplicator()`` (the default: MinHash bands + verifier) in chunks; then
``save``, ``load`` (verify=True / False), and a check that the loaded state decides 10^4 further
documents exactly as the original does.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from neardup import Deduplicator
from neardup._persist import checksum_file
from neardup.dedup import from_state_columns
from neardup.index import HammingIndex


def row(what: str, result: str, note: str = "") -> None:
    print(f"| {what} | {result} | {note} |", flush=True)


def rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def bench_index(n: int, workdir: Path) -> None:
    rng = np.random.default_rng(0)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    queries = fps[rng.integers(0, n, 1000)] ^ np.uint64(5)
    index = HammingIndex(k=3, expected_n=n)
    t = time.perf_counter()
    index.add(np.arange(n, dtype=np.int64), fps)
    row(f"build N={n:.0e} k=3", f"{time.perf_counter() - t:.1f} s")
    del fps
    path = workdir / "index"
    t = time.perf_counter()
    index.save(path)
    size = dir_bytes(path)
    row("save (versioned dir, XXH3-128 per file)", f"{time.perf_counter() - t:.2f} s", _gib(size))
    del index
    gc.collect()
    for verify in (True, False):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            loaded = HammingIndex.load(path, verify=verify)
            times.append(time.perf_counter() - t)
            del loaded
        row(
            f"**`HammingIndex.load(verify={verify})`** N={n:.0e}",
            f"**{min(times):.3f} s** (best of 3; {', '.join(f'{x:.3f}' for x in times)})",
            f"{size / min(times) / 1e9:.1f} GB/s of files" if verify else "O(1) checks",
        )
    loaded = HammingIndex.load(path)
    t = time.perf_counter()
    loaded.search(queries)
    row("first 1000 queries after the reopen", f"{time.perf_counter() - t:.3f} s")
    biggest = max((p for p in path.rglob("*.npy")), key=lambda p: p.stat().st_size)
    t = time.perf_counter()
    checksum_file(biggest)
    dt = time.perf_counter() - t
    row(
        f"XXH3-128 of the largest file ({biggest.name})",
        f"{biggest.stat().st_size / dt / 1e9:.1f} GB/s",
        _gib(biggest.stat().st_size),
    )
    shutil.rmtree(path)


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.2f} GiB"


def corpus(n: int, seed: int = 0) -> list[str]:
    """60-word texts over a 20k-word vocabulary: bases, edited copies, exact copies."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(20000)])
    words = rng.integers(0, len(vocab), size=(n, 60))
    src = rng.integers(0, np.maximum(np.arange(n), 1))
    kind = rng.random(n)
    edited = (kind < 0.3) & (np.arange(n) > 0)
    words[edited] = words[src[edited]]
    cols = rng.integers(0, 60, size=(n, 3))
    for c in range(3):
        words[edited, cols[edited, c]] = rng.integers(0, len(vocab), int(edited.sum()))
    texts = [" ".join(vocab[w]) for w in words]
    for i in np.flatnonzero((kind > 0.3) & (kind < 0.4) & (np.arange(n) > 0)).tolist():
        texts[i] = texts[int(src[i])].upper()
    return texts


def bench_state(docs: int, workdir: Path) -> None:
    texts = corpus(docs + 10000)
    dd = Deduplicator()
    t = time.perf_counter()
    for s in range(0, docs, 65536):
        dd.feed(texts[s : min(s + 65536, docs)])
    c = dd.state.decisions().counts()
    row(
        f"feed {docs:.0e} documents (default Deduplicator)",
        f"{time.perf_counter() - t:.1f} s",
        f"{c['unique']:,} kept, {c['duplicate']:,} near, {c['exact_duplicate']:,} exact",
    )
    path = workdir / "state"
    t = time.perf_counter()
    dd.save(path)
    size = dir_bytes(path)
    row("**`Deduplicator.save`**", f"**{time.perf_counter() - t:.2f} s**", _gib(size))
    for verify in (True, False):
        t = time.perf_counter()
        loaded = Deduplicator.load(path, verify=verify)
        row(f"**`Deduplicator.load(verify={verify})`**", f"**{time.perf_counter() - t:.2f} s**")
    more = texts[docs:]
    a, b = dd.feed(more), loaded.feed(more)
    same = all(
        np.array_equal(getattr(a, f), getattr(b, f))
        for f in ("status", "duplicate_of", "cluster_id")
    )
    row("loaded state decides 10^4 more documents like the original", str(same))
    t = time.perf_counter()
    cols = dd.state.columns()
    row("`state_columns()` (all rows)", f"{time.perf_counter() - t:.2f} s", f"{len(cols)} columns")
    t = time.perf_counter()
    from_state_columns(Deduplicator(), cols, dd.state.meta())
    row("`from_state_columns` (rebuilds exact map and index)", f"{time.perf_counter() - t:.2f} s")
    shutil.rmtree(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--index-n", type=int, default=10**7)
    ap.add_argument("--docs", type=int, default=10**6)
    ap.add_argument("--workdir", default=None, help="where to write (default: a temp dir)")
    args = ap.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bench_state_"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"cpus {os.cpu_count()}, workdir {workdir}")
    print("| what | result | note |\n|---|---|---|")
    if args.index_n:
        bench_index(args.index_n, workdir)
    if args.docs:
        bench_state(args.docs, workdir)
    row("peak RSS", f"{rss_gb():.2f} GB")


if __name__ == "__main__":
    main()
