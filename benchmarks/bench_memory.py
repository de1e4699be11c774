"""Peak memory of ``neardup dedup`` against gaoya and rensa MinHash pipelines (issue 24).

Every tool runs as a child process on the same gzipped JSONL file and writes a JSONL file;
peak RSS comes from ``wait4`` (best of ``--repeat`` runs each, interleaved). The anchors are
one-pass pipelines with 128 hashes in 32 bands of 4 over character 4-grams (what neardup's
verifier sketches): read a line with ``json``, query the index, insert the document when
nothing matched, write the record with its decision.

- ``gaoya``: ``MinHashStringIndex(hash_size=32, jaccard_threshold=0.6, num_bands=32,
  band_size=4, analyzer="char", ngram_range=(4, 4), lowercase=True)``;
- ``rensa``: ``RMinHash(num_perm=128)`` over the same 4-grams + ``RMinHashLSH(threshold=0.6,
  num_perm=128, num_bands=32)``.

``--docs N`` also measures peak memory per document: a JSONL file of N documents (Reuters,
20 Newsgroups and People's Daily texts, cycled, every repeat with a few words changed so that
nothing is an exact copy of a repeat, plus 5 % planted near-copies), ``neardup dedup`` on it
and on its first ``N // 10`` documents; per document = (peak(N) - peak(N/10)) / (0.9 N), the
memory that grows with the input, next to peak(N) / N.

``--state N`` (issue 39): where the bytes per document go, in process, on the synthetic stream
of ``bench_scale.py index`` (random fingerprints and 193-value sketches, 5 % planted copies,
random 128-bit exact keys; no fingerprinting, so it isolates what grows with N): bytes per
document of each per-document column, the sketches (anonymous, or in the spill file), the
exact-text map (its dict and its arrays), the candidate index; peak RSS and anonymous vs
file-backed RSS (``/proc/self/status``) less the benchmark's own copies of the stream (202 B
per document), and CPU seconds (``time.process_time``; re-time on a quiet machine).

    python benchmarks/bench_memory.py                    # Reuters, ~30 s
    python benchmarks/bench_memory.py --docs 200000      # + bytes per document, ~2 min
    python benchmarks/bench_memory.py --state 1000000    # state breakdown only, ~1 min
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from neardup.eval.corpora import corpora_dir

ROOT = Path(__file__).resolve().parents[1]

GAOYA = """
import gzip, json, sys
from gaoya.minhash import MinHashStringIndex
index = MinHashStringIndex(hash_size=32, jaccard_threshold=0.6, num_bands=32, band_size=4,
                           analyzer="char", ngram_range=(4, 4), lowercase=True)
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w") as out:
    for i, line in enumerate(f):
        rec = json.loads(line)
        text = rec.get("text") or ""
        hits = index.query(text) if text else []
        if not hits and text:
            index.insert_document(i, text)
        rec["duplicate_of"] = min(hits) if hits else None
        out.write(json.dumps(rec, ensure_ascii=False) + "\\n")
"""

RENSA = """
import gzip, json, sys
from rensa import RMinHash, RMinHashLSH
lsh = RMinHashLSH(threshold=0.6, num_perm=128, num_bands=32)
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w") as out:
    for i, line in enumerate(f):
        rec = json.loads(line)
        text = (rec.get("text") or "").lower()
        hits = []
        if text:
            m = RMinHash(num_perm=128, seed=0)
            m.update([text[j : j + 4] for j in range(max(len(text) - 3, 1))])
            hits = lsh.query(m)
            if not hits:
                lsh.insert(i, m)
        rec["duplicate_of"] = min(hits) if hits else None
        out.write(json.dumps(rec, ensure_ascii=False) + "\\n")
"""


def peak(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one child run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(f"{cmd[:4]} failed: {err[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def tools(path: Path, out: str) -> dict[str, list[str]]:
    return {
        "neardup": [sys.executable, "-m", "neardup", "dedup", str(path), "--out", out],
        "gaoya": [sys.executable, "-c", GAOYA, str(path), out],
        "rensa": [sys.executable, "-c", RENSA, str(path), out],
    }


def compare(path: Path, repeat: int) -> dict[str, object]:
    """Peak RSS and wall time of each tool on ``path`` (min over ``repeat`` runs)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmds = tools(path, os.path.join(tmp, "out.jsonl"))
        runs: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
        for cmd in cmds.values():
            peak(cmd)  # warm-up
        for _ in range(repeat):
            for name, cmd in cmds.items():
                runs[name].append(peak(cmd))
    row: dict[str, object] = {"file": path.name}
    for name, rs in runs.items():
        row[f"{name}_rss_MiB"] = round(min(r for _, r in rs), 1)
        row[f"{name}_s"] = round(min(w for w, _ in rs), 2)
    for name in ("gaoya", "rensa"):
        row[f"rss_vs_{name}"] = round(
            float(row["neardup_rss_MiB"]) / float(row[f"{name}_rss_MiB"]),  # type: ignore[arg-type]
            2,
        )
    return row


def build_docs(path: Path, n: int, seed: int = 0) -> None:
    """``n`` documents from three corpora, cycled with edits, 5 % planted near-copies."""
    rng = random.Random(seed)
    texts: list[str] = []
    for rel in (
        "reuters21578/docs.jsonl.gz",
        "20news_bydate/docs.jsonl.gz",
        "peoples_daily_199801/articles.jsonl.gz",
    ):
        with gzip.open(corpora_dir() / rel, "rt", encoding="utf-8") as f:
            texts += [t for t in (json.loads(line).get("text", "") for line in f) if t.strip()]
    rng.shuffle(texts)
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as f:
        for i in range(n):
            text = texts[i % len(texts)]
            if i >= len(texts) or rng.random() < 0.05:  # a repeat or a planted copy: edit it
                words = text.split(" ")
                for j in rng.sample(range(len(words)), max(1, len(words) // 20)):
                    words[j] = f"w{rng.randrange(10**6)}"
                text = " ".join(words)
            f.write(json.dumps({"id": i, "text": text}, ensure_ascii=False) + "\n")


def per_document(n: int, repeat: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big.jsonl.gz", Path(tmp) / "small.jsonl.gz"
        build_docs(big, n)
        build_docs(small, n // 10)
        out = os.path.join(tmp, "out.jsonl")
        rss = {}
        for name, path in (("small", small), ("big", big)):
            cmd = tools(path, out)["neardup"]
            rss[name] = min(peak(cmd)[1] for _ in range(repeat))
        gaoya = peak(tools(big, out)["gaoya"])
    grow = (rss["big"] - rss["small"]) * 2**20 / (n - n // 10)
    return {
        "docs": n,
        "neardup_peak_MiB": round(rss["big"], 1),
        f"neardup_peak_MiB_at_{n // 10}": round(rss["small"], 1),
        "bytes_per_doc_marginal": round(grow),
        "bytes_per_doc_peak_over_n": round(rss["big"] * 2**20 / n),
        "gaoya_peak_MiB": round(gaoya[1], 1),
        "gaoya_s": round(gaoya[0], 1),
    }


def _proc_status() -> dict[str, int]:
    """Peak and current RSS, anonymous and file-backed (bytes), of this process."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) * 1024
    return out


def _feed_synthetic(n_total: int) -> tuple[Any, dict[str, Any], int]:
    """``Deduplicator()`` fed ``n_total`` synthetic documents (module docs); returns it, what was
    measured on the way (CPU seconds in all and per tenth of the stream, planted copies found)
    and the bytes of the benchmark's own arrays."""
    import numpy as np

    from bench_scale import CHUNK, WIDTH, _plant, _Prepared, _synthetic_chunk
    from neardup.dedup.decisions import DUPLICATE

    rng = np.random.default_rng(0)
    dd = _Prepared()
    all_fps, is_copy = np.zeros(n_total, np.uint64), np.zeros(n_total, bool)
    all_sk = np.zeros((n_total, WIDTH), np.uint8)
    cpu, base, found, planted, tenths = time.process_time(), 0, 0, 0, [time.process_time()]
    while base < n_total:
        n = min(CHUNK, n_total - base)
        chunk, copies, orig = _synthetic_chunk(rng, n, base, 0.05, is_copy)
        _plant(rng, chunk, base, copies, orig, all_fps, all_sk, 0.9)
        hi, lo = rng.integers(0, 2**63, (2, n)).tolist()
        chunk.keys.extend((h << 65) | (x << 1) | 1 for h, x in zip(hi, lo, strict=True))
        assert chunk.sketches is not None
        all_fps[base : base + n], all_sk[base : base + n] = chunk.fps, chunk.sketches
        dd._next_chunk = chunk
        d = dd.feed([""] * n)
        found += int(((d.status[copies] == DUPLICATE) & (d.duplicate_of[copies] == orig)).sum())
        planted += int(copies.size)
        base += n
        if base * 10 >= len(tenths) * n_total:  # a tenth of the stream is done
            tenths.append(time.process_time())
    measured = {
        "cpu_s": time.process_time() - cpu,
        "cpu_us_per_doc_by_tenth": [
            round(1e6 * (b - a) / (n_total / 10), 2) for a, b in itertools.pairwise(tenths)
        ],
        "planted_copies_found": round(found / max(planted, 1), 4),
        "planted_copies": planted,
    }
    return dd, measured, all_fps.nbytes + all_sk.nbytes + is_copy.nbytes


def _heap_free() -> int:
    """Bytes free in the C heap but kept by the process (glibc ``mallinfo2``; 0 elsewhere)."""
    import ctypes

    class Info(ctypes.Structure):
        names = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
        _fields_ = [(f, ctypes.c_size_t) for f in names.split(" ")]

    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return 0
    mallinfo2.restype = Info
    return int(mallinfo2().fordblks)


def state_breakdown(n: int) -> dict[str, object]:
    """Bytes per document of each part of the dedup state after ``n`` synthetic documents."""
    start = _proc_status()
    dd, measured, own = _feed_synthetic(n)
    st = dd._state
    from neardup.dedup.columns import SCHEMA

    parts = {c.name: st.cols.column(c.name).nbytes for c in SCHEMA}
    parts["columns_used"] = sum(st.cols.column(c.name).view().nbytes for c in SCHEMA)
    spilled = (getattr(st.cols.column(c.name), "file_bytes", 0) for c in SCHEMA)
    parts["columns_spill_file"] = sum(spilled)  # key_hi/lo, similarity, threshold (issue 39)
    ex = st.exact
    parts["sketches_anon"] = st.sketches.nbytes
    parts["sketches_spill_file"] = getattr(st.sketches, "file_bytes", 0)  # 0: before issue 39
    parts["exact_dict"] = sys.getsizeof(ex) + sum(
        sys.getsizeof(k) + sys.getsizeof(v) for k, v in dict.items(ex)
    )
    base = [getattr(ex, name, None) for name in ("_hi", "_lo", "_pos")]  # before issue 39: none
    parts["exact_arrays"] = sum(int(a.nbytes) for a in base if a is not None)
    parts["candidate_index"] = st.candidates.describe().get("memory_bytes", 0)
    now = _proc_status()
    files = ("sketches_spill_file", "columns_used", "columns_spill_file")
    anon = sum(v for k, v in parts.items() if k not in files)
    return {
        "docs": n,
        "kept": len(st.candidates),
        "cpu_us_per_doc": round(1e6 * measured.pop("cpu_s") / n, 2),
        **measured,
        "bytes_per_doc": {k: round(v / n, 1) for k, v in parts.items()},
        "in_memory_bytes_per_doc": round(anon / n, 1),
        "peak_rss_bytes_per_doc": round((now["VmHWM"] - start["VmRSS"] - own) / n, 1),
        "rss_anon_MiB": round(now["RssAnon"] / 2**20, 1),
        "rss_file_MiB": round(now["RssFile"] / 2**20, 1),
        "heap_free_MiB": round(_heap_free() / 2**20, 1),  # freed, not given back (in RssAnon)
        "benchmark_arrays_MiB": round(own / 2**20, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--docs", type=int, default=0, help="also bytes per document at N docs")
    ap.add_argument("--state", type=int, default=0, help="only the state breakdown at N docs")
    args = ap.parse_args()
    if args.state:
        print(json.dumps(state_breakdown(args.state)), flush=True)
        return
    reuters = corpora_dir() / "reuters21578/docs.jsonl.gz"
    print(json.dumps(compare(reuters, args.repeat)), flush=True)
    if args.docs:
        print(json.dumps(per_document(args.docs, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
